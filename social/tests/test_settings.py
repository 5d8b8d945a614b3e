"""Your own settings (API.md, "Search, notifications, your own settings"): PATCH /api/v1/me and
the /settings page; the profile object's display_name and bio."""

import pytest
from django.test import Client

from social.models import User
from social.rules import BIO_MAX, DISPLAY_NAME_MAX
from ugcsite.testing import assert_problem

pytestmark = pytest.mark.django_db

ME = "/api/v1/me"
PASSWORD = "password123"


def test_patch_me_changes_any_of_the_settings_and_answers_the_profile(api):
    alice = api.as_user("alice")

    response = alice.patch(ME, {"display_name": "Alice A.", "bio": "I draw maps.\nAnd cats."})

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["username"], body["display_name"], body["bio"], body["share_reading"]) == (
        "alice",
        "Alice A.",
        "I draw maps.\nAnd cats.",
        False,
    )
    assert alice.patch(ME, {"share_reading": True}).json()["display_name"] == "Alice A."  # the rest kept
    assert alice.get(ME).json()["share_reading"] is True
    assert alice.patch(ME, {}).json() == alice.get(ME).json()
    assert alice.patch(ME, {"display_name": "", "bio": ""}).json()["display_name"] == ""


def test_the_public_profile_shows_name_and_bio_but_not_the_setting(api):
    alice = api.as_user("alice")
    alice.patch(ME, {"display_name": "Alice A.", "bio": "Hi", "share_reading": True})
    profile = api.get("/api/v1/users/ALICE").json()
    assert (profile["display_name"], profile["bio"]) == ("Alice A.", "Hi")
    assert "share_reading" not in profile


def test_the_limits_hold_at_their_edges(api):
    alice = api.as_user("alice")
    assert alice.patch(ME, {"display_name": "é" * DISPLAY_NAME_MAX, "bio": "b" * BIO_MAX}).status_code == 200
    assert_problem(alice.patch(ME, {"display_name": "x" * (DISPLAY_NAME_MAX + 1)}), 400)
    assert_problem(alice.patch(ME, {"bio": "x" * (BIO_MAX + 1)}), 400)
    assert alice.get(ME).json()["display_name"] == "é" * DISPLAY_NAME_MAX


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"display_name": None}, id="name-null"),
        pytest.param({"display_name": 5}, id="name-int"),
        pytest.param({"display_name": ["a"]}, id="name-list"),
        pytest.param({"display_name": "a\u0000b"}, id="name-nul"),
        pytest.param({"bio": None}, id="bio-null"),
        pytest.param({"bio": {"text": "x"}}, id="bio-object"),
        pytest.param({"bio": "\ud800"}, id="bio-lone-surrogate"),
        pytest.param({"share_reading": "yes"}, id="share-string"),
        pytest.param({"share_reading": 1}, id="share-int"),
        pytest.param({"share_reading": None}, id="share-null"),
        pytest.param({"username": "mallory"}, id="unknown-username"),
        pytest.param({"is_staff": True}, id="unknown-is-staff"),
        pytest.param({"share_reading": True, "followers": 5}, id="unknown-with-a-good-one"),
    ],
)
def test_a_bad_patch_is_a_400_and_changes_nothing(api, body):
    alice = api.as_user("alice")
    before = alice.get(ME).json()
    assert_problem(alice.patch(ME, body), 400)
    assert alice.get(ME).json() == before


@pytest.mark.parametrize("raw", ["", "[]", '"x"', "{", "{'bio': 'x'}"])
def test_a_patch_that_is_no_json_object_is_a_400(api, raw):
    assert_problem(api.as_user("alice").patch(ME, raw=raw), 400)


def test_patch_me_needs_a_caller(api):
    assert_problem(api.patch(ME, {"bio": "x"}), 401)
    assert_problem(api.patch(ME, {"unknown": 1}), 401)  # 401 comes before 400


# --- the settings page ----------------------------------------------------------------------------


@pytest.fixture
def alice(run):
    from social import services

    return run(services.user_create, username="alice", password=PASSWORD)


def test_the_settings_page_needs_a_user(client):
    response = client.get("/settings")
    assert response.status_code == 302 and response["Location"] == "/login?next=/settings"


def test_the_settings_page_saves_and_the_header_links_to_it(client, alice):
    client.force_login(alice)
    page = client.get("/")
    assert 'href="/settings"' in page.content.decode()
    form = client.get("/settings")
    html = form.content.decode()
    assert form.status_code == 200 and 'name="share_reading"' in html and 'name="csrfmiddlewaretoken"' in html
    assert "checked" not in html.split('name="share_reading"')[1].split(">")[0]

    response = client.post("/settings", {"display_name": "Alice A.", "bio": "Maps", "share_reading": "on"}, follow=True)

    assert response.redirect_chain == [("/settings", 302)] and b"Your settings are saved." in response.content
    alice.refresh_from_db()
    assert (alice.display_name, alice.bio, alice.share_reading) == ("Alice A.", "Maps", True)
    profile = client.get("/u/alice").content.decode()
    assert "Alice A." in profile and "Maps" in profile
    client.post("/settings", {"display_name": "Alice A.", "bio": "Maps"})  # the box unticked
    alice.refresh_from_db()
    assert alice.share_reading is False


def test_the_settings_page_refuses_what_the_api_refuses(client, alice):
    client.force_login(alice)
    response = client.post("/settings", {"display_name": "x" * (DISPLAY_NAME_MAX + 1), "bio": ""})
    assert response.status_code == 400 and b"field-error" in response.content
    alice.refresh_from_db()
    assert alice.display_name == ""


def test_the_settings_page_checks_the_csrf_token(alice):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    assert browser.post("/settings", {"display_name": "x", "share_reading": "on"}).status_code == 403
    assert User.objects.get(pk=alice.pk).share_reading is False
