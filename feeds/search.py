"""Search of boards by title, tags and the text in their drawings (docs/api.md, "Search").

What matches is PostgreSQL's full-text search over ``Board.search_vector`` (a stored generated
column, current after every create, update and delete): every word of the query as a prefix,
accents ignored, all of them required; a word written ``#tag`` matches that tag whole. Only
published boards match: hidden, deleted and suspended authors' boards never do. The newest
SEARCH_MATCHES_MAX matches are ranked (title above tags above drawing text, ties newest first)
and counted; for a conjunction of common terms (two or more, each with SEARCH_MATCHES_MAX rows or
more), the newest SEARCH_CONJUNCTION_MATCHES_MAX (``window_size``).

How they are found is ``BoardTerm``: one row per term of each published board, its primary key
ordering each term's boards by id. A term is a prefix of lexemes (a range of the key: every
word the prefix starts) or "#" and one tag. The statistics of each term (its rows up to
SEARCH_MATCHES_MAX, the id of the oldest of those newest ones, the distinct words it starts)
choose one of three plans, each reading the boards newest first and stopping at the window:

- ``rows``: a term with fewer rows than the window holds every match: all its rows are read and
  each board checked (a rare word: O(its boards)).
- ``merge``: otherwise the boards of the sparsest term, and of any term not much denser, are read
  newest first from their runs of the key and merged on id, index-only; each board they share
  is checked, until the window is full (a common word, two common words, a tag: O(the rows
  above the window's oldest match), not O(the boards above it)).
- ``walk``: when every term starts more than _RUNS_MAX words (one or two letters), boards are
  read newest first and checked; such a term matches a large share of them, so few are read.

Every plan checks each board it returns against the whole query (``@@``, the tags, the state)
and ranks it from its row, so the plans differ only in what they read (tests/test_search.py
holds each to the one SQL that states the rule). The planner is told to merge and to look
boards up one by one, never to sort or bitmap-scan (set locally): its estimates of merged runs are
far off, and before a bulk load's ANALYZE every estimate is, and it would otherwise hash or sort a
whole term to find a thousand boards.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import connections, transaction

from feeds.models import Board, BoardTerm
from feeds.rules import SEARCH_CONJUNCTION_MATCHES_MAX, SEARCH_MATCHES_MAX, TAG_PATTERN
from ugcsite.platform.replicas import read_alias

# Words of a query: letters and digits (any script). Each becomes a prefix term of the query
# ('gree':* finds "green"), all of them required. A tag is "#" and a tag's characters.
_WORD = re.compile(r"\w+")
_TAG = re.compile("#(" + TAG_PATTERN.removeprefix("^").removesuffix("$") + r")(?![\w-])")
_WORDS_MAX = 32
# A term whose words are more than this many is not merged (that many sorted runs of the key);
# such a prefix (one or two letters) matches much of the site, so walking boards is cheap.
_RUNS_MAX = 16
# Terms merged at most, and how much denser than the sparsest a term may be and still be merged
# (a merged term is read index-only to the window's depth; a term checked on each board costs a
# row lookup a board, some 16 times an index entry: a term denser than that is cheaper checked).
_MERGED_MAX = 3
_DENSER_MAX = 16
# Plans are streams by construction, read newest first until the window is full; the planner,
# misjudging merged runs, would hash them, or read every row of each term and sort it (a bitmap
# scan). It judges by its estimates, which a bulk load leaves wrong until ANALYZE: a fresh load of
# 10^6 boards had the commonest word read its 212,663 rows and sort them, 220-236 ms a search
# against 4 (bench/README.md, "Search right after a load"). With sorts, bitmap scans and nested
# loops off (the check's loop over candidates is the one join no plan avoids: terms are merged,
# never probed a board at a time), a stream is the only plan without another disabled step,
# whatever the statistics say; a sort no plan can avoid (a rare term's DISTINCT, the page's
# ranking) still runs. A disabled step adds 10^10 to a plan's cost, which would have every window
# compiled by JIT (over 200 ms); no window reads enough rows to gain from it.
_STREAM_SETTINGS = {
    "enable_hashjoin": "off",
    "enable_hashagg": "off",
    "enable_sort": "off",
    "enable_bitmapscan": "off",
    "enable_nestloop": "off",
    "jit": "off",
    "max_parallel_workers_per_gather": "0",
}

# The tsquery of the words: each one without accents (unaccent may yield any character, so it
# is quoted as tsquery wants: quotes doubled, backslashes dropped) and a prefix term, all ANDed.
_TSQUERY = r"""to_tsquery('simple', array_to_string(ARRAY(
    SELECT chr(39) || replace(replace(ugc_unaccent(word), chr(92), ''), chr(39), chr(39) || chr(39)) || chr(39) || ':*'
    FROM unnest(%(words)s::text[]) AS word), ' & '))"""
# The query is built first and then sent as a constant, so each plan's row check is a constant
# the planner and the executor see once. The planner's settings are read here, turned off for the
# window by the statistics query and put back by the window query itself (after it is planned),
# so no other query of the transaction is planned with them.
_BUILD = f"SELECT {_TSQUERY}::text, " + ", ".join(f"current_setting('{name}')" for name in _STREAM_SETTINGS)
_STREAM = ", ".join(f"set_config('{name}', '{value}', true)" for name, value in _STREAM_SETTINGS.items())
_RESTORE = ", ".join(f"set_config('{name}', %(was_{name})s, true)" for name in _STREAM_SETTINGS)
# A lexeme of the built tsquery as PostgreSQL prints it: quoted, quotes doubled, maybe ':*'.
_LEXEME = re.compile(r"'((?:[^']|'')*)'(:\*)?")
_OPERATOR = re.compile(r"<\d*>|<->|[&|!()]")  # what joins them

_TERMS = BoardTerm._meta.db_table
_BOARDS = Board._meta.db_table

# Per term: how many rows it has, up to the window (read newest first: its last words first), the
# oldest id among them, and the distinct words it starts, up to one past _RUNS_MAX (a skip scan
# of the key: one descent a word). The newest board id comes along to measure density with.
_STATS = f"""
    SELECT term.i, newest.n, newest.oldest, ARRAY(
        WITH RECURSIVE word (w) AS (
            (SELECT t.term FROM {_TERMS} t WHERE t.term >= term.low AND t.term < term.high ORDER BY t.term LIMIT 1)
            UNION ALL
            SELECT (SELECT t.term FROM {_TERMS} t WHERE t.term > word.w AND t.term < term.high ORDER BY t.term LIMIT 1)
            FROM word WHERE word.w IS NOT NULL)
        SELECT w FROM word WHERE w IS NOT NULL LIMIT %(runs)s),
        (SELECT max(id) FROM {_BOARDS}), {_STREAM}
    FROM unnest(%(lows)s::text[], %(highs)s::text[]) WITH ORDINALITY AS term (low, high, i)
    CROSS JOIN LATERAL (
        SELECT count(*) AS n, min(board_id) AS oldest FROM (
            SELECT t.board_id FROM {_TERMS} t WHERE t.term >= term.low AND t.term < term.high
            ORDER BY t.term DESC, t.board_id DESC LIMIT %(cap)s) AS rows) AS newest
    ORDER BY term.i
