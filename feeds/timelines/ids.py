"""Board ids: time-ordered integers below 2^53, made without one global counter (snowflake).

    id = milliseconds since EPOCH (41 bits) | generator (5 bits) | sequence (7 bits)

41 bits of milliseconds last 69 years from 2026, so every id stays below 2^53 and is its own
exact float score in a Redis sorted set. Each process leases one of 32 generator numbers from
Redis once (not per id); two processes that ever share a number can only collide within the
same millisecond and sequence, which the primary key turns into a retry (services.board_create).
"""

import os
import threading
import time
from datetime import UTC, datetime, timedelta

from django.conf import settings

from feeds import keys
from ugcsite.platform.redis import get_redis

EPOCH_MS = 1767225600000  # 2026-01-01T00:00:00Z
GENERATOR_BITS = 5
SEQUENCE_BITS = 7
MAX_SEQUENCE = (1 << SEQUENCE_BITS) - 1
GENERATORS = 1 << GENERATOR_BITS


_lock = threading.Lock()
_state = {"generator": None, "last_ms": -1, "sequence": 0}


def _reset_after_fork():
    _state.update(generator=None, last_ms=-1, sequence=0)


os.register_at_fork(after_in_child=_reset_after_fork)


def _generator() -> int:
    if settings.BOARD_ID_WORKER is not None:
        return int(settings.BOARD_ID_WORKER) % GENERATORS
    return get_redis().incr(keys.id_generator_lease()) % GENERATORS


def next_board_id() -> int:
    """A new board id, larger than every id this process made before. O(1), no network after the first."""
    with _lock:
        if _state["generator"] is None:
            _state["generator"] = _generator()
        now = int(time.time() * 1000) - EPOCH_MS
        if now < _state["last_ms"]:  # the clock stepped back: stay on the last millisecond
            now = _state["last_ms"]
        if now == _state["last_ms"]:
            _state["sequence"] += 1
            if _state["sequence"] > MAX_SEQUENCE:  # 128 ids in this millisecond: take the next one
                now += 1
                _state["sequence"] = 0
        else:
            _state["sequence"] = 0
        _state["last_ms"] = now
        return (now << (GENERATOR_BITS + SEQUENCE_BITS)) | (_state["generator"] << SEQUENCE_BITS) | _state["sequence"]


def board_id_time(board_id: int) -> datetime:
    """When a board id was made (millisecond precision)."""
    ms = (board_id >> (GENERATOR_BITS + SEQUENCE_BITS)) + EPOCH_MS
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def min_board_id_at(moment: datetime) -> int:
    """The smallest id a board made at ``moment`` can have (for age cut-offs by score)."""
    ms = int(moment.timestamp() * 1000) - EPOCH_MS
    return max(ms, 0) << (GENERATOR_BITS + SEQUENCE_BITS)


def max_board_id_at(moment: datetime) -> int:
    """The largest id a board made in the millisecond of ``moment`` can have (the millisecond
    counted in integers: a float product can fall one short at its boundary)."""
    ms = (moment - datetime.fromtimestamp(0, tz=UTC)) // timedelta(milliseconds=1) - EPOCH_MS
    return ((max(ms, 0) + 1) << (GENERATOR_BITS + SEQUENCE_BITS)) - 1
