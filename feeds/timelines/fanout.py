"""Who gets what: fan-out of a new board, retraction of a deleted or hidden one (or of a
suspended author's), follow back-fill, unfollow clean-up, the restore after a suspension, and
the marking of a big author's followers (hybrid fan-out, feeds.timelines.hybrid), each in bounded steps
for Celery (feeds.tasks). Every walk of an author's followers goes
through ``followers_step``. Storage work only: no tasks are enqueued here.
"""

from collections.abc import Callable

from django.conf import settings

from feeds.discovery import indexes
from feeds.live import online
from feeds.models import Board
from feeds.rules import Timeline
from feeds.timelines import boardcache, hybrid, store
from feeds.timelines.archive import archived_max
from social import graph
from social.graph import FollowerCursor

Then = Callable[[FollowerCursor], None] | None


def followers_step(author_id: int, cursor: FollowerCursor, batch_size: int, then: Then = None) -> list[int]:
    """The next ``batch_size`` followers of an author after ``cursor``. ``then(next_cursor)``
    is called before the caller writes anything, when more followers remain, so the next batch
    can start on another worker meanwhile. O(log |F| + batch)."""
    followers, next_cursor = graph.followers_batch(author_id, cursor, batch_size)
    if next_cursor is not None and then is not None:
        then(next_cursor)
    return followers


def fanout_batch(
    *, board_id: int, author_id: int, cursor: FollowerCursor, batch_size: int, then: Then = None
) -> list[int]:
    """Deliver a board to the next ``batch_size`` followers after ``cursor`` (``then`` as in
        followers_step). One ZRANGEBYSCORE plus one pipeline: O(batch log |P|). Idempotent: a
        retried batch re-adds what is there already. Then one ZMSCORE on the plain Redis and a live
    notice to those of the batch who are online (feeds.live.online). Returns the followers whose P now waits for
        the archiver."""
    followers = followers_step(author_id, cursor, batch_size, then)
    waiting = store.home_deliver(followers, author_id, [board_id])
    online.feed_delivered(followers, board_id)  # the online ones see "1 new board" (never raises)
    return waiting


def big_mark_batch(*, author_id: int, cursor: FollowerCursor, batch_size: int, then: Then = None) -> int:
    """Add a big author to the big-following set of the next ``batch_size`` followers after
    ``cursor`` who still follow them (hybrid fan-out: from now on their pages merge the author's
    M). One ZRANGEBYSCORE plus one pipeline per node: O(batch log |fb|). Idempotent. Returns
    how many entries are new."""
    return hybrid.followers_mark(author_id, followers_step(author_id, cursor, batch_size, then))


def retract_batch(
    *, board_ids: list[int], author_id: int, cursor: FollowerCursor, batch_size: int, then: Then = None
) -> None:
    """Take boards of one author out of the next ``batch_size`` followers' P (a delete or a
    hide: one board; a suspension: all it hid). O(batch x b log |P|) for b boards."""
    store.home_remove(followers_step(author_id, cursor, batch_size, then), board_ids)


def author_gone_batch(
    *, board_ids: list[int], author_id: int, cursor: FollowerCursor, batch_size: int, then: Then = None
) -> None:
    """retract_batch for an author whose account is being deleted: every board of theirs out of
    the next ``batch_size`` followers' P, and the author out of those followers' big-following
    sets. O(batch x b log |P|)."""
    followers = followers_step(author_id, cursor, batch_size, then)
    store.home_remove(followers, board_ids)
    hybrid.readers_unmark(followers, author_id)


def follow_backfill(*, follower_id: int, followee_id: int) -> list[int]:
    """Bring the followee's newest boards into the follower's P (if the follow still holds).
    O(n log |P|) for n = FOLLOW_BACKFILL_COUNT. Returns [follower_id] if P now waits for archival."""
    board_ids = store.profile_recent_ids(followee_id, settings.FOLLOW_BACKFILL_COUNT)
    return store.home_deliver([follower_id], followee_id, board_ids)


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
    ids = store.home_ids(follower_id)
    authors = board_authors(ids)
    stale = [board_id for board_id in ids if authors.get(board_id) == followee_id]
    store.home_remove([follower_id], stale)
    return len(stale)


def author_restore(*, author_id: int) -> None:
    """After a suspension is lifted: M from PostgreSQL (above its archive mark), G dropped so it
    refills, and, unless the author is big (merged at read time), the newest
    FOLLOW_BACKFILL_COUNT boards delivered to every follower again (in batches from a cursor,
    like a fan-out). Offline: O(boards + followers)."""
    mark = archived_max(author_id, Timeline.PROFILE)
    restored = Board.objects.filter(author_id=author_id, state=Board.State.PUBLISHED).select_related("author")
    for board in restored.iterator(chunk_size=1000):
        indexes.board_index(
            board.id,
            kind=board.kind,
            tags=board.tags,
            author=board.author.username,
            views=board.views,
            likes=board.likes,
        )
    ids = list(restored.filter(id__gt=mark).order_by("-id").values_list("id", flat=True))
    store.timeline_replace(Timeline.PROFILE, author_id, ids)
    if hybrid.author_is_big(author_id):
        return  # not pushed: every follower's page merges the rebuilt M
    recent = ids[: settings.FOLLOW_BACKFILL_COUNT]
    cursor = FollowerCursor()
    while cursor is not None:
        followers, cursor = graph.followers_batch(author_id, cursor, settings.FANOUT_BATCH_SIZE)
        store.home_deliver(followers, author_id, recent)
