"""Chunks Redis <-> PostgreSQL: the list-of-lists history behind each timeline's hot head.

A timeline (M or P of a user) is its hot head in Redis plus numbered chunks of up to
TIMELINE_CHUNK ids in PostgreSQL (TimelineChunk). Archiving takes the oldest ids of a head
that has grown past its window (by count, or by age in whole chunks), and for each chunk:

1. raises the timeline's *archived max* A in Redis (readers merge head and archive below A),
2. writes the chunk row and commits,
3. only then removes exactly those ids from the head.

A crash after 1 leaves the ids in the head (below A, so still read); after 2 it leaves them in
both places, which readers de-duplicate and the next run absorbs (the row is unique by range,
the trim is repeated). Never a hole.

Storage only: Redis and PostgreSQL, no tasks.
"""

import heapq
from collections.abc import Callable, Iterable, Iterator

from django.conf import settings
from django.db import connection, connections, transaction
from django.db.models import Max
from django.utils import timezone

from feeds import keys
from feeds.models import ArchiveRun, TimelineChunk
from feeds.rules import Timeline
from feeds.scripts import scripts
from feeds.timelines import store
from feeds.timelines.ids import min_board_id_at
from ugcsite.platform.redis import get_redis
from ugcsite.platform.replicas import read_alias

_MAX_FIELD = {Timeline.PROFILE: "m_archived_max", Timeline.HOME: "p_archived_max"}


def window(kind: str) -> tuple[int, int]:
    """(hot size, id below which entries are too old) of a kind of timeline."""
    hot, age = (
        (settings.PROFILE_TIMELINE_HOT, settings.PROFILE_TIMELINE_MAX_AGE)
        if kind == Timeline.PROFILE
        else (settings.HOME_TIMELINE_HOT, settings.HOME_TIMELINE_MAX_AGE)
    )
    return hot, min_board_id_at(timezone.now() - age)


def flag_waiting(kind: str, user_ids: Iterable[int]) -> list[int]:
    """Mark timelines as past their window; the ids newly marked (already waiting: left out).
    O(k log w) for k timelines, w waiting."""
    user_ids = list(user_ids)
    if not user_ids:
        return []
    pipe = get_redis().pipeline(transaction=False)
    now = timezone.now().timestamp()
    for user_id in user_ids:
        pipe.zadd(keys.archive_waiting(), {keys.waiting_member(kind, user_id): now}, nx=True)
    return [user_id for user_id, added in zip(user_ids, pipe.execute()) if added]


def take_waiting(count: int) -> list[tuple[str, int]]:
    """Pop up to ``count`` waiting timelines, oldest flag first. O(count log w)."""
    return [keys.parse_waiting(member) for member, _ in get_redis().zpopmin(keys.archive_waiting(), count)]


def waiting_count() -> int:
    """How many timelines wait for archival. O(1)."""
    return get_redis().zcard(keys.archive_waiting())


def mark_field(kind: str) -> str:
    """The field of keys.timeline_meta that holds A of a kind of timeline (for pipelined reads)."""
    return _MAX_FIELD[kind]


def archived_max(user_id: int, kind: str, *, stored: str | None = None) -> int:
    """A: every archived id of the timeline is at most this (0: nothing archived).
    O(1) from Redis (or ``stored``, the field as a pipeline already read it); on a miss (Redis
    lost) one indexed PostgreSQL query, written back."""
    value = stored if stored is not None else get_redis().hget(keys.timeline_meta(user_id), _MAX_FIELD[kind])
    if value is not None:
        return int(value)
    found = TimelineChunk.objects.filter(owner_id=user_id, timeline=kind).aggregate(m=Max("last_id"))["m"] or 0
    scripts.hset_max(keys=[keys.timeline_meta(user_id)], field=_MAX_FIELD[kind], value=found)
    return found


def mark_raise(user_id: int, kind: str, value: int) -> None:
    """Raise A of a timeline to at least ``value`` without archiving anything (every archived id
    is still at most A): readers and regeneration then treat what lies below as history. O(1)."""
    marks_raise(kind, {user_id: value})


def marks_put(user_id: int, marks: dict[str, int]) -> None:
    """Set the archived max of a user's timelines (``{Timeline.PROFILE: id, ...}``; 0: nothing
    archived), e.g. from PostgreSQL in a rebuild. O(1)."""
    get_redis().hset(keys.timeline_meta(user_id), mapping={_MAX_FIELD[kind]: value for kind, value in marks.items()})


