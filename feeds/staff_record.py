"""Staff actions on the record (StaffAction, issue 41): written by feeds.services.moderation and
feeds.services.reports in each action's own transaction, pruned by beat past
STAFF_ACTIONS_RETENTION_DAYS. Storage only: PostgreSQL."""

from datetime import timedelta

from django.utils import timezone

from feeds.models import Board, Comment, Image, StaffAction


def board_target(board: Board) -> str:
    """How the record names a board (its author loaded)."""
    return f"board {board.pk} ({board.title[:80]}) by {board.author.username}"


def comment_target(comment: Comment) -> str:
    """How the record names a comment (its author loaded): a remote author by their handle."""
    author = comment.author.username if comment.author is not None else (comment.remote_handle or "someone gone")
    return f"comment {comment.pk} on board {comment.board_id} by {author}"


def image_target(image: Image) -> str:
    """How the record names a picture (its owner loaded)."""
    return f"picture {image.pk} ({image.width}x{image.height}) by {image.owner.username}"


def server_target(host: str) -> str:
    """How the record names another server (feeds.federation)."""
    return f"server {host.strip().lower()}"


def person_target(user) -> str:
    """How the record names a person."""
    return f"person {user.username}"


def staff_action_record(*, staff, action: str, target: str, why: str = "") -> StaffAction:
    """Put a staff action on the record (StaffAction); callers do it in the action's own
    transaction, so the record and the action commit or roll back together. One INSERT."""
    return StaffAction.objects.create(
        staff=staff, staff_name=staff.get_username(), action=action, target=target[:200], why=why
    )


def staff_actions_prune(*, retention_days: int) -> int:
    """Delete the records older than ``retention_days`` (0: keep them all). How many went.
    One DELETE through the index on created_at."""
    if retention_days <= 0:
        return 0
    cutoff = timezone.now() - timedelta(days=retention_days)
    return StaffAction.objects.filter(created_at__lt=cutoff).delete()[0]
