"""A board's versions (docs/api.md, "Versions"): which changes keep one, who may read and restore
them (the board's read rules, 404 before 403), that a restore makes a new version and destroys
nothing, the live rule (at most one per VERSION_EVERY_SECONDS of drawing, and one when the last
editor leaves), and retention (all for N days, then the last of each UTC day)."""

import json
import secrets
from datetime import timedelta

import pytest
from django.utils import timezone

from feeds import keys, pictures, versions
from feeds.live import compaction, oplog, tasks as live_tasks
from feeds.models import Board, BoardPicture, BoardVersion
from feeds.services import boards as board_services, editors as editor_services, moderation
from feeds.services.versions import version_restore
from social.models import User
from social.services import user_create
from ugcsite.testing import assert_problem

pytestmark = pytest.mark.django_db

DOC = {
    "width": 200,
    "height": 100,
    "background": "#ffffff",
    "elements": [{"type": "path", "color": "#112233", "width": 3, "points": [[0, 0], [10, 20]], "id": "s1"}],
}


def stroke(element_id: str, x: float = 10) -> dict:
    return {"type": "path", "color": "#112233", "width": 3, "points": [[x, 10], [x + 5, 20]], "id": element_id}


@pytest.fixture
def people(api):
    return {name: api.as_user(name) for name in ("alice", "bob", "carol")}


@pytest.fixture
def board_id(people):
    response = people["alice"].post("/api/v1/boards", {"title": "Ours", "kind": "sketch", "doc": DOC})
    assert response.status_code == 201, response.content
    board_id = response.json()["id"]
    assert people["alice"].put(f"/api/v1/boards/{board_id}/editors/bob").status_code == 204
    return board_id


def listed(client, board_id, query=""):
    response = client.get(f"/api/v1/boards/{board_id}/versions{query}")
    assert response.status_code == 200, response.content
    return response.json()


def draw(client, board_id, *elements):
    doc = {**DOC, "elements": DOC["elements"] + list(elements)}
    response = client.patch(f"/api/v1/boards/{board_id}", {"doc": doc})
    assert response.status_code == 200, response.content
    return doc


def test_publish_and_every_patch_of_the_drawing_keep_a_version_with_who_changed_it(people, board_id, api):
    draw(people["bob"], board_id, stroke("b1"))
    draw(people["alice"], board_id, stroke("a1"), stroke("a2"))
    response = people["alice"].patch(f"/api/v1/boards/{board_id}", {"title": "Renamed"})
    assert response.status_code == 200  # not the drawing: no version
    page = listed(api, board_id)
    assert [item["n"] for item in page["items"]] == [3, 2, 1]
    assert [item["authors"] for item in page["items"]] == [["alice"], ["bob"], ["alice"]]
    assert [item["elements"] for item in page["items"]] == [3, 2, 1]
    assert page["next"] is None
    assert all(item["created_at"].endswith("+00:00") for item in page["items"])
    one = api.get(f"/api/v1/boards/{board_id}/versions/2").json()
    assert (
        one["n"] == 2
        and one["authors"] == ["bob"]
        and one["doc"] == {**DOC, "elements": DOC["elements"] + [stroke("b1")]}
    )


def test_the_list_pages_newest_first_with_before(people, board_id, api):
    for i in range(4):
        draw(people["alice"], board_id, stroke(f"x{i}"))
    first = listed(api, board_id, "?limit=2")
    assert [item["n"] for item in first["items"]] == [5, 4] and first["next"] == 4
    second = listed(api, board_id, f"?limit=2&before={first['next']}")
    assert [item["n"] for item in second["items"]] == [3, 2] and second["next"] == 2
    last = listed(api, board_id, "?limit=2&before=2")
    assert [item["n"] for item in last["items"]] == [1] and last["next"] is None
    assert "limit" in assert_problem(api.get(f"/api/v1/boards/{board_id}/versions?limit=0"), 400)["detail"]
    assert "before" in assert_problem(api.get(f"/api/v1/boards/{board_id}/versions?before=x"), 400)["detail"]


