"""API: tokens, profiles and follow lists (docs/api.md, "Accounts and auth", "Follow graph").
Signing up, following someone, social reading and popular boards touch feeds: they are in
feeds.api.people."""

from typing import Annotated, ClassVar

from django.conf import settings
from django.contrib.auth import authenticate as password_authenticate
from django.http import HttpResponse, JsonResponse
from pydantic import Field, StrictBool, StrictStr
from typing_extensions import TypedDict

from social import selectors, services, tokens
from social.rules import (
    AVATAR_ACCEPT,
    AVATAR_PIXELS_MAX,
    AVATAR_SIZE,
    BIO_MAX,
    DISPLAY_NAME_MAX,
    EMAIL_MAX,
    EMAIL_PATTERN,
    EMAIL_WORDS,
    OTP_INPUT_MAX,
    RECOVERY_CODE_PATTERN,
    RECOVERY_CODES,
    SESSION_ID_PATTERN,
    USERNAME_PATTERN,
)
from social.selectors import Me, PeoplePage, Profile, Sessions
from ugcsite.platform.apidoc import PAGING, documented, parameter
from ugcsite.platform.http import (
    ApiError,
    Strict,
    Text,
    body_max,
    client_address,
    endpoint,
    login_required,
    paging,
    parse_json_object,
    takes_bytes,
    validate,
)
from ugcsite.platform.ratelimits import write_attempt

Email = Annotated[StrictStr, Field(max_length=EMAIL_MAX, pattern=EMAIL_PATTERN)]

USERNAME = parameter(
    "username",
    "path",
    {"type": "string", "pattern": USERNAME_PATTERN},
    "matched case-insensitively; a name no one can have is a 404",
)
SESSION_ID = parameter(
    "session_id",
    "path",
    {"type": "string", "pattern": SESSION_ID_PATTERN},
    'an id GET /api/v1/me/sessions listed ("s..." a session, "t..." a token); any other is a 404',
)


OtpCode = Annotated[Text, Field(max_length=OTP_INPUT_MAX, description="a one-time code, or a recovery code")]


class Credentials(Strict):
    username: Text
    password: Text
    otp: OtpCode = None


class TwoFactorStart(Strict):
    """POST /api/v1/me/2fa takes no fields: no body, or {}."""


class TwoFactorConfirm(Strict):
    code: OtpCode


class TwoFactorDisable(Strict):
    password: Text
    code: OtpCode


ONE_TIME_CODE_NEEDED = (
    "This account has two-factor sign-in on: send the one-time code your authenticator app shows now "
    "(or an unused recovery code) as 'otp'."
)


class ProfilePatch(Strict):
    """Any of the caller's own settings; a field given as null is a 400 (the types are not optional)."""

    pattern_messages: ClassVar[dict[str, str]] = {"email": f"must be {EMAIL_WORDS}"}

    display_name: Annotated[Text, Field(max_length=DISPLAY_NAME_MAX)] = None
    bio: Annotated[Text, Field(max_length=BIO_MAX)] = None
    share_reading: StrictBool = None
    email: Email = None


class Token(TypedDict):
    token: str


class Enrolment(TypedDict):
    secret: str
    otpauth_uri: str


class RecoveryCodes(TypedDict):
    recovery_codes: Annotated[
        list[Annotated[str, Field(pattern=RECOVERY_CODE_PATTERN)]],
        Field(min_length=RECOVERY_CODES, max_length=RECOVERY_CODES),
    ]


@documented(
    "Get a bearer token; with two-factor on, otp (a code or a recovery code) too, else a 401 saying a one-time "
    "code is needed",
    {201: ("a token", Token)},
    body=Credentials,
    errors=(400, 401, 413, 429),
)
def tokens_create(request):
    services.auth_attempt(address=client_address(request))
    data = validate(Credentials, parse_json_object(request))
    services.login_attempt(account=data.username)
    user = password_authenticate(request, username=data.username, password=data.password)
    if user is None:
        raise ApiError(
            401, selectors.closed_account_words(data.username, data.password) or "The username or password is wrong."
        )
    if not services.second_factor_check(user=user, code=data.otp):
        raise ApiError(401, ONE_TIME_CODE_NEEDED)
    key = services.token_sign_in(user=user, user_agent=request.headers.get("User-Agent", ""))
    return JsonResponse(Token(token=key), status=201)


@documented(
    "Revoke the bearer token of this call (it stops working at once)", {204: "revoked"}, errors=(401,), secured=True
)
def token_current_delete(request):
    """docs/api.md, "Operations": the token this call was made with stops working at once."""
    if request.api_token is None:
        raise ApiError(
            401,
            "Send the token to revoke as 'Authorization: Bearer <token>'; "
            "this call ends a token, not a browser session.",
        )
    tokens.token_delete(key=request.api_token)
    return HttpResponse(status=204)


@login_required
@documented("The caller's profile and own settings", {200: ("profile", Me)}, errors=(401,))
def me(request):
    return selectors.own_profile(request.api_user)


@login_required
@documented(
    "Change any of the caller's own settings", {200: ("profile", Me)}, body=ProfilePatch, errors=(400, 401, 413)
)
def me_patch(request):
    changes = validate(ProfilePatch, parse_json_object(request)).model_dump(exclude_unset=True)
    user = services.profile_update(user=request.api_user, changes=changes, base_url=request.build_absolute_uri("/"))
    return selectors.own_profile(user)


