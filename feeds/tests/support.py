"""What the timeline tests share: the SQL oracles (the published boards of an owner, M, or of
the people a reader follows, P, newest first, read with plain SQL), the bulk loaders that build
long timelines fast (real snowflake ids, one INSERT ... SELECT FROM unnest(), Redis pipelines),
the walkers that page a timeline through a selector or the API and compare it with an oracle,
and the small world of test_history (alice, bob, carol and a reader who follows alice and bob).

Helpers only: no tests and no fixtures here (fixtures live in conftest.py or beside their tests).
"""

import json
import math
import time
from dataclasses import dataclass, field

from django.db import connection
from websockets.sync.client import connect

from feeds import keys, selectors
from feeds.models import Board, TimelineChunk
from feeds.services.follows import follow_create
from feeds.timelines import archive
from feeds.timelines.ids import board_id_time, next_board_id
from social.models import Follow, User

PASSWORD = "password123"
DOC_JSON = (
    '{"width":100,"height":100,"background":"#ffffff","elements":[{"type":"path",'
    '"color":"#000000","width":2,"points":[[1,1],[99,99]]}]}'
)
KINDS = ("sketch", "diagram", "note", "comic", "map")
LIMITS = (1, 7, 20, 100)  # the page sizes every boundary is read with


# --- SQL oracles -------------------------------------------------------------------------------


def _column(sql: str, params) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


def sql_profile(user_id: int) -> list[int]:
    """The user's published boards, newest first."""
    return _column(
        f"SELECT id FROM {Board._meta.db_table} WHERE author_id = %s AND state = 'published' ORDER BY id DESC",
        [user_id],
    )


def sql_feed(user_id: int) -> list[int]:
    """The published boards of everyone the user follows, newest first."""
    return _column(
        f"SELECT b.id FROM {Board._meta.db_table} b JOIN {Follow._meta.db_table} f ON f.followee_id = b.author_id "
        "WHERE f.follower_id = %s AND b.state = 'published' ORDER BY b.id DESC",
        [user_id],
    )


def sql_oracle(kind: str, user_id: int) -> list[int]:
    return sql_profile(user_id) if kind == "m" else sql_feed(user_id)


def sql_archived_ids(user_id: int, kind: str) -> list[int]:
    """Every id stored in the user's chunks of that timeline (with repeats, if any)."""
    return _column(
        f"SELECT unnest(ids) FROM {TimelineChunk._meta.db_table} WHERE owner_id = %s AND timeline = %s",
        [user_id, kind],
    )


def sql_ids_stored_twice(user_id: int, kind: str) -> list[int]:
    return _column(
        f"SELECT id FROM (SELECT unnest(ids) AS id FROM {TimelineChunk._meta.db_table} "
        "WHERE owner_id = %s AND timeline = %s) s GROUP BY id HAVING count(*) > 1",
        [user_id, kind],
    )


def sql_chunk_totals() -> tuple[int, int]:
    """(rows, ids) over the whole archive."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*), coalesce(sum(cardinality(ids)), 0) FROM {TimelineChunk._meta.db_table}")
        rows, ids = cursor.fetchone()
    return rows, ids


# --- building timelines fast -------------------------------------------------------------------


@dataclass(frozen=True)
class Posted:
    id: int
    author_id: int


def bulk_boards(authors) -> list[Posted]:
    """One published board per entry of ``authors`` (User objects), ids ascending in that order:
    real snowflake ids (feeds.timelines.ids), all rows inserted by one INSERT ... SELECT FROM unnest()."""
    rows = [Posted(next_board_id(), author.pk) for author in authors]
    if rows:
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {Board._meta.db_table} "
                "(id, author_id, title, kind, tags, doc_json, created_at, updated_at, views, state) "
                "SELECT i, a, 'board ' || (i %% 100000), k, '{}', %s, t, t, 0, 'published' "
                "FROM unnest(%s::bigint[], %s::bigint[], %s::text[], %s::timestamptz[]) AS x(i, a, k, t)",
                [
                    DOC_JSON,
                    [r.id for r in rows],
                    [r.author_id for r in rows],
                    [KINDS[r.id % 5] for r in rows],
                    [board_id_time(r.id) for r in rows],
                ],
            )
            counts: dict[int, int] = {}
            for r in rows:
                counts[r.author_id] = counts.get(r.author_id, 0) + 1
            for author_id, count in counts.items():  # as board_create keeps it
                cursor.execute(
                    f"UPDATE {User._meta.db_table} SET boards_count = boards_count + %s WHERE id = %s",
                    [count, author_id],
                )
    return rows


def zadd_many(redis, key: str, ids) -> None:
    pipe = redis.pipeline(transaction=False)
    ids = list(ids)
    for start in range(0, len(ids), 1000):
        pipe.zadd(key, {i: i for i in ids[start : start + 1000]})
    pipe.execute()


def to_profiles(redis, boards: list[Posted]) -> None:
    """Each board into its author's M, as _board_published does."""
    by_author: dict[int, list[int]] = {}
    for board in boards:
        by_author.setdefault(board.author_id, []).append(board.id)
    for author_id, ids in by_author.items():
        zadd_many(redis, keys.profile_timeline(author_id), ids)


def head_ids(redis, kind: str, user_id: int) -> list[int]:
    return [int(i) for i in redis.zrevrange(keys.timeline_key(kind, user_id), 0, -1)]


def boundaries(redis, kind: str, user_id: int) -> list[int]:
    """Where the head ends, as offsets into the timeline: the number of head ids above the
    archived mark (the first page that needs the archive starts there), and the head's size."""
    key = keys.timeline_key(kind, user_id)
    marked = archive.archived_max(user_id, kind)
    above = redis.zcount(key, f"({marked}", "+inf") if marked else redis.zcard(key)
    return sorted({above, redis.zcard(key)})


