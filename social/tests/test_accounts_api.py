"""Accounts and auth (API.md, "Accounts and auth"): sign-up, tokens, /me, bad credentials, rate limit."""

import json
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from social import services
from social.models import ApiToken
from ugcsite.testing import ApiClient, assert_problem

pytestmark = pytest.mark.django_db

User = get_user_model()

USERS = "/api/v1/users"
TOKENS = "/api/v1/tokens"
ME = "/api/v1/me"
PASSWORD = "correct horse"


def sign_up(api, username: str, password: str = PASSWORD):
    return api.post(USERS, {"username": username, "password": password})


def token_for(api, username: str, password: str = PASSWORD) -> str:
    response = api.post(TOKENS, {"username": username, "password": password})
    assert response.status_code == 201, response.content
    return response.json()["token"]


def signed_in(api, token: str) -> ApiClient:
    return ApiClient(api.client.__class__(), token)


def small_board() -> dict:
    return {
        "title": "A board",
        "kind": "note",
        "doc": {"width": 100, "height": 100, "background": "#ffffff", "elements": []},
    }


# --- POST /api/v1/users -----------------------------------------------------------------------


def test_sign_up_answers_201_with_id_and_username(api):
    response = sign_up(api, "alice_01")

    assert response.status_code == 201, response.content
    body = response.json()
    user = User.objects.get(username="alice_01")
    assert body == {"id": user.pk, "username": "alice_01"}
    assert isinstance(body["id"], int) and body["id"] > 0
    assert user.check_password(PASSWORD)


def test_sign_up_keeps_the_spelling_given(api):
    response = sign_up(api, "MixedCase_Name")

    assert response.status_code == 201, response.content
    assert response.json()["username"] == "MixedCase_Name"
    assert User.objects.get(pk=response.json()["id"]).username == "MixedCase_Name"


@pytest.mark.parametrize("username", ["abc", "x" * 30], ids=["3-chars", "30-chars"])
def test_sign_up_accepts_usernames_at_the_length_limits(api, username):
    response = sign_up(api, username)

    assert response.status_code == 201, response.content
    assert response.json()["username"] == username


@pytest.mark.parametrize("password", ["p" * 8, "p" * 128], ids=["8-chars", "128-chars"])
def test_sign_up_accepts_passwords_at_the_length_limits(api, password):
    response = sign_up(api, "bob", password)

    assert response.status_code == 201, response.content
    assert token_for(api, "bob", password)


@pytest.mark.parametrize("second", ["alice", "ALICE", "aLiCe"], ids=["same-case", "upper", "mixed"])
def test_sign_up_of_a_taken_name_in_any_case_is_409(api, second):
    assert sign_up(api, "Alice").status_code == 201

    assert_problem(sign_up(api, second, "another password"), 409)
    assert User.objects.filter(username__iexact="alice").count() == 1
    assert User.objects.get(username__iexact="alice").username == "Alice"


SIGN_UP_INVALID = [
    pytest.param({"username": "ab", "password": PASSWORD}, id="username-2-chars"),
    pytest.param({"username": "a" * 31, "password": PASSWORD}, id="username-31-chars"),
    pytest.param({"username": "john doe", "password": PASSWORD}, id="username-space"),
    pytest.param({"username": "john-doe", "password": PASSWORD}, id="username-dash"),
    pytest.param({"username": "jos\u00e9", "password": PASSWORD}, id="username-non-ascii"),
    pytest.param({"username": "john\n", "password": PASSWORD}, id="username-trailing-newline"),
    pytest.param({"username": "", "password": PASSWORD}, id="username-empty"),
    pytest.param({"username": "ali\x00ce", "password": PASSWORD}, id="username-nul"),
    pytest.param({"username": 12345, "password": PASSWORD}, id="username-int"),
    pytest.param({"username": None, "password": PASSWORD}, id="username-null"),
    pytest.param({"username": ["alice"], "password": PASSWORD}, id="username-list"),
    pytest.param({"username": "alice", "password": "p" * 7}, id="password-7-chars"),
    pytest.param({"username": "alice", "password": "p" * 129}, id="password-129-chars"),
    pytest.param({"username": "alice", "password": 12345678}, id="password-int"),
    pytest.param({"username": "alice", "password": None}, id="password-null"),
    pytest.param({"username": "alice", "password": ["p" * 8]}, id="password-list"),
    pytest.param({"password": PASSWORD}, id="username-missing"),
    pytest.param({"username": "alice"}, id="password-missing"),
    pytest.param({}, id="empty-object"),
    pytest.param({"username": "alice", "password": PASSWORD, "is_staff": True}, id="unknown-key"),
]


