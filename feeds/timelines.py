"""The timelines: M[u] (a user's own boards) and P[u] (home: boards of the people u follows),
sorted sets of board ids scored by the id itself (ids are time-ordered, below 2^53).

Storage only: Redis in, Redis out; no tasks are enqueued here.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings

from feeds import keys
from feeds.scripts import scripts
from social import keys as social_keys
from ugcsite.redis import get_redis


def profile_add(author_id: int, board_id: int, *, pipe=None) -> None:
    """Add a board to its author's M. O(log |M|)."""
    (pipe if pipe is not None else get_redis()).zadd(keys.profile_timeline(author_id), {board_id: board_id})


def profile_remove(author_id: int, board_id: int, *, pipe=None) -> None:
    """Take a board out of its author's M. O(log |M|)."""
    (pipe if pipe is not None else get_redis()).zrem(keys.profile_timeline(author_id), board_id)


def _by_slot(user_ids: Iterable[int], chunk: int) -> list[list[int]]:
    """Users whose keys may share one script call: chunks on a plain Redis; on a cluster,
    users of one hash slot (their {u:id} tags decide it), so no call spans two slots."""
    user_ids = list(user_ids)
    if not settings.REDIS_CLUSTER:
        return [user_ids[i:i + chunk] for i in range(0, len(user_ids), chunk)]
    from redis.crc import key_slot

    groups: dict[int, list[int]] = {}
    for user_id in user_ids:
        groups.setdefault(key_slot(keys.home_timeline(user_id).encode()), []).append(user_id)
    return [ids[i:i + chunk] for ids in groups.values() for i in range(0, len(ids), chunk)]


def home_deliver(follower_ids: Iterable[int], author_id: int, board_ids: list[int], *, pipe=None) -> None:
    """Add ``board_ids`` by ``author_id`` to each follower's P, only where the follow still holds,
    trimming each P to its hot size once it passes the slack (home_deliver.lua). Followers go
    FANOUT_SCRIPT_CHUNK to a script call, all calls in one pipeline: O(k log |P|) for k
    followers, one round trip (a trim is amortised by the slack)."""
    if not board_ids:
        return
    client = pipe if pipe is not None else get_redis().pipeline(transaction=False)
    args = [author_id, settings.HOME_TIMELINE_HOT, settings.HOME_TIMELINE_SLACK, *board_ids]
    for group in _by_slot(follower_ids, settings.FANOUT_SCRIPT_CHUNK):
        timeline_keys = []
        for follower_id in group:
            timeline_keys += [keys.home_timeline(follower_id), social_keys.following(follower_id)]
        scripts.home_deliver(keys=timeline_keys, args=args, client=client)
    if pipe is None:
        client.execute()


def home_remove(follower_ids: Iterable[int], board_ids: list[int], *, pipe=None) -> None:
    """Take boards out of each follower's P. O(k log |P|), one pipeline."""
    if not board_ids:
        return
    client = pipe if pipe is not None else get_redis().pipeline(transaction=False)
    for follower_id in follower_ids:
        client.zrem(keys.home_timeline(follower_id), *board_ids)
    if pipe is None:
        client.execute()


def home_ids(user_id: int) -> list[int]:
    """Every id in a user's P, newest first. O(|P|), bounded by the hot size: for offline work."""
    return [int(i) for i in get_redis().zrevrange(keys.home_timeline(user_id), 0, -1)]


def profile_recent_ids(user_id: int, count: int) -> list[int]:
    """The newest ``count`` ids of M. O(log |M| + count)."""
    return [int(i) for i in get_redis().zrevrange(keys.profile_timeline(user_id), 0, count - 1)]


def timeline_replace(key: str, board_ids: Iterable[int]) -> None:
    """Rewrite one timeline whole (rebuild, regeneration). O(n log n)."""
    pipe = get_redis().pipeline(transaction=True)  # one key: one slot, so MULTI is cluster-safe
    pipe.delete(key)
    mapping = {board_id: board_id for board_id in board_ids}
    if mapping:
        pipe.zadd(key, mapping)
    pipe.execute()


@dataclass(frozen=True)
class IdPage:
    ids: list[int]
    has_more: bool  # an older id exists after the last one


def page(key: str, *, offset: int | None = None, before: int | None = None, limit: int) -> IdPage:
    """One page of a timeline, newest first: by ``offset`` or strictly older than ``before``.

    O(log n + limit): ZREVRANGE by rank, or ZREVRANGEBYSCORE from ``(before``. One id more
    than asked is read to tell whether an older one exists.
    """
    client = get_redis()
    if before is not None:
        raw = client.zrevrangebyscore(key, f"({before}", "-inf", start=0, num=limit + 1)
    else:
        raw = client.zrevrange(key, offset or 0, (offset or 0) + limit)
    ids = [int(i) for i in raw]
    return IdPage(ids=ids[:limit], has_more=len(ids) > limit)