def _chunks_due(client, key: str, kind: str) -> int:
    hot, too_old = window(kind)
    pipe = client.pipeline(transaction=False)
    pipe.zcard(key)
    pipe.zcount(key, "-inf", f"({too_old}")
    size, aged = pipe.execute()
    chunk = settings.TIMELINE_CHUNK
    return max((size - hot) // chunk, aged // chunk, 0)


def timeline_archive(
    kind: str, user_id: int, *, on_committed: Callable[[list[int]], None] | None = None
) -> tuple[int, int]:
    """Archive every whole chunk that has fallen out of one timeline's window; (chunks, ids).

    O(c log n) Redis work and c row inserts for c chunks. ``on_committed(ids)`` runs between
    a chunk's commit and its removal from Redis (observability, and crash tests).
    """
    client = get_redis()
    key = keys.timeline_key(kind, user_id)
    chunks = moved = 0
    for _ in range(_chunks_due(client, key, kind)):
        taken = _archive_oldest_chunk(client, key, kind, user_id, on_committed)
        if not taken:
            break
        chunks += 1
        moved += taken
    return chunks, moved


def _archive_oldest_chunk(client, key: str, kind: str, user_id: int, on_committed=None) -> int:
    """Move the oldest TIMELINE_CHUNK ids of a head to one chunk row; how many (0: empty)."""
    ids = sorted((int(i) for i in client.zrange(key, 0, settings.TIMELINE_CHUNK - 1)), reverse=True)
    if not ids:
        return 0
    # 1. readers must look in the archive for ids up to here from now on
    scripts.hset_max(keys=[keys.timeline_meta(user_id)], field=_MAX_FIELD[kind], value=ids[0])
    # 2. the chunk, committed (a second write of the same range inserts nothing)
    with transaction.atomic():
        TimelineChunk.objects.bulk_create(
            [TimelineChunk(owner_id=user_id, timeline=kind, first_id=ids[-1], last_id=ids[0], ids=ids)],
            ignore_conflicts=True,
        )
    if on_committed is not None:
        on_committed(ids)
    # 3. only now out of Redis: exactly these ids, whatever arrived meanwhile stays
    client.zrem(key, *ids)
    return len(ids)


def timeline_archive_all(kind: str, user_id: int) -> int:
    """Archive a whole timeline, oldest first in chunks (the last one may be short), then drop
    the key: the idle sweeper's way to take a feed out of Redis without losing it. The same
    order as timeline_archive: mark, commit, then remove. Returns the ids archived."""
    client = get_redis()
    key = keys.timeline_key(kind, user_id)
    moved = 0
    while taken := _archive_oldest_chunk(client, key, kind, user_id):
        moved += taken
    return moved


def chunks_write(user_id: int, kind: str, ids_desc: list[int]) -> int:
    """Archive ids that never were in the head (regeneration gap fill), in chunks; how many rows.
    Raises A first, as timeline_archive does; bumps the timeline's revision once the rows are
    committed (new ids in it: a feed snapshot read before must not hold after). O(n)."""
    return chunks_write_many(kind, {user_id: ids_desc})


def chunks_write_many(kind: str, timelines: dict[int, list[int]]) -> int:
    """chunks_write for many users' timelines of one kind at once, ``{user id: ids newest
    first}`` (rebuild_redis, a batch of people at a time): the A of each raised in one
    pipeline, every row in one INSERT in the caller's transaction (or its own), the revisions
    bumped in one pipeline once committed. O(n) for the n ids; how many rows."""
    timelines = {user_id: ids for user_id, ids in timelines.items() if ids}
    if not timelines:
        return 0
    pipe = get_redis().pipeline(transaction=False)
    for user_id, ids_desc in timelines.items():
        scripts.hset_max(keys=[keys.timeline_meta(user_id)], field=_MAX_FIELD[kind], value=ids_desc[0], client=pipe)
    pipe.execute()
    size = settings.TIMELINE_CHUNK
    rows = [
        TimelineChunk(owner_id=user_id, timeline=kind, first_id=part[-1], last_id=part[0], ids=part)
        for user_id, ids_desc in timelines.items()
        for part in (ids_desc[i : i + size] for i in range(0, len(ids_desc), size))
    ]
    TimelineChunk.objects.bulk_create(rows, ignore_conflicts=True)

    def bump() -> None:  # after the commit: a snapshot made between the bump and it would miss the rows
        bumps = get_redis().pipeline(transaction=False)
        for user_id in timelines:
            store.revision_bump(user_id, kind, pipe=bumps)
        bumps.execute()

    transaction.on_commit(bump)
    return len(rows)


def marks_raise(kind: str, marks: dict[int, int]) -> None:
    """mark_raise for many users' timelines of one kind, ``{user id: value}``: one pipeline,
    one round trip a node. O(k)."""
    pipe = get_redis().pipeline(transaction=False)
    for user_id, value in marks.items():
        scripts.hset_max(keys=[keys.timeline_meta(user_id)], field=_MAX_FIELD[kind], value=value, client=pipe)
    pipe.execute()


def archived_among(user_id: int, kind: str, board_ids: list[int]) -> set[int]:
    """Which of ``board_ids`` some chunk of the timeline holds. One query over the chunks whose
    range meets the ids' range: O(ids in those chunks). For offline work (rebuild)."""
    if not board_ids:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT DISTINCT x FROM {TimelineChunk._meta.db_table} c, unnest(c.ids) AS x "
            "WHERE c.owner_id = %s AND c.timeline = %s AND c.last_id >= %s AND c.first_id <= %s AND x = ANY(%s)",
            [user_id, kind, min(board_ids), max(board_ids), list(board_ids)],
        )
        return {row[0] for row in cursor.fetchall()}


