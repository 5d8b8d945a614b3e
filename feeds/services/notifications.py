"""Who is told what (feeds.notifications stores it): "X followed you", "X invited you to draw
Y", "a board you edit changed while you were away". A follow or an invite tells one person, at
once; telling every editor of a board runs in Celery (tasks.notify_board_changed)."""

from django.db import transaction
from django.utils import timezone

from feeds import notifications, tasks
from feeds.models import Notification
from feeds.services.boards import enqueue


def notify_follow(*, follower_id: int, followee_id: int) -> None:
    """``followee`` is told that ``follower`` followed them (gathered with the day's others).
    One upsert, in the caller's transaction."""
    notifications.notifications_add(kind=Notification.Kind.FOLLOW, recipient_ids=[followee_id],
                                    actor_id=follower_id, board_id=None, at=timezone.now())


def notify_invite(*, inviter_id: int, invitee_id: int, board_id: int) -> None:
    """``invitee`` is told that ``inviter`` invited them to draw ``board_id`` (call it when the
    invite is made). One upsert, in the caller's transaction."""
    notifications.notifications_add(kind=Notification.Kind.INVITE, recipient_ids=[invitee_id],
                                    actor_id=inviter_id, board_id=board_id, at=timezone.now())


def notify_board_changed(*, board_id: int, actor_id: int, recipient_ids: list[int]) -> None:
    """The people of ``recipient_ids`` (a board's author and editors who were away) are told that
    ``actor_id`` changed ``board_id``. Proportional to the recipients, so a task does it after
    the caller's commit, in batches (tasks.notify_board_changed)."""
    recipients = list(recipient_ids)
    transaction.on_commit(lambda: enqueue(tasks.notify_board_changed, board_id, actor_id, recipients))
