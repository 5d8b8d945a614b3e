"""Idle readers: fan-out skips users idle longer than IDLE_AFTER; the sweeper archives and drops
their P, and on their return it is regenerated from their followees' timelines before the
first page, with the gap to the older history archived by a task. Storage work only.
"""

import time
from itertools import islice

from django.conf import settings

from feeds import archive, keys, timelines
from feeds.models import Board
from feeds.rules import Timeline
from social import graph
from ugcsite.redis import get_redis


def home_regenerate(user_id: int) -> tuple[int, int] | None:
    """Refill a returning user's P from their followees' M heads (and M archives where a head
    is short): their newest HOME_TIMELINE_HOT ids join whatever P holds (fan-out may have
    delivered since the return), so the first page is whole. O(F log |M| + hot) for F
    followees, one pipeline. Returns the (lower, upper) bounds of the gap left between those
    ids and the older history (for home_gap_fill), or None when there is nothing to join up."""
    followees = graph.following_ids(user_id)
    hot = settings.HOME_TIMELINE_HOT
    pipe = get_redis().pipeline(transaction=False)
    for followee_id in followees:
        pipe.zrevrange(keys.profile_timeline(followee_id), 0, hot - 1)
    streams = []
    for followee_id, head in zip(followees, pipe.execute()):
        ids = [int(i) for i in head]
        if len(ids) < hot and archive.archived_max(followee_id, Timeline.PROFILE):
            below = ids[-1] if ids else None
            ids += islice(archive.archived_ids_desc(followee_id, Timeline.PROFILE, below=below), hot - len(ids))
        streams.append(ids)
    newest = list(islice(timelines.desc_unique(*streams), hot))
    client = get_redis()
    key = keys.home_timeline(user_id)
    older = client.zrevrangebyscore(key, f"({newest[-1]}", "-inf", start=0, num=1) if newest else []
    if newest:
        client.zadd(key, {board_id: board_id for board_id in newest})
    timelines.home_regenerated(user_id)
    if not newest:
        return None
    lower = max(archive.archived_max(user_id, Timeline.HOME), int(older[0]) if older else 0)
    return (lower, newest[-1]) if lower else None


def home_gap_fill(user_id: int, lower: int, upper: int) -> int:
    """Archive the followees' boards strictly between ``lower`` (the older history's newest id)
    and ``upper`` (the regenerated ids' oldest), so deep paging has no hole (at most
    REGENERATE_GAP_MAX ids, newest first). Offline: one indexed query over the followees'
    boards. Returns the number of ids archived."""
    ids = list(
        Board.objects.filter(
            author_id__in=graph.following_ids(user_id), state=Board.State.PUBLISHED,
            id__gt=lower, id__lt=upper,
        ).order_by("-id").values_list("id", flat=True)[:settings.REGENERATE_GAP_MAX]
    )
    archive.chunks_write(user_id, Timeline.HOME, ids)
    return len(ids)


def idle_sweep(*, now: float | None = None, batch: int = 500) -> int:
    """Archive the whole P of every user idle longer than IDLE_AFTER, then drop it from Redis
    (a P is history, never just expired). O(buckets + idle users x |P|), offline. Returns how many."""
    client = get_redis()
    cutoff = (time.time() if now is None else now) - settings.IDLE_AFTER.total_seconds()
    swept = 0
    for bucket in range(keys.LAST_SEEN_BUCKETS):
        seen = keys.last_seen_bucket(bucket)
        while idle := [int(u) for u in client.zrangebyscore(seen, "-inf", f"({cutoff}", start=0, num=batch)]:
            for user_id in idle:
                if client.exists(keys.active(user_id)):  # came back since: not idle after all
                    client.zrem(seen, user_id)
                    continue
                archive.timeline_archive_all(Timeline.HOME, user_id)
                client.zrem(seen, user_id)
                swept += 1
    return swept
