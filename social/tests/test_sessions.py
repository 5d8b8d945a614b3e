"""My sessions and devices (docs/api.md, "Two-factor sign-in and sessions"; issue 41): every
browser session and token listed with "this one", and one ended at once, on its next request,
while the others go on."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from social import services
from ugcsite.testing import ApiClient, assert_problem

pytestmark = pytest.mark.django_db

User = get_user_model()
PASSWORD = "password123"
SESSIONS = "/api/v1/me/sessions"


def browser(username: str, agent: str) -> Client:
    page = Client(headers={"User-Agent": agent})
    assert page.post("/login", {"username": username, "password": PASSWORD}).status_code == 302
    return page


def token_client(api, username: str, agent: str) -> ApiClient:
    response = api.post("/api/v1/tokens", {"username": username, "password": PASSWORD}, headers={"User-Agent": agent})
    assert response.status_code == 201
    return ApiClient(Client(), response.json()["token"])


def listed(client: ApiClient) -> list[dict]:
    response = client.get(SESSIONS)
    assert response.status_code == 200, response.content
    return response.json()["items"]


def test_every_session_and_token_is_listed_with_this_one_marked(api):
    services.user_create(username="alice", password=PASSWORD)
    services.user_create(username="bob", password=PASSWORD)
    laptop, phone = browser("alice", "Firefox laptop"), browser("alice", "Safari phone")
    script = token_client(api, "alice", "curl/8")
    browser("bob", "Bob's browser")
    items = listed(script)
    assert sorted((i["kind"], i["user_agent"]) for i in items) == [
        ("session", "Firefox laptop"),
        ("session", "Safari phone"),
        ("token", "curl/8"),
    ]
    assert [i["user_agent"] for i in items if i["current"]] == ["curl/8"]
    assert all(set(i) == {"id", "kind", "created_at", "last_used_at", "user_agent", "current"} for i in items)
    by_session = ApiClient(phone)
    assert [i["user_agent"] for i in listed(by_session) if i["current"]] == ["Safari phone"]
    assert laptop.get("/settings").status_code == 200
    assert_problem(api.get(SESSIONS), 401)


def test_one_session_ended_is_signed_out_at_once_while_the_others_go_on(api):
    services.user_create(username="carol", password=PASSWORD)
    laptop, phone = browser("carol", "laptop"), browser("carol", "phone")
    script = token_client(api, "carol", "script")
    [phone_id] = [i["id"] for i in listed(script) if i["user_agent"] == "phone"]
    assert script.delete(f"{SESSIONS}/{phone_id}").status_code == 204
    assert phone.get("/settings").status_code == 302  # to the log-in: ended
    assert_problem(ApiClient(phone).get("/api/v1/me"), 401)
    assert laptop.get("/settings").status_code == 200  # the others go on
    assert script.get("/api/v1/me").status_code == 200
    assert phone_id not in [i["id"] for i in listed(script)]
    assert_problem(script.delete(f"{SESSIONS}/{phone_id}"), 404)  # already gone


def test_a_token_ended_stops_on_its_next_request(api):
    services.user_create(username="dave", password=PASSWORD)
    first, second = token_client(api, "dave", "one"), token_client(api, "dave", "two")
    assert first.get("/api/v1/me").status_code == 200  # cached as valid
    [first_id] = [i["id"] for i in listed(second) if i["user_agent"] == "one"]
    assert second.delete(f"{SESSIONS}/{first_id}").status_code == 204
    assert_problem(first.get("/api/v1/me"), 401)
    assert second.get("/api/v1/me").status_code == 200


def test_nobody_ends_anyone_elses_session_and_junk_ids_are_404(api):
    services.user_create(username="erin", password=PASSWORD)
    services.user_create(username="frank", password=PASSWORD)
    erin = token_client(api, "erin", "erin")
    frank = token_client(api, "frank", "frank")
    [erin_id] = [i["id"] for i in listed(erin)]
    for junk in (erin_id, "s0", "s999999999999999999", "t99999999999999999999", "x1", "s-1", "session", "t1.5"):
        assert_problem(frank.delete(f"{SESSIONS}/{junk}"), 404)
    assert erin.get("/api/v1/me").status_code == 200


def test_the_settings_page_lists_sessions_ends_one_and_all_but_this_one(api):
    services.user_create(username="grace", password=PASSWORD)
    here, phone, tablet = browser("grace", "here"), browser("grace", "phone"), browser("grace", "tablet")
    script = token_client(api, "grace", "script")
    page = here.get("/settings").content.decode()
    assert page.count("data-session=") == 4 and page.count("(this one)") == 1
    [phone_id] = [i["id"] for i in listed(script) if i["user_agent"] == "phone"]
    assert here.post("/settings/sessions", {"id": phone_id}).status_code == 302
    assert phone.get("/settings").status_code == 302 and tablet.get("/settings").status_code == 200
    assert here.post("/settings/sessions", {"others": "1"}).status_code == 302
    assert tablet.get("/settings").status_code == 302
    assert_problem(script.get("/api/v1/me"), 401)
    assert here.get("/settings").status_code == 200
    assert here.get("/settings").content.decode().count("data-session=") == 1


def test_passkey_ceremonies_refuse_what_they_did_not_start_with_a_sentence():
    """The browser half is tested with Chromium's virtual authenticator (test_browser_two_factor);
    here, what a client that skips a step or sends junk gets: a 400 saying why, never a 5xx."""
    services.user_create(username="heidi", password=PASSWORD)
    page = browser("heidi", "laptop")
    for path, body in (
        ("/settings/passkeys", {"id": "x"}),  # no registration started
        ("/login/passkey", {"id": "x"}),  # no sign-in started
    ):
        refused = page.post(path, body, content_type="application/json")
        assert refused.status_code == 400 and "press the button again" in refused.json()["detail"]
    options = page.post("/settings/passkeys/options").json()
    assert options["rp"]["id"] == "testserver" and options["authenticatorSelection"]["residentKey"] == "required"
    for junk in (b"not json", b"[1]", b'{"id": "x", "rawId": "x", "response": {}}'):
        page.post("/settings/passkeys/options")
        refused = page.post("/settings/passkeys", junk, content_type="application/json")
        assert refused.status_code == 400 and refused.json()["detail"].startswith("The passkey was not accepted")
    anyone = Client()
    assert anyone.post("/login/passkey/options").json()["userVerification"] == "required"
    for junk in (b'{"rawId": "!!"}', b'{"rawId": "AAAA"}', b"{}"):
        anyone.post("/login/passkey/options")
        refused = anyone.post("/login/passkey", junk, content_type="application/json")
        assert refused.status_code == 400 and "passkey" in refused.json()["detail"]
    assert anyone.get("/settings").status_code == 302  # nobody signed in