@login_required
@takes_bytes
@documented(
    "Set the caller's picture: the body is the image (PNG, JPEG, GIF or WebP, at most "
    f"{settings.API_MAX_BODY_BYTES // (1024 * 1024)} MiB and {AVATAR_PIXELS_MAX // 1_000_000} million pixels), "
    f"cropped and resized to a {AVATAR_SIZE}-pixel square",
    {200: ("profile", Me)},
    body={media: {"schema": {"type": "string", "format": "binary"}} for media in AVATAR_ACCEPT.split(",")},
    errors=(400, 401, 413, 429),
)
def me_avatar_put(request):
    """The caller's picture: the body is the image's bytes (PNG, JPEG, GIF or WebP, whatever the
    Content-Type says: the decoder decides; the one API write with no JSON body, so no 415),
    resized as on the settings page. At most 2 MiB, as every API body (the settings page takes 5 MB)."""
    write_attempt(user_id=request.api_user.pk, address=client_address(request))  # decoding a picture is work
    return selectors.own_profile(services.avatar_set(user=request.api_user, data=request.body))


@login_required
@documented("Remove the caller's picture (the identicon is shown again)", {200: ("profile", Me)}, errors=(401,))
def me_avatar_delete(request):
    """Back to the identicon."""
    return selectors.own_profile(services.avatar_remove(user=request.api_user))


@login_required
@documented(
    "Start enrolling an authenticator app: a new key and its otpauth:// address (two-factor is not on until "
    "confirmed); 409 when it is on",
    {201: ("enrolment started", Enrolment)},
    body=TwoFactorStart,
    body_required=False,
    errors=(400, 401, 409, 413),
)
def two_factor_start(request):
    if request.body:  # it takes no fields, but a body sent is read: a broken one is a 400
        validate(TwoFactorStart, parse_json_object(request))
    enrolment: Enrolment = services.two_factor_start(user=request.api_user)
    return JsonResponse(enrolment, status=201)


@login_required
@documented(
    "Turn two-factor sign-in on with the first code of the enrolled key; the recovery codes are shown this once",
    {200: ("on", RecoveryCodes)},
    body=TwoFactorConfirm,
    errors=(400, 401, 409, 413, 429),
)
def two_factor_confirm(request):
    data = validate(TwoFactorConfirm, parse_json_object(request))
    return JsonResponse(
        RecoveryCodes(recovery_codes=services.two_factor_confirm(user=request.api_user, code=data.code))
    )


@login_required
@documented(
    "Turn two-factor sign-in off, confirmed by the password and a code (or a recovery code)",
    {204: "off (or already off)"},
    body=TwoFactorDisable,
    errors=(400, 401, 403, 413, 429),
)
def two_factor_disable(request):
    data = validate(TwoFactorDisable, parse_json_object(request))
    services.auth_attempt(address=client_address(request))  # a password guess, counted as a log-in
    services.two_factor_disable(user=request.api_user, password=data.password, code=data.code)
    return HttpResponse(status=204)


def _session_key(request) -> str | None:
    """The browser session of this call, when it was made by session rather than by token."""
    return request.session.session_key if request.api_token is None and hasattr(request, "session") else None


@login_required
@documented(
    "Where the caller is signed in: every browser session and token, the latest used first",
    {200: ("sessions and tokens", Sessions)},
    errors=(401,),
)
def sessions(request):
    return selectors.sessions_list(request.api_user, session_key=_session_key(request), token_key=request.api_token)


@login_required
@documented(
    "End one session or token of the caller's: it is signed out on its next request",
    {204: "ended"},
    errors=(401, 404),
)
def session_delete(request, session_id: str):
    services.session_end(user=request.api_user, session_id=session_id)
    return HttpResponse(status=204)


@documented("A profile", {200: ("profile", Profile)}, errors=(401, 404))
def user_profile(request, username: str):
    return selectors.profile(selectors.user_get_for(username, request.api_user), viewer=request.api_user)


@documented("Followers, newest follow first", {200: ("people", PeoplePage)}, parameters=PAGING, errors=(400, 401, 404))
def followers(request, username: str):
    user = selectors.user_get_for(username, request.api_user)
    page = paging(request)
    return selectors.followers_list(user, offset=page["offset"], limit=page["limit"])


@documented("Followees, newest follow first", {200: ("people", PeoplePage)}, parameters=PAGING, errors=(400, 401, 404))
def following(request, username: str):
    user = selectors.user_get_for(username, request.api_user)
    page = paging(request)
    return selectors.following_list(user, offset=page["offset"], limit=page["limit"])


tokens_view = endpoint(POST=tokens_create)
token_current = endpoint(DELETE=token_current_delete)
# docs/api.md: every API body at most 2 MiB, a picture too (the settings page takes 5 MB); the 413 says "picture".
me_avatar = body_max(settings.API_MAX_BODY_BYTES, "picture")(endpoint(PUT=me_avatar_put, DELETE=me_avatar_delete))
two_factor_view = endpoint(POST=two_factor_start, DELETE=two_factor_disable)
two_factor_confirm_view = endpoint(POST=two_factor_confirm)
sessions_view = endpoint(GET=sessions)
session_view = endpoint(DELETE=session_delete, parameters=(SESSION_ID,))
profile = endpoint(GET=user_profile, parameters=(USERNAME,))
followers_view = endpoint(GET=followers, parameters=(USERNAME,))
following_view = endpoint(GET=following, parameters=(USERNAME,))