def test_who_may_read_a_board_reads_its_versions_and_no_one_else(people, board_id, api, run):
    assert listed(people["carol"], board_id)["items"]
    assert api.get(f"/api/v1/boards/{board_id}/versions/1").status_code == 200
    for path in (
        f"/api/v1/boards/{board_id}/versions/9",
        f"/api/v1/boards/{board_id}/versions/0",
        f"/api/v1/boards/{board_id}/versions/99999999999999999999",
        "/api/v1/boards/123/versions",
        "/api/v1/boards/123/versions/1",
    ):
        assert assert_problem(api.get(path), 404)["detail"]
    board = Board.objects.get(pk=board_id)
    run(moderation.board_hide, board=board)
    for path in (f"/api/v1/boards/{board_id}/versions", f"/api/v1/boards/{board_id}/versions/1"):
        assert_problem(api.get(path), 404)
        assert_problem(people["alice"].get(path), 404)  # hidden: not even its author reads it
    run(moderation.board_unhide, board=board)
    assert listed(api, board_id)["items"]
    assert people["alice"].delete(f"/api/v1/boards/{board_id}").status_code == 204
    assert_problem(people["alice"].get(f"/api/v1/boards/{board_id}/versions"), 404)
    assert_problem(people["alice"].post(f"/api/v1/boards/{board_id}/versions/1/restore", raw=""), 404)
    assert BoardVersion.objects.filter(board_id=board_id).exists()  # deleted, not destroyed


def test_restore_is_the_author_and_editors_alone_404_before_403(people, board_id, api):
    path = f"/api/v1/boards/{board_id}/versions/1/restore"
    assert_problem(api.post(path, raw=""), 401)
    assert "editors" in assert_problem(people["carol"].post(path, raw=""), 403)["detail"]
    assert_problem(people["carol"].post(f"/api/v1/boards/{board_id}/versions/77/restore", raw=""), 403)
    assert (
        "version 77"
        in assert_problem(people["bob"].post(f"/api/v1/boards/{board_id}/versions/77/restore", raw=""), 404)["detail"]
    )
    assert_problem(people["bob"].post("/api/v1/boards/123/versions/1/restore", raw=""), 404)
    assert_problem(people["bob"].get(path), 405)


def test_a_restore_makes_a_new_version_and_destroys_nothing(people, board_id, api):
    draw(people["bob"], board_id, stroke("b1"))
    cleared = {**DOC, "elements": []}
    assert people["bob"].patch(f"/api/v1/boards/{board_id}", {"doc": cleared}).status_code == 200
    response = people["alice"].post(f"/api/v1/boards/{board_id}/versions/2/restore", raw="")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["version"] == 4 and body["id"] == board_id
    assert body["doc"] == {**DOC, "elements": DOC["elements"] + [stroke("b1")]}
    assert api.get(f"/api/v1/boards/{board_id}").json()["doc"] == body["doc"]
    page = listed(api, board_id)
    assert [(item["n"], item["authors"], item["elements"]) for item in page["items"]] == [
        (4, ["alice"], 2),
        (3, ["bob"], 0),
        (2, ["bob"], 2),
        (1, ["alice"], 1),
    ]
    assert api.get(f"/api/v1/boards/{board_id}/versions/3").json()["doc"] == cleared  # still there
    # restoring the version that is already the drawing still keeps a new one
    assert people["bob"].post(f"/api/v1/boards/{board_id}/versions/4/restore", raw="").json()["version"] == 5


def test_versions_are_immutable_rows(people, board_id):
    draw(people["bob"], board_id, stroke("b1"))
    before = list(BoardVersion.objects.filter(board_id=board_id).order_by("n").values_list("n", "doc_z", "authors"))
    draw(people["alice"], board_id, stroke("a1"))
    people["alice"].post(f"/api/v1/boards/{board_id}/versions/1/restore", raw="")
    after = list(BoardVersion.objects.filter(board_id=board_id).order_by("n").values_list("n", "doc_z", "authors"))
    assert [(n, bytes(z), a) for n, z, a in after[:2]] == [(n, bytes(z), a) for n, z, a in before]


