"""The live state of a board in the data Redis (storage: no tasks, no Channels).

While people draw, a board's doc lives here, beside its author's keys (``feeds.keys``: one slot
per board on a cluster): its elements in drawing order, its counts (elements, points) for the
limits, the sequence number of the last accepted op and the op log, a stream of every accepted
op. An op is checked against this state and appended to the log in one script
(``live_apply.lua``), so the board's order is Redis's order whatever process took the op, and
an op is durable before it is broadcast. PostgreSQL's ``Board.doc_json`` catches up by
compaction (feeds.live.compaction) and ``Board.live_seq`` says which seq it holds.

A board with no live state is loaded from PostgreSQL when someone opens it (``live_load``); the
state expires LIVE_STATE_TTL after the last op, long after compaction wrote it to PostgreSQL.
"""

import asyncio
import json
import math
import secrets
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from feeds import keys
from feeds.live.scripts import scripts
from feeds.models import Board
from feeds.rules import MAX_ELEMENTS, MAX_POINTS
from feeds.scripts import scripts as common_scripts
from feeds.validation import doc_with_ids, element_extent, element_points
from ugcsite.platform.redis import get_async_batcher, get_async_redis, get_redis

# Ops kept in a board's log for replay (?since=): a client further behind gets the whole doc.
LIVE_REPLAY_KEEP = 5_000
# A presence entry lives this long unless its connection refreshes it (feeds.live.consumer).
PRESENCE_TTL = 60


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True, allow_nan=False)
_json = _ENCODER.encode  # compact JSON, ASCII only, no NaN: what the log keeps and the sockets send


@dataclass(frozen=True)
class BoardRef:
    """What names a board's live keys: its author (the hash tag) and its id."""

    author_id: int
    board_id: int

    def state_keys(self) -> list[str]:
        return [
            keys.live_meta(*self.key_args),
            keys.live_elements(*self.key_args),
            keys.live_order(*self.key_args),
            keys.live_ops(*self.key_args),
            keys.live_right(*self.key_args),
            keys.live_bottom(*self.key_args),
        ]

    @property
    def key_args(self) -> tuple[int, int]:
        return self.author_id, self.board_id

    @classmethod
    def of(cls, board: Board) -> "BoardRef":
        return cls(board.author_id, board.pk)


@dataclass
class Snapshot:
    gen: str
    seq: int
    compacted: int
    head: dict  # width, height, background
    title: str | None  # the board's title as of seq (None: a state loaded before titles were kept)
    elements: list[str]  # each element's JSON as sent

    def doc_text(self) -> str:
        """The doc as JSON text: the head's fields, then the elements as they were sent."""
        head = _json(self.head)
        return f'{head[:-1]},"elements":[{",".join(self.elements)}]}}'

    def doc(self) -> dict:
        return json.loads(self.doc_text())


def _doc_args(doc: dict) -> tuple[str, int, int, list]:
    head = {"width": doc["width"], "height": doc["height"], "background": doc["background"]}
    flat: list = []
    points = 0
    for element in doc["elements"]:
        count = element_points(element)
        points += count
        flat += [element["id"], _json(element), count, *element_extent(element)]
    return _json(head), len(doc["elements"]), points, flat


def _ttl() -> int:
    return settings.LIVE_STATE_TTL_SECONDS


def live_load(board_id: int) -> Board | None:
    """Make a published board live (if it is not already), from its doc and live_seq in
    PostgreSQL, under the board's row lock (a concurrent API edit of the doc waits for it, then
    resets the live state). The board, or None if it is not published. O(elements)."""
    with transaction.atomic():
        board = Board.objects.select_for_update().filter(pk=board_id, state=Board.State.PUBLISHED).first()
        if board is None:
            return None
        doc = board.doc
        if any("id" not in element for element in doc["elements"]):
            # A doc from before element ids: they are given now, once, and kept in PostgreSQL
            # (under the lock), so a later load gives the same ones.
            doc = doc_with_ids(doc)
            board.doc_json = _json(doc)
            Board.objects.filter(pk=board.pk).update(doc_json=board.doc_json)
        head, count, points, flat = _doc_args(doc)
        scripts.live_load(
            keys=BoardRef.of(board).state_keys(),
            mode="load",
            seq=board.live_seq,
            generation=secrets.token_hex(8),
            head=head,
            elements=count,
            points=points,
            log_kept=LIVE_REPLAY_KEEP,
            ttl=_ttl(),
            doc=None,
            by=None,
            title=board.title,
            items=flat,
        )
    return board


