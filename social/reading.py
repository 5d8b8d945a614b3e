"""Social reading (RockMelt's OGRE): who of the people I follow read these boards.

Reads are stored user -> boards: one sorted set per reader, board id -> read time, trimmed to
the retention window on every write and expiring with it, so nothing needs a clean-up job.
RockMelt chose this side because a board read by millions would otherwise be one hot key; the
price is that a question about N boards and M followees is N x M look-ups, done as M ZMSCORE
commands (one per followee's key, each its own slot) in one pipelined round trip.

Every read is also buffered in Redis (READS_PENDING_BUCKETS hashes) and written through to
PostgreSQL (the Read table, a row per reader, board and day) by beat every READS_FLUSH_SECONDS,
so a lost Redis gets its reads back from there (``reads_stored``, ``reads_replace``): a crash
loses at most one interval of reads. Rows past the retention are pruned by beat.
Storage only.
"""

import time
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from itertools import groupby

from django.conf import settings
from django.db import connection, transaction

from social import keys
from social.models import Read, User
from social.scripts import scripts
from ugcsite.platform.redis import get_redis, rename_aside, run_by_node
from ugcsite.platform.sql import ROWS_PER_STATEMENT, execute_columns


def _retention() -> int:
    return int(settings.READ_RETENTION.total_seconds())


def read_record(user_id: int, board_id: int, *, now: float | None = None, pipe=None) -> None:
    """Record that a user read a board (a second read keeps one entry, with the newer time),
    dropping reads past the retention window, and buffer it for PostgreSQL. One round trip
    (none inside ``pipe``): O(log n + expired)."""
    now = time.time() if now is None else now
    # The read set and its id set change together in one script (read_add.lua, the reader's
    # slot); the buffer lies in another slot and stands alone.
    client = pipe if pipe is not None else get_redis().pipeline(transaction=False)
    scripts.read_add(
        keys=[keys.reads(user_id), keys.read_ids(user_id)],
        board_id=board_id,
        at=now,
        cutoff=now - _retention(),
        retention=_retention(),
        client=client,
    )
    client.hset(keys.reads_pending(user_id), keys.read_field(user_id, board_id), repr(float(now)))
    if pipe is None:
        client.execute()


def reads_flush() -> int:
    """Write the buffered reads to PostgreSQL: each bucket is renamed aside, upserted into the
    Read table (a row per reader, board and UTC day, keeping the latest time), then deleted.
    A flush that died before the delete is finished by the next one (the upsert keeps the
    latest time, so writing twice changes nothing). Readers gone meanwhile are skipped.
    Offline, O(reads since the last flush). Returns the reads written."""
    client = get_redis()
    buckets = [keys.reads_flushing_bucket(b) for b in range(keys.READS_PENDING_BUCKETS)]
    pipe = client.pipeline(transaction=False)
    for bucket in buckets:
        pipe.exists(bucket)
    for number, (bucket, left) in enumerate(zip(buckets, pipe.execute(), strict=True)):
        # a bucket a flush that died left is written first
        rename_aside(client, keys.reads_pending_bucket(number), bucket, target_exists=bool(left))
    pipe = client.pipeline(transaction=False)
    for bucket in buckets:
        pipe.hgetall(bucket)
    latest: dict[tuple[int, int], float] = {}
    for fields in pipe.execute():
        for field, at in fields.items():
            latest[keys.parse_read_field(field)] = float(at)
    rows = [(reader, board, at) for (reader, board), at in latest.items()]
    with transaction.atomic(), connection.cursor() as cursor:
        execute_columns(
            cursor,
            f"INSERT INTO {Read._meta.db_table} AS r (day, reader_id, board_id, read_at) "
            "SELECT (to_timestamp(d.t) AT TIME ZONE 'UTC')::date, d.reader, d.board, to_timestamp(d.t) "
            f"FROM unnest(%s::bigint[], %s::bigint[], %s::float8[]) AS d(reader, board, t) "
            f"JOIN {User._meta.db_table} u ON u.id = d.reader "
            "ON CONFLICT (day, reader_id, board_id) DO UPDATE SET read_at = GREATEST(r.read_at, EXCLUDED.read_at)",
            rows,
        )
    for bucket in buckets:
        client.delete(bucket)  # one key a DEL: a cluster takes no other
    return len(rows)


def reads_prune(*, now: float | None = None, batch: int = ROWS_PER_STATEMENT) -> int:
    """Delete the stored reads of days wholly past the retention window, ``batch`` rows a
    statement (by the key's leading day). Offline, O(rows deleted). Returns how many."""
    cutoff = (datetime.fromtimestamp(time.time() if now is None else now, tz=UTC) - settings.READ_RETENTION).date()
    table, deleted = Read._meta.db_table, 0
    with connection.cursor() as cursor:
        while True:
            cursor.execute(
                f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} WHERE day < %s LIMIT %s)",
                [cutoff, batch],
            )
            deleted += cursor.rowcount
            if cursor.rowcount < batch:
                return deleted


