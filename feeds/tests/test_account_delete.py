"""Deleting an account (docs/api.md, "Safety"): confirmed by the password; sessions and tokens end
at once; the boards leave every feed; and afterwards no row, no Redis key and no feed entry names
the person, not even after rebuild_redis. Real PostgreSQL and Redis, tasks in-process."""

import io

import pytest
from django.core.management import call_command
from django.db.models import Q
from django.test import Client
from django.utils import timezone

from feeds import keys, tasks
from feeds.models import Board, BoardEditor, Like, Notification, Report, ReportCase, TimelineChunk
from social import keys as social_keys
from social.models import ApiToken, Block, Follow, Mute, Read, RetiredUsername, User, UserSession
from ugcsite.platform.redis import get_redis
from ugcsite.testing import assert_problem

pytestmark = pytest.mark.django_db

DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}


def publish(run, client, title: str) -> int:
    response = run(client.post, "/api/v1/boards", {"title": title, "kind": "note", "tags": ["gone"], "doc": DOC})
    assert response.status_code == 201, response.content
    return response.json()["id"]


def all_keys() -> list[str]:
    client = get_redis()
    nodes = [n.redis_connection for n in client.get_primaries()] if hasattr(client, "get_primaries") else [client]
    return [key for node in nodes for key in node.scan_iter(count=1000)]


def members_naming(user_id: int, board_ids: list[int]) -> list[str]:
    """Every key whose members (or hash fields) hold the person's id or one of their boards."""
    client, wanted = get_redis(), {str(user_id), *map(str, board_ids)}
    found = []
    for key in all_keys():
        kind = client.type(key)
        if kind == "zset":
            members = set(client.zrange(key, 0, -1))
        elif kind == "set":
            members = set(client.smembers(key))
        elif kind == "hash":
            members = {field.split(":")[0] for field in client.hkeys(key)} | set(client.hkeys(key))
        else:
            continue
        if members & wanted:
            found.append(key)
    return found


@pytest.fixture
def world(api, run):
    """alice, whose account goes, tied to everyone every way the site knows."""
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    run(carol.patch, "/api/v1/me", {"share_reading": True})
    run(api.as_user("dave").put, "/api/v1/users/alice/block")  # a block that holds when alice goes
    run(bob.put, "/api/v1/users/alice/follow")
    run(alice.put, "/api/v1/users/carol/follow")
    run(carol.put, "/api/v1/users/alice/follow")
    boards = [publish(run, alice, f"alice {i}") for i in range(3)]
    carols = publish(run, carol, "carol's")
    run(carol.put, f"/api/v1/boards/{carols}/editors/alice")
    run(alice.put, f"/api/v1/boards/{boards[0]}/editors/bob")
    run(alice.get, f"/api/v1/boards/{carols}")  # a read of carol's board
    run(carol.get, f"/api/v1/boards/{boards[1]}")  # carol reads alice's
    run(alice.put, "/api/v1/users/bob/mute")
    run(carol.put, "/api/v1/users/alice/mute")
    run(alice.put, f"/api/v1/boards/{carols}/like")  # likes both ways
    run(carol.put, f"/api/v1/boards/{boards[1]}/like")
    remix = run(bob.post, f"/api/v1/boards/{boards[1]}/remix", raw="")  # a remix of hers stays his
    assert remix.status_code == 201, remix.content
    run(alice.post, "/api/v1/reports", {"user": "bob", "reason": "other"})
    run(bob.post, "/api/v1/reports", {"board": boards[2], "reason": "spam"})
    page = Client()
    assert page.post("/login", {"username": "alice", "password": "password123"}).status_code == 302
    ids = {name: User.objects.get(username=name).pk for name in ("alice", "bob", "carol", "dave")}
    assert get_redis().zscore(keys.home_timeline(ids["carol"]), boards[0]) is not None
    return {
        "alice": alice,
        "bob": bob,
        "carol": carol,
        "page": page,
        "ids": ids,
        "boards": boards,
        "carols": carols,
        "remix": remix.json()["id"],
    }


def test_a_wrong_or_missing_password_changes_nothing(world, run, api):
    alice = world["alice"]
    assert "not your password" in assert_problem(run(alice.delete, "/api/v1/me", {"password": "nope"}), 403)["detail"]
    assert_problem(run(alice.delete, "/api/v1/me", {}), 400)
    assert_problem(run(api.delete, "/api/v1/me", {"password": "password123"}), 401)
    assert alice.get("/api/v1/me").status_code == 200 and User.objects.get(username="alice").is_active


