"""The indexes of discovery: each visible board is in one set per ``field:value`` (its kind,
each tag, its author) and in the sort orders (SORTS), all in the board's shard
(feeds.keys.discovery_shard: DISCOVERY_SHARDS of them, each its own hash tag, so the shards spread
over a cluster's nodes); a tracker set per board lists the index keys it is in, so removal never
needs to know the index types, and an update touches only the indexes that changed. The facet
counts (boards per kind and per tag) are one pair of keys for the site ({d}), moved after the
shard's transaction by what it changed, beside the generation of the cached pages
(feeds.discovery.queries). Storage only: Redis, no tasks.
"""

from collections import Counter
from collections.abc import Iterable

from redis.exceptions import WatchError

from feeds import keys
from feeds.rules import BOARD_KINDS, DISCOVERY_SHARDS
from ugcsite.platform.redis import get_redis

SORTS = ("recent", "popular", "trending", "likes", "likes-trending")


def board_indexes(shard: int, *, kind: str, tags: Iterable[str], author: str) -> set[str]:
    """The index keys (of ``shard``) a board with these values belongs in."""
    found = {keys.index(shard, "kind", kind), keys.index(shard, "author", author.lower())}
    found.update(keys.index(shard, "tag", tag) for tag in tags)
    return found


def _facet_of(shard: int, index_key: str) -> tuple[str, str] | None:
    """("tag" or "kind", its value) for an index key that a facet counts; None for an author's."""
    for field in ("tag", "kind"):
        prefix = keys.index(shard, field, "")
        if index_key.startswith(prefix):
            return field, index_key[len(prefix) :]
    return None


def _after_change(shard: int, added: Iterable[str], removed: Iterable[str]) -> None:
    """After a shard's transaction changed its indexes: bump the cached pages' generation
    (keys.query_pages_generation: the pages cached before are stale) and move the facet counts by
    the index keys it added and removed. One pipeline in the {d} slot, O(k log t), sent after the
    shard's transaction (a page computed between the two is cached under the old generation, so
    never served). A process that dies between the transaction and this leaves a count off by
    one until the next rebuild and the cached pages stale until their TTL (the shard's sets stay
    exact)."""
    moves = Counter()
    for key, step in [*((key, 1) for key in added), *((key, -1) for key in removed)]:
        if facet := _facet_of(shard, key):
            moves[facet] += step
    moves = {facet: step for facet, step in moves.items() if step}
    pipe = get_redis().pipeline(transaction=False)
    pipe.incr(keys.query_pages_generation())
    for (field, value), step in moves.items():
        if field == "tag":
            pipe.zincrby(keys.tag_counts(), step, value)
        else:
            pipe.hincrby(keys.kind_counts(), value, step)
    if any(step < 0 for (field, _), step in moves.items() if field == "tag"):
        pipe.zremrangebyscore(keys.tag_counts(), "-inf", 0)
    pipe.execute()


def board_index(
    board_id: int, *, kind: str, tags: Iterable[str], author: str, views: int = 0, likes: int = 0, trending: float = 0
) -> None:
    """Put a board in its indexes and the sort orders, or bring its indexes up to date: only
    the indexes that changed are written (a title edit writes none). One WATCHed transaction
    in the board's shard, then (when an index changed) the facet counts and the cached pages'
    generation: O(k) for k indexes."""
    client = get_redis()
    shard = keys.discovery_shard(board_id)
    tracker = keys.index_tracker(board_id)
    wanted = board_indexes(shard, kind=kind, tags=tags, author=author)
    with client.pipeline(transaction=True) as pipe:
        while True:
            try:
                pipe.watch(tracker)
                current = set(pipe.smembers(tracker))
                added, removed = wanted - current, current - wanted
                pipe.multi()
                for key in added:
                    pipe.sadd(key, board_id)
                for key in removed:
                    pipe.srem(key, board_id)
                if added:
                    pipe.sadd(tracker, *added)
                if removed:
                    pipe.srem(tracker, *removed)
                if not current:  # new to the indexes: enters the sort orders too
                    pipe.zadd(keys.sort(shard, "recent"), {board_id: board_id})
                    pipe.zadd(keys.sort(shard, "popular"), {board_id: views})
                    pipe.zadd(keys.sort(shard, "trending"), {board_id: trending})
                    pipe.zadd(keys.sort(shard, "likes"), {board_id: likes})
                    pipe.zadd(keys.sort(shard, "likes-trending"), {board_id: 0})
                if added or removed:
                    pipe.incr(keys.index_generation(shard))
                pipe.execute()
                break
            except WatchError:
                continue  # the tracker changed under us: read it again
    if added or removed:
        _after_change(shard, added, removed)


