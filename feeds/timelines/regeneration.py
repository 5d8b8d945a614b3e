"""Idle readers: fan-out skips users idle longer than IDLE_AFTER; the sweeper archives and drops
their P, and on their return it is regenerated from their followees' timelines before the
first page, with the gap to the older history archived by a task. Storage work only.
"""

import time
from datetime import UTC, datetime
from itertools import islice

from django.conf import settings

from feeds import keys
from feeds.models import Board
from feeds.rules import Timeline
from feeds.timelines import archive, hybrid, merge, store
from feeds.timelines.ids import min_board_id_at
from social import graph
from ugcsite.platform.redis import get_redis


def pushed_followees(user_id: int) -> list[int]:
    """The followees whose boards a user's P must hold: all but the big ones their pages merge
    whole (feeds.timelines.hybrid; one that fell back is kept: its newer boards are pushed again)."""
    merged = hybrid.merged_whole(user_id)
    return [followee_id for followee_id in graph.following_ids(user_id) if followee_id not in merged]


def home_regenerate(user_id: int) -> tuple[int, int] | None:
    """Refill a returning user's P from their pushed followees' M heads (and M archives where a
    head is short): their newest HOME_TIMELINE_HOT ids join whatever P holds (fan-out may have
    delivered since the return), so the first page is whole. Big followees are left out (the
    page merges them), so they cannot crowd the others out of the hot ids. O(F log |M| + hot)
    for F followees, one pipeline. Returns the (lower, upper) bounds of the gap left between
    those ids and the older history (for home_gap_fill), or None when there is nothing to join up."""
    followees = pushed_followees(user_id)
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
    newest = list(islice(merge.desc_unique(*streams), hot))
    client = get_redis()
    key = keys.home_timeline(user_id)
    older = client.zrevrangebyscore(key, f"({newest[-1]}", "-inf", start=0, num=1) if newest else []
    if newest and client.zadd(key, {board_id: board_id for board_id in newest}):
        store.revision_bump(user_id, Timeline.HOME)  # new ids in P: a feed snapshot made before is stale
    store.home_regenerated(user_id)
    if not newest:
        return None
    lower = max(archive.archived_max(user_id, Timeline.HOME), int(older[0]) if older else 0)
    return (lower, newest[-1]) if lower else None


def home_gap_fill(user_id: int, lower: int, upper: int) -> int:
    """Archive the pushed followees' boards strictly between ``lower`` (the older history's
    newest id) and ``upper`` (the regenerated ids' oldest), so deep paging has no hole (at most
    REGENERATE_GAP_MAX ids, newest first). Offline: one indexed query over the followees'
    boards. Returns the number of ids archived."""
    ids = list(
        Board.objects.filter(
            author_id__in=pushed_followees(user_id),
            state=Board.State.PUBLISHED,
            id__gt=lower,
            id__lt=upper,
        )
        .order_by("-id")
        .values_list("id", flat=True)[: settings.REGENERATE_GAP_MAX]
    )
    archive.chunks_write(user_id, Timeline.HOME, ids)
    return len(ids)


def idle_sweep(*, now: float | None = None, batch: int = 500) -> int:
    """Archive the whole P of every user idle longer than IDLE_AFTER, then drop it from Redis
    (a P is history, never just expired), and raise P's A to the id of their last activity:
    whatever fan-out skipped came after it, so on their return home_gap_fill starts there even
    when P held nothing to archive (its followees all merged, feeds.timelines.hybrid, or silent).
    O(buckets + idle users x |P|), offline. Returns how many."""
    client = get_redis()
    cutoff = (time.time() if now is None else now) - settings.IDLE_AFTER.total_seconds()
    swept = 0
    for bucket in range(keys.LAST_SEEN_BUCKETS):
        seen_index = keys.last_seen_bucket(bucket)
        while idle := client.zrangebyscore(seen_index, "-inf", f"({cutoff}", start=0, num=batch, withscores=True):
            for member, seen in idle:
                user_id = int(member)
                if client.exists(keys.active(user_id)):  # came back since: not idle after all
                    client.zrem(seen_index, user_id)
                    continue
                archive.timeline_archive_all(Timeline.HOME, user_id)
                archive.mark_raise(user_id, Timeline.HOME, min_board_id_at(datetime.fromtimestamp(seen, UTC)))
                client.zrem(seen_index, user_id)
                swept += 1
    return swept
