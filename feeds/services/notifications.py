"""Who is told what (feeds.notifications stores it): "X followed you", "X invited you to draw
Y", "a board you edit changed while you were away". Each is one upsert in the caller's
transaction, so a notice commits with the change it tells of: a follow or an invite tells one
person; a change tells a board's author and editors, at most MAX_EDITORS + 1 people, and is made
by a compaction, which runs in Celery (feeds.live.compaction)."""

from django.utils import timezone

from feeds import notifications
from feeds.models import Notification


def notify_follow(*, follower_id: int, followee_id: int) -> None:
    """``followee`` is told that ``follower`` followed them (gathered with the day's others).
    One upsert, in the caller's transaction."""
    notifications.notifications_add(
        kind=Notification.Kind.FOLLOW,
        recipient_ids=[followee_id],
        actor_id=follower_id,
        board_id=None,
        at=timezone.now(),
    )


def notify_invite(*, inviter_id: int, invitee_id: int, board_id: int) -> None:
    """``invitee`` is told that ``inviter`` invited them to draw ``board_id`` (call it when the
    invite is made). One upsert, in the caller's transaction."""
    notifications.notifications_add(
        kind=Notification.Kind.INVITE,
        recipient_ids=[invitee_id],
        actor_id=inviter_id,
        board_id=board_id,
        at=timezone.now(),
    )


def notify_board_changed(*, board_id: int, actor_id: int, recipient_ids: list[int]) -> None:
    """The people of ``recipient_ids`` (a board's author and editors who were away, at most
    MAX_EDITORS + 1) are told that ``actor_id`` changed ``board_id``. One upsert, in the caller's
    transaction (the compaction's: the notice commits with the doc it tells of, and no broker
    stands between them). O(editors)."""
    notifications.notifications_add(
        kind=Notification.Kind.BOARD_CHANGED,
        recipient_ids=list(recipient_ids),
        actor_id=actor_id,
        board_id=board_id,
        at=timezone.now(),
    )


def notify_like(*, liker_id: int, author_id: int, board_id: int) -> None:
    """The author is told that ``liker`` liked ``board_id``, gathered with the day's others
    ("alice and 41 others liked your board": a storm of likes is one row). One upsert, in the
    like's transaction; nothing when the author likes their own, or blocks the liker."""
    notifications.notifications_add(
        kind=Notification.Kind.LIKE,
        recipient_ids=[author_id],
        actor_id=liker_id,
        board_id=board_id,
        at=timezone.now(),
    )


def notify_remix(*, remixer_id: int, author_id: int, source_id: int) -> None:
    """The source's author is told that ``remixer`` remixed ``source_id``, gathered with the
    day's others. One upsert, in the remix's transaction."""
    notifications.notifications_add(
        kind=Notification.Kind.REMIX,
        recipient_ids=[author_id],
        actor_id=remixer_id,
        board_id=source_id,
        at=timezone.now(),
    )
