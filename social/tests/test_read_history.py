"""Reads written through to PostgreSQL (social.reading): buffered in Redis, flushed in batches
into the Read table (a row per reader, board and day with the latest time), pruned past the
retention, and read back for a rebuild. Real PostgreSQL and Redis; a controlled clock."""

import time
from datetime import UTC, datetime

import pytest

from social import keys, reading
from social.models import Read
from social.services import user_create

pytestmark = pytest.mark.django_db

DAY = 86400
T0 = time.time() // DAY * DAY + 8 * 3600  # 08:00 UTC today: keys it writes expire in the future


def stored() -> set[tuple[int, int, str, float]]:
    return {(r.reader_id, r.board_id, r.day.isoformat(), r.read_at.timestamp()) for r in Read.objects.all()}


def day(at: float) -> str:
    return datetime.fromtimestamp(at, tz=UTC).date().isoformat()


def test_reads_reach_postgres_in_batches_keeping_the_latest_time_a_day(redis_data):
    alice, bob = (user_create(username=name, password="password123") for name in ("alice", "bob"))
    reading.read_record(alice.pk, 10, now=T0)
    reading.read_record(alice.pk, 10, now=T0 + 60)  # the same day: one row, the later time
    reading.read_record(bob.pk, 10, now=T0 + 5)
    assert not Read.objects.exists()  # nothing written per read
    assert reading.reads_flush() == 2
    assert stored() == {(alice.pk, 10, day(T0), T0 + 60), (bob.pk, 10, day(T0), T0 + 5)}
    assert reading.reads_flush() == 0  # the buffer is empty after a flush

    reading.read_record(alice.pk, 10, now=T0 + DAY)  # the next day: a row of its own
    reading.read_record(alice.pk, 11, now=T0 + DAY)
    reading.reads_flush()
    assert stored() == {
        (alice.pk, 10, day(T0), T0 + 60),
        (bob.pk, 10, day(T0), T0 + 5),
        (alice.pk, 10, day(T0 + DAY), T0 + DAY),
        (alice.pk, 11, day(T0 + DAY), T0 + DAY),
    }


def test_a_flush_that_died_after_its_rename_is_finished_by_the_next_and_writes_nothing_twice(redis_data):
    alice = user_create(username="alice", password="password123")
    reading.read_record(alice.pk, 10, now=T0)
    bucket = alice.pk % keys.READS_PENDING_BUCKETS
    redis_data.rename(keys.reads_pending_bucket(bucket), keys.reads_flushing_bucket(bucket))  # then it died
    reading.read_record(alice.pk, 11, now=T0 + 1)  # read meanwhile: waits for the flush after
    assert reading.reads_flush() == 1
    assert stored() == {(alice.pk, 10, day(T0), T0)}
    reading.reads_flush()
    assert stored() == {(alice.pk, 10, day(T0), T0), (alice.pk, 11, day(T0), T0 + 1)}
    # a batch written twice (a flush that died after its commit): the older time never wins
    redis_data.hset(keys.reads_flushing_bucket(bucket), keys.read_field(alice.pk, 10), repr(T0 - 30))
    reading.reads_flush()
    assert stored() == {(alice.pk, 10, day(T0), T0), (alice.pk, 11, day(T0), T0 + 1)}
    assert not any(redis_data.exists(keys.reads_flushing_bucket(b)) for b in range(keys.READS_PENDING_BUCKETS))


def test_stored_reads_are_pruned_by_day_and_read_back_within_the_window(redis_data, settings):
    alice, bob = (user_create(username=name, password="password123") for name in ("alice", "bob"))
    retention = settings.READ_RETENTION.total_seconds()
    for reader, board, at in (
        (alice, 1, T0 - retention - 2 * DAY),
        (alice, 2, T0 - retention - 60),
        (alice, 3, T0 - 10 * DAY),
        (bob, 3, T0 - DAY),
        (bob, 4, T0),
    ):
        reading.read_record(reader.pk, board, now=at)
    reading.reads_flush()
    assert dict(reading.reads_stored(now=T0)) == {alice.pk: {3: T0 - 10 * DAY}, bob.pk: {3: T0 - DAY, 4: T0}}
    assert reading.reads_prune(now=T0, batch=1) == 1  # only the day wholly past the window
    assert {board for _, board, _, _ in stored()} == {2, 3, 4}

    redis_data.flushdb()
    assert reading.reads_replace(reading.reads_stored(now=T0)) == 2
    found = reading.readers_of([2, 3, 4], [alice.pk, bob.pk], now=T0)
    assert {board: sorted(readers) for board, readers in found.items()} == {2: [], 3: [alice.pk, bob.pk], 4: [bob.pk]}
    assert redis_data.expiretime(keys.reads(bob.pk)) == int(T0 + retention) + 1  # as the newest read leaves it
