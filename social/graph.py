"""The follow graph in Redis: F[u] (followers) and its mirror following[u], both sorted sets
scored by follow time, so fan-out can walk followers in batches from a score cursor.

They hold active people only: F[u] is every *active* follower of u, following[u] every
*active* followee (whether u is active or not). A suspension takes the person out of the sets
of everyone they follow and everyone who follows them, and lifting it puts them back
(social.services.member_lists_sync), so list totals are exact ZCARDs, pages are stable, and a
page never filters anyone out.

Storage only: no tasks are enqueued here (social.services does that). Each function touches
the keys of one or two users with one command per key: never a command across two users' keys.
"""

from collections.abc import Iterable

from social import keys
from social.scripts import scripts
from ugcsite.platform.redis import get_redis


def follow_add(*, follower_id: int, followee_id: int, at: float, pipe=None) -> None:
    """Record an edge in F[followee] and following[follower]. O(log n) each."""
    client = pipe if pipe is not None else get_redis().pipeline(transaction=False)
    client.zadd(keys.followers(followee_id), {follower_id: at})
    client.zadd(keys.following(follower_id), {followee_id: at})
    if pipe is None:
        client.execute()


def follow_remove(*, follower_id: int, followee_id: int, pipe=None) -> None:
    """Remove an edge. The following side goes first: fan-out checks it (home_deliver.lua)."""
    client = pipe if pipe is not None else get_redis().pipeline(transaction=False)
    client.zrem(keys.following(follower_id), followee_id)
    client.zrem(keys.followers(followee_id), follower_id)
    if pipe is None:
        client.execute()


def followed_among(follower_id: int, user_ids: list[int]) -> set[int]:
    """Which of ``user_ids`` the follower follows: one ZMSCORE of their following set, O(k)."""
    if not user_ids:
        return set()
    scores = get_redis().zmscore(keys.following(follower_id), user_ids)
    return {user_id for user_id, score in zip(user_ids, scores, strict=True) if score is not None}


def is_following(*, follower_id: int, followee_id: int) -> bool:
    """Whether the edge exists. O(1)."""
    return get_redis().zscore(keys.following(follower_id), followee_id) is not None


def member_set(
    user_id: int, *, followers: Iterable[tuple[int, float]], followees: Iterable[tuple[int, float]], present: bool, pipe
) -> None:
    """Put a user into (``present``) or take them out of the following set of each of their
    ``followers`` and the F of each of their ``followees`` ((id, follow time) pairs), inside
    ``pipe``. One command per key: O(k log n) for k edges. Idempotent."""
    for follower_id, at in followers:
        if present:
            pipe.zadd(keys.following(follower_id), {user_id: at})
        else:
            pipe.zrem(keys.following(follower_id), user_id)
    for followee_id, at in followees:
        if present:
            pipe.zadd(keys.followers(followee_id), {user_id: at})
        else:
            pipe.zrem(keys.followers(followee_id), user_id)


def profile_counts(user_id: int, *, viewer_id: int | None = None) -> tuple[int, int, bool]:
    """(followers, following, whether ``viewer_id`` follows the user): the sizes of the lists
    as served, in one round trip. O(1)."""
    pipe = get_redis().pipeline(transaction=False)
    pipe.zcard(keys.followers(user_id))
    pipe.zcard(keys.following(user_id))
    if viewer_id is not None:
        pipe.zscore(keys.following(viewer_id), user_id)
    answers = pipe.execute()
    return answers[0], answers[1], viewer_id is not None and answers[2] is not None


def followers_page(user_id: int, *, offset: int, limit: int) -> tuple[list[int], int]:
    """Follower ids, newest follow first, and the total. O(log n + limit)."""
    return _page(keys.followers(user_id), offset, limit)


def following_page(user_id: int, *, offset: int, limit: int) -> tuple[list[int], int]:
    """Followee ids, newest follow first, and the total. O(log n + limit)."""
    return _page(keys.following(user_id), offset, limit)


def _page(key: str, offset: int, limit: int) -> tuple[list[int], int]:
    pipe = get_redis().pipeline(transaction=False)
    pipe.zrevrange(key, offset, offset + limit - 1)
    pipe.zcard(key)
    ids, total = pipe.execute()
    return [int(i) for i in ids], total


def following_ids(user_id: int) -> list[int]:
    """Every followee of a user. O(n): for offline work (back-fill, regeneration)."""
    return [int(i) for i in get_redis().zrange(keys.following(user_id), 0, -1)]


class FollowerCursor(tuple):
    """Where a walk of F stopped: the score and the member of the last follower visited (the
    walk goes on with whoever comes after them in F's order, which no unfollow can shift), and
    how many members at that score were done (all a cursor of the previous release carried).

    Several followers can share a score (same follow time, e.g. a bulk load), so the score alone
    would skip some; an offset into such a tie would skip one whenever a follower already
    visited left during the walk.
    """

    def __new__(cls, score: float = float("-inf"), done_at_score: int = 0, after: int | None = None):
        return super().__new__(cls, (score, done_at_score, after))


def followers_batch(user_id: int, cursor: FollowerCursor, count: int) -> tuple[list[int], FollowerCursor | None]:
    """The next ``count`` followers after ``cursor`` in follow order, and the cursor after them
    (None when the walk is over). O(log n + count); O(log^2 n) to find the place in a tie.
    Followers added during a walk are reached if they sort after the cursor; removed ones are
    simply not returned, and never make the walk skip anyone."""
    score, done, after = cursor
    # COMPAT(remove after 2026-12-31): cursors queued by the release before 2026-11-24 carry no ``after`` and walk by
    # offset; once none can be queued, only the start of a walk has None here.
    if after is None:  # the start of a walk, or a cursor sent by the previous release: by offset
        low = "-inf" if score == float("-inf") else repr(score)
        rows = get_redis().zrangebyscore(keys.followers(user_id), low, "+inf", start=done, num=count, withscores=True)
    else:
        flat = scripts.followers_after(keys=[keys.followers(user_id)], score=repr(score), after=after, count=count)
        rows = [(flat[i], float(flat[i + 1])) for i in range(0, len(flat), 2)]
    if not rows:
        return [], None
    ids = [int(member) for member, _ in rows]
    last = rows[-1][1]
    same = sum(1 for _, s in rows if s == last)
    next_cursor = FollowerCursor(last, same + (done if last == score else 0), ids[-1])
    return ids, (next_cursor if len(rows) == count else None)


def graph_replace(
    user_id: int, *, followers: Iterable[tuple[int, float]], following: Iterable[tuple[int, float]]
) -> None:
    """Rewrite one user's F and following sets (rebuild_redis). O(n log n)."""
    graphs_replace({user_id: (followers, following)})


def graphs_replace(graphs: dict[int, tuple[Iterable[tuple[int, float]], Iterable[tuple[int, float]]]]) -> None:
    """Rewrite many users' F and following sets, ``{user id: (followers, following)}``, in one
    pipeline (rebuild_redis, a batch of people at a time): one round trip a node. O(n log n) for
    the n edges."""
    pipe = get_redis().pipeline(transaction=False)
    for user_id, (followers, following) in graphs.items():
        for key, members in ((keys.followers(user_id), followers), (keys.following(user_id), following)):
            pipe.delete(key)
            mapping = dict(members)
            if mapping:
                pipe.zadd(key, mapping)
    pipe.execute()
