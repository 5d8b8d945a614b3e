"""Who gets what: fan-out of a new board, retraction of a deleted one, follow back-fill and
unfollow clean-up, each in bounded steps for Celery (feeds.tasks). Storage work only."""

from itertools import islice

from django.conf import settings

from feeds import boardcache, timelines
from feeds.models import Board
from social import graph
from social.graph import FollowerCursor
from ugcsite.redis import get_redis


def fanout_batch(*, board_id: int, author_id: int, cursor: FollowerCursor, batch_size: int, then=None) -> list[int]:
    """Deliver a board to the next ``batch_size`` followers after ``cursor``.

    ``then(next_cursor)`` is called between reading the batch and writing it, so the next batch
    can start on another worker while this one writes. One ZRANGEBYSCORE plus one pipeline:
    O(batch log |P|). Idempotent: a retried batch re-adds what is there already. Returns the
    followers whose P now waits for the archiver.
    """
    followers, next_cursor = graph.followers_batch(author_id, cursor, batch_size)
    if next_cursor is not None and then is not None:
        then(next_cursor)
    return timelines.home_deliver(followers, author_id, [board_id])


def retract_batch(*, board_id: int, author_id: int, cursor: FollowerCursor, batch_size: int, then=None) -> None:
    """Take a board out of the next ``batch_size`` followers' P (``then`` as in fanout_batch).
    O(batch log |P|)."""
    followers, next_cursor = graph.followers_batch(author_id, cursor, batch_size)
    if next_cursor is not None and then is not None:
        then(next_cursor)
    timelines.home_remove(followers, [board_id])


def follow_backfill(*, follower_id: int, followee_id: int) -> list[int]:
    """Bring the followee's newest boards into the follower's P (if the follow still holds).
    O(n log |P|) for n = FOLLOW_BACKFILL_COUNT. Returns [follower_id] if P now waits for archival."""
    board_ids = timelines.profile_recent_ids(followee_id, settings.FOLLOW_BACKFILL_COUNT)
    return timelines.home_deliver([follower_id], followee_id, board_ids)


def board_authors(board_ids: list[int]) -> dict[int, int]:
    """The author id of each board, from G where cached, else PostgreSQL (deleted boards too)."""
    cached = boardcache.board_cache_get_many(board_ids)
    authors = {board_id: int(fields["author_id"]) for board_id, fields in cached.items()}
    missing = [board_id for board_id in board_ids if board_id not in authors]
    if missing:
        authors.update(Board.objects.filter(pk__in=missing).values_list("id", "author_id"))
    return authors


def unfollow_cleanup(*, follower_id: int, followee_id: int) -> int:
    """Remove every board of the followee from the follower's P, unless they follow again.

    Scans P, which is bounded by its hot size: O(|P|). Scanning P rather than the followee's M
    also catches boards the followee deleted meanwhile (gone from M, maybe not yet from P).
    Returns how many ids were removed.
    """
    if graph.is_following(follower_id=follower_id, followee_id=followee_id):
        return 0  # followed again before this ran: the new follow's back-fill owns the feed
    ids = timelines.home_ids(follower_id)
    authors = board_authors(ids)
    stale = [board_id for board_id in ids if authors.get(board_id) == followee_id]
    timelines.home_remove([follower_id], stale)
    return len(stale)


def home_regenerate(user_id: int) -> tuple[int, int] | None:
    """Refill a returning user's P from their followees' M heads (and M archives where a head
    is short): their newest HOME_TIMELINE_HOT ids join whatever P holds (fan-out may have
    delivered since the return), so the first page is whole. O(F log |M| + hot) for F
    followees, one pipeline. Returns the (lower, upper) bounds of the gap left between those
    ids and the older history (for home_gap_fill), or None when there is nothing to join up."""
    from feeds import archive, keys

    followees = graph.following_ids(user_id)
    hot = settings.HOME_TIMELINE_HOT
    pipe = get_redis().pipeline(transaction=False)
    for followee_id in followees:
        pipe.zrevrange(keys.profile_timeline(followee_id), 0, hot - 1)
    streams = []
    for followee_id, head in zip(followees, pipe.execute()):
        ids = [int(i) for i in head]
        if len(ids) < hot and archive.archived_max(followee_id, "m"):
            below = ids[-1] if ids else None
            ids += islice(archive.archived_ids_desc(followee_id, "m", below=below), hot - len(ids))
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
    lower = max(archive.archived_max(user_id, "p"), int(older[0]) if older else 0)
    return (lower, newest[-1]) if lower else None


