"""Celery tasks: thin, idempotent, taking ids. Each reloads what it needs, treats a vanished
record as done, and calls one function of feeds.fanout."""

from celery import shared_task
from django.conf import settings

from feeds import archive, fanout
from feeds.models import Board
from social.graph import FollowerCursor


def _cursor(score, done) -> FollowerCursor:
    return FollowerCursor() if score is None else FollowerCursor(score, done)


@shared_task(acks_late=True)
def board_fanout(board_id: int, cursor_score: float | None = None, cursor_done: int = 0) -> None:
    """Push a new board to its author's followers, one batch a run; each run enqueues the next
    before writing its own, so batches overlap across worker processes."""
    row = Board.objects.filter(pk=board_id).values("author_id", "state").first()
    if row is None or row["state"] != Board.State.PUBLISHED:
        return  # deleted or hidden meanwhile: the retraction owns it now
    waiting = fanout.fanout_batch(
        board_id=board_id, author_id=row["author_id"], cursor=_cursor(cursor_score, cursor_done),
        batch_size=settings.FANOUT_BATCH_SIZE, then=lambda cursor: board_fanout.delay(board_id, *cursor),
    )
    archive_soon("p", waiting)


@shared_task(acks_late=True)
def board_retract(board_id: int, cursor_score: float | None = None, cursor_done: int = 0) -> None:
    """Take a deleted or hidden board out of its author's followers' feeds, batch by batch."""
    row = Board.objects.filter(pk=board_id).values("author_id", "state").first()
    if row is None or row["state"] == Board.State.PUBLISHED:
        return  # unhidden meanwhile: it belongs in the feeds again
    fanout.retract_batch(
        board_id=board_id, author_id=row["author_id"], cursor=_cursor(cursor_score, cursor_done),
        batch_size=settings.FANOUT_BATCH_SIZE, then=lambda cursor: board_retract.delay(board_id, *cursor),
    )


@shared_task(acks_late=True)
def follow_backfill(follower_id: int, followee_id: int) -> None:
    archive_soon("p", fanout.follow_backfill(follower_id=follower_id, followee_id=followee_id))


@shared_task(acks_late=True)
def unfollow_cleanup(follower_id: int, followee_id: int) -> None:
    fanout.unfollow_cleanup(follower_id=follower_id, followee_id=followee_id)


def archive_soon(kind: str, user_ids: list[int]) -> None:
    """Flag timelines past their window; each newly flagged one is archived by a task at once
    (the beat run is the safety net)."""
    for user_id in archive.flag_waiting(kind, user_ids):
        archive_timeline.delay(kind, user_id)


@shared_task(acks_late=True)
def archive_timeline(kind: str, user_id: int) -> None:
    """Archive one timeline's fallen-out chunks."""
    archive.unflag(kind, user_id)
    archive.timeline_archive(kind, user_id)


@shared_task
def archive_run() -> dict:
    """The scheduled archival (Celery beat): every waiting timeline, recorded as an ArchiveRun."""
    return archive.archive_waiting(trigger="beat").summary()


@shared_task(acks_late=True)
def home_gap_fill(user_id: int, lower: int, upper: int) -> None:
    fanout.home_gap_fill(user_id, lower, upper)


@shared_task
def idle_sweep() -> int:
    """Beat: archive and drop the feeds of users idle longer than IDLE_AFTER."""
    return fanout.idle_sweep()


@shared_task(acks_late=True)
def author_retract(author_id: int, cursor_score: float | None = None, cursor_done: int = 0) -> None:
    """Take every board a suspension hid out of the author's followers' feeds, batch by batch."""
    board_ids = list(Board.objects.filter(author_id=author_id, state=Board.State.SUSPENDED).values_list("id", flat=True))
    if not board_ids:
        return  # lifted meanwhile
    fanout.author_retract_batch(
        author_id=author_id, board_ids=board_ids, cursor=_cursor(cursor_score, cursor_done),
        batch_size=settings.FANOUT_BATCH_SIZE, then=lambda cursor: author_retract.delay(author_id, *cursor),
    )


@shared_task(acks_late=True)
def author_restore(author_id: int) -> None:
    fanout.author_restore(author_id=author_id)


@shared_task
def trending_rollup() -> int:
    """Beat: the trending order from the last 24 hours of views."""
    from social import counters

    return counters.trending_rollup()


@shared_task
def views_flush() -> int:
    """Beat: pending view counts into PostgreSQL."""
    from social import counters

    return counters.views_flush()
