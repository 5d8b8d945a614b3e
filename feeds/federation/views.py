"""The ActivityPub and discovery endpoints (docs/api.md, "Federation"): WebFinger, NodeInfo,
the actors, a board's Note, the outbox and the collections, and the inboxes. Each validates
and calls one function of feeds.federation. ``negotiated`` serves the ActivityPub form of a
page (``/u/<username>``, ``/b/<id>``, followers, following) to a client that asks for it and the
page to everyone else."""

import hashlib
import json
import logging
from functools import wraps

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from feeds.federation import actors, documents, http, inbox as inbox_logic
from feeds.federation.http import ACTIVITY_JSON, host_of
from feeds.models import Board, RemoteActor, RemoteFollow
from social import graph
from social.avatars import identicon_svg
from ugcsite.platform.errors import RateLimited
from ugcsite.platform.http import error_response, get_view
from ugcsite.platform.ratelimits import attempt

logger = logging.getLogger(__name__)
User = get_user_model()
NODEINFO_CACHE_SECONDS = 3600


def wants_activity(request: HttpRequest) -> bool:
    accept = request.headers.get("Accept", "")
    return "application/activity+json" in accept or "application/ld+json" in accept


def activity_answer(document: dict, *, status: int = 200, content_type: str = ACTIVITY_JSON) -> HttpResponse:
    response = HttpResponse(json.dumps(document), status=status, content_type=content_type)
    response["Vary"] = "Accept"
    return response


def _off() -> HttpResponse:
    return error_response(404, "Federation is turned off on this server.")


def _person(username: str):
    return User.objects.filter(username=username, is_active=True).first()


def negotiated(activity_view, page_view):
    """``activity_view`` for a client asking for ActivityPub JSON (when federation is on),
    ``page_view`` otherwise."""

    @wraps(page_view)
    def view(request, *args, **kwargs):
        if settings.FEDERATION_ENABLED and request.method in ("GET", "HEAD") and wants_activity(request):
            return activity_view(request, *args, **kwargs)
        response = page_view(request, *args, **kwargs)
        if hasattr(response, "headers"):
            response.headers.setdefault("Vary", "Accept")
        return response

    return view


@get_view
def actor(request, username: str):
    """The person's actor; a Tombstone (410) for a closed or suspended account, as Mastodon
    answers, so that other servers drop what they cached of it."""
    person = User.objects.filter(username=username).only("pk", "username", "is_active").first()
    if person is None:
        return error_response(404, f"There is no person {username!r} here.")
    if not person.is_active:
        return activity_answer(documents.actor_tombstone(person.username), status=410)
    return activity_answer(actors.person_document(User.objects.get(pk=person.pk)))


@get_view
def note(request, board_id: int):
    board = Board.objects.select_related("author").filter(pk=board_id).first()
    if board is None:
        return error_response(404, f"There is no board {board_id}.")
    if board.state != Board.State.PUBLISHED:
        return activity_answer(documents.tombstone(board_id), status=410)
    return activity_answer(with_context(documents.note(board, picture=actors.picture_of(board))))


def with_context(document: dict) -> dict:
    return documents.with_context(document)


@get_view
def followers(request, username: str):
    person = _person(username)
    if person is None:
        return error_response(404, f"There is no person {username!r} here.")
    local, _, _ = graph.profile_counts(person.pk, viewer_id=None)
    remote = RemoteFollow.objects.filter(followee=person).count()
    return activity_answer(documents.collection(documents.actor_url(person.username) + "/followers", local + remote))


@get_view
def following(request, username: str):
    person = _person(username)
    if person is None:
        return error_response(404, f"There is no person {username!r} here.")
    _, count, _ = graph.profile_counts(person.pk, viewer_id=None)
    return activity_answer(documents.collection(documents.actor_url(person.username) + "/following", count))


@get_view
def outbox(request, username: str):
    if not settings.FEDERATION_ENABLED:
        return _off()
    person = _person(username)
    if person is None:
        return error_response(404, f"There is no person {username!r} here.")
    if request.GET.get("page") != "true":
        return activity_answer(documents.outbox(person.username, person.boards_count))
    before_text = request.GET.get("before", "")
    if before_text and (not before_text.isdigit() or len(before_text) > 16):
        return error_response(400, "before must be a board id.")
    before = int(before_text) if before_text else None
    rows = Board.objects.filter(author=person, state=Board.State.PUBLISHED)
    if before is not None:
        rows = rows.filter(pk__lt=before)
    boards = list(rows.order_by("-id")[: documents.OUTBOX_PAGE])
    for board in boards:
        board.author = person
    creates = [documents.create(board, picture=actors.picture_kept(board)) for board in boards]
    next_before = boards[-1].pk if len(boards) == documents.OUTBOX_PAGE else None
    return activity_answer(documents.outbox_page(person.username, creates, before=before, next_before=next_before))


@get_view
def instance_actor(request):
    if not settings.FEDERATION_ENABLED:
        return _off()
    return activity_answer(actors.instance_document())


@get_view
def webfinger(request):
    if not settings.FEDERATION_ENABLED:
        return _off()
    resource = request.GET.get("resource", "")
    if not resource:
        return error_response(400, "Give the resource to look up: ?resource=acct:<username>@<host>.")
    if resource.startswith("acct:"):
        name, _, at = resource[5:].lstrip("@").partition("@")
        if at.lower() != documents.host().lower():
            return error_response(404, f"{at!r} is not this server ({documents.host()}).")
    elif resource.startswith(documents.site() + "/u/"):
        name = resource[len(documents.site() + "/u/") :]
    else:
        return error_response(404, "This server knows only acct:<username>@<host> and its actors' URLs.")
    person = _person(name)
    if person is None:
        return error_response(404, f"There is no person {name!r} here.")
    return activity_answer(documents.webfinger(person.username), content_type="application/jrd+json")


