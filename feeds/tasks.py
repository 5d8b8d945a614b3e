"""Celery tasks: thin, idempotent, taking ids. Each reloads what it needs, treats a vanished
record as done, and calls one function of feeds.timelines.fanout, feeds.timelines.regeneration or feeds.timelines.archive
(after an O(1) look at the author's fan-out mode, feeds.timelines.hybrid, where it matters).
(Discovery's beat tasks are in feeds.discovery.tasks.)"""

from datetime import UTC, datetime

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from feeds import comments, erasure, export, likes, notifications, pictures, staff_record, versions
from feeds.models import Board, Notification, Outbox
from feeds.rules import Timeline
from feeds.timelines import activity, archive, fanout, hybrid, regeneration
from feeds.timelines.ids import board_id_time
from feeds.timelines.outbox import (
    NOT_COUNTED,
    outbox_batch_queued,
    outbox_batch_written,
    outbox_done,
    outbox_due,
    outbox_generation,
)
from feeds.timelines.visibility import board_show, board_unshow
from social import services as people
from social.graph import FollowerCursor
from ugcsite.platform.metrics import FANOUT_LAG
from ugcsite.platform.redis import REDIS_TRANSIENT, get_redis

# The idempotent tasks (acks_late: each may run twice and change nothing the second time) are
# tried again, a bounded number of times with growing waits (1, 2, 4 ... 30 s, jittered; about
# three minutes in all), when the data Redis or PostgreSQL is briefly unreachable (a restart, a
# failover, a hung server past REDIS_SOCKET_TIMEOUT): a fan-out batch is not dropped for a
# blip. Past that the outbox (fan-outs, retractions) or the next beat run picks the work up.
TRANSIENT = (*REDIS_TRANSIENT, OperationalError, InterfaceError)
RETRYING = {
    "acks_late": True,
    "autoretry_for": TRANSIENT,
    "max_retries": 8,
    "retry_backoff": 1,
    "retry_backoff_max": 30,
    "retry_jitter": True,
}


def _walk(
    task,
    owner_id: int,
    cursor_score: float | None,
    cursor_done: int,
    cursor_after: int | None = None,
    *,
    queued=None,
    **more,
) -> tuple[dict, list]:
    """The cursor arguments of a batch run of ``task``: where this run starts, its size, and how
    the next run (same task, same first argument and keyword arguments ``more``) is enqueued
    before this one writes, so batches overlap across worker processes; ``queued()`` is called
    just before. The list it returns is empty after the run when this was the last batch. (A run
    sent by the previous release has no ``cursor_after``.)"""
    cursor = FollowerCursor() if cursor_score is None else FollowerCursor(cursor_score, cursor_done, cursor_after)
    sent: list = []

    def then(next_cursor):
        if queued is not None:
            queued()
        sent.append(next_cursor)
        score, done, after = next_cursor
        task.delay(owner_id, cursor_score=score, cursor_done=done, cursor_after=after, **more)

    return {"cursor": cursor, "batch_size": settings.FANOUT_BATCH_SIZE, "then": then}, sent


def _outbox_walk(
    task,
    board_id: int,
    action: str,
    cursor_score: float | None,
    cursor_done: int,
    cursor_after: int | None,
    generation: int | None,
) -> tuple[dict, list, int]:
    """A board's walk counted on its outbox row: the first batch reads the row's generation and
    every batch passes it on; each queued batch counts one up (``feeds.timelines.outbox``)."""
    # COMPAT(remove after 2026-12-31): a batch queued by the release before 2026-11-24 has no generation and is not
    # counted; once no such message can be queued, None means only "the first batch".
    if generation is None:  # the first batch (or a batch sent by the previous release: not counted)
        generation = outbox_generation(board_id, action) if cursor_score is None else NOT_COUNTED
    walk, sent = _walk(
        task,
        board_id,
        cursor_score,
        cursor_done,
        cursor_after,
        generation=generation,
        queued=lambda: outbox_batch_queued(board_id, action, generation),
    )
    return walk, sent, generation


