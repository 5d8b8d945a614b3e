"""Search of people by username and display name (API.md, "Search"): PostgreSQL's pg_trgm over
``User.search_name`` (lower case, no accents; a stored generated column, so it is current after
every write). Suspended people are no one here either."""

import re

from django.db import connection, transaction

from social.rules import NAME_SIMILARITY_MIN, SEARCH_MATCHES_MAX

# Matches of a name, best first: the username itself, then names that start with the query,
# then any word of the name that starts with it, then the most alike (typos) by pg_trgm's word
# similarity. ``search_name LIKE q%`` is served by the text_pattern_ops index (queries too short
# for trigrams), ``%>`` by the trigram GIN index; both inside one bitmap scan.
_MATCHES = """
    FROM social_user
    WHERE is_active AND (search_name LIKE %(prefix)s OR search_name LIKE %(word_prefix)s OR search_name %%> %(q)s)
"""
_PAGE = f"""
    SELECT id, username, display_name, avatar_version {_MATCHES}
    ORDER BY lower(username) = %(q)s DESC, search_name LIKE %(prefix)s DESC, search_name LIKE %(word_prefix)s DESC,
             word_similarity(%(q)s, search_name) DESC, id
    LIMIT %(limit)s OFFSET %(offset)s
"""
_COUNT = f"SELECT count(*) FROM (SELECT 1 {_MATCHES} LIMIT %(cap)s) AS matches"


def _like_escaped(text: str) -> str:
    return re.sub(r"([\\%_])", r"\\\1", text)


def people_search(query: str, *, offset: int, limit: int) -> tuple[list[dict], int]:
    """Active people whose username or display name matches ``query`` (prefix, any word's prefix,
    or alike: "alcie" finds alice), best first, and how many match, counted up to
    SEARCH_MATCHES_MAX (feeds.rules' figure for boards: the same promise for both). Two indexed
    queries in one transaction (the similarity threshold is set for it alone): O(min(matches,
    cap)) for the count, O(matches log matches) for the page (every match is ranked)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT unaccent_q, set_config('pg_trgm.word_similarity_threshold', %s, true) "
                       "FROM (SELECT lower(ugc_unaccent(%s)) AS unaccent_q) AS q", [str(NAME_SIMILARITY_MIN), query.strip()])
        normalised = cursor.fetchone()[0]
        params = {"cap": SEARCH_MATCHES_MAX, "q": normalised, "prefix": _like_escaped(normalised) + "%",
                  "word_prefix": "% " + _like_escaped(normalised) + "%", "limit": limit, "offset": offset}
        cursor.execute(_COUNT, params)
        total = cursor.fetchone()[0]
        rows = []
        if offset < total:
            cursor.execute(_PAGE, params)
            rows = cursor.fetchall()
    items = [{"id": row[0], "username": row[1], "display_name": row[2], "avatar_version": row[3]} for row in rows]
    return items, total
