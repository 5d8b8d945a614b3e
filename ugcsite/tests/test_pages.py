"""The pages (API.md, "Pages") through Django's test client: accounts, redirects to log in, error
pages in the site's look, the CSP, follow and delete forms, and the staff actions of the admin.
The real browser runs in test_browser.py."""

import json
import re

import pytest

from feeds.models import Board
from feeds.services import boards as board_services, follows, moderation
from social import services as people_services
from social.models import User
from ugcsite.middleware import CONTENT_SECURITY_POLICY
from ugcsite.testing import with_second_factor

pytestmark = pytest.mark.django_db

DOC = {
    "width": 800,
    "height": 600,
    "background": "#ffffff",
    "elements": [{"type": "path", "color": "#1d2330", "width": 4, "points": [[10, 10], [20.5, 30]]}],
}
PASSWORD = "password123"


@pytest.fixture
def people(run):
    made = {
        name: run(people_services.user_create, username=name, password=PASSWORD)
        for name in ("alice", "bob", "carol", "dave")
    }
    made["staff"] = with_second_factor(
        run(people_services.user_create, username="staffer", password=PASSWORD, is_staff=True)
    )
    return made


def board(run, author, title="A house", **extra):
    fields = {"kind": "sketch", "tags": ["house"], "doc": DOC, **extra}
    return run(board_services.board_create, author=author, title=title, **fields)


def scripts_of(html: str) -> list[str]:
    return re.findall(r"<script\b[^>]*>", html)


def card_ids(html: str) -> list[int]:
    return [int(i) for i in re.findall(r'class="card" data-board-id="(\d+)"', html)]


def assert_no_inline_script(html: str) -> None:
    """Every script is a file (src=...) or data (type=application/json): the CSP allows no other."""
    for tag in scripts_of(html):
        assert "src=" in tag or 'type="application/json"' in tag, tag
    assert not re.search(r"\son[a-z]+=", html), "an inline event handler"
    assert not re.search(r"\sstyle=", html), "an inline style attribute (blocked by style-src 'self')"


