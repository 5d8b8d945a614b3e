"""Activities coming in (docs/federation.md, "The inbox"): the request's signature checked
(``verify``), then each kind handled (``receive``), idempotent by the activity's id or its
object's (a repeated delivery changes nothing). Anything not understood is accepted and
ignored. Storage and PostgreSQL only, plus what the board services do on commit."""

import html
import re

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

from feeds import comments, likes
from feeds.federation import delivery, documents, remote, signatures
from feeds.federation.http import host_of
from feeds.models import (
    Board,
    Comment,
    NotificationKind,
    RemoteActor,
    RemoteBlock,
    RemoteFollow,
    RemoteNote,
    RemoteReaction,
)
from feeds.notifications import notifications_add
from feeds.rules import COMMENT_TEXT_MAX
from ugcsite.platform.redis import get_redis

User = get_user_model()
_TAGS = re.compile(r"<[^>]*>")
_BREAKS = re.compile(r"<br\s*/?>|</p>\s*<p[^>]*>", re.IGNORECASE)


KEY_ID_MAX = RemoteActor._meta.get_field("uri").max_length  # what RemoteActor can keep
HOST_MAX = RemoteActor._meta.get_field("host").max_length


class Refused(Exception):
    """An activity refused: ``status`` 401 (signature), 403 (blocked) or 400 (unreadable)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def key_id_of(headers: dict[str, str]) -> str:
    """The keyId a request's signature names (unverified: for the rate limit and the block)."""
    try:
        if "signature-input" in headers:
            return signatures.rfc9421_signed(headers)[1].key_id
        if "signature" in headers:
            return signatures.cavage_parse(headers["signature"])["keyId"]
    except signatures.BadSignature:
        return ""
    return ""


def verify(*, method: str, url: str, path: str, headers: dict[str, str], body: bytes) -> RemoteActor:
    """The remote actor that signed this request (RFC 9421 when it carries Signature-Input, else
    draft-cavage), its key fetched or cached; a failure refetches the key once (rotation).
    Refused(401) when it is not signed, the signature or digest does not hold, or the key cannot
    be had; Refused(403) when its server is blocked."""
    rfc9421 = "signature-input" in headers
    try:
        if method == "POST":
            signatures.digest_check(headers, body)
        if rfc9421:
            key_id = signatures.rfc9421_signed(headers)[1].key_id
        elif "signature" in headers:
            key_id = signatures.cavage_signed(headers["signature"], method=method).key_id
        else:
            raise signatures.BadSignature("The request is not signed (no Signature header).")
    except signatures.BadSignature as error:
        raise Refused(401, str(error)) from error
    if len(key_id) > KEY_ID_MAX or not 0 < len(host_of(key_id)) <= HOST_MAX:
        raise Refused(401, "The keyId is not the URL of a key.")
    if remote.host_blocked(host_of(key_id)):
        raise Refused(403, "That server is blocked here.")
    for refresh in (False, True):
        try:
            actor = remote.actor_by_key(key_id, refresh=refresh)
        except remote.ActorUnusable as error:
            raise Refused(401, f"The signing key could not be had: {error}") from error
        try:
            if rfc9421:
                signatures.rfc9421_verify(public_pem=actor.public_pem, method=method, url=url, headers=headers)
            else:
                signatures.cavage_verify(
                    value=headers["signature"], public_pem=actor.public_pem, method=method, path=path, headers=headers
                )
            return actor
        except signatures.BadSignature as error:
            if refresh or "12 hours" in str(error) or "expired" in str(error):
                raise Refused(401, str(error)) from error
    raise Refused(401, "The signature does not match.")  # not reached