def reads_stored(*, now: float | None = None) -> Iterator[tuple[int, dict[int, float]]]:
    """Each reader's reads within the retention window as stored in PostgreSQL, (reader id,
    {board id: latest read time}), by reader id (rebuild). One streaming query over the
    window's days: O(reads stored in the window)."""
    cutoff = (time.time() if now is None else now) - _retention()
    first_day = datetime.fromtimestamp(cutoff, tz=UTC).date()
    rows = (
        Read.objects.filter(day__gte=first_day, read_at__gte=datetime.fromtimestamp(cutoff, tz=UTC))
        .order_by("reader_id")
        .values_list("reader_id", "board_id", "read_at")
        .iterator(chunk_size=10_000)
    )
    for reader_id, group in groupby(rows, key=lambda row: row[0]):
        latest: dict[int, float] = {}
        for _, board_id, at in group:
            latest[board_id] = max(latest.get(board_id, 0.0), at.timestamp())
        yield reader_id, latest


def reads_replace(reads: Iterable[tuple[int, dict[int, float]]]) -> int:
    """Rewrite readers' read sets, (reader id, {board id: read time}) each (rebuild); a key
    expires with its newest read, as read_record leaves it. One pipeline per 1,000 readers,
    O(n log n) for n reads. Returns the readers written."""
    client, written = get_redis(), 0
    pipe = client.pipeline(transaction=False)
    for reader_id, latest in reads:
        key, ids_key = keys.reads(reader_id), keys.read_ids(reader_id)
        pipe.delete(key)
        pipe.delete(ids_key)  # one key a DEL: a cluster pipeline takes no other
        if latest:
            expires = int(max(latest.values()) + _retention()) + 1
            pipe.zadd(key, latest)
            pipe.sadd(ids_key, *latest)
            pipe.expireat(key, expires)
            pipe.expireat(ids_key, expires)
        written += 1
        if written % 1000 == 0:
            pipe.execute()
    pipe.execute()
    return written


READERS_PER_CALL = 500  # one script call holds Redis for a few ms at most


def readers_of(board_ids: list[int], reader_ids: Iterable[int], *, now: float | None = None) -> dict[int, list[int]]:
    """For each board, which of ``reader_ids`` read it within the retention window
    (holders_of over the read sets)."""
    cutoff = (time.time() if now is None else now) - _retention()
    return holders_of(
        board_ids, reader_ids, ranked=keys.reads, ids=keys.read_ids, scratch=keys.reads_query, cutoff=cutoff
    )


def holders_of(
    board_ids: list[int], person_ids: Iterable[int], *, ranked, ids, scratch, cutoff: float = 0
) -> dict[int, list[int]]:
    """For each board, which of ``person_ids`` hold it since ``cutoff`` in their sorted set
    ``ranked(id)`` (board -> time) and its twin set ``ids(id)``: read it (social reading), or
    liked it (feeds.likes), whose keys are spelled by the key functions given.

    The N x M question in readers_of.lua calls, one pipelined round trip per Redis node: each
    puts the N ids in a scratch intset (``scratch(first person)``) and intersects every person's
    id set with it in C (SINTER: O(min(held, N) log N) a person), checks the times of the hits
    only where a person's oldest entry is older than the cut-off (never for a cut-off of 0: the
    likes), and returns only the hits, each person once before theirs. On
    a cluster (no command there names two slots) each person's entries are walked in the script
    against a table of the N ids instead, or probed by ZMSCORE: O(min(held, N)) a person."""
    person_ids = list(person_ids)
    found: dict[int, list[int]] = {board_id: [] for board_id in board_ids}
    if not board_ids or not person_ids:
        return found
    answers = run_by_node(
        scripts.readers_of,
        person_ids,
        key=ranked,
        keys_of=lambda p: [ranked(p), ids(p)],
        args=scripts.readers_of.args(cutoff=cutoff, count=len(board_ids), board_ids=board_ids),
        per_call=READERS_PER_CALL,
        scratch=(lambda first: "") if settings.REDIS_CLUSTER else scratch,
    )
    for group, hits in answers:
        person = None
        for position in hits:  # -reader, then the boards it holds (readers_of.lua's Returns)
            if position < 0:
                person = group[-position - 1]
            else:
                found[board_ids[position - 1]].append(person)
    return found


def read_counts(reader_ids: Iterable[int], *, now: float | None = None) -> Counter:
    """How many of ``reader_ids`` read each board within the window (for "popular among the
    people I follow"): held_counts over the read sets."""
    return held_counts(reader_ids, ranked=keys.reads, cutoff=(time.time() if now is None else now) - _retention())


def held_counts(person_ids: Iterable[int], *, ranked, cutoff: float) -> Counter:
    """How many of ``person_ids`` hold each board since ``cutoff`` in their sorted set
    ``ranked(id)`` (reads, or likes). One pipeline: O(total entries of those people since then)."""
    pipe = get_redis().pipeline(transaction=False)
    for person_id in person_ids:
        pipe.zrangebyscore(ranked(person_id), cutoff, "+inf")
    counts: Counter = Counter()
    for board_ids in pipe.execute():
        counts.update(int(board_id) for board_id in board_ids)
    return counts


def reads_forget(pairs: Iterable[tuple[int, int]]) -> None:
    """(reader, board) reads of boards that are gone for good (their author's account is
    deleted) out of the readers' read sets. One pipeline, O(pairs log n)."""
    pipe = get_redis().pipeline(transaction=False)
    for reader_id, board_id in pairs:
        pipe.zrem(keys.reads(reader_id), board_id)
        pipe.srem(keys.read_ids(reader_id), board_id)
    pipe.execute()
