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


users = endpoint(POST=users_create)
profile = endpoint(GET=user_profile)
follow = endpoint(PUT=follow_put, DELETE=follow_delete)
followers_view = endpoint(GET=followers)
following_view = endpoint(GET=following)
tokens = endpoint(POST=tokens_create)
me_view = endpoint(GET=me)
