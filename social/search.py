"""Search of people by username and display name (docs/api.md, "Search"): a prefix of
``User.search_name`` (lower case, no accents; a stored generated column, so it is current after
every write) and PostgreSQL's pg_trgm over it for names alike. Suspended people are no one here
either."""

import re
from collections.abc import Iterable

from django.db import connections, transaction

from social.rules import NAME_SIMILARITY_MIN, SEARCH_MATCHES_MAX
from ugcsite.platform.replicas import read_alias

# Matches of a name, best first: the username itself, then names that start with the query,
# then any word of the name that starts with it, then the most alike (typos) by pg_trgm's word
# similarity. What is ranked is bounded: the first SEARCH_MATCHES_MAX names with the prefix (the
# text_pattern_ops index in its own order, so the name itself, which sorts first, is always
# among them) and, only when those are fewer, up to SEARCH_MATCHES_MAX alike names as the
# trigram GIN index or a scan in order finds them first (not the most alike of all: finding
# those reads every name alike, and a million can be). A name with the prefix ranks above every
# name without it, so the prefix alone answers a query it fills, and the total counts every
# match up to the cap either way.
_COLUMNS = "id, username, display_name, avatar_version, search_name"
_CANDIDATES = f"""
    WITH prefixed AS MATERIALIZED (
        SELECT {_COLUMNS} FROM social_user WHERE is_active AND search_name LIKE %(prefix)s
            AND id <> ALL(%(hidden)s::bigint[])
        ORDER BY search_name USING ~<~ LIMIT %(cap)s),
    alike AS MATERIALIZED (
        SELECT {_COLUMNS} FROM social_user WHERE is_active AND search_name %%> %(q)s
            AND id <> ALL(%(hidden)s::bigint[]) AND (SELECT count(*) FROM prefixed) < %(cap)s
        LIMIT %(cap)s),
    candidates AS (SELECT * FROM prefixed UNION SELECT * FROM alike)
"""
_PAGE = (
    _CANDIDATES
    + """
    SELECT id, username, display_name, avatar_version, count(*) OVER () FROM candidates
    ORDER BY lower(username) = %(q)s DESC, search_name LIKE %(prefix)s DESC, search_name LIKE %(word_prefix)s DESC,
             word_similarity(%(q)s, search_name) DESC, id
    LIMIT %(limit)s OFFSET %(offset)s
"""
)
_COUNT = _CANDIDATES + "SELECT count(*) FROM candidates"


def _like_escaped(text: str) -> str:
    return re.sub(r"([\\%_])", r"\\\1", text)


def people_search(query: str, *, offset: int, limit: int, hidden: Iterable[int] = ()) -> tuple[list[dict], int]:
    """Active people whose username or display name matches ``query`` (prefix, any word's prefix,
    or alike: "alcie" finds alice), best first, and how many match, counted up to
    SEARCH_MATCHES_MAX (the same promise as for boards). In one transaction (the similarity
    threshold is set for it alone): the normalised query, then one query over at most twice
    SEARCH_MATCHES_MAX candidates: O(log n + cap) for the prefix; the trigram index only when the
    prefix finds fewer than the cap, and then until it has found the cap; O(cap log cap) to rank.
    The people in ``hidden`` (who block the viewer, or whom the viewer blocks) are neither found
    nor counted: a comparison on each name read."""
    alias = read_alias()  # the replica for the search views (ugcsite.platform.replicas)
    with transaction.atomic(using=alias), connections[alias].cursor() as cursor:
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
            "hidden": sorted(set(hidden)),
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
