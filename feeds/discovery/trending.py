"""Trending: views in the last 24 hours. Views are counted per board and hour
(feeds.discovery.counters); every minute beat rolls the last 24 hours into the ``trending``
sort order, in O(boards viewed in the window), never the whole site. Storage only.
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


def window_keys(now: float | None = None) -> list[str]:
    """The hourly view counts of the trending window, oldest first."""
    hour = current_hour(now)
    return [keys.views_hour(h) for h in range(hour - TRENDING_HOURS + 1, hour + 1)]


def trending_rollup(*, now: float | None = None) -> int:
    """Set the trending order from the last 24 hours of view counts: boards viewed in those
    hours get their sum, boards no longer viewed drop back to 0. O(A log n) for the A boards
    viewed in the window, never the whole site. Returns A."""
    hour_keys = window_keys(now)
    client = get_redis()
    union, indexed = keys.sort_scratch("trending-union"), keys.sort_scratch("trending-next")
    pipe = client.pipeline(transaction=False)
    if hour_keys:
        pipe.zunionstore(union, hour_keys)
    pipe.zinterstore(indexed, {union: 1, keys.sort("recent"): 0})  # only boards still indexed
    pipe.zrange(indexed, 0, -1, withscores=True)
    pipe.zrangebyscore(keys.sort("trending"), "(0", "+inf")
    pipe.delete(union)  # one key a DEL: a cluster pipeline takes no other
    pipe.delete(indexed)
    scores, previously = pipe.execute()[-4:-2]
    fresh = {int(member): score for member, score in scores}
    pipe = client.pipeline(transaction=False)
    gone = [int(member) for member in previously if int(member) not in fresh]
    if gone:
        pipe.zadd(keys.sort("trending"), dict.fromkeys(gone, 0), xx=True)
    if fresh:
        pipe.zadd(keys.sort("trending"), fresh, xx=True)
    pipe.execute()
    return len(fresh)


def hours_put(counts: dict[int, dict[int, int]]) -> None:
    """Write hourly view counts, {hour: {board id: views}}, into empty hour keys (rebuild).
    One pipeline, O(n log n) for n counts."""
    pipe = get_redis().pipeline(transaction=False)
    for hour, views in counts.items():
        if views:
            pipe.zadd(keys.views_hour(hour), views)
            pipe.expireat(keys.views_hour(hour), hour_expiry(hour))
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
