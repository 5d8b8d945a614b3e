"""What ugcsite says in ActivityPub: the ids (all under SITE_URL), the actor documents (a
person's ``Person``, the instance's ``Application``), a board's ``Note``, and the activities
sent about them. Pure builders over rows: no writes, no network. Keys: feeds.federation.actors.

Ids: a person is their profile's URL ``/u/<username>`` (key ``#main-key``, ``/inbox``,
``/outbox``, ``/followers``, ``/following``), a board its page ``/b/<id>``, the shared inbox
``/inbox`` and the instance actor ``/actor``. An activity's id is its object's plus a fragment.
"""

import html
import json
from datetime import UTC, datetime

from django.conf import settings

from feeds.models import Board

PUBLIC = "https://www.w3.org/ns/activitystreams#Public"
# The terms Mastodon's own documents define beyond ActivityStreams, so that a JSON-LD processor
# (Fedify's, any other's) keeps them rather than dropping unknown terms: blurhash above all.
CONTEXT = [
    "https://www.w3.org/ns/activitystreams",
    "https://w3id.org/security/v1",
    {
        "toot": "http://joinmastodon.org/ns#",
        "blurhash": "toot:blurhash",
        "discoverable": "toot:discoverable",
        "manuallyApprovesFollowers": "as:manuallyApprovesFollowers",
        "sensitive": "as:sensitive",
        "Hashtag": "as:Hashtag",
    },
]
ALT_TEXT_MAX = 1500  # Mastodon keeps at most 1,500 characters of a description
OUTBOX_PAGE = 20


def site() -> str:
    return settings.SITE_URL


def host() -> str:
    """The host (with its port) of SITE_URL: the part after @ in a handle."""
    return site().split("://", 1)[-1].split("/", 1)[0]


def actor_url(username: str) -> str:
    return f"{site()}/u/{username}"


def key_url(username: str) -> str:
    return actor_url(username) + "#main-key"


def note_url(board_id: int) -> str:
    return f"{site()}/b/{board_id}"


def shared_inbox_url() -> str:
    return f"{site()}/inbox"


def instance_actor_url() -> str:
    return f"{site()}/actor"


def handle(username: str) -> str:
    return f"{username}@{host()}"


def _time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def person(user, *, public_pem: str, avatar_url: str | None) -> dict:
    """A person's actor: the fields Mastodon reads (docs/federation.md)."""
    url = actor_url(user.username)
    document = {
        "@context": CONTEXT,
        "id": url,
        "type": "Person",
        "preferredUsername": user.username,
        "name": user.display_name or user.username,
        "summary": f"<p>{html.escape(user.bio)}</p>" if user.bio else "",
        "url": url,
        "inbox": url + "/inbox",
        "outbox": url + "/outbox",
        "followers": url + "/followers",
        "following": url + "/following",
        "endpoints": {"sharedInbox": shared_inbox_url()},
        "publicKey": {"id": key_url(user.username), "owner": url, "publicKeyPem": public_pem},
        "discoverable": True,
        "indexable": True,
        "manuallyApprovesFollowers": False,
        "published": _time(user.date_joined),
    }
    if avatar_url:
        document["icon"] = {"type": "Image", "url": site() + avatar_url if avatar_url.startswith("/") else avatar_url}
    return document


def instance_actor(*, public_pem: str) -> dict:
    """The instance's own actor (an ``Application``), which signs our GETs for servers in
    authorized-fetch mode."""
    url = instance_actor_url()
    return {
        "@context": CONTEXT,
        "id": url,
        "type": "Application",
        "preferredUsername": host(),
        "name": "ugcsite",
        "url": site() + "/",
        "inbox": url + "/inbox",
        "manuallyApprovesFollowers": True,
        "publicKey": {"id": url + "#main-key", "owner": url, "publicKeyPem": public_pem},
    }


def drawing_text(board: Board) -> list[str]:
    """The text written in a board's drawing (text elements and sticky notes), in order."""
    try:
        elements = json.loads(board.doc_json).get("elements", [])
    except (ValueError, AttributeError):
        return []
    return [
        e["text"].strip()
        for e in elements
        if isinstance(e, dict) and isinstance(e.get("text"), str) and e["text"].strip()
    ]


def alt_text(board: Board) -> str:
    """The picture's description: the title, then the drawing's words, within ALT_TEXT_MAX."""
    words = " / ".join(drawing_text(board))
    text = f"{board.title}. A {board.kind} drawing" + (f" with the words: {words}" if words else ".")
    return text if len(text) <= ALT_TEXT_MAX else text[: ALT_TEXT_MAX - 1] + "…"


def attachment(board: Board, picture: dict) -> dict:
    """The one ``Document`` Mastodon shows as the post's picture (Pixelfed's shape)."""
    document = {
        "type": "Document",
        "mediaType": picture.get("media_type", "image/png"),
        "url": picture["url"] if "://" in picture["url"] else site() + picture["url"],
        "name": alt_text(board),
    }
    for field in ("width", "height", "blurhash"):
        if picture.get(field) is not None:
            document[field] = picture[field]
    return document