def test_a_deleted_account_leaves_no_row_key_or_feed_entry(world, run, api):
    alice, ids, boards = world["alice"], world["ids"], world["boards"]
    me, counts_before = ids["alice"], {u.username: (u.followers_count, u.following_count) for u in User.objects.all()}
    assert run(alice.delete, "/api/v1/me", {"password": "password123"}).status_code == 204

    # at once: no token, no session, no name for anyone else
    assert_problem(alice.get("/api/v1/me"), 401)
    assert world["page"].get("/settings").status_code == 302  # to the log-in page
    assert (
        "taken"
        in assert_problem(api.post("/api/v1/users", {"username": "Alice", "password": "password123"}), 409)["detail"]
    )

    # no row
    assert not User.objects.filter(pk=me).exists()
    assert not Board.objects.filter(Q(author_id=me) | Q(pk__in=boards)).exists()
    assert not Follow.objects.filter(Q(follower_id=me) | Q(followee_id=me)).exists()
    assert not Read.objects.filter(Q(reader_id=me) | Q(board_id__in=boards)).exists()
    assert not Notification.objects.filter(
        Q(recipient_id=me) | Q(actors__contains=[me]) | Q(board_id__in=boards)
    ).exists()
    assert not Block.objects.exists() and not Mute.objects.filter(Q(muter_id=me) | Q(muted_id=me)).exists()
    assert not BoardEditor.objects.filter(Q(user_id=me) | Q(board_id__in=boards)).exists()
    assert not TimelineChunk.objects.filter(owner_id=me).exists()
    assert not ApiToken.objects.filter(user_id=me).exists() and not UserSession.objects.filter(user_id=me).exists()
    assert not Report.objects.filter(reporter_id=me).exists()
    assert not Like.objects.filter(Q(user_id=me) | Q(board_id__in=boards)).exists()
    assert world["carol"].get(f"/api/v1/boards/{world['carols']}").json()["likes"] == 0  # her like stopped counting
    credit = world["bob"].get(f"/api/v1/boards/{world['remix']}").json()["remixed_from"]
    assert credit == {"id": boards[1], "username": None, "title": None}  # "a deleted board"
    assert not ReportCase.objects.filter(Q(person_id=me) | Q(board_id__in=boards)).exists()
    # the others' counts lost them
    after = {u.username: (u.followers_count, u.following_count) for u in User.objects.all()}
    assert after["bob"] == (counts_before["bob"][0], counts_before["bob"][1] - 1)
    assert after["carol"] == (counts_before["carol"][0] - 1, counts_before["carol"][1] - 1)

    # no key of theirs, no member naming them or their boards, no feed entry
    tag = social_keys.user_tag(me)
    assert [key for key in all_keys() if tag in key] == []
    naming = members_naming(me, boards)
    assert naming == [], naming
    for name in ("bob", "carol"):
        feed = world[name].get("/api/v1/feed").json()["items"]
        assert not {item["id"] for item in feed} & set(boards)
    for item in world["carol"].get("/api/v1/notifications").json()["items"]:
        assert "alice" not in item["actors"] and item["actor_count"] >= 1

    # and nothing comes back from PostgreSQL
    call_command("rebuild_redis", stdout=io.StringIO(), stderr=io.StringIO())
    assert [key for key in all_keys() if tag in key] == []
    naming = members_naming(me, boards)
    assert naming == [], naming


def test_the_username_is_free_again_after_the_quarantine(world, run, api):
    run(world["alice"].delete, "/api/v1/me", {"password": "password123"})
    assert_problem(api.post("/api/v1/users", {"username": "alice", "password": "password123"}), 409)
    RetiredUsername.objects.filter(name="alice").update(free_after=timezone.now())
    assert api.post("/api/v1/users", {"username": "alice", "password": "password123"}).status_code == 201


def test_the_settings_page_deletes_the_account(world, run):
    page = world["page"]
    settings_page = page.get("/settings").content.decode()
    assert 'data-testid="delete-account"' in settings_page
    wrong = run(page.post, "/settings/delete", {"password": "wrong"}, follow=True)
    assert "not your password" in wrong.content.decode() and User.objects.filter(username="alice").exists()
    response = run(page.post, "/settings/delete", {"password": "password123"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert not User.objects.filter(username="alice").exists()
    assert page.get("/settings").status_code == 302


def test_an_erasure_the_broker_lost_is_run_by_beat(world, django_capture_on_commit_callbacks, run):
    with django_capture_on_commit_callbacks(execute=False):  # the task is never sent
        assert world["alice"].delete("/api/v1/me", {"password": "password123"}).status_code == 204
    me = world["ids"]["alice"]
    assert User.objects.filter(pk=me, is_active=False).exists()
    assert tasks.accounts_erase_pending() == 0  # not yet an hour
    RetiredUsername.objects.filter(name="alice").update(free_after=timezone.now())
    assert run(tasks.accounts_erase_pending) == 1
    assert not User.objects.filter(pk=me).exists()
    User.objects.filter(username="bob").update(is_active=False)  # a suspension is no closed account
    assert tasks.accounts_erase_pending() == 0
