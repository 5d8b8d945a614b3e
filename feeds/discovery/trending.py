"""Trending: views (and likes) in the last 24 hours. Views are counted per board and hour
(feeds.discovery.counters), likes too (feeds.likes); every minute beat rolls the last 24 hours
into the ``trending`` and ``likes-trending`` sort orders, in O(boards counted in the window),
never the whole site. Storage only.
"""

import time

from feeds import keys
from feeds.rules import DISCOVERY_SHARDS
from ugcsite.platform.redis import get_redis

HOUR = 3600
TRENDING_HOURS = 24


def current_hour(now: float | None = None) -> int:
    """Hours since the epoch: the number in a views_hour key."""
    return int((now if now is not None else time.time()) // HOUR)


def hour_expiry(hour: int) -> int:
    """When an hour's view counts may go (epoch seconds): once no window can hold it, a spare
    hour later."""
    return (hour + TRENDING_HOURS + 2) * HOUR


# Each trending order and the hourly counts it sums (feeds.keys).
ROLLUPS = {"trending": keys.views_hour, "likes-trending": keys.likes_hour}


def window_hours(now: float | None = None) -> range:
    """The hours of the trending window, oldest first."""
    hour = current_hour(now)
    return range(hour - TRENDING_HOURS + 1, hour + 1)


def window_keys(now: float | None = None, *, hour_key=keys.views_hour) -> list[str]:
    """The hourly counts of the trending window (views, or ``hour_key``'s), oldest first."""
    return [hour_key(h) for h in window_hours(now)]


def trending_rollup(*, now: float | None = None) -> int:
    """Roll every trending order up (ROLLUPS). Returns the boards counted in the windows."""
    return sum(order_rollup(order, now=now) for order in ROLLUPS)


def order_rollup(order: str, *, now: float | None = None) -> int:
    """Set one trending order from the last 24 hours of its hourly counts: boards counted in
    those hours get their sum, boards no longer counted drop back to 0, in every shard's order
    (boards not indexed are left out). O(A log n) for the A boards counted in the window, never
    the whole site; three round trips (the sum in the {d} slot, then one pipeline each to read
    and to write the shards' orders). Returns the indexed boards among the A."""
    hour_keys = window_keys(now, hour_key=ROLLUPS[order])
    client = get_redis()
    union = keys.sort_scratch(f"{order}-union")
    pipe = client.pipeline(transaction=False)
    if hour_keys:
        pipe.zunionstore(union, hour_keys)
    pipe.zrange(union, 0, -1, withscores=True)
    pipe.delete(union)
    scores = pipe.execute()[-2]
    counted: dict[int, dict[int, float]] = {}
    for member, score in scores:
        counted.setdefault(keys.discovery_shard(int(member)), {})[int(member)] = score
    pipe = client.pipeline(transaction=False)
    for shard in range(DISCOVERY_SHARDS):
        pipe.zrangebyscore(keys.sort(shard, order), "(0", "+inf")
        if shard in counted:
            pipe.zmscore(keys.sort(shard, "recent"), list(counted[shard]))
    answers = iter(pipe.execute())
    pipe = client.pipeline(transaction=False)
    fresh_count = 0
    for shard in range(DISCOVERY_SHARDS):
        previously = next(answers)
        fresh = {}
        if shard in counted:
            indexed = next(answers)
            fresh = {
                board_id: score for (board_id, score), at in zip(counted[shard].items(), indexed) if at is not None
            }
        gone = [int(member) for member in previously if int(member) not in fresh]
        if gone:
            pipe.zadd(keys.sort(shard, order), dict.fromkeys(gone, 0), xx=True)
        if fresh:
            pipe.zadd(keys.sort(shard, order), fresh, xx=True)
        fresh_count += len(fresh)
    pipe.execute()
    return fresh_count


def hours_put(counts: dict[int, dict[int, int]], *, hour_key=keys.views_hour) -> None:
    """Write hourly counts, {hour: {board id: count}}, into empty hour keys (views, or
    ``hour_key``'s; rebuild). One pipeline, O(n log n) for n counts."""
    pipe = get_redis().pipeline(transaction=False)
    for hour, counted in counts.items():
        if counted:
            pipe.zadd(hour_key(hour), counted)
            pipe.expireat(hour_key(hour), hour_expiry(hour))
    pipe.execute()


def trending_views(board_ids: list[int], *, now: float | None = None) -> dict[int, int]:
    """Views in the last 24 hours per board, summed from the hour counts (one pipeline)."""
    pipe = get_redis().pipeline(transaction=False)
    for hour_key in window_keys(now):
        pipe.zmscore(hour_key, board_ids)
    totals = dict.fromkeys(board_ids, 0)
    for scores in pipe.execute():
        for board_id, score in zip(board_ids, scores):
            totals[board_id] += int(score or 0)
    return totals