@shared_task(**RETRYING)
def board_fanout(
    board_id: int,
    cursor_score: float | None = None,
    cursor_done: int = 0,
    resend: bool = False,
    cursor_after: int | None = None,
    generation: int | None = None,
) -> None:
    """Push a new board to its author's followers, one batch a run; nothing for a big author
    (more than FANOUT_PUSH_MAX_FOLLOWERS followers: pages merge their M, feeds.timelines.hybrid). The
    batch written last clears the board's outbox row. Sent again by the outbox (``resend``), it first makes
    sure G, M and the indexes hold the board."""
    board = Board.objects.select_related("author").filter(pk=board_id).first()
    if board is None or board.state != Board.State.PUBLISHED:
        outbox_done(board_id, Outbox.Action.FANOUT)
        return  # deleted or hidden meanwhile: the retraction owns it now
    if resend and cursor_score is None:
        board_show(board)
    if hybrid.author_is_big(board.author_id):
        outbox_done(board_id, Outbox.Action.FANOUT)
        return  # checked every batch: an author who became big meanwhile has their followers marked
    walk, more, generation = _outbox_walk(
        board_fanout, board_id, Outbox.Action.FANOUT, cursor_score, cursor_done, cursor_after, generation
    )
    waiting = fanout.fanout_batch(board_id=board_id, author_id=board.author_id, **walk)
    outbox_batch_written(board_id, Outbox.Action.FANOUT, generation)
    if not more:
        FANOUT_LAG.observe((timezone.now() - board_id_time(board_id)).total_seconds())
    archive_soon(Timeline.HOME, waiting)


@shared_task(**RETRYING)
def board_retract(
    board_id: int,
    cursor_score: float | None = None,
    cursor_done: int = 0,
    resend: bool = False,
    cursor_after: int | None = None,
    generation: int | None = None,
) -> None:
    """Take a deleted or hidden board out of its author's followers' feeds, batch by batch; the
    batch written last clears its outbox row. Sent again by the outbox (``resend``), it first takes the
    board out of G, M and the indexes."""
    row = Board.objects.filter(pk=board_id).values("author_id", "state").first()
    if row is None or row["state"] == Board.State.PUBLISHED:
        outbox_done(board_id, Outbox.Action.RETRACT)
        return  # unhidden meanwhile: it belongs in the feeds again
    if resend and cursor_score is None:
        board_unshow(board_id, row["author_id"])
    if hybrid.board_never_pushed(row["author_id"], board_id):
        outbox_done(board_id, Outbox.Action.RETRACT)
        return  # in no P: pages merged it from M, which lost it at once
    walk, _, generation = _outbox_walk(
        board_retract, board_id, Outbox.Action.RETRACT, cursor_score, cursor_done, cursor_after, generation
    )
    fanout.retract_batch(board_ids=[board_id], author_id=row["author_id"], **walk)
    outbox_batch_written(board_id, Outbox.Action.RETRACT, generation)


@shared_task
def outbox_resend() -> int:
    """Beat: send again the fan-outs and retractions that waited past OUTBOX_RESEND_AFTER_SECONDS
    (the broker was down, or lost its queue). Returns how many."""
    due = outbox_due()
    for board_id, action in due:
        (board_fanout if action == Outbox.Action.FANOUT else board_retract).delay(board_id, resend=True)
    return len(due)


@shared_task(**RETRYING)
def author_retract(
    author_id: int, cursor_score: float | None = None, cursor_done: int = 0, cursor_after: int | None = None
) -> None:
    """Take every board a suspension hid out of the author's followers' feeds, batch by batch."""
    board_ids = list(
        Board.objects.filter(author_id=author_id, state=Board.State.SUSPENDED).values_list("id", flat=True)
    )
    if not board_ids:
        return  # lifted meanwhile
    fanout.retract_batch(
        board_ids=board_ids,
        author_id=author_id,
        **_walk(author_retract, author_id, cursor_score, cursor_done, cursor_after)[0],
    )


