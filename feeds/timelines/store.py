"""The timelines' storage: M[u] (a user's own boards) and P[u] (home: boards of the people u
follows), sorted sets of board ids scored by the id itself (ids are time-ordered, below 2^53,
feeds.timelines.ids), and the active mark fan-out reads.

Each timeline has a revision (a field of its owner's tm, keys.timeline_meta): every change of
which ids it holds bumps it, in the same call as the change, except fan-out's deliveries into P
(home_deliver.lua, the one hot write: it only adds ids and trims the oldest, which P's size and
oldest id show). A feed snapshot is read only while the revisions it was made at still hold
(feeds.timelines.snapshot). Moving ids to the archive changes no revision: the timeline, head and
archive together, holds the same ids.

Storage only: Redis in, Redis out; no tasks are enqueued here. Reading a page is
feeds.timelines.pages.
"""

import time
from collections.abc import Iterable

from django.conf import settings

from feeds import keys
from feeds.rules import Timeline
from feeds.timelines.scripts import scripts
from social import keys as social_keys
from ugcsite.platform.redis import get_redis, run_by_node

_REVISION_FIELD = {Timeline.PROFILE: "m_revision", Timeline.HOME: "p_revision"}


def revision_field(kind: str) -> str:
    """The field of keys.timeline_meta that holds the revision of a kind of timeline."""
    return _REVISION_FIELD[kind]


def revision_bump(user_id: int, kind: str, *, pipe=None) -> None:
    """Bump a timeline's revision (its ids changed other than by fan-out's delivery). O(1)."""
    (pipe if pipe is not None else get_redis()).hincrby(keys.timeline_meta(user_id), _REVISION_FIELD[kind], 1)


def profile_remove(author_id: int, board_id: int, *, pipe=None) -> None:
    """Take a board out of its author's M (and bump M's revision). O(log |M|)."""
    client = pipe if pipe is not None else get_redis().pipeline(transaction=False)
    client.zrem(keys.profile_timeline(author_id), board_id)
    revision_bump(author_id, Timeline.PROFILE, pipe=client)
    if pipe is None:
        client.execute()


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
    """Queue ZADD of M, its revision's bump and ZCARD of M on ``pipe`` (the caller reads the
    size, the last answer). O(log |M|)."""
    key = keys.profile_timeline(author_id)
    pipe.zadd(key, {board_id: board_id})
    revision_bump(author_id, Timeline.PROFILE, pipe=pipe)
    pipe.zcard(key)


def timeline_remove(kind: str, owner_ids: Iterable[int], board_ids: list[int]) -> int:
    """Take boards out of each owner's timeline of ``kind``, bumping the revision of each that
    held one (timeline_remove.lua). FANOUT_SCRIPT_CHUNK owners a call, one pipeline per Redis
    node: O(k b log |T|) for k owners and b boards, one round trip a node. Returns how many ids
    were taken out."""
    if not board_ids:
        return 0
    answers = run_by_node(
        scripts.timeline_remove,
        owner_ids,
        key=lambda owner: keys.timeline_key(kind, owner),
        per_call=settings.FANOUT_SCRIPT_CHUNK,
        keys_of=lambda owner: [keys.timeline_key(kind, owner), keys.timeline_meta(owner)],
        args=scripts.timeline_remove.args(
            revision_field=_REVISION_FIELD[kind], count=len(board_ids), board_ids=board_ids
        ),
    )
    return sum(int(removed) for _, removed in answers)


def home_remove(follower_ids: Iterable[int], board_ids: list[int]) -> None:
    """Take boards out of each follower's P (timeline_remove). O(k b log |P|), one round trip a node."""
    timeline_remove(Timeline.HOME, follower_ids, board_ids)


def home_ids(user_id: int) -> list[int]:
    """Every id in a user's P, newest first. O(|P|), bounded by the hot size: for offline work."""
    return [int(i) for i in get_redis().zrevrange(keys.home_timeline(user_id), 0, -1)]


def profile_recent_ids(user_id: int, count: int) -> list[int]:
    """The newest ``count`` ids of M. O(log |M| + count)."""
    return [int(i) for i in get_redis().zrevrange(keys.profile_timeline(user_id), 0, count - 1)]


REPLACE_PER_CALL = 20


def timelines_replace(kind: str, timelines: dict[int, list[int]]) -> None:
    """Rewrite many users' timelines of one kind whole (rebuild_redis, a batch of people at a
    time), each at once with its revision bumped (timelines_replace.lua): REPLACE_PER_CALL
    owners a call (a hot P is up to a thousand ids: a call stays a few milliseconds of the node),
    one pipeline a Redis node, one round trip a node. O(n log n) for the n ids."""
    run_by_node(
        scripts.timelines_replace,
        timelines,
        key=lambda owner: keys.timeline_key(kind, owner),
        per_call=REPLACE_PER_CALL,
        keys_of=lambda owner: [
            keys.timeline_key(kind, owner),
            keys.timeline_meta(owner),
            len(timelines[owner]),
            *timelines[owner],
        ],
        args=scripts.timelines_replace.args(revision_field=_REVISION_FIELD[kind], owners=()),
    )


def timeline_replace(kind: str, user_id: int, board_ids: Iterable[int]) -> None:
    """Rewrite one timeline whole (rebuild, restore) and bump its revision, in one MULTI.
    O(n log n)."""
    key = keys.timeline_key(kind, user_id)
    pipe = get_redis().pipeline(transaction=True)  # the owner's keys: one slot, so MULTI is cluster-safe
    pipe.delete(key)
    mapping = {board_id: board_id for board_id in board_ids}
    if mapping:
        pipe.zadd(key, mapping)
    revision_bump(user_id, kind, pipe=pipe)
    pipe.execute()
