"""A feed read by a bearer token that names its owner is one Redis round trip: the token's
cache entry, the read limits and the page are checked, counted and read by one script call in
the reader's slot (social.limits.read_gate, timeline_page.lua). Revocation stays immediate,
the limits keep their sliding window, and tokens of the older form still work the longer way."""

import pytest
from redis.connection import AbstractConnection

from feeds.services import activity
from social import tokens
from social.models import ApiToken, User
from ugcsite.platform import ratelimits
from ugcsite.testing import ApiClient, assert_problem

pytestmark = pytest.mark.django_db

FEED = "/api/v1/feed"
DOC = {"width": 100, "height": 100, "background": "#ffffff", "elements": []}
MINUTE_END = 1_796_000_040.0  # a minute's end (as ugcsite/tests/test_rate_window.py)


@pytest.fixture
def sends(monkeypatch):
    """Every command or pipeline sent to any Redis (the data one, the plain one), as it happens."""
    sent = []
    original = AbstractConnection.send_packed_command
    monkeypatch.setattr(
        AbstractConnection,
        "send_packed_command",
        lambda self, command, check_health=True: sent.append(1) or original(self, command, check_health),
    )
    return sent


class Clock:
    def __init__(self, now: float):
        self.now = now

    def time(self) -> float:
        return self.now


def user_id(client: ApiClient) -> int:
    return client.get("/api/v1/me").json()["id"]


def test_new_tokens_name_their_owner(api):
    alice = api.as_user("alice")
    owner, _, secret = alice.token.partition(".")
    assert int(owner) == user_id(alice) == tokens.token_owner(alice.token) and len(secret) >= 40
    assert tokens.token_owner(secret) is None  # the older form names no one


def test_a_signed_in_feed_read_is_one_round_trip(api, run, sends, settings):
    settings.RATE_LIMIT_READS_PER_MINUTE, settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE = 100, 1000
    if settings.REDIS_CLUSTER:
        settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE = 0  # the address's slot is another: see below
    alice, bob = api.as_user("alice"), api.as_user("bob")
    alice_id = user_id(alice)
    assert run(alice.put, "/api/v1/users/bob/follow").status_code == 204
    assert run(bob.post, "/api/v1/boards", {"title": "a board", "kind": "sketch", "doc": DOC}).status_code == 201
    assert len(alice.get(FEED).json()["items"]) == 1  # fills the token's cache entry (the longer way)
    sends.clear()
    assert len(alice.get(FEED).json()["items"]) == 1
    request = len(sends)
    activity.home_feed_read(user_id=alice_id, offset=0, before=None, limit=20)
    sends.clear()
    activity.home_feed_read(user_id=alice_id, offset=0, before=None, limit=20)
    assert request == len(sends)  # the token and the limits cost no round trip of their own
    if not settings.REDIS_CLUSTER:
        assert request == 1


def test_on_a_cluster_the_address_limit_is_one_more_call_and_still_counts(api, sends, settings):
    settings.RATE_LIMIT_READS_PER_MINUTE, settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE = 0, 3
    alice = api.as_user("alice")
    codes = [alice.get(FEED).status_code for _ in range(3)]
    sends.clear()
    body = assert_problem(alice.get(FEED), 429)
    assert codes == [200] * 3 and "from this address" in body["detail"]
    assert len(sends) == (2 if settings.REDIS_CLUSTER else 1)


def test_revoking_a_cached_token_stops_the_feed_at_once(api):
    alice, alice_too, bob = api.as_user("alice"), api.as_user("alice"), api.as_user("bob")
    for client in (alice, alice_too, bob):
        assert client.get(FEED).status_code == 200 and client.get(FEED).status_code == 200  # cached
    assert alice.delete("/api/v1/tokens/current").status_code == 204
    assert_problem(alice.get(FEED), 401)
    assert alice_too.get(FEED).status_code == 200
    ApiToken.objects.get(key_hash=ApiToken.hash_key(alice_too.token)).delete()  # the ORM, the admin
    assert_problem(alice_too.get(FEED), 401)
    user = User.objects.get(username="bob")
    user.is_active = False  # a suspension ends every token
    user.save()
    assert_problem(bob.get(FEED), 401)


def test_a_cached_token_past_its_expiry_is_refused_by_the_feed(api, monkeypatch):
    alice = api.as_user("alice")
    assert alice.get(FEED).status_code == 200  # cached, with its expiry
    expires = ApiToken.objects.get(key_hash=ApiToken.hash_key(alice.token)).expires_at.timestamp()
    monkeypatch.setattr(ratelimits, "time", Clock(expires - 1))
    assert alice.get(FEED).status_code == 200
    monkeypatch.setattr(ratelimits, "time", Clock(expires + 1))
    assert_problem(alice.get(FEED), 401)


def test_a_token_of_the_older_form_still_reads_and_is_revoked(api):
    alice = api.as_user("alice")
    user = User.objects.get(username="alice")
    key = ApiToken.new_key()  # no owner in it: a token made before tokens named theirs
    ApiToken.objects.create(
        user=user,
        key_hash=ApiToken.hash_key(key),
        expires_at=ApiToken.objects.get(key_hash=ApiToken.hash_key(alice.token)).expires_at,
    )
    old = ApiClient(api.client.__class__(), key)
    assert [old.get(FEED).status_code for _ in range(3)] == [200] * 3
    assert old.get("/api/v1/me").json()["username"] == "alice"
    assert old.delete("/api/v1/tokens/current").status_code == 204
    assert_problem(old.get(FEED), 401)
    assert alice.get(FEED).status_code == 200


