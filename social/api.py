"""API: accounts and tokens (API.md, "Accounts and auth")."""

from typing import Annotated

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.contrib.auth import authenticate as password_authenticate
from pydantic import Field, StrictStr

from feeds.validation import Strict
from social import keys, selectors, services
from ugcsite.api import (
    ApiError, Text, client_address, endpoint, get_user_by_name, login_required, paging, parse_json_object, validate,
)
from ugcsite.redis import get_redis


class SignUp(Strict):
    username: Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9_]{3,30}$")]
    password: Annotated[Text, Field(min_length=8, max_length=128)]


class Credentials(Strict):
    username: Text
    password: Text


def _throttle(request) -> None:
    """At most RATE_LIMIT_AUTH_PER_MINUTE sign-ups and log-ins per client address a minute."""
    key = keys.auth_attempts(client_address(request))
    pipe = get_redis().pipeline(transaction=False)
    pipe.incr(key)
    pipe.expire(key, 60, nx=True)
    pipe.ttl(key)
    attempts, _, ttl = pipe.execute()
    if attempts > settings.RATE_LIMIT_AUTH_PER_MINUTE:
        wait = max(int(ttl), 1)
        raise ApiError(429, f"Too many attempts from this address; try again in {wait} seconds.",
                       headers={"Retry-After": str(wait)})


def users_create(request):
    _throttle(request)
    data = validate(SignUp, parse_json_object(request))
    try:
        user = services.user_create(username=data.username, password=data.password)
    except services.UsernameTaken:
        raise ApiError(409, f"The username {data.username!r} is taken; choose another.") from None

    return JsonResponse({"id": user.pk, "username": user.username}, status=201)


def tokens_create(request):
    _throttle(request)
    data = validate(Credentials, parse_json_object(request))
    user = password_authenticate(request, username=data.username, password=data.password)
    if user is None:
        raise ApiError(401, "The username or password is wrong.")

    return JsonResponse({"token": services.token_create(user=user)}, status=201)


@login_required
def me(request):
    return selectors.profile(request.api_user, viewer=request.api_user)


def user_profile(request, username: str):
    return selectors.profile(get_user_by_name(username), viewer=request.api_user)


@login_required
def follow_put(request, username: str):
    followee = get_user_by_name(username)
    try:
        services.follow_create(follower=request.api_user, followee=followee)
    except services.FollowSelf:
        raise ApiError(400, "You cannot follow yourself.") from None
    return HttpResponse(status=204)


@login_required
def follow_delete(request, username: str):
    services.follow_delete(follower=request.api_user, followee=get_user_by_name(username))
    return HttpResponse(status=204)


def followers(request, username: str):
    user = get_user_by_name(username)
    page = paging(request)
    return selectors.followers_list(user, offset=page["offset"], limit=page["limit"])


def following(request, username: str):
    user = get_user_by_name(username)
    page = paging(request)
    return selectors.following_list(user, offset=page["offset"], limit=page["limit"])


@login_required
def reading(request):
    raw = request.GET.get("ids", "")
    parts = [part.strip() for part in raw.split(",") if part.strip()]
    if not 1 <= len(parts) <= 100:
        raise ApiError(400, "Give ids=1,2,3 with 1 to 100 board ids.")
    if not all(part.isascii() and part.isdigit() and len(part) <= 16 for part in parts):
        raise ApiError(400, "ids must be board ids (whole numbers) separated by commas.")
    board_ids = list(dict.fromkeys(int(part) for part in parts))
    return selectors.reading_answer(request.api_user, board_ids)


def popular(request):
    scope = request.GET.get("scope", "all")
    if scope not in ("all", "following", "trending"):
        raise ApiError(400, f"scope must be all, following or trending; it was {scope[:40]!r}.")
    if scope == "following" and request.api_user is None:
        raise ApiError(401, "Sign in to see what the people you follow read: send 'Authorization: Bearer <token>'.")
    page = paging(request)
    return selectors.popular_list(scope=scope, offset=page["offset"], limit=page["limit"], viewer=request.api_user)


users = endpoint(POST=users_create)
reading_view = endpoint(GET=reading)
popular_view = endpoint(GET=popular)
profile = endpoint(GET=user_profile)
follow = endpoint(PUT=follow_put, DELETE=follow_delete)
followers_view = endpoint(GET=followers)
following_view = endpoint(GET=following)
tokens = endpoint(POST=tokens_create)
me_view = endpoint(GET=me)
