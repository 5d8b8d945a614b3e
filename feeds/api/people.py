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
from feeds.services import accounts, exports, follows, safety
from social import api as account_api, services as people
from social.api import Email
from social.rules import EMAIL_WORDS, PASSWORD_LENGTH, USERNAME_PATTERN, USERNAME_WORDS
from social.selectors import blocks_list, mutes_list, user_get_by_name
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


class SignUp(Strict):
    pattern_messages: ClassVar[dict[str, str]] = {
        "username": f"must be {USERNAME_WORDS}",
        "email": f"must be {EMAIL_WORDS}",
    }

    username: Annotated[StrictStr, Field(pattern=USERNAME_PATTERN)]
    password: Annotated[Text, Field(min_length=PASSWORD_LENGTH[0], max_length=PASSWORD_LENGTH[1])]
    email: Email = ""  # optional: only to reset a forgotten password, once confirmed by its link


def users_create(request):
    people.auth_attempt(address=client_address(request))
    data = validate(SignUp, parse_json_object(request))
    user = accounts.account_create(username=data.username, password=data.password, email=data.email)
    people.address_check(user=user, base_url=request.build_absolute_uri("/"))
    return JsonResponse({"id": user.pk, "username": user.username}, status=201)


@login_required
def follow_put(request, username: str):
    followee = user_get_by_name(username)
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    follows.follow_create(follower=request.api_user, followee=followee)
    return HttpResponse(status=204)


@login_required
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
def me_delete(request):
    data = validate(AccountDelete, parse_json_object(request))
    people.auth_attempt(address=client_address(request))  # a password guess, counted as a log-in
    accounts.account_delete(user=request.api_user, password=data.password)
    return HttpResponse(status=204)


@login_required
def export_post(request):
    if request.body:  # it takes no fields, but a body sent is read: a broken one is a 400
        validate(ExportStart, parse_json_object(request))
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    return JsonResponse(exports.export_answer(exports.export_start(user=request.api_user)), status=202)


@login_required
def export_read(request, export_id: int):
    return exports.export_answer(exports.export_get(user=request.api_user, export_id=export_id))


@login_required
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


def _toward(action: str):
    """The PUT or DELETE of /users/{username}/block or /mute: ``action`` of
    feeds.services.safety.ACTIONS, counted as a write, 204."""

    @login_required
    def handler(request, username: str):
        other = user_get_by_name(username)
        write_attempt(user_id=request.api_user.pk, address=client_address(request))
        safety.act(action, actor=request.api_user, other=other)
        return HttpResponse(status=204)

    return handler


@login_required
def my_blocks(request):
    return {"items": blocks_list(request.api_user)}


@login_required
def my_mutes(request):
    return {"items": mutes_list(request.api_user)}


@login_required
def reading(request):
    board_ids = board_ids_param(request.GET.get("ids", ""), name="ids", most=MAX_READING_IDS)
    return selectors.reading_answer(request.api_user, board_ids)


def popular(request):
    scope = request.GET.get("scope", "all")
    if scope not in selectors.POPULAR_SCOPES:
        raise ApiError(
            400,
            f"scope must be {', '.join(selectors.POPULAR_SCOPES[:-1])} or {selectors.POPULAR_SCOPES[-1]}; "
            f"it was {scope[:40]!r}.",
        )
    sort = request.GET.get("sort", selectors.POPULAR_SORTS[0])
    if sort not in selectors.POPULAR_SORTS:
        raise ApiError(400, f"sort must be {' or '.join(selectors.POPULAR_SORTS)}; it was {sort[:40]!r}.")
    if scope == "following" and request.api_user is None:
        raise ApiError(401, "Sign in to see what the people you follow read: send 'Authorization: Bearer <token>'.")
    page = paging(request)
    return selectors.popular_list(
        scope=scope, sort=sort, offset=page["offset"], limit=page["limit"], viewer=request.api_user
    )


users = endpoint(POST=users_create)
# /api/v1/me: social's reading and settings, and deleting the account (feeds: its boards leave every feed)
me_view = endpoint(GET=account_api.me, PATCH=account_api.me_patch, DELETE=me_delete)
follow = endpoint(PUT=follow_put, DELETE=follow_delete)
block = endpoint(PUT=_toward("block"), DELETE=_toward("unblock"))
mute = endpoint(PUT=_toward("mute"), DELETE=_toward("unmute"))
blocks_view = endpoint(GET=my_blocks)
export_view = endpoint(POST=export_post)
export_item = endpoint(GET=export_read)
export_file = endpoint(GET=export_download)
mutes_view = endpoint(GET=my_mutes)
reading_view = endpoint(GET=reading)
popular_view = endpoint(GET=popular)
