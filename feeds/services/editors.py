"""Editors of a board (docs/api.md, "Shared boards, live"): the author invites people to draw on a
board with them, and removes them; an editor may leave. Only the drawing is theirs to change.

``editor_invite`` is the one place an invitation happens, so what follows one (a notification,
"X invited you to draw") hooks in there.
"""

from django.db import IntegrityError, transaction

from feeds.live import broadcast
from feeds.models import Board, BoardEditor
from feeds.rules import MAX_EDITORS
from feeds.services.notifications import notify_invite
from social.selectors import block_between
from ugcsite.platform.errors import Invalid, NotAllowed


class AuthorIsNoEditor(Invalid):
    def __init__(self):
        super().__init__("The author draws on their own board already; invite someone else.")


class TooManyEditors(Invalid):
    def __init__(self):
        super().__init__(f"A board has at most {MAX_EDITORS} editors; remove one before inviting another.")


class InviteBlocked(NotAllowed):
    def __init__(self, username: str):
        super().__init__(f"You cannot invite {username} to draw: one of you blocked the other.")


def editor_invite(*, board: Board, user, invited_by=None) -> bool:
    """Let ``user`` draw on ``board`` (idempotent) and tell them ("X invited you to draw Y").
    True if they were not an editor yet. One indexed insert and one notification upsert (and a
    count of the board's editors, at most MAX_EDITORS rows)."""
    if user.pk == board.author_id:
        raise AuthorIsNoEditor()
    inviters = {board.author_id, invited_by.pk if invited_by is not None else board.author_id}
    if any(block_between(inviter, user.pk) for inviter in inviters):
        raise InviteBlocked(user.username)
    with transaction.atomic():
        if BoardEditor.objects.filter(board=board, user=user).exists():
            return False
        if BoardEditor.objects.filter(board=board).count() >= MAX_EDITORS:
            raise TooManyEditors()
        try:
            with transaction.atomic():
                BoardEditor.objects.create(board=board, user=user)
        except IntegrityError:  # the same invitation, at the same moment
            return False
        notify_invite(
            inviter_id=invited_by.pk if invited_by is not None else board.author_id,
            invitee_id=user.pk,
            board_id=board.pk,
        )
    transaction.on_commit(lambda: broadcast.board_access_changed(board.pk))
    return True


def editor_remove(*, board: Board, user) -> bool:
    """``user`` no longer draws on ``board`` (idempotent; the author removes, or the editor
    leaves). Their open live connections lose the right to send ops at once. True if they were
    an editor."""
    deleted, _ = BoardEditor.objects.filter(board=board, user=user).delete()
    if deleted:
        transaction.on_commit(lambda: broadcast.board_access_changed(board.pk))
    return bool(deleted)
