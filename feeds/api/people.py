"""API: signing up, following someone, social reading and popular boards (docs/api.md, "Accounts
and auth", "Follow graph", "Social reading"): social's accounts, graph and read sets joined
with the feeds and the boards."""

from typing import Annotated, ClassVar

from django.http import FileResponse, HttpResponse, JsonResponse
from pydantic import Field, StrictStr

from feeds import selectors
from feeds.export import export_path
from feeds.models import Export
from feeds.rules import PAGE_IDS_MAX
from feeds.selectors import POPULAR_SCOPES, POPULAR_SORTS, PopularPage
from feeds.services import accounts, exports, follows, safety
from feeds.services.exports import ExportStatus
from social import api as account_api, services as people
from social.api import USERNAME, Email
from social.rules import EMAIL_WORDS, PASSWORD_LENGTH, USERNAME_PATTERN, USERNAME_WORDS
from social.selectors import People, Person, blocks_list, mutes_list, user_get_by_name
from ugcsite.platform.apidoc import PAGING, documented, id_path, ids_query, query_param
from ugcsite.platform.http import (
    ApiError,
    Strict,
    Text,
    board_ids_param,
    client_address,
    endpoint,
    login_required,
    paging,
    parse_json_object,
    validate,
)
from ugcsite.platform.ratelimits import write_attempt

MAX_READING_IDS = PAGE_IDS_MAX
EXPORT_ID = id_path("export_id", "an archive of the caller's; anyone else's is a 404")


class SignUp(Strict):
    pattern_messages: ClassVar[dict[str, str]] = {
        "username": f"must be {USERNAME_WORDS}",
        "email": f"must be {EMAIL_WORDS}",
    }

    username: Annotated[StrictStr, Field(pattern=USERNAME_PATTERN)]
    password: Annotated[Text, Field(min_length=PASSWORD_LENGTH[0], max_length=PASSWORD_LENGTH[1])]
    email: Email = ""  # optional: only to reset a forgotten password, once confirmed by its link


@documented("Sign up", {201: ("created", Person)}, body=SignUp, errors=(400, 409, 413, 429))
def users_create(request):
    people.auth_attempt(address=client_address(request))
    data = validate(SignUp, parse_json_object(request))
    user = accounts.account_create(username=data.username, password=data.password, email=data.email)
    people.address_check(user=user, base_url=request.build_absolute_uri("/"))
    return JsonResponse(Person(id=user.pk, username=user.username), status=201)


@login_required
@documented("Follow (idempotent); 403 when either blocks the other", {204: "following"}, errors=(400, 401, 403, 404))
def follow_put(request, username: str):
    followee = user_get_by_name(username)
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    follows.follow_create(follower=request.api_user, followee=followee)
    return HttpResponse(status=204)


@login_required
@documented("Unfollow (idempotent)", {204: "not following"}, errors=(401, 404))
def follow_delete(request, username: str):
    followee = user_get_by_name(username)
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    follows.follow_delete(follower=request.api_user, followee=followee)
    return HttpResponse(status=204)


class ExportStart(Strict):
    """``POST /api/v1/me/export`` takes no fields: no body, or ``{}``."""


class AccountDelete(Strict):
    password: Annotated[Text, Field(min_length=1, max_length=PASSWORD_LENGTH[1])]


@login_required
@documented(
    "Delete the caller's account, confirmed by its password: sign-in, tokens and sessions end now; boards leave "
    "every feed and every row and key goes, in the background",
    {204: "deleted"},
    body=AccountDelete,
    errors=(400, 401, 403, 413, 429),
)
def me_delete(request):
    data = validate(AccountDelete, parse_json_object(request))
    people.auth_attempt(address=client_address(request))  # a password guess, counted as a log-in
    accounts.account_delete(user=request.api_user, password=data.password)
    return HttpResponse(status=204)


@login_required
@documented(
    "Start an archive of the caller's data (or get the one under way): a zip of the profile, every board as JSON "
    "and SVG, follows, reads and notifications",
    {202: ("started", ExportStatus)},
    errors=(401, 429),
)
def export_post(request):
    if request.body:  # it takes no fields, but a body sent is read: a broken one is a 400
        validate(ExportStart, parse_json_object(request))
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    return JsonResponse(exports.export_answer(exports.export_start(user=request.api_user)), status=202)


@login_required
@documented(
    "Where an archive stands (progress 0-100), and its address once ready",
    {200: ("the archive", ExportStatus)},
    errors=(401, 404),
)
def export_read(request, export_id: int):
    return exports.export_answer(exports.export_get(user=request.api_user, export_id=export_id))