"""


@dataclass(frozen=True)
class Term:
    """One required term of a query: the key range [low, high) of BoardTerm it reads."""

    low: str
    high: str

    @classmethod
    def prefix(cls, lexeme: str) -> "Term":
        """Every word starting with ``lexeme`` (keys compare by code point: the "C" collation)."""
        return cls(lexeme, _successor(lexeme))

    @classmethod
    def exact(cls, key: str) -> "Term":
        """Exactly ``key`` (no key holds "\\x01": the parser drops control characters)."""
        return cls(key, key + "\x01")


@dataclass(frozen=True)
class TermStats:
    """What the statistics query found of one term."""

    rows: int  # up to SEARCH_MATCHES_MAX
    oldest: int | None  # the oldest board id of those rows
    words: list[str]  # the distinct keys it starts, up to _RUNS_MAX + 1


@dataclass(frozen=True)
class Plan:
    """How a window is read (the module's docstring)."""

    name: str  # "rows", "merge" or "walk"
    terms: list[int]  # which terms it reads (indexes into the query's terms)


def _successor(text: str) -> str:
    """The least string greater than every string starting with ``text`` (by code point)."""
    while text:
        point = ord(text[-1]) + 1
        if 0xD800 <= point <= 0xDFFF:  # surrogates are not characters: skip them
            point = 0xE000
        if point <= 0x10FFFF:
            return text[:-1] + chr(point)
        text = text[:-1]
    return "\U0010ffff" * 2  # above every key a word could be


def query_words(query: str) -> list[str]:
    """The words of a query typed by a person (letters and digits; the first 32), lower case,
    tags left out."""
    return [word.lower() for word in _WORD.findall(_TAG.sub(" ", query.lower()))][:_WORDS_MAX]


def query_tags(query: str) -> list[str]:
    """The tags a query names (``#tag``: matched whole), in order, each once."""
    return list(dict.fromkeys(_TAG.findall(query.lower())))[:_WORDS_MAX]


def tsquery_terms(tsquery: str) -> list[Term]:
    """The terms of a built tsquery: every lexeme is required (the query ANDs its words, and a
    word the parser splits becomes a phrase, which needs each of its lexemes)."""
    lexemes = [(lexeme.replace("''", "'"), star) for lexeme, star in _LEXEME.findall(tsquery)]
    return [Term.prefix(lexeme) if star else Term.exact(lexeme) for lexeme, star in lexemes]


def choose_plan(stats: list[TermStats], newest: int, *, cap: int) -> Plan:
    """The cheapest plan for terms with these statistics (the module's docstring)."""
    rare = [i for i, term in enumerate(stats) if term.rows < cap]
    if rare:
        return Plan("rows", [min(rare, key=lambda i: stats[i].rows)])
    runs = sorted((i for i, term in enumerate(stats) if len(term.words) <= _RUNS_MAX), key=lambda i: stats[i].oldest)
    if not runs:
        return Plan("walk", [])
    span = [newest - (term.oldest or 0) + 1 for term in stats]  # ids holding `cap` of its boards
    sparsest = runs[0]
    merged = [sparsest] + [i for i in runs[1:] if span[sparsest] < _DENSER_MAX * span[i]]
    return Plan("merge", merged[:_MERGED_MAX])


def window_size(terms: list[Term], stats: list[TermStats], *, cap: int) -> int:
    """How many of the newest matches are ranked and counted: ``cap``, or for a conjunction of
    common terms (two or more distinct terms, each with ``cap`` rows or more: a prefix counts a
    row for each word it starts in a board) the smaller SEARCH_CONJUNCTION_MATCHES_MAX. Such a
    window is read back to its oldest match through every term's rows, O(window / the share of
    each term's boards that match them all), and each match is looked up for its rank."""
    common = len(set(terms)) > 1 and all(term.rows >= cap for term in stats)
    return min(SEARCH_CONJUNCTION_MATCHES_MAX, cap) if common else cap


def _window_sql(
    plan: Plan, terms: list[Term], stats: list[TermStats], *, ranked: bool, tagged: bool, whole: bool, hiding: bool
):
    """The window query of a plan and its parameters (besides the shared ones): one row, the
    window's size and the page's ids. ``whole``: the query's words are ANDed (no phrase); then a
    board that a plan reading every term finds matches it, and is not checked again.
    ``hiding``: boards by the authors of ``%(hidden)s`` are left out where each board is checked
    (its row is read there anyway), so the window and its count are what the viewer sees."""
    checked = not (whole and plan.name != "walk" and len(plan.terms) == len(terms))
    match = (
        (" AND b.search_vector @@ %(q)s::tsquery" if ranked and checked else "")
        + (" AND b.tags @> %(tags)s::varchar[]" if tagged and checked else "")
        + (" AND b.author_id <> ALL(%(hidden)s::bigint[])" if hiding else "")
    )
    rank = "ts_rank(b.search_vector, %(q)s::tsquery)" if ranked else "0::real"
    params = {}
    if plan.name == "walk":
        window = f"""
            SELECT b.id, {rank} AS rank FROM {_BOARDS} b WHERE b.state = %(published)s{match}
            ORDER BY b.id DESC LIMIT %(cap)s"""
    else:
        if plan.name == "rows":
            term = terms[plan.terms[0]]
            params.update(low=term.low, high=term.high)
            candidates = f"SELECT DISTINCT t.board_id FROM {_TERMS} t WHERE t.term >= %(low)s AND t.term < %(high)s"
        else:
            streams = []  # (a FROM item, its condition): a term of one word is its run of the key
            for n, i in enumerate(plan.terms):
                words = stats[i].words
                if len(words) == 1:
                    params[f"w{n}_0"] = words[0]
                    streams.append((f"{_TERMS} s{n}", f"s{n}.term = %(w{n}_0)s"))
                    continue
                runs = []
                for m, word in enumerate(words):
                    params[f"w{n}_{m}"] = word
                    runs.append(f"(SELECT board_id FROM {_TERMS} WHERE term = %(w{n}_{m})s ORDER BY board_id DESC)")
                runs = runs or [f"(SELECT board_id FROM {_TERMS} WHERE false)"]  # a term no board has
                streams.append(
                    (f"(SELECT board_id FROM ({' UNION ALL '.join(runs)}) AS runs ORDER BY board_id DESC) s{n}", None)
                )
            joined = streams[0][0] + "".join(
                f" JOIN {item} ON {f'{condition} AND ' if condition else ''}s{n}.board_id = s0.board_id"
                for n, (item, condition) in enumerate(streams[1:], 1)
            )
            where = f" WHERE {streams[0][1]}" if streams[0][1] else ""
            # A board is once in a run; only a term of several runs can yield it twice.
            distinct = "" if all(condition for _, condition in streams) else "DISTINCT "
            candidates = f"SELECT {distinct}s0.board_id FROM {joined}{where} ORDER BY s0.board_id DESC"
        # OFFSET 0 keeps the check a lookup per candidate, in the candidates' order.
        window = f"""
            SELECT c.board_id AS id, checked.rank
            FROM ({candidates}) AS c
            CROSS JOIN LATERAL (
                SELECT {rank} AS rank FROM {_BOARDS} b
                WHERE b.id = c.board_id AND b.state = %(published)s{match} OFFSET 0) AS checked
            ORDER BY c.board_id DESC LIMIT %(cap)s"""
    sql = f"""
        WITH window_rows AS MATERIALIZED ({window})
        SELECT (SELECT count(*) FROM window_rows),
               ARRAY(SELECT id FROM window_rows ORDER BY rank DESC, id DESC LIMIT %(limit)s OFFSET %(offset)s),
               {_RESTORE}
    """
    return sql, params


def boards_search(
    query: str, *, offset: int, limit: int, plan: str | None = None, hidden: Iterable[int] = ()
) -> tuple[list[int], int]:
    """Ids of the published boards matching every word of ``query`` (as a prefix, accents
    ignored) and every ``#tag`` it names (whole), best first (title above tags above drawing
    text; ties newest first), and how many match, counting at most SEARCH_MATCHES_MAX (or, for
    common terms together, SEARCH_CONJUNCTION_MATCHES_MAX: window_size): the newest that many
    matches are ranked. Three queries in one transaction: the tsquery, each term's
    statistics (O(SEARCH_MATCHES_MAX) index entries a term), then the window by the plan chosen
    (or ``plan``, which tests pass to hold each plan to the rule). Boards by the authors in
    ``hidden`` (whom the viewer does not see) are neither found nor counted: a comparison on
    each board checked, O(log h) against the sorted array."""
    words, tags = query_words(query), query_tags(query)
    if not words and not tags:
        return [], 0
    alias = read_alias()  # the replica for the search views (ugcsite.platform.replicas)
    with transaction.atomic(using=alias), connections[alias].cursor() as cursor:
        cursor.execute(_BUILD, {"words": words})
        built, *was = cursor.fetchone()
        built = built if words else ""
        if words and not built:  # every word unaccented to nothing searchable
            return [], 0
        terms = tsquery_terms(built) + [Term.exact(f"#{tag}") for tag in tags]
        cap = SEARCH_MATCHES_MAX
        cursor.execute(
            _STATS,
            {"lows": [t.low for t in terms], "highs": [t.high for t in terms], "cap": cap, "runs": _RUNS_MAX + 1},
        )
        rows = cursor.fetchall()
        stats = [TermStats(rows=row[1], oldest=row[2], words=row[3]) for row in rows]
        newest = rows[0][4] or 0
        chosen = choose_plan(stats, newest, cap=cap) if plan is None else _forced(plan, stats)
        window = window_size(terms, stats, cap=cap)
        whole = all(op == "&" for op in _OPERATOR.findall(_LEXEME.sub("", built)))
        hidden = sorted(set(hidden))
        sql, params = _window_sql(
            chosen, terms, stats, ranked=bool(built), tagged=bool(tags), whole=whole, hiding=bool(hidden)
        )
        params.update(
            hidden=hidden,
            q=built,
            tags=tags,
            published=Board.State.PUBLISHED,
            cap=window,
            limit=limit,
            offset=min(offset, window),
        )
        params.update({f"was_{name}": value for name, value in zip(_STREAM_SETTINGS, was, strict=True)})
        cursor.execute(sql, params)
        total, ids, *_ = cursor.fetchone()
    return ids, total


def _forced(name: str, stats: list[TermStats]) -> Plan:
    """A plan by name over the terms it can read (for tests): ``rows`` reads the smallest term's
    rows whatever their number, ``merge`` every term of few enough words, ``walk`` boards."""
    if name == "rows":
        return Plan("rows", [min(range(len(stats)), key=lambda i: stats[i].rows)])
    if name == "merge":
        runs = [i for i, term in enumerate(stats) if len(term.words) <= _RUNS_MAX]
        return Plan("merge", runs[:_MERGED_MAX]) if runs else Plan("walk", [])
    return Plan("walk", [])