@get_view
def nodeinfo_links(request):
    return activity_answer(
        {
            "links": [
                {"rel": "http://nodeinfo.diaspora.software/ns/schema/2.1", "href": documents.site() + "/nodeinfo/2.1"}
            ]
        },
        content_type="application/json",
    )


@get_view
def nodeinfo(request):
    """NodeInfo 2.1; its counts are cached for an hour (each is a count over a table)."""
    usage = cache.get("federation:nodeinfo")
    if usage is None:
        month_ago = timezone.now() - timezone.timedelta(days=30)
        usage = {
            "users": User.objects.filter(is_active=True).count(),
            "active_month": User.objects.filter(is_active=True, last_seen__gte=month_ago).count(),
            "posts": Board.objects.filter(state=Board.State.PUBLISHED).count(),
        }
        cache.set("federation:nodeinfo", usage, NODEINFO_CACHE_SECONDS)
    profile = "http://nodeinfo.diaspora.software/ns/schema/2.1#"
    return activity_answer(
        documents.nodeinfo(users=usage["users"], active_month=usage["active_month"], posts=usage["posts"]),
        content_type=f'application/json; profile="{profile}"',
    )


def _refused(status: int, detail: str) -> HttpResponse:
    response = error_response(status, detail)
    if status == 401:
        response["WWW-Authenticate"] = 'Signature realm="ugcsite", headers="(request-target) host date digest"'
    return response


@csrf_exempt
def inbox(request, username: str | None = None):
    """A person's inbox, or the shared one. 202 when the activity is taken (or ignored); 401 for
    a missing or bad signature or digest, 403 for a blocked server, 400 for a body that is not a
    JSON object, 413 past FEDERATION_MAX_INBOX_BYTES, 429 past the host's rate."""
    if not settings.FEDERATION_ENABLED:
        return _off()
    if request.method != "POST":
        return error_response(405, f"{request.method} is not allowed here; use POST.", headers={"Allow": "POST"})
    # A person's inbox takes what the shared one does (the activity names whom it is about).
    if username is not None and _person(username) is None:
        return error_response(404, f"There is no person {username!r} here.")
    length = request.META.get("CONTENT_LENGTH") or "0"
    if not length.isdigit() or int(length) > settings.FEDERATION_MAX_INBOX_BYTES:
        return error_response(413, f"An activity may be at most {settings.FEDERATION_MAX_INBOX_BYTES} bytes.")
    body = request.body
    if len(body) > settings.FEDERATION_MAX_INBOX_BYTES:  # sent without a Content-Length (chunked)
        return error_response(413, f"An activity may be at most {settings.FEDERATION_MAX_INBOX_BYTES} bytes.")
    headers = {name.lower(): value for name, value in request.headers.items()}
    key_host = host_of(inbox_logic.key_id_of(headers))
    if key_host:
        try:
            attempt(
                "inbox-host",
                key_host,
                per_minute=settings.RATE_LIMIT_INBOX_PER_HOST_PER_MINUTE,
                what=f"activities from {key_host}",
            )
        except RateLimited as error:
            return error_response(429, str(error), headers={"Retry-After": str(error.retry_after)})
    try:
        activity = json.loads(body)
    except (ValueError, RecursionError):
        activity = None
    if not isinstance(activity, dict):
        return error_response(400, "The body is not a JSON object (an ActivityStreams activity).")
    url = documents.site() + request.get_full_path()  # what the sender signed: our public address
    signer = None
    try:
        signer = inbox_logic.verify(method="POST", url=url, path=request.get_full_path(), headers=headers, body=body)
        outcome = inbox_logic.receive(activity, signer)
    except inbox_logic.Refused as refusal:
        return _refused(refusal.status, str(refusal))
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as error:
        logger.info("inbox: activity %s ignored, not understood (%s)", str(activity.get("id"))[:200], error)
        outcome = "ignored"
    logger.info("inbox: %s from %s: %s", activity.get("type"), signer.uri if signer else "?", outcome)
    return HttpResponse(status=202)


AVATAR_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
AVATAR_CACHE_SECONDS = 24 * 3600


@get_view
def remote_avatar(request, actor_id: int):
    """A remote actor's avatar, served from here (the pages' Content-Security-Policy loads images
    from this site only): fetched once through the guarded client, kept a day in the cache; its
    identicon when it has none or it cannot be had (a bad type, too big, the server down)."""
    actor = RemoteActor.objects.filter(pk=actor_id).values("icon_url", "handle", "uri").first()
    if actor is None:
        return error_response(404, f"There is no remote actor {actor_id}.")
    key = f"federation:avatar:{actor_id}:{hashlib.sha256(actor['icon_url'].encode()).hexdigest()[:16]}"
    kept = cache.get(key)
    if kept is None:
        kept = ("", b"")
        if actor["icon_url"]:
            try:
                answer = http.request("GET", actor["icon_url"], headers={"Accept": ", ".join(sorted(AVATAR_TYPES))})
                media_type = answer.headers.get("content-type", "").split(";")[0].strip().lower()
                if answer.status == 200 and media_type in AVATAR_TYPES:
                    kept = (media_type, answer.body)
            except http.FetchFailed:
                pass
        cache.set(key, kept, AVATAR_CACHE_SECONDS)
    media_type, data = kept
    if not media_type:
        media_type, data = "image/svg+xml", identicon_svg(actor["handle"] or actor["uri"]).encode()
    response = HttpResponse(data, content_type=media_type)
    response["Cache-Control"] = "public, max-age=3600"
    response["X-Content-Type-Options"] = "nosniff"
    return response