@login_required
@documented(
    "The archive itself, to its owner alone, for a day after it is ready",
    {200: ("the zip", {"type": "string", "format": "binary"}, "application/zip")},
    errors=(401, 404),
)
def export_download(request, export_id: int):
    archive = exports.export_get(user=request.api_user, export_id=export_id)
    if archive.status != Export.Status.READY:
        raise ApiError(
            404, f"Export {export_id} is not ready yet ({archive.status}, {archive.progress}%): ask again soon."
        )
    response = FileResponse(
        export_path(archive).open("rb"), as_attachment=True, filename=archive.file_name, content_type="application/zip"
    )
    response["Cache-Control"] = "private, no-store"
    return response


def _toward(action: str, summary: str, done: str):
    """The PUT or DELETE of /users/{username}/block or /mute: ``action`` of
    feeds.services.safety.ACTIONS, counted as a write, 204 (``done``)."""

    @login_required
    @documented(summary, {204: done}, errors=(400, 401, 404, 429))
    def handler(request, username: str):
        other = user_get_by_name(username)
        write_attempt(user_id=request.api_user.pk, address=client_address(request))
        safety.act(action, actor=request.api_user, other=other)
        return HttpResponse(status=204)

    return handler


@login_required
@documented("The people the caller blocks, the latest first", {200: ("people", People)}, errors=(401,))
def my_blocks(request):
    return People(items=blocks_list(request.api_user))


@login_required
@documented("The people the caller mutes, the latest first", {200: ("people", People)}, errors=(401,))
def my_mutes(request):
    return People(items=mutes_list(request.api_user))


@login_required
@documented(
    "Which of the people I follow read these boards (last 30 days)",
    {200: ("board id -> usernames", dict[str, list[str]])},
    parameters=(ids_query("ids", MAX_READING_IDS),),
    errors=(400, 401),
)
def reading(request):
    board_ids = board_ids_param(request.GET.get("ids", ""), name="ids", most=MAX_READING_IDS)
    return selectors.reading_answer(request.api_user, board_ids)


@documented(
    "Popular boards by views or likes: all time, trending (24 h) or among the people I follow (30 days)",
    {200: ("most read first", PopularPage)},
    parameters=(
        *PAGING,
        query_param(
            "scope",
            {"type": "string", "enum": list(POPULAR_SCOPES), "default": POPULAR_SCOPES[0]},
            "following needs a signed-in caller",
        ),
        query_param(
            "sort",
            {"type": "string", "enum": list(POPULAR_SORTS), "default": POPULAR_SORTS[0]},
            "views: each item has reads; likes: each item has likes",
        ),
    ),
    errors=(400, 401),
)
def popular(request):
    scope = request.GET.get("scope", POPULAR_SCOPES[0])
    if scope not in POPULAR_SCOPES:
        raise ApiError(
            400,
            f"scope must be {', '.join(POPULAR_SCOPES[:-1])} or {POPULAR_SCOPES[-1]}; it was {scope[:40]!r}.",
        )
    sort = request.GET.get("sort", POPULAR_SORTS[0])
    if sort not in POPULAR_SORTS:
        raise ApiError(400, f"sort must be {' or '.join(POPULAR_SORTS)}; it was {sort[:40]!r}.")
    if scope == "following" and request.api_user is None:
        raise ApiError(401, "Sign in to see what the people you follow read: send 'Authorization: Bearer <token>'.")
    page = paging(request)
    return selectors.popular_list(
        scope=scope, sort=sort, offset=page["offset"], limit=page["limit"], viewer=request.api_user
    )


users = endpoint(POST=users_create)
# /api/v1/me: social's reading and settings, and deleting the account (feeds: its boards leave every feed)
me_view = endpoint(GET=account_api.me, PATCH=account_api.me_patch, DELETE=me_delete)
follow = endpoint(PUT=follow_put, DELETE=follow_delete, parameters=(USERNAME,))
block = endpoint(
    PUT=_toward(
        "block",
        "Block (idempotent): follows end both ways, neither sees the other's boards, they get 404 for your profile "
        "and boards",
        "blocked",
    ),
    DELETE=_toward("unblock", "Unblock (idempotent); no follow comes back", "not blocked"),
    parameters=(USERNAME,),
)
mute = endpoint(
    PUT=_toward(
        "mute", "Mute (idempotent): their boards and notifications leave your lists; they are not told", "muted"
    ),
    DELETE=_toward("unmute", "Unmute (idempotent): everything comes back", "not muted"),
    parameters=(USERNAME,),
)
blocks_view = endpoint(GET=my_blocks)
export_view = endpoint(POST=export_post)
export_item = endpoint(GET=export_read, parameters=(EXPORT_ID,))
export_file = endpoint(GET=export_download, parameters=(EXPORT_ID,))
mutes_view = endpoint(GET=my_mutes)
reading_view = endpoint(GET=reading)
popular_view = endpoint(GET=popular)