# --- reading ------------------------------------------------------------------------------------


def selector_fetch(kind: str, user_id: int):
    read = selectors.profile_boards if kind == "m" else selectors.home_feed

    def fetch(*, limit, offset=None, before=None):
        return read(user_id, offset=offset, before=before, limit=limit)

    return fetch


def api_fetch(client, path: str):
    def fetch(*, limit, offset=None, before=None):
        query = {"limit": limit}
        if offset is not None:
            query["offset"] = offset
        if before is not None:
            query["before"] = before
        response = client.get(path, **query)
        assert response.status_code == 200, response.content
        return response.json()

    return fetch


def ids_of(answer) -> list[int]:
    return [item["id"] for item in answer["items"]]


def walk(fetch, *, limit: int, mode: str, strict: bool = True) -> tuple[list[int], int]:
    """Every id of a timeline, page by page, following offsets or ``next``; (ids, pages).
    ``strict``: every non-final page is full and its ``next`` is its last id (no board of the
    walk was filtered out at hydration)."""
    got, pages, offset, cursor = [], 0, 0, None
    while True:
        answer = fetch(limit=limit, offset=offset) if mode == "offset" else fetch(limit=limit, before=cursor)
        page = ids_of(answer)
        got += page
        pages += 1
        if answer["next"] is None:
            return got, pages
        if strict:
            assert len(page) == limit, (pages, len(page))
            assert answer["next"] == str(page[-1])
        cursor, offset = int(answer["next"]), offset + limit
        assert pages <= 20_000, "paging does not end"


def assert_walks_exact(fetch, oracle: list[int], *, limits=(7, 100), strict: bool = True) -> None:
    assert oracle == sorted(set(oracle), reverse=True)
    for limit in limits:
        for mode in ("offset", "before"):
            got, pages = walk(fetch, limit=limit, mode=mode, strict=strict)
            assert len(got) == len(set(got)), f"{mode} walk, limit {limit}: duplicates"
            missing, extra = set(oracle) - set(got), set(got) - set(oracle)
            assert not missing and not extra, (
                f"{mode} walk, limit {limit}: {len(got)} of {len(oracle)} ids; {len(missing)} missing "
                f"(newest {sorted(missing)[-3:]}, oldest {sorted(missing)[:3]}), {len(extra)} extra {sorted(extra)[:3]}"
            )
            assert got == oracle, f"{mode} walk, limit {limit}: order"
            if strict:
                assert pages == max(1, math.ceil(len(oracle) / limit)), (
                    f"{mode} walk, limit {limit}: next was not None at the end"
                )


def expected_page(oracle: list[int], start: int, limit: int) -> dict:
    ids = oracle[start : start + limit]
    return {"ids": ids, "next": str(ids[-1]) if ids and start + limit < len(oracle) else None}


def got_page(answer) -> dict:
    return {"ids": ids_of(answer), "next": answer["next"]}


# --- a small world -------------------------------------------------------------------------------


@dataclass
class World:
    alice: object
    bob: object
    carol: object
    reader: object
    run: object
    boards: list = field(default_factory=list)

    def follow(self, follower, followee):
        self.run(lambda: follow_create(follower=follower, followee=followee))

    def owner(self, kind: str):
        """Whose timeline of that kind the tests read: alice's M, or reader's P (alice + bob)."""
        return self.alice if kind == "m" else self.reader


def load_world(w: World, redis, *, cycles: int = 120) -> None:
    """alice 3/5 of the boards, bob and carol 1/5 each, interleaved in time; every board into its
    author's M, and alice's and bob's into reader's P (straight into the head: no cap, no archive)."""
    w.boards = bulk_boards([w.alice, w.bob, w.alice, w.carol, w.alice] * cycles)
    to_profiles(redis, w.boards)
    zadd_many(redis, keys.home_timeline(w.reader.pk), [b.id for b in w.boards if b.author_id in (w.alice.pk, w.bob.pk)])


def set_windows(settings, *, hot: int, chunk: int = 100, slack: int | None = None) -> None:
    settings.PROFILE_TIMELINE_HOT = settings.HOME_TIMELINE_HOT = hot
    settings.TIMELINE_CHUNK = chunk
    settings.HOME_TIMELINE_SLACK = slack if slack is not None else max(150, 2 * chunk)


class LiveClient:
    """A websockets client of a board's live socket (feeds.live): ``hello`` read on connect."""

    def __init__(self, server, board_id, *, token=None, since=None, headers=None, max_size=2**20):
        query = f"?since={since}" if since is not None else ""
        extra = dict(headers or {})
        if token:
            extra["Authorization"] = f"Bearer {token}"
        self.socket = connect(
            f"{server.ws}/ws/boards/{board_id}{query}", additional_headers=extra, open_timeout=10, max_size=max_size
        ).__enter__()  # closed by close()
        self.skipped: list[dict] = []  # messages recv_type passed over, for a later recv_type
        self.hello = self.recv()

    def send(self, message):
        self.socket.send(message if isinstance(message, str) else json.dumps(message))

    def recv(self, timeout=10):
        return json.loads(self.socket.recv(timeout=timeout))

    def recv_type(self, kind, timeout=10):
        for message in self.skipped:
            if message["type"] == kind:
                self.skipped.remove(message)
                return message
        deadline = time.monotonic() + timeout
        while True:
            message = self.recv(timeout=max(deadline - time.monotonic(), 0.01))
            if message["type"] == kind:
                return message
            self.skipped.append(message)

    def op(self, cid, op):
        self.send({"type": "op", "client_op_id": cid, "op": op})

    def close(self):
        self.socket.close()