@pytest.mark.parametrize("body", SIGN_UP_INVALID)
def test_sign_up_with_invalid_fields_is_400(api, body):
    assert_problem(api.post(USERS, body), 400)
    assert User.objects.count() == 0


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(json.dumps([{"username": "alice", "password": PASSWORD}]), id="json-array"),
        pytest.param('"alice"', id="json-string"),
        pytest.param('{"username": "alice", "password": ', id="malformed-json"),
        pytest.param("{'username': 'alice'}", id="single-quotes"),
        pytest.param("", id="empty-body"),
        pytest.param(b'{"username": "al\xffce", "password": "correct horse"}', id="invalid-utf8"),
    ],
)
def test_sign_up_with_a_bad_body_is_400(api, raw):
    assert_problem(api.post(USERS, raw=raw), 400)
    assert User.objects.count() == 0


# --- POST /api/v1/tokens ----------------------------------------------------------------------


def test_token_is_issued_and_works(api):
    user_id = sign_up(api, "alice").json()["id"]

    response = api.post(TOKENS, {"username": "alice", "password": PASSWORD})

    assert response.status_code == 201, response.content
    token = response.json()["token"]
    assert isinstance(token, str) and len(token) >= 20
    me = signed_in(api, token).get(ME)
    assert me.status_code == 200
    assert me.json()["id"] == user_id


def test_two_logins_give_different_tokens(api):
    sign_up(api, "alice")

    first, second = token_for(api, "alice"), token_for(api, "alice")

    assert first != second
    assert signed_in(api, first).get(ME).status_code == 200
    assert signed_in(api, second).get(ME).status_code == 200


@pytest.mark.parametrize("spelling", ["alice", "ALICE", "aLiCe"])
def test_token_login_is_case_insensitive_and_answers_the_stored_spelling(api, spelling):
    sign_up(api, "Alice")

    token = token_for(api, spelling)

    assert signed_in(api, token).get(ME).json()["username"] == "Alice"


def test_token_with_a_wrong_password_is_401(api):
    sign_up(api, "alice")

    assert_problem(api.post(TOKENS, {"username": "alice", "password": "wrong password"}), 401)
    assert ApiToken.objects.count() == 0


def test_token_for_an_unknown_user_is_401(api):
    sign_up(api, "alice")

    assert_problem(api.post(TOKENS, {"username": "nobody", "password": PASSWORD}), 401)
    assert ApiToken.objects.count() == 0


def test_token_for_a_suspended_user_is_401(api):
    sign_up(api, "alice")
    user = User.objects.get(username="alice")
    user.is_active = False
    user.save()  # as the admin's change form does

    assert_problem(api.post(TOKENS, {"username": "alice", "password": PASSWORD}), 401)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"username": 1, "password": PASSWORD}, id="username-int"),
        pytest.param({"username": None, "password": PASSWORD}, id="username-null"),
        pytest.param({"username": "alice", "password": 12345678}, id="password-int"),
        pytest.param({"username": "alice", "password": ["x"]}, id="password-list"),
        pytest.param({"username": "alice"}, id="password-missing"),
        pytest.param({"username": "alice", "password": PASSWORD, "remember": True}, id="unknown-key"),
        pytest.param([{"username": "alice", "password": PASSWORD}], id="json-array"),
    ],
)
def test_token_with_wrong_types_is_400(api, body):
    sign_up(api, "alice")

    assert_problem(api.post(TOKENS, body), 400)
    assert ApiToken.objects.count() == 0


