"""Block and mute (docs/api.md, "Safety: block and mute"), through the API on real PostgreSQL and
Redis, tasks run in-process: what a block ends, refuses and hides, both ways; what a mute hides
and an unmute brings back; the hidden sets rebuilt from PostgreSQL."""

import pytest
from django.test import Client

from feeds import keys
from feeds.models import Notification
from feeds.services import notifications as notify
from feeds.timelines import rebuild
from social import hiding, keys as social_keys
from social.models import Block, Follow, Mute, User
from ugcsite.platform.redis import get_redis
from ugcsite.testing import assert_problem

pytestmark = pytest.mark.django_db

DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}


def publish(run, client, title: str, *, tags=("safety",)) -> int:
    response = run(client.post, "/api/v1/boards", {"title": title, "kind": "note", "tags": list(tags), "doc": DOC})
    assert response.status_code == 201, response.content
    return response.json()["id"]


def ids_of(response) -> list[int]:
    assert response.status_code == 200, response.content
    items = response.json()["items"]
    return [item["board"]["id"] if "board" in item else item["id"] for item in items]


@pytest.fixture
def pair(api, run):
    """alice and bob, who follow each other, each with a board in the other's feed."""
    alice, bob = api.as_user("alice"), api.as_user("bob")
    for one, other in ((alice, "bob"), (bob, "alice")):
        assert run(one.put, f"/api/v1/users/{other}/follow").status_code == 204
    boards = {"alice": publish(run, alice, "alice draws"), "bob": publish(run, bob, "bob draws")}
    assert boards["bob"] in ids_of(alice.get("/api/v1/feed"))
    assert boards["alice"] in ids_of(bob.get("/api/v1/feed"))
    return alice, bob, boards


def test_a_block_ends_both_follows_and_empties_both_feeds(pair, run, redis_data):
    alice, bob, boards = pair
    assert run(alice.put, "/api/v1/users/bob/block").status_code == 204
    assert not Follow.objects.exists()
    a, b = User.objects.get(username="alice"), User.objects.get(username="bob")
    assert (a.followers_count, a.following_count, b.followers_count, b.following_count) == (0, 0, 0, 0)
    # the unfollow path's clean-up ran (a task): each P lost the other's board, not only the page
    assert redis_data.zscore(keys.home_timeline(a.pk), boards["bob"]) is None
    assert redis_data.zscore(keys.home_timeline(b.pk), boards["alice"]) is None
    assert ids_of(alice.get("/api/v1/feed")) == [] and ids_of(bob.get("/api/v1/feed")) == []
    assert alice.get("/api/v1/me/blocks").json() == {"items": [{"id": b.pk, "username": "bob"}]}
    assert bob.get("/api/v1/me/blocks").json() == {"items": []}


def test_neither_may_follow_or_invite_the_other_while_it_holds(pair, run):
    alice, bob, boards = pair
    run(alice.put, "/api/v1/users/bob/block")
    for one, other in ((alice, "bob"), (bob, "alice")):
        problem = assert_problem(run(one.put, f"/api/v1/users/{other}/follow"), 403)
        assert "blocked" in problem["detail"]
    assert_problem(run(alice.put, f"/api/v1/boards/{boards['alice']}/editors/bob"), 403)
    assert_problem(run(bob.put, f"/api/v1/boards/{boards['bob']}/editors/alice"), 403)
    assert not Follow.objects.exists()


def test_a_block_withdraws_the_invitations_between_them(api, run):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    theirs = publish(run, alice, "ours"), publish(run, bob, "yours")
    assert run(alice.put, f"/api/v1/boards/{theirs[0]}/editors/bob").status_code == 204
    assert run(bob.put, f"/api/v1/boards/{theirs[1]}/editors/alice").status_code == 204
    run(bob.put, "/api/v1/users/alice/block")
    assert api.get(f"/api/v1/boards/{theirs[0]}/editors").json() == {"items": []}
    assert api.get(f"/api/v1/boards/{theirs[1]}/editors").json() == {"items": []}


def test_the_blocked_person_gets_404_for_the_blockers_profile_and_boards(pair, run, api):
    alice, bob, boards = pair
    run(alice.put, "/api/v1/users/bob/block")
    for path in (
        "/api/v1/users/alice",
        "/api/v1/users/alice/boards",
        "/api/v1/users/alice/followers",
        f"/api/v1/boards/{boards['alice']}",
        f"/api/v1/boards/{boards['alice']}/preview.svg",
    ):
        assert_problem(bob.get(path), 404)
        assert api.get(path).status_code == 200, path  # to anyone else it is there
    page = Client()  # the pages, signed in by session
    page.force_login(User.objects.get(username="bob"))
    for path in ("/u/alice", f"/b/{boards['alice']}", "/u/alice/followers"):
        assert page.get(path).status_code == 404, path
    # the blocker still sees the person they blocked (to unblock them)
    assert alice.get("/api/v1/users/bob").status_code == 200
    assert alice.get(f"/api/v1/boards/{boards['bob']}").status_code == 200