# --- signing in ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/new", "/b/123/edit", "/b/123/delete", "/settings"])
def test_pages_that_need_a_user_send_to_login_with_next(client, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"] == f"/login?next={path}"


def test_login_goes_on_to_next_and_takes_any_letter_case(client, people):
    page = client.get("/login?next=/new")
    assert page.status_code == 200 and b'name="csrfmiddlewaretoken"' in page.content
    response = client.post("/login", {"username": "ALICE", "password": PASSWORD, "next": "/new"})
    assert response.status_code == 302 and response["Location"] == "/new"
    editor = client.get("/new")
    assert editor.status_code == 200 and b'id="board-canvas"' in editor.content


def test_login_refuses_a_wrong_password_and_a_foreign_next(client, people):
    response = client.post("/login", {"username": "alice", "password": "wrong-password"})
    assert response.status_code == 400
    assert b"Please enter a correct username and password" in response.content
    response = client.post("/login", {"username": "alice", "password": PASSWORD, "next": "https://evil.example/"})
    assert response.status_code == 302 and response["Location"] == "/"


def test_login_checks_the_csrf_token(people):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    assert strict.post("/login", {"username": "alice", "password": PASSWORD}).status_code == 403


def test_a_suspended_user_cannot_log_in(client, people, run):
    run(moderation.user_suspend, user=people["bob"])
    response = client.post("/login", {"username": "bob", "password": PASSWORD})
    assert response.status_code == 400
    assert "_auth_user_id" not in client.session
    run(moderation.user_unsuspend, user=User.objects.get(username="bob"))
    assert client.post("/login", {"username": "bob", "password": PASSWORD}).status_code == 302


def test_a_session_ends_when_its_user_is_suspended(client, people, run):
    client.force_login(people["bob"])
    assert client.get("/new").status_code == 200
    run(moderation.user_suspend, user=people["bob"])
    assert client.get("/new")["Location"] == "/login?next=/new"


def test_logout_asks_on_get_and_logs_out_on_post(client, people):
    client.force_login(people["alice"])
    page = client.get("/logout")
    assert page.status_code == 200 and b"Log out?" in page.content
    assert "_auth_user_id" in client.session
    response = client.post("/logout")
    assert response.status_code == 302 and response["Location"] == "/"
    assert "_auth_user_id" not in client.session


# --- signing up ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"username": "ab"}, "Use 3–30 letters"),
        ({"username": "no spaces"}, "Use 3–30 letters"),
        ({"username": "x" * 31}, "at most 30 characters"),
        ({"username": "ALICE"}, "That username is taken"),
        ({"password": "short", "password_again": "short"}, "at least 8 characters"),
        ({"password_again": "different-one"}, "The two passwords differ"),
        ({"username": ""}, "This field is required"),
    ],
)
def test_signup_form_errors(client, people, fields, message):
    data = {"username": "newbie", "password": "long-enough", "password_again": "long-enough", **fields}
    response = client.post("/signup", data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not User.objects.filter(username="newbie").exists()
    assert "_auth_user_id" not in client.session


def test_signup_creates_the_account_and_logs_in(client):
    response = client.post(
        "/signup", {"username": "Newbie", "password": "long-enough", "password_again": "long-enough", "next": "/new"}
    )
    assert response.status_code == 302 and response["Location"] == "/new"
    user = User.objects.get(username="Newbie")
    assert int(client.session["_auth_user_id"]) == user.pk
    assert user.check_password("long-enough")


def test_signup_and_login_spend_the_apis_rate_limit(client, settings):
    settings.RATE_LIMIT_AUTH_PER_MINUTE = 2
    for _ in range(2):
        assert client.post("/login", {"username": "nobody", "password": "whatever1"}).status_code == 400
    response = client.post("/signup", {"username": "late", "password": "long-enough", "password_again": "long-enough"})
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert b"Too many attempts" in response.content
    assert not User.objects.filter(username="late").exists()


# --- the look of errors and the CSP ---------------------------------------------------------------


@pytest.mark.parametrize("path", ["/b/42", "/u/nobody", "/u/a%20b", "/no/such/page", "/b/12345678901234567890"])
def test_404_is_a_page_in_the_sites_look(client, path):
    response = client.get(path)
    assert response.status_code == 404
    html = response.content.decode()
    assert 'class="topbar"' in html and "Not found" in html and "site.css" in html
    assert response["Content-Security-Policy"] == CONTENT_SECURITY_POLICY


def test_api_errors_stay_json(client):
    response = client.get("/api/v1/boards/42")
    assert response.status_code == 404 and response.json()["detail"]


def test_someone_elses_editor_is_a_403_page(client, people, run):
    theirs = board(run, people["alice"])
    client.force_login(people["bob"])
    for path in (f"/b/{theirs.pk}/edit", f"/b/{theirs.pk}/delete"):
        response = client.get(path)
        assert response.status_code == 403
        assert b'class="topbar"' in response.content and b"Not allowed" in response.content


def test_every_page_sends_the_csp_and_runs_no_inline_script(client, people, run):
    mine = board(run, people["alice"], title="<script>alert(1)</script>", tags=["x-y"])
    run(follows.follow_create, follower=people["alice"], followee=people["bob"])
    anonymous = [
        "/",
        "/login",
        "/signup",
        f"/b/{mine.pk}",
        "/u/alice",
        "/u/alice/followers",
        "/u/bob/following",
        "/discover",
        "/popular",
        "/nope",
    ]
    signed_in = [
        "/",
        "/new",
        f"/b/{mine.pk}",
        f"/b/{mine.pk}/edit",
        f"/b/{mine.pk}/delete",
        "/u/alice",
        "/u/bob",
        "/logout",
        "/settings",
    ]
    for who, paths in ((None, anonymous), (people["alice"], signed_in)):
        if who:
            client.force_login(who)
        for path in paths:
            response = client.get(path)
            assert response.status_code in (200, 404), path
            assert response["Content-Security-Policy"] == CONTENT_SECURITY_POLICY, path
            html = response.content.decode()
            assert_no_inline_script(html)
            assert "<script>alert(1)</script>" not in html, path


# --- boards -------------------------------------------------------------------------------------


def test_the_editor_embeds_the_drawing_as_json_data(client, people, run):
    doc = {
        **DOC,
        "elements": DOC["elements"]
        + [{"type": "text", "color": "#000000", "size": 20, "x": 5, "y": 50, "text": "</script><b>hi</b>"}],
    }
    mine = board(run, people["alice"], title="Mine", doc=doc, tags=["a", "b-c"], kind="note")
    client.force_login(people["alice"])
    html = client.get(f"/b/{mine.pk}/edit").content.decode()
    data = re.search(r'<script id="doc-data" type="application/json">(.*?)</script>', html, re.S)
    assert data and "</script><b>" not in data.group(1)
    embedded = json.loads(data.group(1))
    assert all(e.pop("id") for e in embedded["elements"])  # the server gave each element an id
    assert embedded == doc
    assert 'value="a, b-c"' in html and '<option value="note" selected>' in html
    assert 'data-save-method="PATCH"' in html and f'data-save-url="/api/v1/boards/{mine.pk}"' in html
    new = client.get("/new").content.decode()
    assert 'data-save-method="POST"' in new and 'id="doc-data"' not in new


def test_a_board_page_shows_the_drawing_and_counts_a_view(client, people, run):
    mine = board(run, people["alice"], title="Sunny", tags=["sun", "house"])
    html = client.get(f"/b/{mine.pk}").content.decode()
    assert f'src="/api/v1/boards/{mine.pk}/preview.svg?v=' in html
    assert "Sunny" in html and "#sun" in html and 'href="/u/alice"' in html and "1 view" in html
    assert "Edit</a>" not in html
    assert "1 view" in client.get(f"/b/{mine.pk}").content.decode()  # the same visitor, the same day
    assert "2 views" in client.get(f"/b/{mine.pk}", headers={"User-Agent": "another browser"}).content.decode()
    client.force_login(people["alice"])
    authors = client.get(f"/b/{mine.pk}").content.decode()
    assert f'href="/b/{mine.pk}/edit"' in authors and "2 views" in authors  # the author's own visit: no view


def test_delete_asks_then_deletes(client, people, run):
    mine = board(run, people["alice"], title="Going away")
    client.force_login(people["alice"])
    confirm = client.get(f"/b/{mine.pk}/delete")
    assert confirm.status_code == 200 and b"cannot be undone" in confirm.content
    assert Board.objects.get(pk=mine.pk).state == Board.State.PUBLISHED
    response = client.post(f"/b/{mine.pk}/delete")
    assert response.status_code == 302 and response["Location"] == "/u/alice"
    assert Board.objects.get(pk=mine.pk).state == Board.State.DELETED
    assert client.get(f"/b/{mine.pk}").status_code == 404


def test_staff_may_delete_anyones_board(client, people, run):
    theirs = board(run, people["alice"])
    client.force_login(people["staff"])
    assert client.post(f"/b/{theirs.pk}/delete").status_code == 302
    assert Board.objects.get(pk=theirs.pk).state == Board.State.DELETED


# --- the feed, the front page, profiles and following ------------------------------------------------


def test_front_page_shows_recent_boards_to_everyone(client, people, run):
    titles = [board(run, people["alice"], title=f"Board {i}").title for i in range(3)]
    html = client.get("/").content.decode()
    assert "Recent boards" in html and "Sign up" in html
    assert list(re.findall(r"(?<=data-slot=\"title\">)Board \d", html))[:3] == titles[::-1]


def test_a_new_user_gets_suggestions_of_people_to_follow(client, people, run):
    for name in ("alice", "bob", "carol"):
        board(run, people[name], title=f"by {name}")
    run(follows.follow_create, follower=people["bob"], followee=people["alice"])
    run(follows.follow_create, follower=people["carol"], followee=people["alice"])
    run(follows.follow_create, follower=people["alice"], followee=people["carol"])
    run(follows.follow_create, follower=people["dave"], followee=people["bob"])
    client.force_login(people["staff"])
    html = client.get("/").content.decode()
    assert "Your feed is empty" in html
    suggested = re.findall(r'class="person-name" href="/u/(\w+)"', html)
    assert suggested == ["alice", "bob", "carol"]  # most followers first; dave has no boards
    client.force_login(people["dave"])
    html = client.get("/").content.decode()
    assert "by bob" in html and "People you might like" in html
    suggested = re.findall(r'class="person-name" href="/u/(\w+)"', html)
    assert suggested == ["alice", "carol"]  # not dave himself, not bob whom he follows


def test_follow_and_unfollow_through_the_profile_page(client, people, run):
    board(run, people["alice"], title="Hello feed")
    client.force_login(people["bob"])
    page = client.get("/u/alice").content.decode()
    assert "data-follow-button" in page and ">Follow<" in page
    with_run = run(client.post, path="/u/alice/follow", data={"action": "follow"})
    assert with_run.status_code == 302 and with_run["Location"] == "/u/alice"
    page = client.get("/u/alice").content.decode()
    assert "Following ✓" in page and '<strong data-count="followers">1</strong>' in page
    feed = client.get("/").content.decode()
    assert "Hello feed" in feed and 'data-source="/api/v1/feed"' in feed
    run(client.post, path="/u/alice/follow", data={"action": "unfollow"})
    assert ">Follow<" in client.get("/u/alice").content.decode()
    assert "Hello feed" not in client.get("/").content.decode()


def test_following_yourself_is_refused_politely(client, people):
    client.force_login(people["alice"])
    response = client.post("/u/alice/follow", {"action": "follow"}, follow=True)
    assert b"You cannot follow yourself" in response.content


def test_profile_uses_the_stored_spelling_and_pages_without_javascript(client, people, run, settings):
    ids = [board(run, people["alice"], title=f"n{i}").pk for i in range(23)]
    assert client.get("/u/ALICE")["Location"] == "/u/alice"
    html = client.get("/u/alice").content.decode()
    assert len(card_ids(html)) == 20
    older = re.search(r'href="\?before=(\d+)"', html).group(1)
    assert int(older) == ids[3]
    rest = client.get(f"/u/alice?before={older}").content.decode()
    assert len(card_ids(rest)) == 3 and "reached the first board" in rest


def test_followers_and_following_lists(client, people, run):
    run(follows.follow_create, follower=people["bob"], followee=people["alice"])
    run(follows.follow_create, follower=people["carol"], followee=people["alice"])
    html = client.get("/u/alice/followers").content.decode()
    assert re.findall(r'class="person-name" href="/u/(\w+)"', html) == ["carol", "bob"]
    assert "bob" in client.get("/u/bob/following").content.decode()
    assert "does not follow anyone yet" in client.get("/u/alice/following").content.decode()


# --- staff actions in the admin ------------------------------------------------------------------


def test_admin_actions_hide_and_unhide_boards(client, people, run):
    shown, other = board(run, people["alice"], title="Rude"), board(run, people["alice"], title="Fine")
    run(follows.follow_create, follower=people["bob"], followee=people["alice"])
    client.force_login(people["staff"])
    response = run(
        client.post,
        path="/admin/feeds/board/",
        data={"action": "hide_boards", "_selected_action": [shown.pk]},
        follow=True,
    )
    assert b"1 board hidden." in response.content
    assert Board.objects.get(pk=shown.pk).state == Board.State.HIDDEN
    assert Board.objects.get(pk=other.pk).state == Board.State.PUBLISHED
    assert client.get(f"/b/{shown.pk}").status_code == 404
    response = run(
        client.post,
        path="/admin/feeds/board/",
        data={"action": "unhide_boards", "_selected_action": [shown.pk, other.pk]},
        follow=True,
    )
    assert b"1 board unhidden. 1 of the 2 selected were not hidden by staff" in response.content
    assert Board.objects.get(pk=shown.pk).state == Board.State.PUBLISHED


def test_admin_actions_suspend_and_restore_users(client, people, run):
    board(run, people["alice"])
    client.force_login(people["staff"])
    response = run(
        client.post,
        path="/admin/social/user/",
        data={"action": "suspend_users", "_selected_action": [people["alice"].pk, people["staff"].pk]},
        follow=True,
    )
    assert b"1 user suspended, 1 board hidden with them." in response.content
    assert b"You cannot suspend yourself" in response.content
    assert not User.objects.get(pk=people["alice"].pk).is_active
    assert User.objects.get(pk=people["staff"].pk).is_active
    assert client.get("/u/alice").status_code == 404
    response = run(
        client.post,
        path="/admin/social/user/",
        data={"action": "unsuspend_users", "_selected_action": [people["alice"].pk]},
        follow=True,
    )
    assert b"Suspension lifted for 1 user, 1 board back." in response.content
    assert client.get("/u/alice").status_code == 200


def test_admin_edits_go_through_the_services(client, people, run, redis_data):
    from feeds import keys

    theirs = board(run, people["alice"], title="Old title")
    client.force_login(people["staff"])
    page = client.get(f"/admin/feeds/board/{theirs.pk}/change/")
    assert page.status_code == 200 and b'class="deletelink"' not in page.content
    run(
        client.post,
        path=f"/admin/feeds/board/{theirs.pk}/change/",
        data={"title": "New title", "kind": "map", "tags": "a,b"},
    )
    assert redis_data.hget(keys.board(theirs.pk), "title") == "New title"
    assert client.post(f"/admin/feeds/board/{theirs.pk}/delete/").status_code == 403


# --- discover and popular pages (fast, without a browser) --------------------------------------


@pytest.fixture
def catalogue(django_capture_on_commit_callbacks, eager_tasks):
    from feeds.services.boards import board_create
    from social.services import user_create

    doc = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}
    with django_capture_on_commit_callbacks(execute=True):
        author = user_create(username="maker", password="password123")
        boards = [
            board_create(author=author, title=f"b{i}", kind=("map", "note")[i % 2], tags=[f"t{i % 3}"], doc=doc)
            for i in range(25)
        ]
    return author, boards


