"""A token stops working on the next request however it goes (API.md, "Operations"): deleted
(DELETE /api/v1/tokens/current, the admin, any ORM delete), expired, or its user suspended or
given a new password, even while the token is cached in Redis."""

import time
from datetime import timedelta

import pytest
from django.contrib.auth.hashers import make_password
from django.utils import timezone

from social import keys, token_cache, tokens
from social.models import ApiToken, User
from ugcsite.testing import ApiClient, assert_problem, with_second_factor

pytestmark = pytest.mark.django_db

ME = "/api/v1/me"
CURRENT = "/api/v1/tokens/current"
PASSWORD = "password123"


def cached_client(api, username: str) -> ApiClient:
    """A signed-in client whose token is in the Redis cache (one request made with it)."""
    client = api.as_user(username)
    assert client.get(ME).status_code == 200
    cached = token_cache.lookup(
        ApiToken.hash_key(client.token), now=time.time(), owner=tokens.token_owner(client.token)
    )
    assert cached == (True, client.get(ME).json()["id"])
    return client


def row(client: ApiClient) -> ApiToken:
    return ApiToken.objects.get(key_hash=ApiToken.hash_key(client.token))


def test_a_token_deleted_with_the_orm_stops_on_the_next_request(api):
    alice = cached_client(api, "alice")
    row(alice).delete()
    assert_problem(alice.get(ME), 401)


def test_tokens_deleted_by_a_queryset_stop_on_the_next_request(api):
    alice, alice_too, bob = cached_client(api, "alice"), cached_client(api, "alice"), cached_client(api, "bob")
    ApiToken.objects.filter(user__username="alice").delete()
    assert_problem(alice.get(ME), 401)
    assert_problem(alice_too.get(ME), 401)
    assert bob.get(ME).status_code == 200


@pytest.mark.parametrize("how", ["action", "delete-page"])
def test_a_token_deleted_in_the_admin_stops_on_the_next_request(api, client, how):
    alice, bob = cached_client(api, "alice"), cached_client(api, "bob")
    client.force_login(with_second_factor(User.objects.create_superuser("staffer", password=PASSWORD)))
    if how == "action":
        response = client.post(
            "/admin/social/apitoken/", {"action": "delete_selected", "_selected_action": [row(alice).pk], "post": "yes"}
        )
    else:
        response = client.post(f"/admin/social/apitoken/{row(alice).pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert_problem(alice.get(ME), 401)
    assert bob.get(ME).status_code == 200


def test_an_expired_token_is_refused_even_while_cached(api):
    alice = cached_client(api, "alice")
    expires = row(alice).expires_at.timestamp()
    user_id = alice.get(ME).json()["id"]
    assert tokens.token_user_id(alice.token, now=expires - 1) == user_id
    assert tokens.token_user_id(alice.token, now=expires + 1) is None


def test_the_cache_never_outlives_the_token(api, redis_data):
    alice = cached_client(api, "alice")
    token = row(alice)
    token.expires_at = timezone.now() + timedelta(seconds=1.5)
    token.save()  # a token changed in place is read afresh

    assert alice.get(ME).status_code == 200
    assert 0 < redis_data.pttl(keys.token_user(token.key_hash, token.user_id)) <= 1500
    time.sleep(1.6)
    assert_problem(alice.get(ME), 401)


def test_a_fill_racing_a_revocation_cannot_bring_the_token_back(api):
    """A request that read the row before the delete committed caches it only after the
    revocation's tombstone: SET NX leaves the tombstone in place."""
    alice = cached_client(api, "alice")
    token = row(alice)
    ApiToken.objects.filter(pk=token.pk).update(expires_at=token.expires_at)  # no signal: still cached
    token_cache.revoke([token.key_hash], owner=token.user_id)
    expires = token.expires_at.timestamp()
    token_cache.remember(token.key_hash, user_id=token.user_id, expires=expires, now=time.time(), owner=token.user_id)
    assert_problem(alice.get(ME), 401)
    assert_problem(alice.get("/api/v1/feed"), 401)  # the feed's one-call check reads the same entry


def test_a_new_password_ends_every_token_of_the_user(api):
    alice, alice_too, bob = cached_client(api, "alice"), cached_client(api, "alice"), cached_client(api, "bob")
    user = User.objects.get(username="alice")
    user.set_password("a new password")
    user.save()
    assert_problem(alice.get(ME), 401)
    assert_problem(alice_too.get(ME), 401)
    assert bob.get(ME).status_code == 200
    assert not ApiToken.objects.filter(user=user).exists()
    assert api.post("/api/v1/tokens", {"username": "alice", "password": "a new password"}).status_code == 201


def test_a_password_hash_upgraded_at_log_in_is_no_new_password(api):
    alice = cached_client(api, "alice")
    weak = make_password(PASSWORD, salt="ab", hasher="md5")  # a salt too short: Django re-hashes it
    User.objects.filter(username="alice").update(password=weak)

    assert api.post("/api/v1/tokens", {"username": "alice", "password": PASSWORD}).status_code == 201

    assert User.objects.get(username="alice").password != weak  # upgraded at log-in
    assert alice.get(ME).status_code == 200


def test_a_suspension_through_the_user_form_ends_every_token(api):
    alice = cached_client(api, "alice")
    user = User.objects.get(username="alice")
    user.is_active = False
    user.save()
    assert_problem(alice.get(ME), 401)
    user.is_active = True
    user.save()
    assert_problem(alice.get(ME), 401)  # lifting it brings no token back


# --- DELETE /api/v1/tokens/current ----------------------------------------------------------------


def test_deleting_the_current_token_ends_it_at_once_and_no_other(api):
    alice, alice_too = cached_client(api, "alice"), cached_client(api, "alice")

    response = alice.delete(CURRENT)

    assert response.status_code == 204 and response.content == b""
    assert_problem(alice.get(ME), 401)
    assert_problem(alice.delete(CURRENT), 401)
    assert alice_too.get(ME).status_code == 200
    assert ApiToken.objects.filter(user__username="alice").count() == 1


def test_deleting_the_current_token_needs_one(api, client):
    assert_problem(api.delete(CURRENT), 401)
    assert_problem(ApiClient(api.client.__class__(), "not-a-token").delete(CURRENT), 401)
    client.force_login(User.objects.create_user("alice", password=PASSWORD))
    body = assert_problem(client.delete(CURRENT), 401)  # a session has no token to end
    assert "Bearer" in body["detail"]


@pytest.mark.parametrize("method", ["get", "post", "put", "patch"])
def test_the_current_token_answers_only_delete(api, method):
    alice = api.as_user("alice")
    response = getattr(alice, method)(CURRENT)
    assert_problem(response, 405)
    assert response["Allow"] == "DELETE"
    assert alice.get(ME).status_code == 200