# --- the live rule ---------------------------------------------------------------------------


@pytest.fixture
def live_board(run):
    alice = user_create(username="alice", password="password123")
    bob = user_create(username="bob", password="password123")
    board = run(
        board_services.board_create, author=alice, title="Live", kind="sketch", tags=[], doc=json.loads(json.dumps(DOC))
    )
    editor_services.editor_invite(board=board, user=bob)
    board = oplog.live_load(board.pk)
    return board


def live_draw(board: Board, by: str, element: dict) -> int:
    """An op as the live socket applies it (feeds.live.consumer), without a socket."""
    ref = oplog.BoardRef.of(board)
    gen, _ = oplog.live_head(ref)
    op = {"kind": "add", "element": element}
    op_text, element_json = oplog.op_json(op)
    seq, _ = oplog.live_apply(
        ref,
        gen=gen,
        kind="add",
        element_id=element["id"],
        element=element,
        element_json=element_json,
        by=by,
        client_op_id=secrets.token_hex(4),
        op_json=op_text,
    )
    oplog.dirty_mark(ref)
    return seq


def numbers(board_id):
    return list(BoardVersion.objects.filter(board_id=board_id).order_by("n").values_list("n", "authors", "elements"))


def test_live_drawing_keeps_a_version_at_most_every_version_every_seconds(live_board, settings, run):
    settings.VERSION_EVERY_SECONDS = 300
    board = live_board
    live_draw(board, "alice", stroke("l1"))
    run(compaction.board_compact, board.pk)
    live_draw(board, "bob", stroke("l2"))
    run(compaction.board_compact, board.pk)
    assert numbers(board.pk) == [(1, ["alice"], 1)]  # written to the doc, but no version yet
    assert len(Board.objects.get(pk=board.pk).doc["elements"]) == 3
    # five minutes pass since version 1: the next compaction keeps one, naming both
    BoardVersion.objects.filter(board_id=board.pk).update(created_at=timezone.now() - timedelta(seconds=301))
    live_draw(board, "alice", stroke("l3"))
    run(compaction.board_compact, board.pk)
    assert numbers(board.pk) == [(1, ["alice"], 1), (2, ["bob", "alice"], 4)]
    live_draw(board, "bob", stroke("l4"))
    run(compaction.board_compact, board.pk)
    assert len(numbers(board.pk)) == 2  # within five minutes of version 2


def test_the_last_editor_leaving_keeps_a_version_once(live_board, settings, run):
    settings.VERSION_EVERY_SECONDS = 300
    board = live_board
    live_draw(board, "bob", stroke("l1"))
    run(compaction.board_compact, board.pk)  # beat's run wrote it: no version yet
    assert len(numbers(board.pk)) == 1
    run(compaction.board_compact, board.pk, last_editor_left=True)  # nothing left to write, still kept
    assert numbers(board.pk)[-1] == (2, ["bob"], 2)
    run(compaction.board_compact, board.pk, last_editor_left=True)  # unchanged since: not kept again
    assert len(numbers(board.pk)) == 2
    live_draw(board, "alice", stroke("l2"))
    run(compaction.board_compact, board.pk, last_editor_left=True)
    assert numbers(board.pk)[-1] == (3, ["alice"], 3)


def test_the_task_the_last_editor_leaving_sends_keeps_a_version(live_board, settings, run):
    """feeds.live.consumer sends live_compact when the last editor leaves; it keeps a version
    however recent the latest one is."""
    settings.VERSION_EVERY_SECONDS = 300
    live_draw(live_board, "bob", stroke("t1"))
    run(live_tasks.live_compact, live_board.pk)
    assert numbers(live_board.pk)[-1] == (2, ["bob"], 2)