async def live_titled_async(ref: BoardRef) -> bool:
    """Whether a board is live, with its title kept (a state loaded before titles were kept is
    loaded again): a socket opening a board already live reads nothing more of it than this
    before its snapshot, where ``live_load`` parses its doc under the row lock (issue 42: 200
    sockets opening one big board at once each parsed and sent the whole doc to Redis, in turn).
    From an event loop, batched with the loop's other calls. O(1)."""
    return bool(await get_async_batcher().call(lambda pipe: pipe.hexists(keys.live_meta(*ref.key_args), "title")))


def published_among(board_ids: set[int]) -> set[int]:
    """Which of these boards are still published (the live sockets' check, feeds.live.hub). One
    query, O(boards)."""
    return set(Board.objects.filter(pk__in=board_ids, state=Board.State.PUBLISHED).values_list("pk", flat=True))


def live_reset(board: Board, doc: dict, *, by: str) -> int | None:
    """Replace a live board's doc whole (an API edit): an entry of its log after every op before
    it. Call under the board's row lock (feeds.services.boards.board_update). The new seq, or
    None when the board is not live (PostgreSQL alone holds its doc). O(elements)."""
    head, count, points, flat = _doc_args(doc)
    seq, done = scripts.live_load(
        keys=BoardRef.of(board).state_keys(),
        mode="reset",
        seq=0,
        generation=secrets.token_hex(8),
        head=head,
        elements=count,
        points=points,
        log_kept=LIVE_REPLAY_KEEP,
        ttl=_ttl(),
        doc=_json(doc),
        by=by,
        title=None,
        items=flat,
    )
    return int(seq) if done else None


class OpRefused(Exception):
    """The op cannot be applied: ``reason`` is one of live_apply.lua's, ``details`` what it
    said more (for ``smaller``: the right and bottom end the elements reach, as text)."""

    def __init__(self, reason: str, details: tuple = ()):
        super().__init__(reason)
        self.reason = reason
        self.details = details


def op_json(op: dict) -> tuple[str, str | None]:
    """(the op's JSON, its element's JSON or None): the element encoded once, the op around it."""
    element = op.get("element")
    if element is None:
        return _json(op), None
    element_json = _json(element)
    rest = _json({key: value for key, value in op.items() if key != "element"})
    return f'{rest[:-1]},"element":{element_json}}}', element_json


def _apply_args(
    *,
    gen: str,
    kind: str,
    element_id: str,
    element: dict | None,
    element_json: str | None,
    by: str,
    client_op_id: str,
    op_json: str,
    board: dict | None = None,
) -> list:
    element_json = element_json or ""
    right, bottom = element_extent(element) if element is not None else ("", "")
    board = board or {}
    return scripts.live_apply.args(
        kind=kind,
        element_id=element_id,
        element=element_json,
        points=element_points(element) if element else 0,
        right=right,
        bottom=bottom,
        generation=gen,
        by=by,
        client_op=client_op_id,
        op=op_json,
        log_kept=LIVE_REPLAY_KEEP,
        max_elements=MAX_ELEMENTS,
        max_points=MAX_POINTS,
        ttl=_ttl(),
        background=board.get("background"),
        width=board.get("width"),
        height=board.get("height"),
        title=board.get("title"),
    )


def _applied(answer: list) -> tuple[int, int]:
    if isinstance(answer[0], str):
        raise OpRefused(answer[0], tuple(answer[1:]))
    return int(answer[0]), int(answer[1])


def live_apply(ref: BoardRef, **op) -> tuple[int, int]:
    """Apply one validated op and append it to the board's log: (its seq, the seq PostgreSQL
    holds), or OpRefused. An element past the canvas grows it (the head's width and height) to
    hold it; a ``board`` op sets the head's background, width and height (never below what the
    elements reach: ``smaller``) and the title the live state knows. ``op``: gen, kind,
    element_id, element, by, client_op_id, op_json and element_json (``op_json(op)``: as the log
    keeps them and ``op_frame`` sends them), and ``board`` (a board op's fields). One script
    call, O(log elements + size of the element)."""
    return _applied(scripts.live_apply(keys=ref.state_keys(), args=_apply_args(**op)))


async def live_apply_async(ref: BoardRef, **op) -> tuple[int, int]:
    """live_apply from an event loop (the live sockets), batched with the loop's other calls."""
    return _applied(await scripts.live_apply.run_async(keys=ref.state_keys(), args=_apply_args(**op)))