def archived_ids_desc(user_id: int, kind: str, *, below: int | None = None, rows_per_query: int = 10) -> Iterator[int]:
    """The archived ids of a timeline, newest first, each once, lazily: chunk rows are read
    ``rows_per_query`` at a time by the (owner, timeline, last_id) index, so a page costs one
    or two small queries. Chunks may overlap (a back-fill can bring old ids into a head that
    is archived later); a heap merges them."""
    base = TimelineChunk.objects.filter(owner_id=user_id, timeline=kind).order_by("-last_id", "-first_id")
    if below is not None:
        base = base.filter(first_id__lt=below)
    heap: list[int] = []  # negated ids
    offset, exhausted = 0, False
    pending: list[tuple[int, list[int]]] = []
    last_yielded = None

    def load() -> None:
        nonlocal offset, exhausted
        rows = list(base.values_list("last_id", "ids")[offset : offset + rows_per_query])
        offset += len(rows)
        exhausted = len(rows) < rows_per_query
        pending.extend(rows)

    while True:
        if not pending and not exhausted:
            load()
        # Pull in every chunk that could hold an id above the best one in hand.
        while pending and (not heap or pending[0][0] >= -heap[0]):
            _, ids = pending.pop(0)
            for board_id in ids:
                if below is None or board_id < below:
                    heapq.heappush(heap, -board_id)
            if not pending and not exhausted:
                load()
        if not heap:
            return
        board_id = -heapq.heappop(heap)
        if board_id != last_yielded:
            last_yielded = board_id
            yield board_id


def archived_newest(user_id: int, kind: str, *, below: int | None = None, count: int) -> list[int]:
    """The newest ``count`` archived ids of a timeline strictly below ``below``, newest first, each
    once: the first ``count`` of archived_ids_desc, read at once for a page that must skip many
    (an offset): chunk rows enough for ``count`` ids a query, then one sort in C (the rows come
    newest first, so the list is nearly sorted already). O(count) ids read, O(count / TIMELINE_CHUNK)
    rows, usually one query."""
    # The query archived_ids_desc makes, written out: the ORM's rows cost 0.57 ms a page of 22
    # chunks against 0.36 ms from the cursor (bench/results/profile-deep.txt).
    sql = (
        f"SELECT last_id, ids FROM {TimelineChunk._meta.db_table} WHERE owner_id = %s AND timeline = %s"
        f"{'' if below is None else ' AND first_id < %s'} ORDER BY last_id DESC, first_id DESC LIMIT %s OFFSET %s"
    )
    where = [user_id, kind] + ([] if below is None else [below])
    per_query = count // settings.TIMELINE_CHUNK + 2
    found: list[int] = []  # each id once (chunks may overlap, see archived_ids_desc)
    seen: set[int] = set()
    offset = 0
    while True:
        with connections[read_alias()].cursor() as cursor:  # the replica on a profile's pages
            cursor.execute(sql, [*where, per_query, offset])
            rows = cursor.fetchall()
        offset += len(rows)
        for last_id, ids in rows:
            kept = ids if below is None or last_id < below else [i for i in ids if i < below]
            if not seen.isdisjoint(kept):
                kept = [i for i in kept if i not in seen]
            found.extend(kept)
            seen.update(kept)
        found.sort(reverse=True)  # runs newest first, nearly in order already: cheap
        # An unread chunk holds nothing above the last row's last_id (rows come by last_id, newest first).
        if len(rows) < per_query or (len(found) >= count and found[count - 1] >= rows[-1][0]):
            break
    return found[:count]


def last_run_summary() -> dict:
    """For the admin: totals and the latest runs of the archival."""
    return {
        "chunks_total": TimelineChunk.objects.count(),
        "waiting": waiting_count(),
        "last_run": ArchiveRun.objects.first(),
        "last_errors": ArchiveRun.objects.exclude(errors="").first(),
    }


def unflag(kind: str, user_id: int) -> None:
    """Take a timeline off the waiting set (a task is about to archive it). O(log w)."""
    get_redis().zrem(keys.archive_waiting(), keys.waiting_member(kind, user_id))


def archive_waiting(*, trigger: str, batch: int = 100, progress: Callable[[int], None] | None = None):
    """Archive every timeline waiting now, ``batch`` at a time, and record the run (ArchiveRun).
    A timeline that fails goes back to the waiting set and its error into the run's record."""
    run = ArchiveRun.objects.create(started_at=timezone.now(), trigger=trigger)
    errors = []
    while True:
        taken = take_waiting(batch)
        if not taken:
            break
        for kind, user_id in taken:
            try:
                chunks, moved = timeline_archive(kind, user_id)
            except Exception as error:
                errors.append(f"{kind}:{user_id}: {type(error).__name__}: {error}")
                flag_waiting(kind, [user_id])
                continue
            run.timelines += 1
            run.chunks += chunks
            run.ids += moved
            if progress is not None:
                progress(1)
        if errors:
            break  # the failed ones are waiting again; don't spin on them in this run
    run.errors = "\n".join(errors)
    run.finished_at = timezone.now()
    run.save()
    return run
