"""The outbox of fan-outs and retractions (``Outbox`` rows in PostgreSQL). Storage only.

A board's change writes its row in the change's own transaction; the walk over the followers
counts on it the batches queued and not yet written (``pending``), so the row is deleted only
when every batch of the walk is written: a batch whose worker died after it queued the next one
keeps the row (its count never comes down), and however far the rest of the walk gets, the row
goes due. ``due`` hands beat the rows no batch stamped for OUTBOX_RESEND_AFTER_SECONDS (the
broker was down when the change committed or lost its queue, a worker died mid-batch); each is
sent again from the start as a new generation (delivery is idempotent), and the batches of an
older generation still under way no longer count. Every batch stamps its row, so a long walk on
a busy machine that is making progress is never doubled.
"""

from datetime import timedelta

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from feeds.models import Outbox

# The walk of a board with no outbox row, or COMPAT(remove after 2026-12-31) one sent by the release before 2026-11-24.
NOT_COUNTED = -1


def outbox_add(board_id: int, action: str) -> None:
    """Note that ``action`` must reach the board's followers (inside the caller's transaction):
    one walk more to wait for. One indexed insert (or update, if a walk is already noted)."""
    now = timezone.now()
    Outbox.objects.update_or_create(
        board_id=board_id,
        action=action,
        defaults={"queued_at": now, "pending": F("pending") + 1},
        create_defaults={"queued_at": now, "pending": 1},
    )


def outbox_generation(board_id: int, action: str) -> int:
    """The generation a walk starting now counts in (NOT_COUNTED without a row). One indexed read."""
    row = Outbox.objects.filter(board_id=board_id, action=action).values_list("generation", flat=True).first()
    return NOT_COUNTED if row is None else row


def outbox_batch_queued(board_id: int, action: str, generation: int) -> None:
    """A batch of the walk queued the next one (before it writes): one more to wait for, and the
    walk is alive. One indexed update."""
    if generation != NOT_COUNTED:
        Outbox.objects.filter(board_id=board_id, action=action, generation=generation).update(
            pending=F("pending") + 1, queued_at=timezone.now()
        )


def outbox_batch_written(board_id: int, action: str, generation: int) -> None:
    """A batch of the walk is written: one fewer to wait for; the row goes when none is left
    (whichever batch ends last, in any order). Two indexed statements."""
    if generation != NOT_COUNTED:
        rows = Outbox.objects.filter(board_id=board_id, action=action, generation=generation)
        rows.update(pending=F("pending") - 1, queued_at=timezone.now())
        rows.filter(pending__lte=0).delete()


def outbox_done(board_id: int, action: str) -> None:
    """``action`` has nothing (more) to deliver, whatever walk is under way (the board left, its
    author is merged at read time). One indexed delete."""
    Outbox.objects.filter(board_id=board_id, action=action).delete()


def outbox_due(*, limit: int = 1000) -> list[tuple[int, str]]:
    """Up to ``limit`` (board, action) that no batch stamped for OUTBOX_RESEND_AFTER_SECONDS,
    oldest first; each starts a new generation with one walk to wait for (the one the caller
    sends) and is stamped now, so it is not due again while that walk runs. Offline: one indexed
    range read and one update."""
    cutoff = timezone.now() - timedelta(seconds=settings.OUTBOX_RESEND_AFTER_SECONDS)
    rows = list(
        Outbox.objects.filter(queued_at__lt=cutoff)
        .order_by("queued_at")
        .values_list("pk", "board_id", "action")[:limit]
    )
    Outbox.objects.filter(pk__in=[pk for pk, _, _ in rows]).update(
        queued_at=timezone.now(), generation=F("generation") + 1, pending=1
    )
    return [(board_id, action) for _, board_id, action in rows]