@pytest.mark.parametrize(
    "credentials",
    [
        pytest.param({"username": "ali\x00ce", "password": PASSWORD}, id="username-nul"),
        pytest.param({"username": "ali\ud800ce", "password": PASSWORD}, id="username-lone-surrogate"),
        pytest.param({"username": "alice", "password": "pass\ud800word"}, id="password-lone-surrogate"),
        pytest.param({"username": "alice", "password": "pass\x00word"}, id="password-nul"),
    ],
)
def test_token_with_characters_no_account_can_hold_is_refused_never_a_5xx(api, credentials):
    """Bad input is never a 5xx: such credentials are wrong (401) or invalid (400)."""
    sign_up(api, "alice")

    response = api.post(TOKENS, credentials)  # json.dumps writes \u0000 and \ud800 escapes

    assert response.status_code in (400, 401), response.status_code
    assert_problem(response, response.status_code)
    assert ApiToken.objects.count() == 0


@pytest.mark.parametrize("raw", ["", "{not json"], ids=["empty-body", "malformed-json"])
def test_token_with_a_bad_body_is_400(api, raw):
    assert_problem(api.post(TOKENS, raw=raw), 400)


def forget_cached_tokens():
    """What time does to the token cache: its entries never outlive their token (their TTL is
    at most the time left), so moving a token's expiry into the past is seen as that cache
    entry having expired too."""
    from social.keys import token_user
    from ugcsite.platform.redis import get_redis

    for key_hash, owner in ApiToken.objects.values_list("key_hash", "user_id"):
        get_redis().delete(token_user(key_hash))  # a token of the older form
        get_redis().delete(token_user(key_hash, owner))  # one that names its owner


# --- GET /api/v1/me ---------------------------------------------------------------------------


def test_me_answers_the_callers_profile(api):
    user_id = sign_up(api, "Alice").json()["id"]
    alice = signed_in(api, token_for(api, "alice"))

    response = alice.get(ME)

    assert response.status_code == 200, response.content
    assert response.json() == {
        "id": user_id,
        "username": "Alice",
        "display_name": "",
        "bio": "",
        "followers": 0,
        "following": 0,
        "boards": 0,
        "followed_by_me": False,
        "avatar_url": "/u/Alice/avatar?v=0",
        "share_reading": False,
        "email": "",
        "email_verified": False,
    }


def test_me_counts_the_callers_boards(api):
    sign_up(api, "alice")
    alice = signed_in(api, token_for(api, "alice"))
    for _ in range(2):
        assert alice.post("/api/v1/boards", small_board()).status_code == 201

    assert alice.get(ME).json()["boards"] == 2


def test_me_without_a_token_is_401(api):
    response = api.get(ME)

    assert_problem(response, 401)
    assert response["WWW-Authenticate"].lower().startswith("bearer")


def test_me_with_an_unknown_token_is_401(api):
    sign_up(api, "alice")
    token_for(api, "alice")

    assert_problem(signed_in(api, "not-a-real-token").get(ME), 401)


@pytest.mark.parametrize(
    "header",
    [
        pytest.param("Token {token}", id="wrong-scheme"),
        pytest.param("Basic YWxpY2U6Y29ycmVjdCBob3JzZQ==", id="basic-auth"),
        pytest.param("{token}", id="no-scheme"),
        pytest.param("Bearer", id="scheme-only"),
        pytest.param("Bearer    ", id="scheme-and-spaces"),
        pytest.param("", id="empty"),
    ],
)
def test_me_with_a_malformed_authorization_header_is_401(api, header):
    sign_up(api, "alice")
    token = token_for(api, "alice")

    response = api.get(ME, headers={"Authorization": header.format(token=token)})

    assert_problem(response, 401)


