"""What the rest of feeds tells federation, each called inside the change's own transaction
(the board services, moderation, accounts): an activity noted in the outbox
(feeds.federation.delivery.activity_add), sent by Celery after the commit. O(1) online each:
one EXISTS (has the person any remote follower?) and at most one insert."""

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from feeds import keys
from feeds.federation import actors, delivery, documents, inbox
from feeds.models import Board, FederatedHost, RemoteActor, RemoteBlock, RemoteFollow, RemoteNote, RemoteReaction
from ugcsite.platform.redis import get_redis

UPDATE_TASK = "feeds.federation.tasks.federation_board_update"  # by name: the tasks import this module
AUTHOR_WITHDRAWN_TASK = "feeds.federation.tasks.federation_author_withdrawn"


def board_created(board: Board) -> None:
    """A board published (created, or unhidden): Create(Note)."""
    delivery.activity_add(
        owner_user=board.author,
        body=documents.create(board, picture=actors.picture_kept(board)),
        board_id=board.pk,
        verb=delivery.CREATE,
    )


def board_changed(board: Board) -> None:
    """A published board edited: Update(Note), at most once per FEDERATION_UPDATE_SECONDS; an
    edit inside the window sends the board as it stands when the window ends (one Redis SET)."""
    if not delivery.enabled() or not delivery.has_remote_followers(board.author_id):
        return
    gate = keys.board_update_gate(board.pk)
    if get_redis().set(gate, "sent", nx=True, ex=settings.FEDERATION_UPDATE_SECONDS):
        delivery.activity_add(
            owner_user=board.author,
            body=documents.update(board, picture=actors.picture_kept(board)),
            board_id=board.pk,
            verb=delivery.UPDATE,
        )
    elif get_redis().set(gate, "due", xx=True, keepttl=True, get=True) in ("sent", b"sent"):
        wait = max(get_redis().ttl(gate), 1)
        transaction.on_commit(lambda: delivery.send(UPDATE_TASK, board.pk, countdown=wait))


def board_update_due(board_id: int) -> None:
    """The Update an edit inside the window left for its end (a task): the board as it stands."""
    board = Board.objects.select_related("author").filter(pk=board_id, state=Board.State.PUBLISHED).first()
    get_redis().delete(keys.board_update_gate(board_id))
    if board is not None:
        with transaction.atomic():
            board_changed(board)


def board_gone(board: Board) -> None:
    """A board deleted, hidden or withdrawn: Delete, after which its Note answers 410."""
    delivery.activity_add(owner_user=board.author, body=documents.delete(board.pk, board.author.username))


def person_changed(user) -> None:
    """A person's name or bio changed: Update of their actor."""
    delivery.activity_add(owner_user=user, body=documents.actor_update(actors.person_document(user)))


def person_gone(user) -> None:
    """An account closed: Delete of its actor."""
    delivery.activity_add(owner_user=user, body=documents.actor_delete(user.username))


def host_block(host: str, *, reason: str = "") -> int:
    """Staff block ``host`` (docs/federation.md, "Blocking a server"): its inbound activities get
    403, nothing is delivered there, and what its actors left here (follows, likes, boosts,
    replies) goes with the counts. Returns the actors forgotten. O(what the host left here)."""
    host = host.strip().lower()
    FederatedHost.objects.update_or_create(host=host, defaults={"blocked": True, "reason": reason[:500]})
    forgotten = 0
    under = RemoteActor.objects.filter(Q(host=host) | Q(host__endswith="." + host))  # its subdomains too
    for actor_id in under.values_list("pk", flat=True):
        inbox.actor_forget(actor_id)
        forgotten += 1
    return forgotten


def host_unblock(host: str) -> None:
    FederatedHost.objects.filter(host=host.strip().lower()).update(blocked=False)


def author_withdrawn(user_id: int) -> None:
    """A suspension's Deletes, one per board it hid (offline: O(boards))."""
    for board in Board.objects.select_related("author").filter(author_id=user_id, state=Board.State.SUSPENDED):
        with transaction.atomic():
            board_gone(board)


def remote_block(*, blocker, actor: RemoteActor) -> bool:
    """``blocker`` blocks a remote actor, as a local block: it stops following them (it receives
    nothing more of theirs), its likes, boosts and replies on their boards go, and what it sends
    about them later is dropped (feeds.federation.inbox). Idempotent: False when already
    blocked. O(what the actor left on their boards)."""
    with transaction.atomic():
        _, created = RemoteBlock.objects.get_or_create(blocker=blocker, actor=actor)
        RemoteFollow.objects.filter(followee=blocker, actor=actor).delete()
    for reaction in RemoteReaction.objects.filter(actor=actor, board__author=blocker):
        inbox.reaction_remove(reaction)
    for note in RemoteNote.objects.filter(actor=actor, comment__board__author=blocker):
        inbox.reply_remove(note)
    return created


def remote_unblock(*, blocker, actor: RemoteActor) -> bool:
    return bool(RemoteBlock.objects.filter(blocker=blocker, actor=actor).delete()[0])
