"""The timelines' storage: M[u] (a user's own boards) and P[u] (home: boards of the people u
follows), sorted sets of board ids scored by the id itself (ids are time-ordered, below 2^53,
feeds.timelines.ids), and the active mark fan-out reads.

Storage only: Redis in, Redis out; no tasks are enqueued here. Reading a page is
feeds.timelines.pages.
"""

import time
from collections.abc import Iterable

from django.conf import settings

from feeds import keys
from feeds.timelines.scripts import scripts
from social import keys as social_keys
from ugcsite.redis import get_redis, run_by_node


def profile_remove(author_id: int, board_id: int, *, pipe=None) -> None:
    """Take a board out of its author's M. O(log |M|)."""
    (pipe if pipe is not None else get_redis()).zrem(keys.profile_timeline(author_id), board_id)


def home_deliver(follower_ids: Iterable[int], author_id: int, board_ids: list[int]) -> list[int]:
    """Add ``board_ids`` by ``author_id`` to each follower's P where the follow still holds and
    the follower is active (home_deliver.lua); P is capped at hot size + slack. Followers go
    FANOUT_SCRIPT_CHUNK to a script call, one pipeline per Redis node: O(k log |P|) for k
    followers, one round trip a node. Returns the followers whose P now waits for the archiver."""
    if not board_ids:
        return []
    hot = settings.HOME_TIMELINE_HOT
    answers = run_by_node(
        scripts.home_deliver,
        follower_ids,
        key=keys.home_timeline,
        per_call=settings.FANOUT_SCRIPT_CHUNK,
        keys_of=lambda f: [keys.home_timeline(f), social_keys.following(f), keys.active(f)],
        args=scripts.home_deliver.args(
            author=author_id,
            cap=hot + settings.HOME_TIMELINE_SLACK,
            due=hot + settings.TIMELINE_CHUNK,
            count=len(board_ids),
            board_ids=board_ids,
        ),
    )
    return [call[i - 1] for call, flagged in answers for i in flagged]


def home_touch(user_id: int, *, now: float | None = None) -> bool:
    """Mark a user active for IDLE_AFTER, and note when (for the idle sweeper); True if they
    were idle, in which case their P is flagged for regeneration before its next read.
    One round trip, O(log n)."""
    ttl = int(settings.IDLE_AFTER.total_seconds())
    pipe = get_redis().pipeline(transaction=False)
    scripts.touch(keys=[keys.active(user_id), keys.timeline_meta(user_id)], ttl=ttl, client=pipe)
    pipe.zadd(keys.last_seen(user_id), {user_id: time.time() if now is None else now})
    return bool(pipe.execute()[0])


def home_needs_regeneration(user_id: int) -> bool:
    """Whether a returning user's P waits to be refilled. O(1)."""
    return get_redis().hget(keys.timeline_meta(user_id), "regenerate") is not None


def home_regenerated(user_id: int) -> None:
    get_redis().hdel(keys.timeline_meta(user_id), "regenerate")


def profile_add_and_size(author_id: int, board_id: int, *, pipe) -> None:
    """Queue ZADD + ZCARD of M on ``pipe`` (the caller reads the size). O(log |M|)."""
    key = keys.profile_timeline(author_id)
    pipe.zadd(key, {board_id: board_id})
    pipe.zcard(key)


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
    """Rewrite one timeline whole (rebuild). O(n log n)."""
    pipe = get_redis().pipeline(transaction=True)  # one key: one slot, so MULTI is cluster-safe
    pipe.delete(key)
    mapping = {board_id: board_id for board_id in board_ids}
    if mapping:
        pipe.zadd(key, mapping)
    pipe.execute()