def test_me_with_an_expired_token_is_401(api):
    sign_up(api, "alice")
    token = token_for(api, "alice")
    alice = signed_in(api, token)
    assert alice.get(ME).status_code == 200

    updated = ApiToken.objects.filter(key_hash=ApiToken.hash_key(token)).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    forget_cached_tokens()

    assert updated == 1
    assert_problem(alice.get(ME), 401)


def test_me_of_a_suspended_user_is_401(api):
    sign_up(api, "alice")
    alice = signed_in(api, token_for(api, "alice"))
    assert alice.get(ME).status_code == 200

    user = User.objects.get(username="alice")
    user.is_active = False
    user.save()  # as the admin's change form does

    assert_problem(alice.get(ME), 401)


def test_a_bad_token_is_401_on_a_public_endpoint_too(api):
    sign_up(api, "alice")
    alice = signed_in(api, token_for(api, "alice"))
    board_id = alice.post("/api/v1/boards", small_board()).json()["id"]
    path = f"/api/v1/boards/{board_id}"
    assert api.get(path).status_code == 200  # anyone may read it without a token

    assert_problem(signed_in(api, "bogus-token").get(path), 401)
    assert_problem(api.get(path, headers={"Authorization": "Token whatever"}), 401)


def test_an_expired_token_is_401_on_a_public_endpoint_too(api):
    sign_up(api, "alice")
    token = token_for(api, "alice")
    alice = signed_in(api, token)
    board_id = alice.post("/api/v1/boards", small_board()).json()["id"]
    ApiToken.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    forget_cached_tokens()

    assert_problem(alice.get(f"/api/v1/boards/{board_id}"), 401)


# --- rate limit -------------------------------------------------------------------------------


def test_token_requests_beyond_the_rate_limit_are_429(api, settings):
    settings.RATE_LIMIT_AUTH_PER_MINUTE = 3
    services.user_create(username="alice", password=PASSWORD)
    credentials = {"username": "alice", "password": PASSWORD}

    for _ in range(3):
        assert api.post(TOKENS, credentials).status_code == 201

    response = api.post(TOKENS, credentials)

    assert_problem(response, 429)
    retry_after = response["Retry-After"]
    assert retry_after.isdigit(), retry_after
    assert 1 <= int(retry_after) <= 61  # the window is counted by the second: 60 s and the part begun
    assert ApiToken.objects.count() == 3


def test_sign_ups_count_towards_the_same_rate_limit(api, settings):
    settings.RATE_LIMIT_AUTH_PER_MINUTE = 3
    for name in ("alice", "bob", "carol"):
        assert sign_up(api, name).status_code == 201

    response = sign_up(api, "dave")

    assert_problem(response, 429)
    assert int(response["Retry-After"]) >= 1
    assert not User.objects.filter(username="dave").exists()
    assert_problem(api.post(TOKENS, {"username": "alice", "password": PASSWORD}), 429)


def test_log_ins_to_one_account_are_limited_from_any_address(api, settings):
    settings.RATE_LIMIT_AUTH_PER_MINUTE = 3
    api.post(USERS, {"username": "carol", "password": PASSWORD})
    for n in range(3):  # each from an address of its own: the per-address limit never bites
        response = api.client.post(
            TOKENS,
            {"username": "CAROL", "password": "wrong-password"},
            content_type="application/json",
            REMOTE_ADDR=f"10.0.0.{n + 1}",
        )
        assert response.status_code == 401
    response = api.client.post(
        TOKENS, {"username": "carol", "password": PASSWORD}, content_type="application/json", REMOTE_ADDR="10.0.0.9"
    )
    body = assert_problem(response, 429)
    assert "this account" in body["detail"] and int(response["Retry-After"]) > 0
