"""Search of boards by title, tags and the text in their drawings (docs/api.md, "Search"):
PostgreSQL full-text search over ``Board.search_vector`` (a stored generated column, so it is
current after every create, update and delete) with its GIN index. Only published boards
match: hidden, deleted and suspended authors' boards never do."""

import re

from django.db import connection

from feeds.models import Board
from feeds.rules import SEARCH_MATCHES_MAX

# Words of a query: letters and digits (any script). Each becomes a prefix term of the query
# ('gree':* finds "green"), all of them required.
_WORD = re.compile(r"\w+")
_WORDS_MAX = 32

# The tsquery of the words: each one without accents (unaccent may yield any character, so it
# is quoted as tsquery wants: quotes doubled, backslashes dropped) and a prefix term, all ANDed.
_TSQUERY = r"""to_tsquery('simple', array_to_string(ARRAY(
    SELECT chr(39) || replace(replace(ugc_unaccent(word), chr(92), ''), chr(39), chr(39) || chr(39)) || chr(39) || ':*'
    FROM unnest(%(words)s::text[]) AS word), ' & '))"""

# The query is built first and then sent as a constant: PostgreSQL's statistics on the search
# vectors (most common lexemes) then estimate how many boards match, and the planner takes the
# GIN index for a rare word but walks boards newest first for a word that half of them hold,
# stopping at the cap. (Computed inside the same statement, it would be an unknown to the planner,
# which then gathers every match of a common word: 0.4 s at 1,000,000 boards, bench/search.py.)
_BUILD = f"SELECT {_TSQUERY}::text"

_SEARCH = f"""
    WITH matches AS (
        SELECT id, ts_rank(search_vector, %(q)s::tsquery) AS rank
        FROM {Board._meta.db_table}
        WHERE search_vector @@ %(q)s::tsquery AND state = %(published)s
        ORDER BY id DESC
        LIMIT %(cap)s
    )
    SELECT id, count(*) OVER () FROM matches ORDER BY rank DESC, id DESC LIMIT %(limit)s OFFSET %(offset)s
"""

_COUNT = f"""
    SELECT count(*) FROM (SELECT 1 FROM {Board._meta.db_table}
                          WHERE search_vector @@ %(q)s::tsquery AND state = %(published)s
                          LIMIT %(cap)s) AS matches
"""


def query_words(query: str) -> list[str]:
    """The words of a query typed by a person (letters and digits; the first 32), lower case."""
    return [word.lower() for word in _WORD.findall(query)][:_WORDS_MAX]


def boards_search(query: str, *, offset: int, limit: int) -> tuple[list[int], int]:
    """Ids of the published boards matching every word of ``query`` (as a prefix, accents
    ignored), best first (title above tags above drawing text; ties newest first), and how many
    match, counting at most SEARCH_MATCHES_MAX: the newest that many matches are ranked, so a
    query that matches much of the site costs what SEARCH_MATCHES_MAX matches do. Two queries
    (three for a page past the last): the tsquery, then the matches, either from the GIN index
    (a rare word: O(matches)) or newest first from the state index until the cap (a common one:
    O(cap / share of boards matching)), as the planner's statistics say; O(cap log cap) to rank."""
    words = query_words(query)
    if not words:
        return [], 0
    rows = []
    with connection.cursor() as cursor:
        cursor.execute(_BUILD, {"words": words})
        terms = cursor.fetchone()[0]
        if not terms:  # every word unaccented to nothing searchable
            return [], 0
        params = {
            "q": terms,
            "published": Board.State.PUBLISHED,
            "limit": limit,
            "offset": offset,
            "cap": SEARCH_MATCHES_MAX,
        }
        if offset < SEARCH_MATCHES_MAX:
            cursor.execute(_SEARCH, params)
            rows = cursor.fetchall()
        if rows:
            return [row[0] for row in rows], rows[0][1]
        if not offset:
            return [], 0
        cursor.execute(_COUNT, params)
        return [], cursor.fetchone()[0]