def _board_op_args(op: dict, by: str, client_op_id: str) -> dict:
    text, _ = op_json(op)
    return {
        "gen": "",
        "kind": "board",
        "element_id": "",
        "element": None,
        "element_json": None,
        "by": by,
        "client_op_id": client_op_id,
        "op_json": text,
        "board": op,
    }


def live_board_op(ref: BoardRef, op: dict, *, by: str, client_op_id: str = "") -> tuple[int, int]:
    """Apply a ``board`` op (docs/api.md: any of background, width, height, title; validated)
    and append it to the log, as live_apply. A title must be written to PostgreSQL in the same
    transaction, under the board's row lock (feeds.services.boards). O(log elements)."""
    return live_apply(ref, **_board_op_args(op, by, client_op_id))


async def live_board_op_async(ref: BoardRef, op: dict, *, by: str, client_op_id: str = "") -> tuple[int, int]:
    """live_board_op from an event loop (the live sockets): an op without a title."""
    return await live_apply_async(ref, **_board_op_args(op, by, client_op_id))


def live_extents_fill(ref: BoardRef) -> None:
    """COMPAT(remove after 2026-12-31): give a state loaded by the release before 2026-11-26 the
    right and bottom ends of its elements (live_apply answered ``extents``), read from its doc;
    if an op comes meanwhile nothing is written, and the next answer says so again. O(points)."""
    snapshot = live_snapshot(ref)
    if snapshot is None:
        return
    items: list = []
    for text in snapshot.elements:
        element = json.loads(text)
        items += [element["id"], *element_extent(element)]
    meta, *_, rights, bottoms = ref.state_keys()
    scripts.live_extents(keys=[meta, rights, bottoms], seq=snapshot.seq, items=items)


def live_snapshot(ref: BoardRef) -> Snapshot | None:
    """The live doc and its seq, or None when the board is not live. O(elements)."""
    return _snapshot(scripts.live_snapshot(keys=ref.state_keys()[:3]))


async def live_snapshot_async(ref: BoardRef) -> Snapshot | None:
    """live_snapshot from an event loop (a socket's hello), batched with the loop's other calls."""
    return _snapshot(await scripts.live_snapshot.run_async(keys=ref.state_keys()[:3]))


def _snapshot(answer: list) -> Snapshot | None:
    if not answer:
        return None
    gen, seq, compacted, head, title, *elements = answer
    return Snapshot(
        gen=gen, seq=int(seq), compacted=int(compacted), head=json.loads(head), title=title, elements=elements
    )


def live_head(ref: BoardRef) -> tuple[str, dict] | None:
    """(generation, head) of a live board: what ops are validated against. O(1)."""
    return _head(get_redis().hmget(keys.live_meta(*ref.key_args), "gen", "head"))


async def live_head_async(ref: BoardRef) -> tuple[str, dict] | None:
    return _head(await get_async_redis().hmget(keys.live_meta(*ref.key_args), "gen", "head"))


def _head(answer: list) -> tuple[str, dict] | None:
    gen, head = answer
    return (gen, json.loads(head)) if gen else None


def op_message(seq: int, by: str, client_op_id: str, op: dict) -> dict:
    """The op message of docs/api.md, as every receiver gets it."""
    return {"type": "op", "seq": seq, "by": by, "client_op_id": client_op_id, "op": op}


def op_frame(seq: int, by: str, client_op_id: str, op_json: str) -> str:
    """``op_message`` as JSON text, around the op's JSON as the log keeps it (encoded once)."""
    return f'{{"type":"op","seq":{int(seq)},"by":{_json(by)},"client_op_id":{_json(client_op_id)},"op":{op_json}}}'


@dataclass
class LogEntry:
    seq: int
    by: str
    client_op_id: str
    op: dict | None  # an op, or None for a reset
    doc: dict | None  # the doc of a reset

    def message(self) -> dict:
        """The op message of docs/api.md (for an op entry)."""
        return op_message(self.seq, self.by, self.client_op_id, self.op)


def live_replay(ref: BoardRef, since: int, upto: int | None = None) -> list[LogEntry] | None:
    """The log's entries after ``since`` (up to ``upto``), or None when the log no longer holds
    all of them (trimmed, or the live state was lost). O(log n + entries)."""
    end = f"{upto}-1" if upto is not None else "+"
    rows = get_redis().xrange(keys.live_ops(*ref.key_args), f"{since + 1}-0", end)
    entries = _log_entries(rows)
    if entries:
        return entries if entries[0].seq == since + 1 else None
    return _replay_empty(get_redis().hget(keys.live_meta(*ref.key_args), "seq"), since, upto)


