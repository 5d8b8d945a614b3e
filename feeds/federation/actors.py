"""Our actors' keys and documents: a person's RSA key (made when first needed, kept in
PostgreSQL's ActorKey), the instance actor's, and the documents built on them."""

from django.db import IntegrityError, transaction

from feeds import pictures
from feeds.federation import documents, signatures
from feeds.models import ActorKey, Board, BoardPicture
from social.avatars import avatar_url

INSTANCE = "instance"


def owner_of(user_id: int) -> str:
    return f"user:{user_id}"


def key_for(owner: str) -> ActorKey:
    """The key pair of ``owner`` ("user:<id>" or INSTANCE), made on first use (RSA 2048, some
    tens of milliseconds, once per actor). One indexed read after that."""
    key = ActorKey.objects.filter(owner=owner).first()
    if key is not None:
        return key
    private, public = signatures.key_generate()
    try:
        with transaction.atomic():
            return ActorKey.objects.create(owner=owner, private_pem=private, public_pem=public)
    except IntegrityError:  # made meanwhile by another request: theirs stands
        return ActorKey.objects.get(owner=owner)


def person_document(user) -> dict:
    """The person's actor document (their key made if it is their first time). O(1)."""
    key = key_for(owner_of(user.pk))
    avatar = avatar_url(user.username, user.avatar_version) if user.avatar_version else None
    return documents.person(user, public_pem=key.public_pem, avatar_url=avatar)


def instance_document() -> dict:
    return documents.instance_actor(public_pem=key_for(INSTANCE).public_pem)


def picture_of(board: Board) -> dict:
    """The board's picture for its Note, rendered now if it is not kept yet (feeds.pictures: one
    primary-key read once rendered). For a single Note's GET and the walk of its Create."""
    return pictures.picture_of(board)


def picture_kept(board: Board) -> dict:
    """The board's picture as kept, never rendering: its last render's size and blurhash (its
    address is the current version's), or the address alone. For pages of many Notes (the outbox)
    and for an activity's first draft, which the walk builds again. One primary-key read."""
    kept = BoardPicture.objects.filter(board_id=board.pk).defer("png").first()
    if kept is None:
        return {"url": f"/b/{board.pk}.png", "media_type": pictures.MEDIA_TYPE}
    return {
        "url": pictures.picture_url(board.pk, pictures.version_of(board)),
        "width": kept.width,
        "height": kept.height,
        "blurhash": kept.blurhash,
        "media_type": pictures.MEDIA_TYPE,
    }
