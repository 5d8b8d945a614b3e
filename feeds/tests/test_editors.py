"""Editors of a board (API.md, "Shared boards, live"): who may invite, remove and leave, what an
editor may change (the doc alone), the order of 401/404/403/400, element ids kept or given, and
invitations counted against the writes limit."""

import pytest

from feeds.models import Board, BoardEditor
from feeds.rules import ELEMENT_ID_GENERATED
from feeds.services import editors as editor_services
from social.models import User
from ugcsite.testing import assert_problem

pytestmark = pytest.mark.django_db

DOC = {
    "width": 200,
    "height": 100,
    "background": "#ffffff",
    "elements": [
        {"type": "path", "color": "#112233", "width": 3, "points": [[0, 0], [10, 20]], "id": "stroke-1"},
        {"type": "text", "color": "#000000", "size": 16, "x": 20, "y": 40, "text": "hello"},
    ],
}


@pytest.fixture
def people(api):
    return {name: api.as_user(name) for name in ("alice", "bob", "carol")}


@pytest.fixture
def board_id(people):
    response = people["alice"].post("/api/v1/boards", {"title": "Ours", "kind": "sketch", "doc": DOC})
    assert response.status_code == 201, response.content
    return response.json()["id"]


def editors_of(api, board_id):
    response = api.get(f"/api/v1/boards/{board_id}/editors")
    assert response.status_code == 200, response.content
    return [item["username"] for item in response.json()["items"]]


def test_element_ids_are_kept_as_sent_and_given_to_elements_without(people, board_id, api):
    doc = api.get(f"/api/v1/boards/{board_id}").json()["doc"]
    assert doc["elements"][0]["id"] == "stroke-1"
    given = doc["elements"][1].pop("id")
    assert len(given) == ELEMENT_ID_GENERATED and given.replace("-", "").replace("_", "").isalnum()
    assert doc["elements"][1] == DOC["elements"][1]
    assert doc["elements"][0] == DOC["elements"][0]


@pytest.mark.parametrize("bad_id", ["", "a" * 65, "has space", "dot.ted", 7, None])
def test_a_malformed_element_id_is_a_400(people, bad_id):
    element = {**DOC["elements"][0], "id": bad_id}
    response = people["alice"].post(
        "/api/v1/boards", {"title": "x", "kind": "note", "doc": {**DOC, "elements": [element]}}
    )
    assert "id" in assert_problem(response, 400)["detail"]


def test_duplicate_element_ids_are_a_400(people):
    elements = [DOC["elements"][0], {**DOC["elements"][1], "id": "stroke-1"}]
    response = people["alice"].post(
        "/api/v1/boards", {"title": "x", "kind": "note", "doc": {**DOC, "elements": elements}}
    )
    assert "unique" in assert_problem(response, 400)["detail"]


def test_the_author_invites_and_removes_editors(people, board_id, api):
    alice = people["alice"]
    assert editors_of(api, board_id) == []
    assert alice.put(f"/api/v1/boards/{board_id}/editors/bob").status_code == 204
    assert alice.put(f"/api/v1/boards/{board_id}/editors/BOB").status_code == 204  # idempotent, any case
    assert alice.put(f"/api/v1/boards/{board_id}/editors/carol").status_code == 204
    assert editors_of(api, board_id) == ["bob", "carol"]
    assert alice.delete(f"/api/v1/boards/{board_id}/editors/bob").status_code == 204
    assert alice.delete(f"/api/v1/boards/{board_id}/editors/bob").status_code == 204  # idempotent
    assert editors_of(api, board_id) == ["carol"]


def test_an_editor_may_leave_but_not_remove_others_or_invite(people, board_id):
    alice, bob = people["alice"], people["bob"]
    alice.put(f"/api/v1/boards/{board_id}/editors/bob")
    alice.put(f"/api/v1/boards/{board_id}/editors/carol")
    assert_problem(bob.put(f"/api/v1/boards/{board_id}/editors/bob"), 403)
    assert_problem(bob.delete(f"/api/v1/boards/{board_id}/editors/carol"), 403)
    assert bob.delete(f"/api/v1/boards/{board_id}/editors/bob").status_code == 204
    assert list(BoardEditor.objects.filter(board_id=board_id).values_list("user__username", flat=True)) == ["carol"]


def test_answers_come_in_the_order_401_404_403_400(people, board_id, api):
    assert_problem(api.put(f"/api/v1/boards/{board_id}/editors/bob"), 401)
    assert_problem(people["bob"].put("/api/v1/boards/999/editors/nobody"), 404)
    assert_problem(people["bob"].put(f"/api/v1/boards/{board_id}/editors/nobody"), 404)
    assert_problem(people["alice"].put("/api/v1/boards/999/editors/bob"), 404)
    assert_problem(people["bob"].put(f"/api/v1/boards/{board_id}/editors/alice"), 403)
    assert "author" in assert_problem(people["alice"].put(f"/api/v1/boards/{board_id}/editors/alice"), 400)["detail"]
    assert_problem(api.get("/api/v1/boards/999/editors"), 404)


def test_an_editor_may_patch_the_doc_alone(people, board_id, api):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    new_doc = {**DOC, "elements": [DOC["elements"][0]]}
    assert_problem(bob.patch(f"/api/v1/boards/{board_id}", {"doc": new_doc}), 403)
    alice.put(f"/api/v1/boards/{board_id}/editors/bob")
    response = bob.patch(f"/api/v1/boards/{board_id}", {"doc": new_doc})
    assert response.status_code == 200, response.content
    assert response.json()["doc"] == new_doc and response.json()["author"] == "alice"
    assert_problem(bob.patch(f"/api/v1/boards/{board_id}", {"title": "Mine now"}), 403)
    assert_problem(bob.patch(f"/api/v1/boards/{board_id}", {"doc": new_doc, "tags": ["x"]}), 403)
    assert_problem(bob.patch(f"/api/v1/boards/{board_id}", {"doc": {"width": 0}}), 400)
    assert_problem(carol.patch(f"/api/v1/boards/{board_id}", {"doc": new_doc}), 403)
    assert_problem(bob.delete(f"/api/v1/boards/{board_id}"), 403)
    assert Board.objects.get(pk=board_id).title == "Ours"


def test_invitations_count_against_the_writes_limit(people, board_id, settings):
    settings.RATE_LIMIT_WRITES_PER_MINUTE = 2
    alice = people["alice"]
    assert alice.put(f"/api/v1/boards/{board_id}/editors/bob").status_code == 204
    assert alice.put(f"/api/v1/boards/{board_id}/editors/carol").status_code == 204
    response = alice.put(f"/api/v1/boards/{board_id}/editors/bob")
    assert_problem(response, 429)
    assert int(response["Retry-After"]) >= 1


def test_editor_invite_is_a_service_others_can_call(people, board_id):
    board = Board.objects.get(pk=board_id)
    bob = User.objects.get(username="bob")
    assert editor_services.editor_invite(board=board, user=bob) is True
    assert editor_services.editor_invite(board=board, user=bob) is False
    assert editor_services.editor_remove(board=board, user=bob) is True
    assert editor_services.editor_remove(board=board, user=bob) is False