def test_a_token_that_names_another_person_is_refused(api):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    assert alice.get(FEED).status_code == 200 and bob.get(FEED).status_code == 200  # both cached
    _, _, secret = alice.token.partition(".")
    forged = ApiClient(api.client.__class__(), f"{user_id(bob)}.{secret}")
    assert_problem(forged.get(FEED), 401)
    assert_problem(forged.get(FEED), 401)
    assert_problem(forged.get("/api/v1/me"), 401)


def test_the_feed_counts_the_person_and_the_address(api, settings):
    settings.RATE_LIMIT_READS_PER_MINUTE, settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE = 3, 0
    alice, bob = api.as_user("alice"), api.as_user("bob")
    assert [alice.get(FEED).status_code for _ in range(3)] == [200] * 3
    response = alice.get(FEED)
    body = assert_problem(response, 429)
    assert "reads from your account" in body["detail"] and 0 < int(response["Retry-After"]) <= 61
    assert_problem(alice.get("/api/v1/me"), 429)  # one count, whichever way a read goes
    assert bob.get(FEED).status_code == 200

    settings.RATE_LIMIT_READS_PER_MINUTE, settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE = 0, 4
    carol = api.as_user("carol")
    assert [api.get("/api/v1/discover").status_code for _ in range(2)] == [200] * 2  # signed out
    assert [carol.get(FEED).status_code for _ in range(2)] == [200] * 2  # signed in: the same count
    assert "from this address" in assert_problem(carol.get(FEED), 429)["detail"]
    assert "from this address" in assert_problem(api.get("/api/v1/discover"), 429)["detail"]


def test_a_person_past_their_limit_spends_nothing_of_their_address(api, settings):
    settings.RATE_LIMIT_READS_PER_MINUTE, settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE = 2, 4
    alice = api.as_user("alice")
    assert [alice.get(FEED).status_code for _ in range(2)] == [200] * 2
    for _ in range(5):
        assert "your account" in assert_problem(alice.get(FEED), 429)["detail"]
    assert [api.get("/api/v1/discover").status_code for _ in range(2)] == [200] * 2  # 2 + 2 of 4
    assert "from this address" in assert_problem(api.get("/api/v1/discover"), 429)["detail"]


def test_a_burst_of_feed_reads_across_a_minutes_end_gets_429s(api, monkeypatch, settings):
    """limit + 5% sent across a minute's end: the window holds over any 60 seconds (counts in
    fixed minutes let all of it through)."""
    limit = 40
    settings.RATE_LIMIT_READS_PER_MINUTE, settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE = limit, 0
    alice = api.as_user("alice")
    clock = Clock(MINUTE_END - 30)
    monkeypatch.setattr(ratelimits, "time", clock)
    assert alice.get(FEED).status_code == 200  # the token cached: the rest go the one-call way
    codes = []
    for n in range(limit + limit // 20):
        clock.now = MINUTE_END - 1 + n * 0.05  # twenty before the minute's end, the rest after
        codes.append(alice.get(FEED).status_code)
    assert codes == [200] * (limit - 1) + [429] * (limit // 20 + 1)
    clock.now = MINUTE_END + 31  # the first read has left the window, the burst has not
    assert alice.get(FEED).status_code == 200
    assert_problem(alice.get(FEED), 429)


def test_any_other_signed_in_read_checks_the_token_and_the_limits_in_one_call(api, sends, settings):
    settings.RATE_LIMIT_READS_PER_MINUTE, settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE = 100, 1000
    alice = api.as_user("alice")
    user = User.objects.get(username="alice")
    key = ApiToken.new_key()
    ApiToken.objects.create(
        user=user,
        key_hash=ApiToken.hash_key(key),
        expires_at=ApiToken.objects.get(key_hash=ApiToken.hash_key(alice.token)).expires_at,
    )
    old = ApiClient(api.client.__class__(), key)
    counts = {}
    for name, client in (("new", alice), ("old", old)):
        assert client.get("/api/v1/me").status_code == 200  # cached
        sends.clear()
        assert client.get("/api/v1/me").json()["username"] == "alice"
        counts[name] = len(sends)
    assert counts["new"] + 1 == counts["old"]  # the token's own round trip is gone


def test_any_other_signed_in_read_keeps_the_order_and_the_revocation(api, settings):
    settings.RATE_LIMIT_READS_PER_MINUTE, settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE = 2, 0
    alice = api.as_user("alice")
    assert [alice.get("/api/v1/me").status_code for _ in range(2)] == [200] * 2
    response = alice.get("/api/v1/users/nobody-at-all")  # a 429 before the 404
    assert "reads from your account" in assert_problem(response, 429)["detail"]
    assert alice.delete("/api/v1/tokens/current").status_code == 204
    assert_problem(alice.get("/api/v1/me"), 401)  # a 401 before the 429