def _id(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        return value["id"]
    return ""


def _local_user(url: str):
    """The active person whose actor ``url`` is, or None."""
    prefix = documents.site() + "/u/"
    if not url.startswith(prefix):
        return None
    name = url[len(prefix) :]
    if not name or "/" in name or "#" in name or "?" in name:
        return None
    return User.objects.filter(username=name, is_active=True).first()


def _local_board(url: str) -> Board | None:
    """The published board whose Note ``url`` is, with its author, or None."""
    prefix = documents.site() + "/b/"
    if not url.startswith(prefix) or not url[len(prefix) :].isdigit() or len(url) - len(prefix) > 16:
        return None
    return (
        Board.objects.select_related("author").filter(pk=int(url[len(prefix) :]), state=Board.State.PUBLISHED).first()
    )


def _blocked_by(user_id: int, actor: RemoteActor) -> bool:
    return RemoteBlock.objects.filter(blocker_id=user_id, actor=actor).exists()


def _notify(kind: str, actor: RemoteActor, recipient_id: int, board_id: int | None) -> None:
    """A remote actor's part in a notification is its negated id (feeds.selectors names it)."""
    notifications_add(kind=kind, recipient_ids=[recipient_id], actor_id=-actor.pk, board_id=board_id, at=timezone.now())


def receive(activity: dict, actor: RemoteActor) -> str:
    """Handle one verified activity from ``actor``: what was done, in a word (for the log and the
    tests): "followed", "liked", ..., or "ignored". Refused(401) when the activity's actor is not
    the signer. Idempotent."""
    if activity.get("actor") != actor.uri and _id(activity.get("actor")) != actor.uri:
        raise Refused(401, "The signature's key does not belong to the activity's actor.")
    kind = activity.get("type")
    obj = activity.get("object")
    activity_id = _id(activity)
    if not activity_id or host_of(activity_id) != actor.host:
        return "ignored"
    if kind == "Follow":
        return _follow(activity, actor)
    if kind == "Undo" and isinstance(obj, (dict, str)):
        return _undo(obj, actor)
    if kind in ("Like", "Announce"):
        return _react(kind, activity_id, _id(obj), actor)
    if kind == "Create" and isinstance(obj, dict) and obj.get("type") == "Note":
        return _reply(obj, actor)
    if kind == "Update" and isinstance(obj, dict):
        if _id(obj) == actor.uri:
            remote.actor_get(actor.uri, refresh=True)
            return "actor updated"
        if obj.get("type") == "Note":
            return _reply_edit(obj, actor)
    if kind == "Delete":
        target = _id(obj)
        if target == actor.uri:
            actor_forget(actor.pk)
            return "actor deleted"
        return _reply_delete(target, actor)
    return "ignored"


def _follow(activity: dict, actor: RemoteActor) -> str:
    user = _local_user(_id(activity.get("object")))
    if user is None or _blocked_by(user.pk, actor):
        return "ignored"
    with transaction.atomic():
        follow, created = RemoteFollow.objects.get_or_create(
            followee=user, actor=actor, defaults={"activity_id": _id(activity)[:2048]}
        )
        delivery.activity_add(
            owner_user=user,
            body=documents.accept(user.username, activity, follow.pk),
            inboxes=[actor.inbox],
            to_followers=False,
        )
        if created:
            _notify(NotificationKind.FOLLOW, actor, user.pk, None)
    return "followed"


def _undo(obj, actor: RemoteActor) -> str:
    inner_id = _id(obj)
    inner_type = obj.get("type") if isinstance(obj, dict) else None
    if inner_type == "Follow" or (
        inner_type is None and RemoteFollow.objects.filter(actor=actor, activity_id=inner_id).exists()
    ):
        target = _local_user(_id(obj.get("object"))) if isinstance(obj, dict) else None
        rows = RemoteFollow.objects.filter(actor=actor)
        rows = rows.filter(followee=target) if target is not None else rows.filter(activity_id=inner_id)
        return "unfollowed" if rows.delete()[0] else "ignored"
    reaction = RemoteReaction.objects.filter(actor=actor, activity_id=inner_id).first()
    if reaction is None and isinstance(obj, dict) and inner_type in ("Like", "Announce"):
        board = _local_board(_id(obj.get("object")))
        kind = RemoteReaction.Kind.LIKE if inner_type == "Like" else RemoteReaction.Kind.ANNOUNCE
        reaction = RemoteReaction.objects.filter(actor=actor, board=board, kind=kind).first() if board else None
    if reaction is None:
        return "ignored"
    reaction_remove(reaction)
    return "unliked" if reaction.kind == RemoteReaction.Kind.LIKE else "unboosted"


def _react(kind: str, activity_id: str, target: str, actor: RemoteActor) -> str:
    board = _local_board(target)
    if board is None or _blocked_by(board.author_id, actor):
        return "ignored"
    reaction_kind = RemoteReaction.Kind.LIKE if kind == "Like" else RemoteReaction.Kind.ANNOUNCE
    try:
        with transaction.atomic():
            RemoteReaction.objects.create(kind=reaction_kind, actor=actor, board=board, activity_id=activity_id[:2048])
            _count(board.pk, reaction_kind, 1)
            notice = NotificationKind.LIKE if kind == "Like" else NotificationKind.BOOST
            _notify(notice, actor, board.author_id, board.pk)
    except IntegrityError:
        return "ignored"  # the same like again (a repeated delivery)
    return "liked" if kind == "Like" else "boosted"


def _count(board_id: int, kind: str, delta: int) -> None:
    """Board.likes or Board.boosts moved in the caller's transaction; G's likes on commit."""
    if kind == RemoteReaction.Kind.LIKE:
        Board.objects.filter(pk=board_id).update(likes=Greatest(F("likes") + delta, 0))
        transaction.on_commit(lambda: _likes_cached(board_id, delta))
    else:
        Board.objects.filter(pk=board_id).update(boosts=Greatest(F("boosts") + delta, 0))


def _likes_cached(board_id: int, delta: int) -> None:
    """G's likes and the likes order moved (as a local like's, without the liker's own sets)."""
    pipe = get_redis().pipeline(transaction=False)
    likes.counts_move([(board_id, timezone.now().timestamp())], delta, pipe=pipe)
    pipe.execute()


def reaction_remove(reaction: RemoteReaction) -> None:
    with transaction.atomic():
        if RemoteReaction.objects.filter(pk=reaction.pk).delete()[0]:
            _count(reaction.board_id, reaction.kind, -1)


def note_text(content) -> str:
    """A remote Note's HTML as the plain text a comment keeps."""
    if not isinstance(content, str):
        return ""
    text = _BREAKS.sub("\n", content)
    return html.unescape(_TAGS.sub("", text)).strip()[:COMMENT_TEXT_MAX]


def _reply(obj: dict, actor: RemoteActor) -> str:
    uri = _id(obj)
    board = _local_board(_id(obj.get("inReplyTo")))
    if board is None or not uri or host_of(uri) != actor.host or _blocked_by(board.author_id, actor):
        return "ignored"
    if _id(obj.get("attributedTo")) not in ("", actor.uri):
        return "ignored"
    text = note_text(obj.get("content"))
    if not text:
        return "ignored"
    if RemoteNote.objects.filter(uri=uri).exists():
        return "ignored"
    try:
        with transaction.atomic():
            comment = Comment.objects.create(
                board=board,
                author=None,
                remote_handle=(actor.handle or actor.uri)[:255],
                text=text,
                thread=0,
                created_at=timezone.now(),
            )
            Comment.objects.filter(pk=comment.pk).update(thread=comment.pk)
            RemoteNote.objects.create(comment=comment, uri=uri[:2048], actor=actor)
            Board.objects.filter(pk=board.pk).update(comments=F("comments") + 1)
            _notify(NotificationKind.COMMENT, actor, board.author_id, board.pk)
            transaction.on_commit(lambda: comments.count_move(board.pk, 1))
    except IntegrityError:
        return "ignored"
    return "replied"


def _reply_edit(obj: dict, actor: RemoteActor) -> str:
    note = RemoteNote.objects.filter(uri=_id(obj), actor=actor).first()
    text = note_text(obj.get("content"))
    if note is None or not text:
        return "ignored"
    Comment.objects.filter(pk=note.comment_id).update(text=text, edited_at=timezone.now())
    return "reply edited"


def _reply_delete(uri: str, actor: RemoteActor) -> str:
    note = RemoteNote.objects.filter(uri=uri, actor=actor).select_related("comment").first()
    if note is None:
        return "ignored"
    reply_remove(note)
    return "reply deleted"


def reply_remove(note: RemoteNote) -> None:
    with transaction.atomic():
        comment = Comment.objects.select_for_update().filter(pk=note.comment_id).first()
        if comment is None:
            return
        published = comment.state == Comment.State.PUBLISHED
        comments.comment_remove(comment)
        RemoteNote.objects.filter(pk=note.pk).delete()
        if published:
            transaction.on_commit(lambda: comments.count_move(comment.board_id, -1))


def actor_forget(actor_id: int) -> None:
    """A remote actor gone (deleted, or its server blocked): its follows, likes, boosts and
    replies go, the counts with them. O(what it left here)."""
    for reaction in RemoteReaction.objects.filter(actor_id=actor_id):
        reaction_remove(reaction)
    for note in RemoteNote.objects.filter(actor_id=actor_id):
        reply_remove(note)
    RemoteFollow.objects.filter(actor_id=actor_id).delete()
