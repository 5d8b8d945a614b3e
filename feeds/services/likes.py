"""Liking a board and taking it back (docs/api.md, "Likes and remixes"); feeds.likes stores it.

A like is one row, one increment of the board's count and at most one notification upsert, all
in one transaction, then one Redis pipeline on commit: nothing in it grows with the board's
likes or the liker's followers. The author hears of it gathered with the day's others."""

from django.db import transaction
from django.utils import timezone

from feeds import likes
from feeds.models import Board
from feeds.services.notifications import notify_like


def like(*, user, board: Board) -> bool:
    """``user`` likes ``board`` (visible to them: the caller checked). Idempotent: False when
    they liked it already. O(log n) in PostgreSQL, one pipeline on commit."""
    at = timezone.now()
    with transaction.atomic():
        added = likes.like_add(board.pk, user.pk, at)
        if added:
            notify_like(liker_id=user.pk, author_id=board.author_id, board_id=board.pk)
    if added:
        transaction.on_commit(lambda: likes.like_cached(user.pk, board.pk, at.timestamp(), 1))
    return added


def unlike(*, user, board: Board) -> bool:
    """``user`` takes their like of ``board`` back. Idempotent: False when there was none. The
    notification that told of it stays (as elsewhere). O(log n), one pipeline on commit."""
    with transaction.atomic():
        removed = likes.like_remove(board.pk, user.pk)
    if removed is not None:
        at, counted = removed
        transaction.on_commit(lambda: likes.like_cached(user.pk, board.pk, at.timestamp(), -1, counted=counted))
    return removed is not None
