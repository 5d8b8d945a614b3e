"""The indexes of discovery: each visible board is in one set per ``field:value`` (its kind,
each tag, its author) and in the sort orders (SORTS); a tracker set per
board lists the index keys it is in, so removal never needs to know the index types, and an
update touches only the indexes that changed. Storage only: Redis, no tasks.
"""

from collections.abc import Iterable

from redis.exceptions import WatchError

from feeds import keys
from feeds.rules import BOARD_KINDS
from ugcsite.redis import get_redis

SORTS = ("recent", "popular", "trending", "likes", "likes-trending")


def board_indexes(*, kind: str, tags: Iterable[str], author: str) -> set[str]:
    """The index keys a board with these values belongs in."""
    found = {keys.index("kind", kind), keys.index("author", author.lower())}
    found.update(keys.index("tag", tag) for tag in tags)
    return found


def _tag_of(index_key: str) -> str | None:
    prefix = keys.index("tag", "")
    return index_key[len(prefix) :] if index_key.startswith(prefix) else None


def board_index(
    board_id: int, *, kind: str, tags: Iterable[str], author: str, views: int = 0, likes: int = 0, trending: float = 0
) -> None:
    """Put a board in its indexes and the sort orders, or bring its indexes up to date: only
    the indexes that changed are written (a title edit writes none). One WATCHed transaction
    in the {d} slot: O(k) for k indexes."""
    client = get_redis()
    tracker = keys.index_tracker(board_id)
    wanted = board_indexes(kind=kind, tags=tags, author=author)
    with client.pipeline(transaction=True) as pipe:
        while True:
            try:
                pipe.watch(tracker)
                current = set(pipe.smembers(tracker))
                added, removed = wanted - current, current - wanted
                pipe.multi()
                for key in added:
                    pipe.sadd(key, board_id)
                    if tag := _tag_of(key):
                        pipe.zincrby(keys.tag_counts(), 1, tag)
                for key in removed:
                    pipe.srem(key, board_id)
                    if tag := _tag_of(key):
                        pipe.zincrby(keys.tag_counts(), -1, tag)
                if added:
                    pipe.sadd(tracker, *added)
                if removed:
                    pipe.srem(tracker, *removed)
                if not current:  # new to the indexes: enters the sort orders too
                    pipe.zadd(keys.sort("recent"), {board_id: board_id})
                    pipe.zadd(keys.sort("popular"), {board_id: views})
                    pipe.zadd(keys.sort("trending"), {board_id: trending})
                    pipe.zadd(keys.sort("likes"), {board_id: likes})
                    pipe.zadd(keys.sort("likes-trending"), {board_id: 0})
                if added or removed:
                    pipe.incr(keys.index_generation())
                pipe.execute()
                return
            except WatchError:
                continue  # the tracker changed under us: read it again


def board_unindex(board_id: int) -> None:
    """Take a board out of every index it is in (read from its tracker) and every sort order.
    O(k) for k indexes, two round trips."""
    client = get_redis()
    tracker = keys.index_tracker(board_id)
    current = client.smembers(tracker)
    pipe = client.pipeline(transaction=True)
    for key in current:
        pipe.srem(key, board_id)
        if tag := _tag_of(key):
            pipe.zincrby(keys.tag_counts(), -1, tag)
    pipe.delete(tracker)
    for order in SORTS:
        pipe.zrem(keys.sort(order), board_id)
    pipe.incr(keys.index_generation())
    pipe.execute()
    if current:
        client.zremrangebyscore(keys.tag_counts(), "-inf", 0)


def members_of_all(filter_keys: list[str], board_ids: list[int]) -> list[int]:
    """The ids (in order) that are in every one of ``filter_keys``: one SMISMEMBER per key in
    one pipeline, O(k x n). For narrowing a timeline read from its own side."""
    if not board_ids or not filter_keys:
        return list(board_ids)
    pipe = get_redis().pipeline(transaction=False)
    for key in filter_keys:
        pipe.smismember(key, board_ids)
    answers = pipe.execute()
    return [board_id for i, board_id in enumerate(board_ids) if all(answer[i] for answer in answers)]


def facets(*, top_tags: int = 20) -> dict:
    """Counts for the discover page: boards per kind, and the most used tags. One pipeline."""
    pipe = get_redis().pipeline(transaction=False)
    kinds = list(BOARD_KINDS)
    for kind in kinds:
        pipe.scard(keys.index("kind", kind))
    pipe.zrevrange(keys.tag_counts(), 0, top_tags - 1, withscores=True)
    *kind_counts, tags = pipe.execute()
    return {
        "kinds": dict(zip(kinds, kind_counts)),
        "tags": [(tag, int(count)) for tag, count in tags if count > 0],
    }


def popular_add_view(board_id: int, count: int = 1, *, pipe) -> None:
    """Count views in the popular order, for indexed boards only (ZADD XX). O(log n)."""
    pipe.zadd(keys.sort("popular"), {board_id: count}, xx=True, incr=True)


def likes_add(board_id: int, count: int, *, pipe) -> None:
    """Count likes (or, negative, take them back) in the likes order, for indexed boards only
    (ZADD XX). O(log n)."""
    pipe.zadd(keys.sort("likes"), {board_id: count}, xx=True, incr=True)


def index_clear() -> int:
    """Delete every index, tracker, sort order, facet count and cached query (rebuild).
    O(keys): offline only. Returns the number of keys deleted."""
    client = get_redis()
    deleted = 0
    for pattern in keys.discovery_patterns():
        batch = []
        for key in client.scan_iter(match=pattern, count=1000):
            batch.append(key)
            if len(batch) == 1000:
                deleted += client.delete(*batch)
                batch = []
        if batch:
            deleted += client.delete(*batch)
    return deleted


def index_bulk(rows: Iterable[tuple[int, str, list[str], str, int, int]]) -> None:
    """Index many boards at once, given (id, kind, tags, author username, views, likes), into
    empty indexes (rebuild): one pipeline, no per-board transaction. O(total indexes)."""
    pipe = get_redis().pipeline(transaction=False)
    for board_id, kind, tags, author, views, likes in rows:
        wanted = board_indexes(kind=kind, tags=tags, author=author)
        for key in wanted:
            pipe.sadd(key, board_id)
        pipe.sadd(keys.index_tracker(board_id), *wanted)
        for tag in tags:
            pipe.zincrby(keys.tag_counts(), 1, tag)
        pipe.zadd(keys.sort("recent"), {board_id: board_id})
        pipe.zadd(keys.sort("popular"), {board_id: views})
        pipe.zadd(keys.sort("trending"), {board_id: 0})
        pipe.zadd(keys.sort("likes"), {board_id: likes})
        pipe.zadd(keys.sort("likes-trending"), {board_id: 0})
    pipe.incr(keys.index_generation())
    pipe.execute()