async def live_replay_async(ref: BoardRef, since: int, upto: int | None = None) -> list[LogEntry] | None:
    """live_replay from an event loop (a socket's hello with ``?since=``): the log's range and
    the board's seq in one batch (one round trip). O(log n + entries)."""
    end = f"{upto}-1" if upto is not None else "+"
    batcher = get_async_batcher()
    rows, current = await asyncio.gather(
        batcher.call(lambda pipe: pipe.xrange(keys.live_ops(*ref.key_args), f"{since + 1}-0", end)),
        batcher.call(lambda pipe: pipe.hget(keys.live_meta(*ref.key_args), "seq")),
    )
    entries = _log_entries(rows)
    if entries:
        return entries if entries[0].seq == since + 1 else None
    return _replay_empty(current, since, upto)


def _replay_empty(current: str | None, since: int, upto: int | None) -> list | None:
    """No entry after ``since``: nothing missed ([]) when the board stands at it, else None."""
    if current is None:
        return None
    return [] if int(current) == since or (upto is not None and upto <= since) else None


def _log_entries(rows: list) -> list[LogEntry]:
    return [
        LogEntry(
            seq=int(entry_id.split("-")[0]),
            by=fields.get("by", ""),
            client_op_id=fields.get("cid", ""),
            op=json.loads(fields["op"]) if "op" in fields else None,
            doc=json.loads(fields["doc"]) if "doc" in fields else None,
        )
        for entry_id, fields in rows
    ]


def live_mark_compacted(ref: BoardRef, seq: int) -> None:
    """Record that PostgreSQL holds the doc up to ``seq`` (never lowers the mark). O(1)."""
    common_scripts.hset_max(keys=[keys.live_meta(*ref.key_args)], field="compacted", value=seq)


# --- boards waiting for compaction -------------------------------------------------------------


def dirty_mark(ref: BoardRef, *, now: float | None = None, client=None):
    """Note that the board has ops PostgreSQL lacks (keeps the earliest time). O(log dirty boards).
    ``client``: another client, or a pipeline (the live sockets' batch, ugcsite.platform.redis.Batcher)."""
    client = client if client is not None else get_redis()
    return client.zadd(keys.live_dirty(), {keys.live_dirty_member(*ref.key_args): now or time.time()}, nx=True)


def dirty_due(*, older_than: float, limit: int = 100) -> list[BoardRef]:
    """Boards dirty since before ``older_than`` (epoch seconds), the longest waiting first."""
    members = get_redis().zrangebyscore(keys.live_dirty(), "-inf", older_than, start=0, num=limit)
    return [BoardRef(*keys.live_dirty_parse(member)) for member in members]


def dirty_clear(ref: BoardRef, seq: int) -> None:
    """Compaction wrote the doc up to ``seq``: the board leaves the dirty set, unless an op came
    after ``seq`` (then it goes back in: its op's own mark may have landed before this removal)."""
    client = get_redis()
    member = keys.live_dirty_member(*ref.key_args)
    client.zrem(keys.live_dirty(), member)
    current = client.hget(keys.live_meta(*ref.key_args), "seq")
    if current is not None and int(current) > seq:
        dirty_mark(ref)


# --- who is on the board ------------------------------------------------------------------------


def _presence_entry(username: str | None, can_edit: bool, lasts: float, *, dropped: bool = False) -> str:
    """A connection's presence entry as the hash keeps it: lapsing ``lasts`` seconds from now,
    marked reconnecting when ``dropped``."""
    entry = {"u": username, "e": can_edit, "t": time.time() + lasts}
    return _json({**entry, "r": True} if dropped else entry)


def presence_set(ref: BoardRef, channel: str, *, username: str | None, can_edit: bool, client=None) -> None:
    """Record (or refresh) an open connection. O(1). ``client``: a pipeline to queue it in (the
    live sockets refresh theirs together, feeds.live.hub)."""
    key = keys.live_presence(*ref.key_args)
    pipe = client if client is not None else get_redis().pipeline(transaction=False)
    pipe.hset(key, channel, _presence_entry(username, can_edit, PRESENCE_TTL))
    pipe.expire(key, PRESENCE_TTL * 2)
    if client is None:
        pipe.execute()


