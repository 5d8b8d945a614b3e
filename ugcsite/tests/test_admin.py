"""Staff pages of the Django admin load and filter; others are sent to log in."""

import pytest

from feeds.models import Board
from feeds.services.boards import board_create
from feeds.services.follows import follow_create
from social.services import user_create
from ugcsite.testing import unused_code, with_second_factor

pytestmark = pytest.mark.django_db

DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}


@pytest.fixture
def world(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        staff = with_second_factor(user_create(username="staffer", password="password123", is_staff=True))
        alice = user_create(username="alice", password="password123")
        bob = user_create(username="bob", password="password123")
        follow_create(follower=bob, followee=alice)
        cat = board_create(author=alice, title="A cat", kind="sketch", tags=["cat", "pet"], doc=DOC)
        map_ = board_create(author=bob, title="A map", kind="map", tags=["walk"], doc=DOC)
    Board.objects.filter(pk=map_.pk).update(state=Board.State.HIDDEN)
    return {"staff": staff, "alice": alice, "cat": cat, "map": map_}


def titles(response):
    return [board.title for board in response.context["cl"].result_list]


def test_staff_see_and_filter_boards(client, world):
    client.force_login(world["staff"])
    assert client.get("/admin/").status_code == 200
    assert sorted(titles(client.get("/admin/feeds/board/"))) == ["A cat", "A map"]
    assert titles(client.get("/admin/feeds/board/", {"kind": "map"})) == ["A map"]
    assert titles(client.get("/admin/feeds/board/", {"tag": "pet"})) == ["A cat"]
    assert titles(client.get("/admin/feeds/board/", {"state": "hidden"})) == ["A map"]
    assert titles(client.get("/admin/feeds/board/", {"q": "alice"})) == ["A cat"]
    assert titles(client.get("/admin/feeds/board/", {"q": "cat"})) == ["A cat"]
    page = client.get(f"/admin/feeds/board/{world['cat'].pk}/change/")
    assert page.status_code == 200 and b"A cat" in page.content


@pytest.mark.parametrize("path", ["/admin/social/user/", "/admin/social/follow/", "/admin/social/apitoken/"])
def test_staff_pages_load(client, world, path):
    client.force_login(world["staff"])
    response = client.get(path)
    assert response.status_code == 200
    assert response.context["cl"].result_count >= 1 or path.endswith("apitoken/")


def test_user_change_page_shows_counts(client, world):
    client.force_login(world["staff"])
    page = client.get(f"/admin/social/user/{world['alice'].pk}/change/")
    assert page.status_code == 200 and b"Followers count" in page.content


def test_non_staff_are_sent_to_log_in(client, world):
    client.force_login(world["alice"])
    response = client.get("/admin/feeds/board/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]  # which sends to /login


def test_staff_log_in_with_the_password_then_the_code(client, world):
    assert client.get("/admin/login/?next=/admin/")["Location"] == "/login?next=/admin/"
    response = client.post("/login", {"username": "staffer", "password": "password123", "next": "/admin/"})
    assert response.status_code == 302 and response["Location"].startswith("/login/code")
    assert client.get("/admin/").status_code == 302  # the password alone opens nothing
    response = client.post("/login/code", {"code": unused_code(), "next": "/admin/"})
    assert response.status_code == 302 and response["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_staff_see_the_archive_and_what_the_scheduler_did(client, world, settings):
    from feeds.models import ArchiveRun, TimelineChunk
    from feeds.tasks import archive_run
    from feeds.timelines import archive

    settings.PROFILE_TIMELINE_HOT = 0
    archive.chunks_write(world["alice"].pk, "m", [3, 2, 1])
    ArchiveRun.objects.create(
        started_at="2026-01-01T00:00Z",
        finished_at="2026-01-01T00:00:01Z",
        trigger="beat",
        errors="m:1: RuntimeError: boom",
    )
    archive.flag_waiting("p", [world["alice"].pk, world["staff"].pk])
    client.force_login(world["staff"])
    page = client.get("/admin/feeds/archiverun/")
    assert page.status_code == 200
    assert page.context["archive"]["waiting"] == 2
    assert page.context["archive"]["chunks_total"] == TimelineChunk.objects.count() == 1
    assert b"RuntimeError: boom" in page.content
    summary = archive_run()
    assert summary["timelines"] == 2 and not summary["errors"]
    page = client.get("/admin/feeds/archiverun/")
    assert page.context["archive"]["waiting"] == 0
    assert page.context["archive"]["last_run"].trigger == "beat"
    chunks = client.get("/admin/feeds/timelinechunk/")
    assert chunks.status_code == 200 and chunks.context["cl"].result_count == 1
    chunk = TimelineChunk.objects.get()
    assert client.get(f"/admin/feeds/timelinechunk/{chunk.pk}/change/").status_code == 200
    assert client.post(f"/admin/feeds/timelinechunk/{chunk.pk}/delete/").status_code == 403


def test_archive_now_runs_the_archival(world, settings, redis_data):
    from django.core.management import call_command

    from feeds import keys
    from feeds.models import TimelineChunk

    settings.PROFILE_TIMELINE_HOT = 5
    user_id = world["alice"].pk
    redis_data.zadd(keys.profile_timeline(user_id), {i: i for i in range(1, 231)})
    call_command("archive_now", user=[user_id])
    assert sorted(len(c.ids) for c in TimelineChunk.objects.filter(owner_id=user_id, timeline="m")) == [100, 100]
    assert redis_data.zcard(keys.profile_timeline(user_id)) == 30


def test_staff_can_edit_a_hidden_board_and_unhiding_publishes_the_edit(
    client, world, django_capture_on_commit_callbacks
):
    from feeds.services.moderation import board_unhide

    hidden = world["map"]  # hidden by the fixture
    client.force_login(world["staff"])
    response = client.post(
        f"/admin/feeds/board/{hidden.pk}/change/",
        {"title": "A better map", "kind": "map", "tags": "walk,hill", "views": 0},
    )
    assert response.status_code == 302, response.content[:500]
    hidden.refresh_from_db()
    assert (hidden.title, hidden.tags, hidden.state) == ("A better map", ["walk", "hill"], "hidden")
    with django_capture_on_commit_callbacks(execute=True):
        board_unhide(board=hidden)
    assert client.get(f"/api/v1/boards/{hidden.pk}").json()["title"] == "A better map"