def board_unindex(board_id: int) -> None:
    """Take a board out of every index it is in (read from its tracker) and every sort order.
    One WATCHed transaction in the board's shard, then the facet counts and the cached pages'
    generation: O(k) for k indexes."""
    client = get_redis()
    shard = keys.discovery_shard(board_id)
    tracker = keys.index_tracker(board_id)
    with client.pipeline(transaction=True) as pipe:
        while True:
            try:
                pipe.watch(tracker)
                current = set(pipe.smembers(tracker))
                pipe.multi()
                for key in current:
                    pipe.srem(key, board_id)
                pipe.delete(tracker)
                for order in SORTS:
                    pipe.zrem(keys.sort(shard, order), board_id)
                pipe.incr(keys.index_generation(shard))
                pipe.execute()
                break
            except WatchError:
                continue
    _after_change(shard, (), current)


def members_of_all(query, board_ids: list[int]) -> list[int]:
    """The ids (in order) that are in every filter set of ``query`` (a queries.Query), each
    asked in its own shard: one SMISMEMBER per shard touched and filter, in one pipeline,
    O(k x n). For narrowing a timeline read from its own side."""
    if not board_ids or not query.has_filters():
        return list(board_ids)
    by_shard: dict[int, list[int]] = {}
    for board_id in board_ids:
        by_shard.setdefault(keys.discovery_shard(board_id), []).append(board_id)
    pipe = get_redis().pipeline(transaction=False)
    asked = []
    for shard, ids in by_shard.items():
        for key in query.filter_keys(shard):
            pipe.smismember(key, ids)
            asked.append(ids)
    missing = set()
    for ids, answer in zip(asked, pipe.execute()):
        missing.update(board_id for board_id, member in zip(ids, answer) if not member)
    return [board_id for board_id in board_ids if board_id not in missing]


def index_size(field: str, value: str) -> int:
    """How many visible boards have ``field`` = ``value``, over every shard: one SCARD a shard in
    one pipeline, O(S)."""
    pipe = get_redis().pipeline(transaction=False)
    for shard in range(DISCOVERY_SHARDS):
        pipe.scard(keys.index(shard, field, value))
    return sum(pipe.execute())


def facets(*, top_tags: int = 20) -> dict:
    """Counts for the discover page: boards per kind, and the most used tags. One pipeline in
    the {d} slot, O(log t + top_tags)."""
    pipe = get_redis().pipeline(transaction=False)
    pipe.hgetall(keys.kind_counts())
    pipe.zrevrange(keys.tag_counts(), 0, top_tags - 1, withscores=True)
    kind_counts, tags = pipe.execute()
    return {
        "kinds": {kind: int(kind_counts.get(kind, 0)) for kind in BOARD_KINDS},
        "tags": [(tag, int(count)) for tag, count in tags if count > 0],
    }


def popular_add_view(board_id: int, count: int = 1, *, pipe) -> None:
    """Count views in the popular order of the board's shard, for indexed boards only (ZADD XX).
    O(log n)."""
    pipe.zadd(keys.board_sort(board_id, "popular"), {board_id: count}, xx=True, incr=True)


def likes_add(board_id: int, count: int, *, pipe) -> None:
    """Count likes (or, negative, take them back) in the likes order of the board's shard, for
    indexed boards only (ZADD XX). O(log n)."""
    pipe.zadd(keys.board_sort(board_id, "likes"), {board_id: count}, xx=True, incr=True)


def index_clear() -> int:
    """Delete every index, tracker, sort order, facet count and cached query (rebuild), of every
    shard and of the single-{d} layout before the shards (its keys match discovery_patterns too).
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
    empty indexes (rebuild): one pipeline (each shard's commands go to its node), no per-board
    transaction; the facet counts added once at the end. O(total indexes)."""
    pipe = get_redis().pipeline(transaction=False)
    tag_counts, kind_counts = Counter(), Counter()
    for board_id, kind, tags, author, views, likes in rows:
        shard = keys.discovery_shard(board_id)
        wanted = board_indexes(shard, kind=kind, tags=tags, author=author)
        for key in wanted:
            pipe.sadd(key, board_id)
        pipe.sadd(keys.index_tracker(board_id), *wanted)
        tag_counts.update(set(tags))
        kind_counts[kind] += 1
        pipe.zadd(keys.sort(shard, "recent"), {board_id: board_id})
        pipe.zadd(keys.sort(shard, "popular"), {board_id: views})
        pipe.zadd(keys.sort(shard, "trending"), {board_id: 0})
        pipe.zadd(keys.sort(shard, "likes"), {board_id: likes})
        pipe.zadd(keys.sort(shard, "likes-trending"), {board_id: 0})
    for tag, count in tag_counts.items():
        pipe.zincrby(keys.tag_counts(), count, tag)
    for kind, count in kind_counts.items():
        pipe.hincrby(keys.kind_counts(), kind, count)
    for shard in range(DISCOVERY_SHARDS):
        pipe.incr(keys.index_generation(shard))
    pipe.execute()
    get_redis().incr(keys.query_pages_generation())  # after the shards: see _after_change
