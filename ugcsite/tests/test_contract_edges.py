"""Departures from docs/api.md that an outside fuzz found (issue 37, item 7), each held here:
id lists take digits and single commas only, a whole number written 315.0 is an id as JSON
Schema says, a refused remix is a 403 whatever its body, and a broken body sent to a call that
takes none is a 400 that starts nothing."""

import pytest

from feeds.models import Board, Export, Report
from ugcsite.testing import assert_problem

pytestmark = pytest.mark.django_db

DOC = {"width": 100, "height": 80, "background": "#ffffff", "elements": []}


def board(client, **more) -> int:
    response = client.post("/api/v1/boards", {"title": "b", "kind": "note", "doc": DOC, **more})
    assert response.status_code == 201, response.content
    return response.json()["id"]


@pytest.mark.parametrize("ids", ["1,%20,2", "+5", "5%0a", "1,,2", ",,,", "1,", ",1", " 1", "1,2%09"])
@pytest.mark.parametrize("path, name", [("/api/v1/likes", "board_ids"), ("/api/v1/reading", "ids")])
def test_an_id_list_with_anything_but_digits_and_single_commas_is_a_400(api, path, name, ids):
    alice = api.as_user("alice")
    response = alice.client.get(f"{path}?{name}={ids}", headers={"Authorization": f"Bearer {alice.token}"})
    assert "commas" in assert_problem(response, 400)["detail"]


def test_an_id_list_of_digits_and_single_commas_is_read(api):
    alice = api.as_user("alice")
    first, second = board(alice), board(alice)
    answer = alice.get("/api/v1/likes", board_ids=f"{second},{first},{second}")
    assert answer.status_code == 200, answer.content
    assert list(answer.json()["boards"]) == [str(second), str(first)]


def test_a_board_id_written_as_a_whole_float_is_an_id(api):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    board_id = board(alice)
    response = bob.post("/api/v1/reports", {"board": float(board_id), "reason": "spam"})
    assert response.status_code == 201, response.content
    assert Report.objects.get(pk=response.json()["id"]).case.board_id == board_id
    for wrong in (board_id + 0.5, True, str(board_id)):
        assert "board" in assert_problem(bob.post("/api/v1/reports", {"board": wrong, "reason": "spam"}), 400)["detail"]


def test_a_remix_refused_by_its_author_is_a_403_even_with_a_bad_body(api):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    board_id = board(alice, remixable=False)
    for body in ({"title": "x" * 10_000}, {"doc": "not a doc"}, {"unknown": 1}):
        assert "remixing off" in assert_problem(bob.post(f"/api/v1/boards/{board_id}/remix", body), 403)["detail"]
    assert_problem(bob.post(f"/api/v1/boards/{board_id}/remix", raw="{"), 403)
    assert Board.objects.count() == 1
    assert_problem(alice.post(f"/api/v1/boards/{board_id}/remix", {"doc": "not a doc"}), 400)  # her own: the body


def test_a_broken_body_sent_to_the_export_is_a_400_and_starts_nothing(api):
    alice = api.as_user("alice")
    for raw in ("{", "[]", '{"x": 1}', "null"):
        assert_problem(alice.post("/api/v1/me/export", raw=raw), 400)
    assert Export.objects.count() == 0
    assert alice.post("/api/v1/me/export", raw="{}").status_code == 202
    assert Export.objects.count() == 1


@pytest.mark.parametrize("path", ["/api/v1/discover", "/api/v1/users/alice", "/api/v1/openapi.json"])
def test_head_answers_wherever_get_does_with_its_headers_and_no_body(api, path):
    api.as_user("alice")
    got, head = api.client.get(path), api.client.head(path)
    assert got.status_code == head.status_code == 200
    assert head.content == b"" and int(head["Content-Length"]) == len(got.content) > 0
    assert head["Content-Type"] == got["Content-Type"]


def test_head_of_a_missing_thing_is_its_404_and_a_write_only_path_says_what_it_allows(api):
    assert api.client.head("/api/v1/users/nobody").status_code == 404
    response = api.client.head("/api/v1/tokens")
    assert response.status_code == 405 and "POST" in response["Allow"] and "HEAD" not in response["Allow"]
    response = api.client.delete("/api/v1/discover")
    assert "HEAD" in response["Allow"] and "GET" in response["Allow"]