def test_the_last_editor_leaving_renders_the_picture_of_the_doc_left(live_board, run, redis_data):
    """Compactions inside a picture's window leave its render to the window's end; the last
    editor leaving renders it at once."""
    board = live_board
    redis_data.set(keys.picture_gate(board.pk), "due", ex=300)  # a window open, its render due at its end
    live_draw(board, "bob", stroke("p1"))
    run(compaction.board_compact, board.pk)
    current = pictures.version_of(Board.objects.get(pk=board.pk))
    assert BoardPicture.objects.filter(board_id=board.pk, version=current).count() == 0
    run(compaction.board_compact, board.pk, last_editor_left=True)
    assert BoardPicture.objects.filter(board_id=board.pk, version=current).count() == 1


def test_a_restore_on_a_live_board_replaces_its_live_doc(live_board, run):
    board = live_board
    live_draw(board, "bob", stroke("l1"))
    run(compaction.board_compact, board.pk, last_editor_left=True)
    restored = run(version_restore, board=Board.objects.select_related("author").get(pk=board.pk), n=1, by="alice")
    assert restored.version == 3
    snapshot = oplog.live_snapshot(oplog.BoardRef.of(board))
    assert snapshot.doc() == DOC  # the live state holds version 1's doc again
    assert numbers(board.pk)[-1] == (3, ["alice"], 1)


# --- retention -------------------------------------------------------------------------------


def test_retention_keeps_all_for_n_days_then_the_last_of_each_day(run):
    alice = user_create(username="alice", password="password123")
    board = run(board_services.board_create, author=alice, title="Old", kind="sketch", tags=[], doc=dict(DOC))
    other = run(board_services.board_create, author=alice, title="Other", kind="sketch", tags=[], doc=dict(DOC))
    now = timezone.now().replace(hour=12, minute=0, second=0, microsecond=0)
    BoardVersion.objects.all().delete()

    def make(target, n, at):
        BoardVersion.objects.create(
            board=target,
            n=n,
            created_at=at,
            authors=["alice"],
            elements=1,
            doc_z=versions.doc_compress(target.doc_json),
            digest=bytes(32),
        )

    day = timedelta(days=1)
    # board: three versions 40 days ago, two 35 days ago, two 2 days ago (within the keep-all days)
    for n, at in enumerate(
        [
            now - 40 * day,
            now - 40 * day + timedelta(hours=1),
            now - 40 * day + timedelta(hours=2),
            now - 35 * day,
            now - 35 * day + timedelta(hours=3),
            now - 2 * day,
            now - 2 * day + timedelta(hours=1),
        ],
        start=1,
    ):
        make(board, n, at)
    # other: its only versions are old and on one day: the latest stays whatever its day
    make(other, 1, now - 33 * day)
    make(other, 2, now - 33 * day + timedelta(hours=1))
    gone = versions.versions_prune(keep_all_days=30, now=now, window_days=14)
    assert gone == 4
    assert list(BoardVersion.objects.filter(board=board).order_by("n").values_list("n", flat=True)) == [3, 5, 6, 7]
    assert list(BoardVersion.objects.filter(board=other).values_list("n", flat=True)) == [2]
    assert versions.versions_prune(keep_all_days=30, now=now, window_days=14) == 0  # idempotent


def test_deleting_the_boards_rows_takes_their_versions(people, board_id):
    """An account's purge deletes its boards' rows (feeds.erasure): their versions go with them."""
    assert BoardVersion.objects.filter(board_id=board_id).exists()
    Board.objects.filter(author=User.objects.get(username="alice")).delete()
    assert not BoardVersion.objects.filter(board_id=board_id).exists()


def test_a_page_and_a_version_are_one_query_each(people, board_id, django_assert_num_queries):
    for i in range(3):
        draw(people["alice"], board_id, stroke(f"q{i}"))
    with django_assert_num_queries(1):
        page = versions.versions_page(board_id, before=None, limit=2)
    assert [item["n"] for item in page["items"]] == [4, 3] and page["next"] == 3
    with django_assert_num_queries(1):
        head, doc_json = versions.version_get(board_id, 2)
    assert head["n"] == 2 and json.loads(doc_json)["elements"][-1]["id"] == "q0"