def home_gap_fill(user_id: int, lower: int, upper: int) -> int:
    """Archive the followees' boards strictly between ``lower`` (the older history's newest id)
    and ``upper`` (the regenerated ids' oldest), so deep paging has no hole (at most
    REGENERATE_GAP_MAX ids, newest first). Offline: one indexed query over the followees'
    boards. Returns the number of ids archived."""
    from feeds import archive

    ids = list(
        Board.objects.filter(
            author_id__in=graph.following_ids(user_id), state=Board.State.PUBLISHED,
            id__gt=lower, id__lt=upper,
        ).order_by("-id").values_list("id", flat=True)[:settings.REGENERATE_GAP_MAX]
    )
    archive.chunks_write(user_id, "p", ids)
    return len(ids)


def idle_sweep(*, now: float | None = None, batch: int = 500) -> int:
    """Archive the whole P of every user idle longer than IDLE_AFTER, then drop it from Redis
    (a P is history, never just expired). O(idle users x |P|), offline. Returns how many."""
    import time

    from feeds import archive, keys

    client = get_redis()
    cutoff = (time.time() if now is None else now) - settings.IDLE_AFTER.total_seconds()
    swept = 0
    while True:
        idle = [int(u) for u in client.zrangebyscore(keys.last_seen(), "-inf", f"({cutoff}", start=0, num=batch)]
        if not idle:
            return swept
        for user_id in idle:
            if client.exists(keys.active(user_id)):  # came back since: not idle after all
                client.zrem(keys.last_seen(), user_id)
                continue
            archive.timeline_archive_all("p", user_id)
            client.zrem(keys.last_seen(), user_id)
            swept += 1


def author_retract_batch(*, author_id: int, board_ids: list[int], cursor: FollowerCursor, batch_size: int, then=None) -> None:
    """Take many boards of one author out of the next ``batch_size`` followers' P (suspension).
    O(batch x b log |P|) for b boards."""
    followers, next_cursor = graph.followers_batch(author_id, cursor, batch_size)
    if next_cursor is not None and then is not None:
        then(next_cursor)
    timelines.home_remove(followers, board_ids)


def author_restore(*, author_id: int) -> None:
    """After a suspension is lifted: M from PostgreSQL (above its archive mark), G dropped so it
    refills, and the newest FOLLOW_BACKFILL_COUNT boards delivered to every follower again
    (in batches from a cursor, like a fan-out). Offline: O(boards + followers)."""
    from feeds import archive, keys

    from feeds import discovery

    mark = archive.archived_max(author_id, "m")
    restored = Board.objects.filter(author_id=author_id, state=Board.State.PUBLISHED).select_related("author")
    for board in restored.iterator(chunk_size=1000):
        discovery.board_index(board.id, kind=board.kind, tags=board.tags, author=board.author.username, views=board.views)
    ids = list(restored.filter(id__gt=mark).order_by("-id").values_list("id", flat=True))
    timelines.timeline_replace(keys.profile_timeline(author_id), ids)
    recent = ids[: settings.FOLLOW_BACKFILL_COUNT]
    cursor = FollowerCursor()
    while cursor is not None:
        followers, cursor = graph.followers_batch(author_id, cursor, settings.FANOUT_BATCH_SIZE)
        timelines.home_deliver(followers, author_id, recent)
