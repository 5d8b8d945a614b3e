"""Take my data (docs/api.md, "Safety"): an archive built by a task, its progress, served to its
owner alone and deleted after a day; a 10,000-board account archived in bounded memory."""

import io
import json
import tracemalloc
import zipfile
from datetime import timedelta

import pytest
from django.utils import timezone

from feeds import export
from feeds.models import Export
from feeds.tests.support import bulk_boards
from social.models import User
from ugcsite.testing import assert_problem

pytestmark = pytest.mark.django_db

DOC = {
    "width": 10,
    "height": 10,
    "background": "#ffffff",
    "elements": [{"type": "rect", "color": "#1d2330", "width": 2, "x": 1, "y": 1, "w": 5, "h": 5, "fill": None}],
}


@pytest.fixture
def exports_here(settings, tmp_path):
    settings.EXPORT_DIR = str(tmp_path / "exports")
    return tmp_path / "exports"


def test_an_archive_holds_everything_and_only_its_owner_gets_it(api, run, exports_here):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    run(bob.put, "/api/v1/users/alice/follow")
    run(alice.put, "/api/v1/users/bob/follow")
    ids = [
        run(alice.post, "/api/v1/boards", {"title": f"mine {i}", "kind": "note", "doc": DOC}).json()["id"]
        for i in range(3)
    ]
    theirs = run(bob.post, "/api/v1/boards", {"title": "bob's", "kind": "note", "doc": DOC}).json()["id"]
    run(alice.get, f"/api/v1/boards/{theirs}")  # a read
    run(alice.put, f"/api/v1/boards/{theirs}/like")  # a like

    started = run(alice.post, "/api/v1/me/export", {})
    assert started.status_code == 202
    answer = alice.get(f"/api/v1/me/export/{started.json()['id']}").json()
    assert answer == {
        "id": started.json()["id"],
        "status": "ready",
        "progress": 100,
        "url": f"/api/v1/me/export/{started.json()['id']}/download",
    }
    download = alice.get(answer["url"])
    assert download.status_code == 200 and download["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    names = set(archive.namelist())
    assert {f"boards/{i}.json" for i in ids} | {f"boards/{i}.svg" for i in ids} <= names
    assert f"boards/{theirs}.json" not in names
    assert json.loads(archive.read("profile.json"))["username"] == "alice"
    exported, answered = json.loads(archive.read(f"boards/{ids[0]}.json")), alice.get(f"/api/v1/boards/{ids[0]}").json()
    assert exported.keys() == answered.keys()  # the API's full form: author, likes, preview_url, remixes...
    for field in ("id", "title", "author", "created_at", "updated_at", "remixable", "remixed_from", "doc", "likes"):
        assert exported[field] == answered[field], field
    assert "T" in json.loads(archive.read("profile.json"))["date_joined"]  # ISO 8601, as the API writes times
    assert archive.read(f"boards/{ids[0]}.svg").startswith(b"<svg")
    follows = json.loads(archive.read("follows.json"))
    assert [f["followee__username"] for f in follows["following"]] == ["bob"]
    assert [f["follower__username"] for f in follows["followers"]] == ["bob"]
    assert [r["board_id"] for r in json.loads(archive.read("reads.json"))["reads"]] == [theirs]
    assert [r["board_id"] for r in json.loads(archive.read("likes.json"))["likes"]] == [theirs]
    assert [n["kind"] for n in json.loads(archive.read("notifications.json"))["notifications"]] == ["follow"]

    for path in (f"/api/v1/me/export/{answer['id']}", answer["url"]):
        assert_problem(bob.get(path), 404)  # someone else's archive is no archive to them
        assert_problem(api.get(path), 401)


def test_one_archive_at_a_time_and_not_ready_is_a_404(api, exports_here):
    alice = api.as_user("alice")
    first = alice.post("/api/v1/me/export", {}).json()  # no worker in-process: it waits
    assert first["status"] == "pending" and first["url"] is None
    assert alice.post("/api/v1/me/export", {}).json()["id"] == first["id"]
    assert "not ready" in assert_problem(alice.get(f"/api/v1/me/export/{first['id']}/download"), 404)["detail"]
    assert_problem(alice.get("/api/v1/me/export/999999999"), 404)


def test_archives_are_deleted_after_their_day(api, run, exports_here):
    alice = api.as_user("alice")
    made = run(alice.post, "/api/v1/me/export", {}).json()
    row = Export.objects.get(pk=made["id"])
    assert export.export_path(row).exists()
    assert export.exports_expire() == 0
    Export.objects.filter(pk=row.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert export.exports_expire() == 1
    assert not export.export_path(row).exists() and not Export.objects.exists()


def _peak_of_an_archive(user, boards: int) -> int:
    bulk_boards([user] * boards)
    archive = Export.objects.create(user=user)
    tracemalloc.start()
    try:
        assert export.export_build(archive.pk)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_large_account_is_archived_in_bounded_memory(exports_here):
    """Boards are streamed, never held: what grows with the account is the zip's directory
    alone (Python's zipfile keeps one small ZipInfo per entry to write it at the end, two
    entries a board), under 1.5 KB a board, however large the drawings."""
    small, large = (User.objects.create_user(name, password="password123") for name in ("small", "large"))
    small_peak = _peak_of_an_archive(small, 1_000)
    large_peak = _peak_of_an_archive(large, 10_000)
    archive = zipfile.ZipFile(export.export_path(Export.objects.get(user=large)))
    assert sum(name.startswith("boards/") for name in archive.namelist()) == 20_000
    per_board = (large_peak - small_peak) / 9_000
    assert per_board < 1_500, (small_peak, large_peak, per_board)