def test_neither_sees_the_others_boards_in_discovery_search_popular_or_reading(pair, run, api):
    alice, bob, boards = pair
    carol = api.as_user("carol")
    run(carol.patch, "/api/v1/me", {"share_reading": True})
    run(alice.put, "/api/v1/users/carol/follow")
    run(bob.put, "/api/v1/users/carol/follow")
    for board_id in boards.values():
        assert run(carol.get, f"/api/v1/boards/{board_id}").status_code == 200  # a view and a read
    run(alice.put, "/api/v1/users/bob/block")
    lists = {
        "discover": "/api/v1/discover?tag=safety",
        "search": "/api/v1/search?q=draws&type=boards",
        "popular": "/api/v1/popular",
    }
    for name, path in lists.items():
        everyone = ids_of(api.get(path))
        assert set(boards.values()) <= set(everyone), name
        assert boards["bob"] not in ids_of(alice.get(path)) and boards["alice"] in ids_of(alice.get(path)), name
        assert boards["alice"] not in ids_of(bob.get(path)) and boards["bob"] in ids_of(bob.get(path)), name
    asked = f"/api/v1/reading?ids={boards['alice']},{boards['bob']}"
    assert alice.get(asked).json() == {str(boards["alice"]): ["carol"]}
    assert bob.get(asked).json() == {str(boards["bob"]): ["carol"]}
    # people search: neither finds the other; a third person finds both
    assert "bob" not in [p["username"] for p in alice.get("/api/v1/search?q=bob&type=users").json()["items"]]
    assert "bob" in [p["username"] for p in carol.get("/api/v1/search?q=bob&type=users").json()["items"]]


def test_the_blocker_is_told_nothing_the_blocked_person_does(pair, run):
    alice, bob, boards = pair
    before = alice.get("/api/v1/notifications").json()
    assert [item["actors"] for item in before["items"]] == [["bob"]] and before["unread"] == 1  # bob's follow
    run(alice.put, "/api/v1/users/bob/block")
    after = alice.get("/api/v1/notifications").json()
    assert after == {"unread": 0, "items": []}
    # nothing new is even written while it holds, whatever would tell her (here a notice of a
    # board change, the one kind a block leaves no other door for)
    rows = Notification.objects.count()
    a, b = User.objects.get(username="alice"), User.objects.get(username="bob")
    run(notify.notify_board_changed, board_id=boards["alice"], actor_id=b.pk, recipient_ids=[a.pk])
    run(notify.notify_board_changed, board_id=boards["bob"], actor_id=a.pk, recipient_ids=[b.pk])
    assert Notification.objects.count() == rows


def test_unblocking_restores_no_follow_and_allows_one_again(pair, run):
    alice, bob, _ = pair
    run(alice.put, "/api/v1/users/bob/block")
    assert run(alice.delete, "/api/v1/users/bob/block").status_code == 204
    assert run(alice.delete, "/api/v1/users/bob/block").status_code == 204  # idempotent
    assert not Follow.objects.exists() and not Block.objects.exists()
    assert run(bob.put, "/api/v1/users/alice/follow").status_code == 204
    assert get_redis().zcard(social_keys.hidden(User.objects.get(username="alice").pk)) == 0


def test_block_and_mute_answer_400_404_and_401(api, run):
    alice = api.as_user("alice")
    for what in ("block", "mute"):
        assert "yourself" in assert_problem(run(alice.put, f"/api/v1/users/alice/{what}"), 400)["detail"]
        assert "yourself" in assert_problem(run(alice.delete, f"/api/v1/users/alice/{what}"), 400)["detail"]
        assert_problem(run(alice.put, f"/api/v1/users/nobody_here/{what}"), 404)
        assert_problem(run(api.put, f"/api/v1/users/alice/{what}"), 401)
    assert_problem(api.get("/api/v1/me/blocks"), 401)
    assert_problem(api.get("/api/v1/me/mutes"), 401)
    assert run(alice.put, "/api/v1/users/alice/follow").status_code == 400


