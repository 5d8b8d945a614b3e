"""Social reading (RockMelt's OGRE): who of the people I follow read these boards.

Reads are stored user -> boards: one sorted set per reader, board id -> read time, trimmed to
the retention window on every write and expiring with it, so nothing needs a clean-up job.
RockMelt chose this side because a board read by millions would otherwise be one hot key; the
price is that a question about N boards and M followees is N x M look-ups, done as M ZMSCORE
commands (one per followee's key, each its own slot) in one pipelined round trip.
Storage only.
"""

import time
from collections import Counter
from collections.abc import Iterable

from django.conf import settings

from social import keys
from social.scripts import scripts
from ugcsite.redis import get_redis, run_by_node


def _retention() -> int:
    return int(settings.READ_RETENTION.total_seconds())


def read_record(user_id: int, board_id: int, *, now: float | None = None, pipe=None) -> None:
    """Record that a user read a board (a second read keeps one entry, with the newer time),
    dropping reads past the retention window. One round trip (none inside ``pipe``):
    O(log n + expired)."""
    now = time.time() if now is None else now
    key = keys.reads(user_id)
    client = pipe if pipe is not None else get_redis().pipeline(transaction=True)  # one key, one slot
    client.zadd(key, {board_id: now})
    client.zremrangebyscore(key, "-inf", f"({now - _retention()}")
    client.expire(key, _retention())
    if pipe is None:
        client.execute()


READERS_PER_CALL = 500  # one script call holds Redis for a few ms at most


def readers_of(board_ids: list[int], reader_ids: Iterable[int], *, now: float | None = None) -> dict[int, list[int]]:
    """For each board, which of ``reader_ids`` read it within the retention window.

    The N x M question in readers_of.lua calls, one pipelined round trip per Redis node: each
    walks its readers' recent reads once against a table of the N ids (O(reads) a reader, not
    O(N) probes into a listpack), and returns only the hits."""
    reader_ids = list(reader_ids)
    found: dict[int, list[int]] = {board_id: [] for board_id in board_ids}
    if not board_ids or not reader_ids:
        return found
    cutoff = (time.time() if now is None else now) - _retention()
    answers = run_by_node(scripts.readers_of, reader_ids, key=keys.reads, keys_of=lambda r: [keys.reads(r)],
                          args=[cutoff, len(board_ids), *board_ids], per_call=READERS_PER_CALL)
    for group, pairs in answers:
        for i in range(0, len(pairs), 2):
            found[board_ids[pairs[i + 1] - 1]].append(group[pairs[i] - 1])
    return found


def read_counts(reader_ids: Iterable[int], *, now: float | None = None) -> Counter:
    """How many of ``reader_ids`` read each board within the window (for "popular among the
    people I follow"). One pipeline: O(total reads of those readers in the window)."""
    cutoff = (time.time() if now is None else now) - _retention()
    pipe = get_redis().pipeline(transaction=False)
    reader_ids = list(reader_ids)
    for reader_id in reader_ids:
        pipe.zrangebyscore(keys.reads(reader_id), cutoff, "+inf")
    counts: Counter = Counter()
    for board_ids in pipe.execute():
        counts.update(int(board_id) for board_id in board_ids)
    return counts
