"""Notifications (API.md, "Search, notifications, your own settings"): a follow and an invite
tell one person at once, gathered per kind, board and day while unread ("alice and 41 others
followed you": one row, whatever the number); a board's editors are told by a task; read
marks; the header's count; the 400s and 401s."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from feeds import notifications, selectors, tasks
from feeds.models import Notification
from feeds.rules import NOTIFICATION_ACTORS_KEPT
from feeds.services import moderation, notifications as notify
from feeds.tasks import NOTIFY_BATCH
from social.models import User
from ugcsite.testing import assert_problem

pytestmark = pytest.mark.django_db

NOTES = "/api/v1/notifications"
READ = "/api/v1/notifications/read"
DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}


def test_follows_gather_into_one_item(api, run):
    alice = api.as_user("alice")
    followers = [api.as_user(f"fan_{i}") for i in range(5)]
    for fan in followers:
        assert run(fan.put, "/api/v1/users/alice/follow").status_code == 204
    run(followers[0].put, "/api/v1/users/alice/follow")  # again: idempotent, not counted twice

    body = alice.get(NOTES).json()
    assert body["unread"] == 1
    [item] = body["items"]
    assert item["kind"] == "follow" and item["actor_count"] == 5 and item["read"] is False and item["board"] is None
    assert item["actors"] == ["fan_4", "fan_3", "fan_2"][:NOTIFICATION_ACTORS_KEPT]  # the latest, newest first
    assert Notification.objects.count() == 1


def test_unfollow_and_follow_again_counts_once_among_the_names_kept(api, run):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    run(bob.put, "/api/v1/users/alice/follow")
    run(bob.delete, "/api/v1/users/alice/follow")
    run(bob.put, "/api/v1/users/alice/follow")
    [item] = alice.get(NOTES).json()["items"]
    assert item["actor_count"] == 1 and item["actors"] == ["bob"]


def test_reading_closes_an_item_and_new_follows_start_another(api, run):
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    run(bob.put, "/api/v1/users/alice/follow")
    [first] = alice.get(NOTES).json()["items"]
    assert run(alice.post, READ, {"ids": [first["id"]]}).status_code == 204
    assert alice.get(NOTES).json()["unread"] == 0

    run(carol.put, "/api/v1/users/alice/follow")
    body = alice.get(NOTES).json()
    assert body["unread"] == 1
    assert [(i["actors"], i["read"]) for i in body["items"]] == [(["carol"], False), (["bob"], True)]

    assert run(alice.post, READ, {"all": True}).status_code == 204
    assert alice.get(NOTES).json()["unread"] == 0


def test_read_marks_touch_only_the_callers_own(api, run):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    run(alice.put, "/api/v1/users/bob/follow")
    run(bob.put, "/api/v1/users/alice/follow")
    bobs = bob.get(NOTES).json()["items"][0]["id"]
    assert run(alice.post, READ, {"ids": [bobs]}).status_code == 204  # not hers: ignored
    assert bob.get(NOTES).json()["unread"] == 1


def test_a_day_later_is_a_new_item(api, run):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    alice_id, bob_id = (User.objects.get(username=n).pk for n in ("alice", "bob"))
    yesterday = timezone.now() - timedelta(days=1)
    notifications.notifications_add(
        kind="follow", recipient_ids=[alice_id], actor_id=bob_id, board_id=None, at=yesterday
    )
    run(bob.put, "/api/v1/users/alice/follow")
    assert alice.get(NOTES).json()["unread"] == 2


def test_a_million_followers_are_one_row(api):
    """What a popular author's day of follows costs: one row, whatever the count (the actors are
    synthetic ids: rows only store them)."""
    alice = api.as_user("alice")
    alice_id = User.objects.get(username="alice").pk
    now = timezone.now()
    for actor in range(10**6, 10**6 + 200):
        notifications.notifications_add(kind="follow", recipient_ids=[alice_id], actor_id=actor, board_id=None, at=now)
    row = Notification.objects.get()
    assert row.actor_count == 200 and len(row.actors) == NOTIFICATION_ACTORS_KEPT
    assert alice.get(NOTES).json()["items"][0]["actors"] == []  # no such people: no names shown, the count stays


def test_invite_names_the_board_and_suspended_actors_are_left_out(api, run):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    board_id = run(alice.post, "/api/v1/boards", {"title": "Our map", "kind": "map", "doc": DOC}).json()["id"]
    alice_id, bob_id = (User.objects.get(username=n).pk for n in ("alice", "bob"))
    notify.notify_invite(inviter_id=alice_id, invitee_id=bob_id, board_id=board_id)
    notify.notify_invite(inviter_id=alice_id, invitee_id=bob_id, board_id=board_id)  # again: still one
    [item] = bob.get(NOTES).json()["items"]
    assert item["kind"] == "invite" and item["actors"] == ["alice"] and item["actor_count"] == 1
    assert item["board"]["id"] == board_id and item["board"]["title"] == "Our map"

    run(alice.delete, f"/api/v1/boards/{board_id}")
    assert bob.get(NOTES).json()["items"][0]["board"] is None  # a board that is gone is no board
    run(moderation.user_suspend, user=User.objects.get(username="alice"))
    assert bob.get(NOTES).json()["items"][0]["actors"] == []


def test_board_changed_reaches_every_editor_in_the_callers_transaction(api, run):
    """No task and no broker between the change and its notices: they commit, or roll back, with
    the caller's transaction (a compaction's, feeds.live.compaction)."""
    alice = api.as_user("alice")
    board_id = run(alice.post, "/api/v1/boards", {"title": "Shared", "kind": "note", "doc": DOC}).json()["id"]
    editors = [User.objects.create_user(username=f"ed_{i}", password="x" * 12).pk for i in range(5)]
    alice_id = User.objects.get(username="alice").pk
    with transaction.atomic():
        notify.notify_board_changed(board_id=board_id, actor_id=alice_id, recipient_ids=editors + [alice_id])
        transaction.set_rollback(True)
    assert not Notification.objects.filter(kind="board_changed").exists()
    notify.notify_board_changed(board_id=board_id, actor_id=alice_id, recipient_ids=editors + [alice_id])
    rows = Notification.objects.filter(kind="board_changed")
    assert sorted(rows.values_list("recipient_id", flat=True)) == editors  # not the actor herself
    assert all(row.board_id == board_id and row.actors == [alice_id] for row in rows)


def test_a_board_changed_task_queued_by_the_release_before_still_runs_in_batches(api, run, monkeypatch):
    alice = api.as_user("alice")
    board_id = run(alice.post, "/api/v1/boards", {"title": "Shared", "kind": "note", "doc": DOC}).json()["id"]
    editors = [User.objects.create_user(username=f"ed_{i}", password="x" * 12).pk for i in range(5)]
    alice_id = User.objects.get(username="alice").pk
    monkeypatch.setattr("feeds.tasks.NOTIFY_BATCH", 2)
    assert NOTIFY_BATCH >= 2
    run(tasks.notify_board_changed, board_id, alice_id, editors + [alice_id])
    rows = Notification.objects.filter(kind="board_changed")
    assert sorted(rows.values_list("recipient_id", flat=True)) == editors
    assert all(row.board_id == board_id and row.actors == [alice_id] for row in rows)


def test_no_notification_for_oneself(api):
    alice = api.as_user("alice")
    alice_id = User.objects.get(username="alice").pk
    notifications.notifications_add(
        kind="follow", recipient_ids=[alice_id], actor_id=alice_id, board_id=None, at=timezone.now()
    )
    assert alice.get(NOTES).json() == {"unread": 0, "items": []}


def test_paging(api, run):
    alice = api.as_user("alice")
    alice_id = User.objects.get(username="alice").pk
    now = timezone.now()
    for day in range(5):
        notifications.notifications_add(
            kind="follow", recipient_ids=[alice_id], actor_id=10**6 + day, board_id=None, at=now - timedelta(days=day)
        )
    pages = [alice.get(NOTES, offset=o, limit=2).json()["items"] for o in (0, 2, 4)]
    created = [item["created_at"] for page in pages for item in page]
    assert len(created) == 5 and created == sorted(created, reverse=True)


@pytest.mark.parametrize(
    "body, status",
    [
        ({}, 400),
        ({"ids": []}, 400),
        ({"all": False}, 400),
        ({"ids": [1], "all": True}, 400),
        ({"ids": ["1"]}, 400),
        ({"ids": [0]}, 400),
        ({"ids": list(range(1, 102))}, 400),
        ({"every": True}, 400),
        ({"ids": [1.5]}, 400),
        ({"ids": [True]}, 400),
        ({"ids": [1]}, 204),
        ({"ids": [2.0]}, 204),
        ({"all": True}, 204),
    ],
)
def test_read_bodies(api, body, status):
    alice = api.as_user("alice")
    response = alice.post(READ, body)
    assert response.status_code == status, response.content
    if status == 400:
        assert response.json()["detail"]


def test_anonymous_is_401(api):
    assert_problem(api.get(NOTES), 401)
    assert_problem(api.post(READ, {"all": True}), 401)
    assert_problem(api.get(NOTES, limit=0), 401)  # 401 before 400


def test_header_count_and_page(api, run, client):
    bob = api.as_user("bob")
    User.objects.create_user(username="alice", password="password123")
    run(bob.put, "/api/v1/users/alice/follow")
    client.login(username="alice", password="password123")
    html = client.get("/").content.decode()
    assert 'data-testid="unread-count">1<' in html and 'role="search"' in html
    page = client.get("/notifications").content.decode()
    assert "bob" in page and "followed you" in page
    assert client.post("/notifications").status_code == 302
    assert 'data-testid="unread-count"' not in client.get("/").content.decode()


def test_the_page_marks_one_item_read(api, run, client):
    """Each unread item has its own button; it marks that item only, and only the caller's."""
    bob, carol = api.as_user("bob"), api.as_user("carol")
    alice = User.objects.create_user(username="alice", password="password123")
    run(bob.put, "/api/v1/users/alice/follow")
    board_id = run(carol.post, "/api/v1/boards", {"title": "Ours", "kind": "note", "doc": DOC}).json()["id"]
    run(carol.put, f"/api/v1/boards/{board_id}/editors/alice")
    follow, invite = (Notification.objects.get(recipient_id=alice.pk, kind=kind) for kind in ("follow", "invite"))
    run(bob.put, "/api/v1/users/carol/follow")
    carols = Notification.objects.get(recipient_id=User.objects.get(username="carol").pk, kind="follow")
    client.login(username="alice", password="password123")
    page = client.get("/notifications").content.decode()
    assert page.count("Mark as read<") == 2 and f'name="id" value="{invite.pk}"' in page
    assert client.post("/notifications", {"id": invite.pk, "page": "1"})["Location"] == "/notifications?page=1"
    assert (Notification.objects.get(pk=invite.pk).read, Notification.objects.get(pk=follow.pk).read) == (True, False)
    assert "1 unread" in client.get("/notifications").content.decode()
    assert client.post("/notifications", {"id": carols.pk}).status_code == 302  # someone else's: untouched
    for junk in ("x", "²", "9" * 5000):  # a non-ASCII digit and a huge number are no ids either
        assert client.post("/notifications", {"id": junk, "page": "³"})["Location"] == "/notifications"
    assert not Notification.objects.get(pk=carols.pk).read and not Notification.objects.get(pk=follow.pk).read


def test_a_page_costs_the_same_queries_however_many_items(api, run, django_assert_num_queries):
    alice = api.as_user("alice")
    alice_user = User.objects.get(username="alice")
    board_id = run(alice.post, "/api/v1/boards", {"title": "Ours", "kind": "note", "doc": DOC}).json()["id"]
    now = timezone.now()
    actor_ids = [User.objects.create_user(username=name, password="x" * 12).pk for name in ("bob", "carol")]
    for day in range(6):
        for actor_id in actor_ids:
            notifications.notifications_add(
                kind="invite",
                recipient_ids=[alice_user.pk],
                actor_id=actor_id,
                board_id=board_id,
                at=now - timedelta(days=day),
            )
    selectors.notifications_list(alice_user, offset=0, limit=20)  # G filled
    with django_assert_num_queries(3):  # the page, the actors' names, the unread count
        answer = selectors.notifications_list(alice_user, offset=0, limit=20)
    assert len(answer["items"]) == 6 and all(item["board"]["id"] == board_id for item in answer["items"])
    assert all(sorted(item["actors"]) == ["bob", "carol"] and item["actor_count"] == 2 for item in answer["items"])
