"""The outbox of fan-outs and retractions (``Outbox`` rows in PostgreSQL). Storage only.

A board's change writes its row in the change's own transaction; the task that walks the
followers deletes it when its last batch is written; ``due`` hands beat the rows that waited
longer than OUTBOX_RESEND_AFTER_SECONDS (the broker was down when the change committed, or lost
its queue), which are sent again from the start: delivery is idempotent. Every batch of a walk stamps its
row again (``outbox_touch``), so only a walk that stopped making progress (its messages lost, its
worker gone) is sent again: a long walk on a busy machine is not doubled every resend interval.
"""

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from feeds.models import Outbox


def outbox_add(board_id: int, action: str) -> None:
    """Note that ``action`` must reach the board's followers (inside the caller's transaction).
    One indexed insert; a second note of the same action only moves its time."""
    Outbox.objects.update_or_create(board_id=board_id, action=action, defaults={"queued_at": timezone.now()})


def outbox_touch(board_id: int, action: str) -> None:
    """A batch of ``action`` is written and the next one is queued: the walk is alive, so its row
    is not due for OUTBOX_RESEND_AFTER_SECONDS more. One indexed update."""
    Outbox.objects.filter(board_id=board_id, action=action).update(queued_at=timezone.now())


def outbox_done(board_id: int, action: str) -> None:
    """The last batch of ``action`` is written. One indexed delete."""
    Outbox.objects.filter(board_id=board_id, action=action).delete()


def outbox_due(*, limit: int = 1000) -> list[tuple[int, str]]:
    """Up to ``limit`` (board, action) that waited past OUTBOX_RESEND_AFTER_SECONDS, oldest
    first; each is stamped now, so it is not due again while its new walk runs. Offline:
    one indexed range read and one update."""
    cutoff = timezone.now() - timedelta(seconds=settings.OUTBOX_RESEND_AFTER_SECONDS)
    rows = list(Outbox.objects.filter(queued_at__lt=cutoff).order_by("queued_at").values_list("pk", "board_id", "action")[:limit])
    Outbox.objects.filter(pk__in=[pk for pk, _, _ in rows]).update(queued_at=timezone.now())
    return [(board_id, action) for _, board_id, action in rows]
