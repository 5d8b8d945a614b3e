"""A person is told why they are shut out (docs/api.md, "Safety"): a suspended or deleted
account giving its right password learns that, on the log-in page and from the API (a wrong
password learns nothing); the author of a board staff hid learns it is hidden, anyone else
gets the 404."""

import pytest
from django.test import Client

from feeds.models import Board
from feeds.services import moderation
from social.models import User
from ugcsite.testing import assert_problem

pytestmark = pytest.mark.django_db

DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}


def test_a_suspended_person_is_told_so_with_the_right_password_only(api, run):
    api.as_user("alice")
    run(moderation.user_suspend, user=User.objects.get(username="alice"))
    page = Client().post("/login", {"username": "alice", "password": "password123"})
    assert page.status_code == 400 and "suspended" in page.content.decode()
    wrong = Client().post("/login", {"username": "alice", "password": "not-hers-at-all"})
    assert "suspended" not in wrong.content.decode() and "correct username and password" in wrong.content.decode()
    told = assert_problem(api.post("/api/v1/tokens", {"username": "alice", "password": "password123"}), 401)
    assert "suspended" in told["detail"]
    assert (
        "wrong"
        in assert_problem(api.post("/api/v1/tokens", {"username": "alice", "password": "nope-nope"}), 401)["detail"]
    )


def test_a_deleted_account_is_told_so(api, run, django_capture_on_commit_callbacks):
    alice = api.as_user("alice")
    with django_capture_on_commit_callbacks(execute=False):  # closed, not yet erased
        assert alice.delete("/api/v1/me", {"password": "password123"}).status_code == 204
    page = Client().post("/login", {"username": "alice", "password": "password123"})
    assert "deleted" in page.content.decode()


def test_the_author_of_a_hidden_board_is_told_it_is_hidden(api, run):
    alice = api.as_user("alice")
    api.as_user("bob")
    board_id = run(alice.post, "/api/v1/boards", {"title": "x", "kind": "note", "doc": DOC}).json()["id"]
    run(moderation.board_hide, board=Board.objects.get(pk=board_id))
    author = Client()
    author.force_login(User.objects.get(username="alice"))
    page = author.get(f"/b/{board_id}")
    assert page.status_code == 403 and "Hidden by staff" in page.content.decode()
    other = Client()
    other.force_login(User.objects.get(username="bob"))
    assert other.get(f"/b/{board_id}").status_code == 404
    assert Client().get(f"/b/{board_id}").status_code == 404