@shared_task(**RETRYING)
def author_restore(author_id: int) -> None:
    """After a suspension is lifted: back in everyone's lists first (fan-out delivers only to
    followers whose following set names the author), then the boards back in their feeds."""
    if people.member_lists_sync(user_id=author_id):
        fanout.author_restore(author_id=author_id)


@shared_task(**RETRYING)
def likes_count_again(user_id: int) -> None:
    """A person's likes count or stop counting as their account stands now: uncounted while
    suspended (or closed), counted while active (feeds.likes). Run after a suspension and after
    it is lifted; whichever order two runs take, the last one leaves the counts right."""
    if people.is_active(user_id):
        likes.likes_recount(user_id)
    else:
        likes.likes_uncount(user_id)


@shared_task(**RETRYING)
def comments_count_again(user_id: int) -> None:
    """A person's comments show and count, or leave every thread, as their account stands now:
    hidden while suspended, back when it is lifted (feeds.comments.comments_suspend), the
    boards' counts in G moved with them. Run after a suspension and after it is lifted; the
    last run leaves them right whatever the order."""
    moved = comments.comments_suspend(user_id, suspended=not people.is_active(user_id))
    if moved:
        pipe = get_redis().pipeline(transaction=False)
        for board_id, delta in moved.items():
            comments.count_move(board_id, delta, pipe=pipe)
        pipe.execute()


@shared_task(**RETRYING)
def account_erase(user_id: int) -> None:
    """After an account was closed (feeds.services.accounts.account_delete): its boards leave
    G, M, the indexes and the live state, then the walk of its followers starts."""
    erasure.account_withdraw(user_id)
    account_retract.delay(user_id)


@shared_task(**RETRYING)
def account_retract(
    user_id: int, cursor_score: float | None = None, cursor_done: int = 0, cursor_after: int | None = None
) -> None:
    """A closed account's boards out of its followers' P (and it out of their big-following
    sets), batch by batch; after the last batch, the purge, ACCOUNT_PURGE_DELAY_SECONDS later
    so that batches still running on other workers finish with the follower set they read."""
    board_ids = list(Board.objects.filter(author_id=user_id).values_list("id", flat=True))
    walk, sent = _walk(account_retract, user_id, cursor_score, cursor_done, cursor_after)
    fanout.author_gone_batch(board_ids=board_ids, author_id=user_id, **walk)
    if not sent:
        account_purge.apply_async((user_id,), countdown=settings.ACCOUNT_PURGE_DELAY_SECONDS)


@shared_task(**RETRYING)
def account_purge(user_id: int) -> None:
    """The last of a closed account: its rows and keys, and what others keep that names it."""
    erasure.account_purge(user_id)


@shared_task
def accounts_erase_pending() -> int:
    """Beat, hourly: a closed account whose erasure never ran (the broker lost it) is erased
    now; a run that happens twice does the same work twice (each step is idempotent)."""
    pending = people.accounts_closed()
    for user_id in pending:
        account_erase.delay(user_id)
    return len(pending)


@shared_task(**RETRYING)
def comment_mentions_notify(comment_id: int) -> int:
    """Tell the people a comment names (feeds.comments); a comment gone meanwhile is done."""
    return comments.comment_mentions_notify(comment_id)


@shared_task(acks_late=True)
def export_build(export_id: int) -> None:
    """Build a person's "take my data" archive (feeds.export)."""
    export.export_build(export_id)


@shared_task
def exports_expire() -> int:
    """Beat, hourly: archives past their day are deleted, files and rows."""
    return export.exports_expire()


@shared_task
def staff_actions_prune() -> int:
    """Beat, hourly: staff actions older than STAFF_ACTIONS_RETENTION_DAYS leave the record (0: none)."""
    return staff_record.staff_actions_prune(retention_days=settings.STAFF_ACTIONS_RETENTION_DAYS)


@shared_task
def versions_prune() -> int:
    """Beat, hourly: versions older than VERSIONS_KEEP_ALL_DAYS thin out to one a UTC day
    (feeds.versions.versions_prune: O(versions made in its window))."""
    return versions.versions_prune(keep_all_days=settings.VERSIONS_KEEP_ALL_DAYS)


