"""Search of boards by title, tags and the text in their drawings (API.md, "Search"):
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

_SEARCH = f"""
    WITH query AS (SELECT {_TSQUERY} AS q),
    matches AS (
        SELECT b.id, ts_rank(b.search_vector, query.q) AS rank
        FROM {Board._meta.db_table} b, query
        WHERE b.search_vector @@ query.q AND b.state = %(published)s
        ORDER BY b.id DESC
        LIMIT %(cap)s
    )
    SELECT id, count(*) OVER () FROM matches ORDER BY rank DESC, id DESC LIMIT %(limit)s OFFSET %(offset)s
"""

_COUNT = f"""
    SELECT count(*) FROM (SELECT 1 FROM {Board._meta.db_table}
                          WHERE search_vector @@ {_TSQUERY} AND state = %(published)s
                          LIMIT %(cap)s) AS matches
"""


def query_words(query: str) -> list[str]:
    """The words of a query typed by a person (letters and digits; the first 32), lower case."""
    return [word.lower() for word in _WORD.findall(query)][:_WORDS_MAX]


def boards_search(query: str, *, offset: int, limit: int) -> tuple[list[int], int]:
    """Ids of the published boards matching every word of ``query`` (as a prefix, accents
    ignored), best first (title above tags above drawing text; ties newest first), and how many
    match, counting at most SEARCH_MATCHES_MAX: the newest that many matches are ranked, so a
    query that matches much of the site costs what SEARCH_MATCHES_MAX matches do. One query
    (two for a page past the last): a GIN bitmap scan, O(matches) to gather them,
    O(SEARCH_MATCHES_MAX log SEARCH_MATCHES_MAX) to rank."""
    words = query_words(query)
    if not words:
        return [], 0
    params = {"words": words, "published": Board.State.PUBLISHED, "limit": limit, "offset": offset,
              "cap": SEARCH_MATCHES_MAX}
    rows = []
    with connection.cursor() as cursor:
        if offset < SEARCH_MATCHES_MAX:
            cursor.execute(_SEARCH, params)
            rows = cursor.fetchall()
        if rows:
            return [row[0] for row in rows], rows[0][1]
        if not offset:
            return [], 0
        cursor.execute(_COUNT, params)
        return [], cursor.fetchone()[0]