def presence_list(ref: BoardRef) -> list[dict]:
    """The live entries of the board's connections (expired ones are dropped). O(connections)."""
    key = keys.live_presence(*ref.key_args)
    client = get_redis()
    entries, stale = _presence_entries(client.hgetall(key), time.time())
    if stale:
        client.hdel(key, *stale)
    return entries


def _presence_entries(everything: dict, now: float, *, back: str | None = None) -> tuple[list[dict], list[str]]:
    """(the live entries, the channels to forget) of a presence hash as HGETALL reads it: the
    lapsed entries go, and with ``back`` (a person who connected again) their dropped ones."""
    entries, gone = [], []
    for channel, raw in everything.items():
        entry = json.loads(raw)
        if entry["t"] < now or (back is not None and entry.get("r") and entry["u"] == back):
            gone.append(channel)
        else:
            entries.append(entry)
    return entries, gone


async def presence_join_async(ref: BoardRef, channel: str, *, username: str | None, can_edit: bool) -> list[dict]:
    """A connection opens (the live sockets, from their event loop): its entry is recorded, the
    entries of its person's dropped connections (they are back) and the lapsed ones go, and
    the board's live entries come back (``presence_list``, this one included). One batch of the
    loop's (one round trip), and one HDEL more when something is to go. O(connections)."""
    key = keys.live_presence(*ref.key_args)
    mine = _presence_entry(username, can_edit, PRESENCE_TTL)
    batcher = get_async_batcher()
    _, _, everything = await asyncio.gather(
        batcher.call(lambda pipe: pipe.hset(key, channel, mine)),
        batcher.call(lambda pipe: pipe.expire(key, PRESENCE_TTL * 2)),
        batcher.call(lambda pipe: pipe.hgetall(key)),
    )
    entries, gone = _presence_entries(everything, time.time(), back=username)
    if gone:
        await batcher.call(lambda pipe: pipe.hdel(key, *gone))
    return entries


async def presence_leave_async(
    ref: BoardRef, channel: str, *, username: str | None, can_edit: bool, grace: float | None
) -> list[dict]:
    """A connection closes (the live sockets): its entry goes (``grace`` None), or stays marked
    reconnecting for ``grace`` seconds (it dropped: ``peers_of``); the board's live entries
    come back. One batch (one round trip), and one HDEL more for lapsed entries. O(connections)."""
    key = keys.live_presence(*ref.key_args)
    batcher = get_async_batcher()
    if grace is None:
        change = batcher.call(lambda pipe: pipe.hdel(key, channel))
    else:
        away = _presence_entry(username, can_edit, grace, dropped=True)
        change = batcher.call(lambda pipe: pipe.hset(key, channel, away))
    _, everything = await asyncio.gather(change, batcher.call(lambda pipe: pipe.hgetall(key)))
    entries, stale = _presence_entries(everything, time.time())
    if stale:
        await batcher.call(lambda pipe: pipe.hdel(key, *stale))
    return entries


async def presence_list_async(ref: BoardRef) -> list[dict]:
    """presence_list from an event loop, batched with the loop's other calls. O(connections)."""
    key = keys.live_presence(*ref.key_args)
    batcher = get_async_batcher()
    entries, stale = _presence_entries(await batcher.call(lambda pipe: pipe.hgetall(key)), time.time())
    if stale:
        await batcher.call(lambda pipe: pipe.hdel(key, *stale))
    return entries


def peers_of(entries: list[dict], *, now: float | None = None) -> list[dict]:
    """``[{"username", "reconnecting"}]`` of the people connected (each once, watchers without a
    name left out). Someone whose every entry is one of a dropped connection (``presence_leave_async``)
    is ``reconnecting``, with ``forget_after``: the seconds until that entry lapses."""
    now = time.time() if now is None else now
    people: dict[str, dict] = {}
    for entry in entries:
        if not entry["u"]:
            continue
        peer = people.setdefault(entry["u"], {"username": entry["u"], "reconnecting": True, "until": 0.0})
        if entry.get("r"):
            peer["until"] = max(peer["until"], entry["t"])
        else:
            peer["reconnecting"] = False
    peers = []
    for name in sorted(people, key=str.lower):
        peer = people[name]
        if peer["reconnecting"]:
            peers.append(
                {"username": name, "reconnecting": True, "forget_after": max(math.ceil(peer["until"] - now), 1)}
            )
        else:
            peers.append({"username": name, "reconnecting": False})
    return peers