@shared_task(**RETRYING)
def member_lists_sync(user_id: int) -> None:
    """A suspended person leaves every follower and following list (or, lifted meanwhile, stays)."""
    people.member_lists_sync(user_id=user_id)


@shared_task(**RETRYING)
def big_author_walk(
    author_id: int,
    cursor_score: float | None = None,
    cursor_done: int = 0,
    cursor_after: int | None = None,
    *,
    since: int,
) -> None:
    """An author became big: add them to every follower's big-following set, batch by batch.
    ``since`` names the big spell; a walk for an older one stops (the newer walk reaches every
    follower). It goes on if the author falls back meanwhile: boards of the spell stay merged."""
    if hybrid.pull_since(author_id) != since:
        return
    walk, _ = _walk(big_author_walk, author_id, cursor_score, cursor_done, cursor_after, since=since)
    fanout.big_mark_batch(author_id=author_id, **walk)


@shared_task(**RETRYING)
def follow_backfill(follower_id: int, followee_id: int) -> None:
    archive_soon(Timeline.HOME, fanout.follow_backfill(follower_id=follower_id, followee_id=followee_id))


@shared_task(**RETRYING)
def unfollow_cleanup(follower_id: int, followee_id: int) -> None:
    fanout.unfollow_cleanup(follower_id=follower_id, followee_id=followee_id)


def archive_soon(kind: Timeline, user_ids: list[int]) -> None:
    """Flag timelines past their window; each newly flagged one is archived by a task at once
    (the beat run is the safety net)."""
    for user_id in archive.flag_waiting(kind, user_ids):
        archive_timeline.delay(kind, user_id)


@shared_task(**RETRYING)
def archive_timeline(kind: str, user_id: int) -> None:
    """Archive one timeline's fallen-out chunks."""
    archive.unflag(kind, user_id)
    archive.timeline_archive(kind, user_id)


@shared_task
def archive_run() -> dict:
    """The scheduled archival (Celery beat): every waiting timeline, recorded as an ArchiveRun."""
    return archive.archive_waiting(trigger="beat").summary()


@shared_task(**RETRYING)
def home_gap_fill(user_id: int, lower: int, upper: int) -> None:
    regeneration.home_gap_fill(user_id, lower, upper)


@shared_task
def idle_sweep() -> int:
    """Beat: archive and drop the feeds of users idle longer than IDLE_AFTER."""
    return regeneration.idle_sweep()


@shared_task
def last_seen_flush() -> int:
    """Beat: the last-seen index into User.last_seen."""
    return activity.last_seen_flush()


NOTIFY_BATCH = 1_000  # recipients per upsert: one bounded statement, the rest re-enqueued


@shared_task(acks_late=True)
def notify_board_changed(board_id: int, actor_id: int, recipient_ids: list[int], at: float | None = None) -> None:
    """Tell a board's editors who were away that it changed: NOTIFY_BATCH a pass (an upsert is
    idempotent per actor, so a retried batch counts no one twice). Nothing enqueues it since the
    compaction writes these notices in its own transaction (feeds.services.notifications); it
    stays so that messages queued by the release before still run."""
    when = timezone.now() if at is None else datetime.fromtimestamp(at, tz=UTC)
    notifications.notifications_add(
        kind=Notification.Kind.BOARD_CHANGED,
        recipient_ids=recipient_ids[:NOTIFY_BATCH],
        actor_id=actor_id,
        board_id=board_id,
        at=when,
    )
    if len(recipient_ids) > NOTIFY_BATCH:
        notify_board_changed.delay(board_id, actor_id, recipient_ids[NOTIFY_BATCH:], when.timestamp())


@shared_task(**RETRYING)
def board_picture_render(board_id: int) -> None:
    """A published board's PNG at its current version (feeds.pictures), unless it is kept already:
    a board changed twice before this ran renders once, its latest version."""
    pictures.board_picture_refresh(board_id)