@pytest.mark.django_db
def test_discover_page_pages_filters_and_survives_junk(client, catalogue):
    _, boards = catalogue
    page = client.get("/discover")
    assert page.status_code == 200
    assert page.context["total"] == 25 and len(page.context["boards"]) == 20
    assert page.context["next_url"] == "/discover?page=2"
    assert len(client.get("/discover?page=2").context["boards"]) == 5
    page = client.get("/discover", {"kind": "map", "tag": "t0"})
    expected = [b.id for b in reversed(boards) if b.kind == "map" and b.tags == ["t0"]]
    assert [b["id"] for b in page.context["boards"]] == expected
    kinds = {k["name"]: k for k in page.context["kinds"]}
    assert kinds["map"]["active"] and kinds["map"]["count"] == 13
    assert kinds["map"]["url"] == "/discover?tag=t0"  # clicking the active filter removes it
    junk = client.get("/discover", {"kind": "painting", "tag": "No!", "page": "x", "sort": "best"})
    assert junk.status_code == 200 and junk.context["total"] == 25 and len(junk.context["notes"]) == 2
    assert client.get("/discover", {"author": "nobody here"}).context["total"] == 0


@pytest.mark.django_db
def test_popular_page_scopes(client, catalogue):
    assert client.get("/popular").status_code == 200
    response = client.get("/popular?scope=following")
    assert response.status_code == 302 and response["Location"].startswith("/login?next=")
    assert client.get("/popular?scope=bogus").context["scope"] == "all"


@pytest.mark.django_db
def test_a_form_without_its_csrf_token_gets_the_sites_403_page():
    from django.test import Client

    response = Client(enforce_csrf_checks=True).post("/login", {"username": "x", "password": "y"})
    assert response.status_code == 403
    assert b"Form expired" in response.content and b"site.css" in response.content