def test_a_mute_hides_boards_and_notifications_and_an_unmute_brings_back_everything(pair, run):
    alice, bob, boards = pair
    assert run(alice.put, "/api/v1/users/bob/mute").status_code == 204
    assert run(alice.put, "/api/v1/users/bob/mute").status_code == 204  # idempotent
    made_meanwhile = publish(run, bob, "bob draws while muted")
    feed = ids_of(alice.get("/api/v1/feed"))
    assert boards["bob"] not in feed and made_meanwhile not in feed
    assert boards["bob"] not in ids_of(alice.get("/api/v1/discover?tag=safety"))
    assert alice.get("/api/v1/notifications").json() == {"unread": 0, "items": []}
    # bob is told nothing and sees alice as before; the follows stay
    assert Follow.objects.count() == 2
    assert boards["alice"] in ids_of(bob.get("/api/v1/feed"))
    assert alice.get("/api/v1/me/mutes").json()["items"] == [
        {"id": User.objects.get(username="bob").pk, "username": "bob"}
    ]

    assert run(alice.delete, "/api/v1/users/bob/mute").status_code == 204
    feed = ids_of(alice.get("/api/v1/feed"))
    assert made_meanwhile in feed and boards["bob"] in feed
    assert alice.get("/api/v1/notifications").json()["unread"] == 1
    assert not Mute.objects.exists()


def test_a_mute_leaves_a_gathered_notice_with_its_other_actors(api, run):
    alice = api.as_user("alice")
    fans = [api.as_user(name) for name in ("bob", "carol")]
    for fan in fans:
        run(fan.put, "/api/v1/users/alice/follow")
    run(alice.put, "/api/v1/users/bob/mute")
    [item] = alice.get("/api/v1/notifications").json()["items"]
    assert item["actors"] == ["carol"] and item["actor_count"] == 1


def test_the_hidden_sets_come_back_from_postgresql(pair, run, api):
    alice, bob, _ = pair
    carol = api.as_user("carol")
    run(alice.put, "/api/v1/users/bob/block")
    run(carol.put, "/api/v1/users/alice/mute")
    ids = {u.username: u.pk for u in User.objects.all()}
    expected = {name: get_redis().zrange(social_keys.hidden(ids[name]), 0, -1, withscores=True) for name in ids}
    assert expected["alice"] == [(str(ids["bob"]), float(hiding.BLOCKS))]
    assert expected["bob"] == [(str(ids["alice"]), float(hiding.BLOCKED_BY))]
    assert expected["carol"] == [(str(ids["alice"]), float(hiding.MUTES))]
    for user_id in ids.values():
        get_redis().delete(social_keys.hidden(user_id))
    rebuild.rebuild_hidden(list(ids.values()), lambda n=1: None)
    assert {name: get_redis().zrange(social_keys.hidden(ids[name]), 0, -1, withscores=True) for name in ids} == expected


def test_the_pages_block_mute_and_list_them_in_settings(pair, run):
    alice, bob, _ = pair
    page = Client()
    page.force_login(User.objects.get(username="alice"))
    profile = page.get("/u/bob").content.decode()
    assert "Block bob" in profile and "Mute bob" in profile and "data-follow-button" in profile
    response = run(page.post, "/u/bob/safety", {"action": "block"})
    assert response.status_code == 302 and response["Location"] == "/u/bob"
    profile = page.get("/u/bob").content.decode()  # on-commit work done: the message and the new menu
    assert "You blocked bob" in profile
    assert "Unblock bob" in profile and "data-follow-button" not in profile
    run(page.post, "/u/bob/safety", {"action": "mute"})
    settings_page = page.get("/settings").content.decode()
    assert 'data-testid="blocks"' in settings_page and 'data-testid="mutes"' in settings_page
    response = run(page.post, "/u/bob/safety", {"action": "unblock", "next": "/settings"})
    assert response["Location"] == "/settings" and 'data-testid="blocks"' not in page.get("/settings").content.decode()
    assert Block.objects.count() == 0 and Mute.objects.count() == 1
    assert "Choose block" in run(page.post, "/u/bob/safety", {"action": "nuke"}, follow=True).content.decode()
    assert "yourself" in run(page.post, "/u/alice/safety", {"action": "mute"}, follow=True).content.decode()
    # a blocked follow from the page is a message, not an error page
    run(page.post, "/u/bob/safety", {"action": "block"})
    other = Client()
    other.force_login(User.objects.get(username="bob"))
    assert run(other.post, "/u/alice/follow", {"action": "follow"}).status_code == 302
    assert not Follow.objects.exists()
