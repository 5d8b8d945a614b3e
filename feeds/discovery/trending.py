"""Trending: views (and likes) in the last 24 hours. Views are counted per board and hour
(feeds.discovery.counters), likes too (feeds.likes); every minute beat rolls the last 24 hours
into the ``trending`` and ``likes-trending`` sort orders, in O(boards counted in the window),
never the whole site. Storage only.
"""

import time

from feeds import keys
from ugcsite.redis import get_redis

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
    those hours get their sum, boards no longer counted drop back to 0. O(A log n) for the A
    boards counted in the window, never the whole site. Returns A."""
    hour_keys = window_keys(now, hour_key=ROLLUPS[order])
    client = get_redis()
    union, indexed = keys.sort_scratch(f"{order}-union"), keys.sort_scratch(f"{order}-next")
    pipe = client.pipeline(transaction=False)
    if hour_keys:
        pipe.zunionstore(union, hour_keys)
    pipe.zinterstore(indexed, {union: 1, keys.sort("recent"): 0})  # only boards still indexed
    pipe.zrange(indexed, 0, -1, withscores=True)
    pipe.zrangebyscore(keys.sort(order), "(0", "+inf")
    pipe.delete(union)  # one key a DEL: a cluster pipeline takes no other
    pipe.delete(indexed)
    scores, previously = pipe.execute()[-4:-2]
    fresh = {int(member): score for member, score in scores}
    pipe = client.pipeline(transaction=False)
    gone = [int(member) for member in previously if int(member) not in fresh]
    if gone:
        pipe.zadd(keys.sort(order), dict.fromkeys(gone, 0), xx=True)
    if fresh:
        pipe.zadd(keys.sort(order), fresh, xx=True)
    pipe.execute()
    return len(fresh)


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
