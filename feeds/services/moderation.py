"""Moderation by staff: hide and unhide boards, suspend users and lift it. Each takes the board
or the person out of (or back into) every feed, list and index, through the same paths as a
delete and a publish; a suspended person's likes stop counting and their comments leave every
thread until it is lifted. Every action a staff member takes is put on the record (StaffAction)
in its own transaction."""

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Greatest  # counts never go below 0, even over bulk-loaded data
from django.utils import timezone

from feeds import keys, tasks
from feeds.discovery import indexes
from feeds.federation import delivery as federation_delivery, services as federation
from feeds.models import Board, Outbox, StaffAction
from feeds.rules import Timeline
from feeds.services.boards import board_leave, board_publish
from feeds.staff_record import board_target, person_target, staff_action_record
from feeds.timelines import boardcache, store
from feeds.timelines.outbox import outbox_add
from social import tokens
from ugcsite.platform.redis import get_redis

User = get_user_model()


def board_hide(*, board: Board, staff=None, why: str = "") -> bool:
    """Hide a board: it leaves every feed, list and index as a delete does. With ``staff``
    (a staff member's own action, not a report's automatic hiding) it goes on the record."""
    with transaction.atomic():
        hidden = board_leave(board, Board.State.HIDDEN)
        if hidden and staff is not None:
            staff_action_record(staff=staff, action=StaffAction.Action.HIDE, target=board_target(board), why=why)
    return hidden


def board_unhide(*, board: Board, staff=None, why: str = "") -> bool:
    """Bring a hidden board back: G and M at once on commit, and a fan-out puts it back
    in the followers' feeds (archived chunks never lost it: reads filter by state). With
    ``staff``, on the record."""
    with transaction.atomic():
        updated = Board.objects.filter(pk=board.pk, state=Board.State.HIDDEN).update(state=Board.State.PUBLISHED)
        if updated:
            User.objects.filter(pk=board.author_id).update(boards_count=F("boards_count") + 1)
            outbox_add(board.pk, Outbox.Action.FANOUT)
            federation.board_created(Board.objects.select_related("author").get(pk=board.pk))
            if staff is not None:
                staff_action_record(staff=staff, action=StaffAction.Action.UNHIDE, target=board_target(board), why=why)
    if updated:
        board.state = Board.State.PUBLISHED
        transaction.on_commit(lambda: board_publish(Board.objects.select_related("author").get(pk=board.pk)))
    return bool(updated)


def user_suspend(*, user: User, staff=None, why: str = "") -> int:
    """Suspend a user: no sign-in, no token, and every published board of theirs hidden (state
    'suspended', so lifting it restores exactly those). Their M and G go on commit; tasks
    take their boards out of followers' feeds and them out of everyone's follower and
    following lists. Returns how many boards were hidden."""
    with transaction.atomic():
        User.objects.filter(pk=user.pk).update(is_active=False)
        user.is_active = False
        tokens.tokens_revoke(user=user)
        hidden = Board.objects.filter(author=user, state=Board.State.PUBLISHED).update(
            state=Board.State.SUSPENDED, updated_at=timezone.now()
        )
        User.objects.filter(pk=user.pk).update(boards_count=Greatest(F("boards_count") - hidden, 0))
        if staff is not None:
            staff_action_record(staff=staff, action=StaffAction.Action.SUSPEND, target=person_target(user), why=why)
    transaction.on_commit(lambda: _author_withdrawn(user.pk))
    transaction.on_commit(lambda: tasks.likes_count_again.delay(user.pk))  # their likes stop counting
    transaction.on_commit(lambda: tasks.comments_count_again.delay(user.pk))  # their comments leave threads
    transaction.on_commit(lambda: federation_delivery.send(federation.AUTHOR_WITHDRAWN_TASK, user.pk))
    return hidden


def user_unsuspend(*, user: User, staff=None, why: str = "") -> int:
    """Lift a suspension: sign-in again, back in everyone's lists, and the boards it hid come
    back (M rebuilt and followers' feeds refilled by a task). Returns how many boards came back."""
    with transaction.atomic():
        User.objects.filter(pk=user.pk).update(is_active=True)
        user.is_active = True
        restored = Board.objects.filter(author=user, state=Board.State.SUSPENDED).update(state=Board.State.PUBLISHED)
        User.objects.filter(pk=user.pk).update(boards_count=F("boards_count") + restored)
        if staff is not None:
            staff_action_record(staff=staff, action=StaffAction.Action.UNSUSPEND, target=person_target(user), why=why)
    transaction.on_commit(lambda: tasks.author_restore.delay(user.pk))
    transaction.on_commit(lambda: tasks.likes_count_again.delay(user.pk))  # and count again
    transaction.on_commit(lambda: tasks.comments_count_again.delay(user.pk))  # and their comments come back
    return restored


def _author_withdrawn(author_id: int) -> None:
    hidden = list(Board.objects.filter(author_id=author_id, state=Board.State.SUSPENDED).values_list("id", flat=True))
    pipe = get_redis().pipeline(transaction=False)
    pipe.delete(keys.profile_timeline(author_id))
    store.revision_bump(author_id, Timeline.PROFILE, pipe=pipe)
    for board_id in hidden:
        boardcache.board_cache_delete(board_id, pipe=pipe)
    pipe.execute()
    for board_id in hidden:
        indexes.board_unindex(board_id)
    tasks.member_lists_sync.delay(author_id)
    tasks.author_retract.delay(author_id)
