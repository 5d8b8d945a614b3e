"""Search of people by username and display name (docs/api.md, "Search"): PostgreSQL's pg_trgm over
``User.search_name`` (lower case, no accents; a stored generated column, so it is current after
every write). Suspended people are no one here either."""

import re

from django.db import connection, transaction

from social.rules import NAME_SIMILARITY_MIN, SEARCH_MATCHES_MAX

# Matches of a name, best first: the username itself, then names that start with the query,
# then any word of the name that starts with it, then the most alike (typos) by pg_trgm's word
# similarity. The candidates are bounded before they are ranked: the first SEARCH_MATCHES_MAX
# names with the prefix (the text_pattern_ops index, in name order) and the SEARCH_MATCHES_MAX
# most alike (the trigram GiST index, nearest first: a KNN walk that stops there). So a query
# that every name matches ranks at most twice the cap, never the whole table.
_CANDIDATES = """
    WITH candidates AS (
        (SELECT id FROM social_user WHERE is_active AND search_name LIKE %(prefix)s
         ORDER BY search_name LIMIT %(cap)s)
        UNION
        (SELECT id FROM social_user WHERE is_active AND search_name %%> %(q)s
         ORDER BY search_name <->> %(q)s LIMIT %(cap)s)
    )
"""
_PAGE = (
    _CANDIDATES
    + """
    SELECT u.id, u.username, u.display_name, u.avatar_version, count(*) OVER ()
    FROM social_user u JOIN candidates USING (id)
    ORDER BY lower(u.username) = %(q)s DESC, u.search_name LIKE %(prefix)s DESC, u.search_name LIKE %(word_prefix)s DESC,
             word_similarity(%(q)s, u.search_name) DESC, u.id
    LIMIT %(limit)s OFFSET %(offset)s
"""
)
_COUNT = _CANDIDATES + "SELECT count(*) FROM candidates"


def _like_escaped(text: str) -> str:
    return re.sub(r"([\\%_])", r"\\\1", text)


def people_search(query: str, *, offset: int, limit: int) -> tuple[list[dict], int]:
    """Active people whose username or display name matches ``query`` (prefix, any word's prefix,
    or alike: "alcie" finds alice), best first, and how many match, counted up to
    SEARCH_MATCHES_MAX (the same promise as for boards). In one transaction (the similarity
    threshold is set for it alone): the normalised query, then one query over at most twice
    SEARCH_MATCHES_MAX candidates from two indexes: O(log n + cap log cap) however many match."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT lower(ugc_unaccent(%s)), set_config('pg_trgm.word_similarity_threshold', %s, true)",
            [query.strip(), str(NAME_SIMILARITY_MIN)],
        )
        normalised = cursor.fetchone()[0]
        params = {
            "cap": SEARCH_MATCHES_MAX,
            "q": normalised,
            "prefix": _like_escaped(normalised) + "%",
            "word_prefix": "% " + _like_escaped(normalised) + "%",
            "limit": limit,
            "offset": offset,
        }
        rows = []
        if offset < 2 * SEARCH_MATCHES_MAX:
            cursor.execute(_PAGE, params)
            rows = cursor.fetchall()
        if rows:
            total = rows[0][4]
        else:
            cursor.execute(_COUNT, params)
            total = cursor.fetchone()[0]
    items = [{"id": row[0], "username": row[1], "display_name": row[2], "avatar_version": row[3]} for row in rows]
    return items, min(total, SEARCH_MATCHES_MAX)
