"""Reads of the API are limited per signed-in user and per client address (429 with Retry-After
and a detail); each limit is a setting, 0 turns it off; writes and reads count apart."""

import pytest

from ugcsite.testing import assert_problem

pytestmark = pytest.mark.django_db


def test_reads_past_the_limit_per_user_are_429_and_others_still_read(api, settings):
    settings.RATE_LIMIT_READS_PER_MINUTE, settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE = 3, 0
    ann, bob = api.as_user("ann"), api.as_user("bob")
    for _ in range(3):
        assert ann.get("/api/v1/feed").status_code == 200
    response = ann.get("/api/v1/users/bob")
    body = assert_problem(response, 429)
    assert "reads from your account" in body["detail"] and 0 < int(response["Retry-After"]) <= 61
    assert bob.get("/api/v1/feed").status_code == 200  # per user: bob has his own
    assert api.get("/api/v1/discover").status_code == 200  # signed out: no user to count
    assert ann.put("/api/v1/users/bob/follow").status_code == 204  # writes are counted apart


def test_reads_past_the_limit_per_address_are_429_signed_in_or_not(api, settings):
    settings.RATE_LIMIT_READS_PER_MINUTE, settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE = 0, 4
    ann = api.as_user("ann")
    for _ in range(2):
        assert api.get("/api/v1/discover").status_code == 200
        assert ann.get("/api/v1/me").status_code == 200
    assert "from this address" in assert_problem(api.get("/api/v1/discover"), 429)["detail"]
    assert_problem(ann.get("/api/v1/feed"), 429)
    other = api.client.__class__(REMOTE_ADDR="10.0.0.9")
    assert other.get("/api/v1/discover").status_code == 200  # another address has its own count


def test_zero_turns_the_read_limits_off(api, settings):
    settings.RATE_LIMIT_READS_PER_MINUTE = settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE = 0
    ann = api.as_user("ann")
    assert all(ann.get("/api/v1/feed").status_code == 200 for _ in range(30))


def test_every_read_of_the_document_lists_its_429(client):
    paths = client.get("/api/v1/openapi.json").json()["paths"]
    reads = [
        (path, op)
        for path, item in paths.items()
        for method, op in item.items()
        if method == "get" and path != "/api/v1/health"
    ]
    assert reads and all(
        "429" in op["responses"] and "Retry-After" in op["responses"]["429"]["headers"] for _, op in reads
    )