def note(board: Board, *, picture: dict) -> dict:
    """A published board as a ``Note``: its title, tags as #hashtags and a link, the picture,
    public and to the author's followers. ``board.author`` is loaded."""
    url = note_url(board.pk)
    author = actor_url(board.author.username)
    tags = " ".join(
        f'<a href="{site()}/discover?tag={tag}" class="mention hashtag" rel="tag">#<span>{html.escape(tag)}</span></a>'
        for tag in board.tags
    )
    content = f"<p>{html.escape(board.title)}</p>"
    if tags:
        content += f"<p>{tags}</p>"
    content += f'<p><a href="{url}">{html.escape(url.split("://", 1)[-1])}</a></p>'
    document = {
        "id": url,
        "type": "Note",
        "attributedTo": author,
        "content": content,
        "url": url,
        "published": _time(board.created_at),
        "to": [PUBLIC],
        "cc": [author + "/followers"],
        "sensitive": False,
        "attachment": [attachment(board, picture)],
        "tag": [{"type": "Hashtag", "href": f"{site()}/discover?tag={tag}", "name": f"#{tag}"} for tag in board.tags],
    }
    if board.updated_at > board.created_at:
        document["updated"] = _time(board.updated_at)
    return document


def tombstone(board_id: int) -> dict:
    return {"@context": CONTEXT, "id": note_url(board_id), "type": "Tombstone"}


def actor_tombstone(username: str) -> dict:
    return {"@context": CONTEXT, "id": actor_url(username), "type": "Tombstone"}


def with_context(document: dict) -> dict:
    return {"@context": CONTEXT, **document}


def create(board: Board, *, picture: dict) -> dict:
    obj = note(board, picture=picture)
    return with_context(
        {
            "id": obj["id"] + "#create",
            "type": "Create",
            "actor": obj["attributedTo"],
            "published": obj["published"],
            "to": obj["to"],
            "cc": obj["cc"],
            "object": obj,
        }
    )


def update(board: Board, *, picture: dict) -> dict:
    obj = note(board, picture=picture)
    stamp = int(board.updated_at.timestamp() * 1000)
    obj.setdefault("updated", _time(board.updated_at))
    return with_context(
        {
            "id": f"{obj['id']}#update-{stamp}",
            "type": "Update",
            "actor": obj["attributedTo"],
            "to": obj["to"],
            "cc": obj["cc"],
            "object": obj,
        }
    )


def delete(board_id: int, username: str) -> dict:
    author = actor_url(username)
    return with_context(
        {
            "id": note_url(board_id) + "#delete",
            "type": "Delete",
            "actor": author,
            "to": [PUBLIC],
            "cc": [author + "/followers"],
            "object": {"id": note_url(board_id), "type": "Tombstone"},
        }
    )


def actor_update(actor: dict) -> dict:
    stamp = int(datetime.now(UTC).timestamp() * 1000)
    return with_context(
        {
            "id": f"{actor['id']}#update-{stamp}",
            "type": "Update",
            "actor": actor["id"],
            "to": [PUBLIC],
            "object": {k: v for k, v in actor.items() if k != "@context"},
        }
    )


def actor_delete(username: str) -> dict:
    url = actor_url(username)
    return with_context({"id": url + "#delete", "type": "Delete", "actor": url, "to": [PUBLIC], "object": url})


def accept(username: str, follow: dict, follow_pk: int) -> dict:
    url = actor_url(username)
    return with_context(
        {
            "id": f"{url}#accepts/follows/{follow_pk}",
            "type": "Accept",
            "actor": url,
            "to": [follow.get("actor")],
            "object": {k: v for k, v in follow.items() if k != "@context"},
        }
    )


def webfinger(username: str) -> dict:
    return {
        "subject": f"acct:{handle(username)}",
        "aliases": [actor_url(username)],
        "links": [
            {"rel": "self", "type": "application/activity+json", "href": actor_url(username)},
            {"rel": "http://webfinger.net/rel/profile-page", "type": "text/html", "href": actor_url(username)},
        ],
    }


def collection(url: str, total: int) -> dict:
    """A collection that shows its size only (followers, following)."""
    return {"@context": CONTEXT, "id": url, "type": "OrderedCollection", "totalItems": total}


def outbox(username: str, total: int) -> dict:
    url = actor_url(username) + "/outbox"
    return {
        "@context": CONTEXT,
        "id": url,
        "type": "OrderedCollection",
        "totalItems": total,
        "first": url + "?page=true",
    }


def outbox_page(username: str, creates: list[dict], *, before: int | None, next_before: int | None) -> dict:
    url = actor_url(username) + "/outbox"
    page = {
        "@context": CONTEXT,
        "id": url + "?page=true" + (f"&before={before}" if before else ""),
        "type": "OrderedCollectionPage",
        "partOf": url,
        "orderedItems": [{k: v for k, v in item.items() if k != "@context"} for item in creates],
    }
    if next_before is not None:
        page["next"] = f"{url}?page=true&before={next_before}"
    return page


def nodeinfo(*, users: int, active_month: int, posts: int) -> dict:
    return {
        "version": "2.1",
        "software": {"name": "ugcsite", "version": "0", "homepage": site() + "/"},
        "protocols": ["activitypub"],
        "services": {"inbound": [], "outbound": []},
        "openRegistrations": True,
        "usage": {"users": {"total": users, "activeMonth": active_month}, "localPosts": posts},
        "metadata": {"nodeName": "ugcsite"},
    }
