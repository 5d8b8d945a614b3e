"""Staff moderation: hiding a board or suspending its author takes it out of every list and
feed; undoing it brings back exactly what was hidden."""

import io

import pytest
from django.core.management import call_command

from feeds import keys
from feeds.models import Board
from feeds.services import boards as board_services, follows, moderation
from social.models import ApiToken, Follow, User
from social.selectors import UserNotFound
from ugcsite.testing import with_second_factor

pytestmark = pytest.mark.django_db

DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}


@pytest.fixture
def world(api, run):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    run(bob.put, "/api/v1/users/alice/follow")
    ids = [
        run(alice.post, "/api/v1/boards", {"title": f"b{i}", "kind": "note", "doc": DOC}).json()["id"] for i in range(3)
    ]
    return alice, bob, ids


def lists(api, bob):
    feed = [i["id"] for i in bob.get("/api/v1/feed").json()["items"]]
    profile = [i["id"] for i in api.get("/api/v1/users/alice/boards").json()["items"]]
    return feed, profile


def test_hide_and_unhide_a_board(api, run, world, redis_data):
    alice, bob, (first, second, third) = world
    board = Board.objects.get(pk=second)
    assert run(moderation.board_hide, board=board)
    assert api.get(f"/api/v1/boards/{second}").status_code == 404
    assert lists(api, bob) == ([third, first], [third, first])
    bob_id = bob.get("/api/v1/me").json()["id"]
    assert redis_data.zscore(keys.home_timeline(bob_id), second) is None  # retracted, not just filtered
    assert api.get("/api/v1/users/alice").json()["boards"] == 2

    assert run(moderation.board_unhide, board=board)
    assert api.get(f"/api/v1/boards/{second}").status_code == 200
    assert lists(api, bob) == ([third, second, first], [third, second, first])
    assert api.get("/api/v1/users/alice").json()["boards"] == 3
    assert not run(moderation.board_unhide, board=board)  # only hidden boards come back


def test_a_deleted_board_cannot_be_unhidden(api, run, world):
    alice, bob, (first, _, _) = world
    run(alice.delete, f"/api/v1/boards/{first}")
    assert not run(moderation.board_unhide, board=Board.objects.get(pk=first))
    assert api.get(f"/api/v1/boards/{first}").status_code == 404


def test_suspend_and_restore_a_user(api, run, world, redis_data):
    alice, bob, ids = world
    user = Board.objects.get(pk=ids[0]).author
    staff_hidden = Board.objects.get(pk=ids[0])
    run(moderation.board_hide, board=staff_hidden)
    assert run(moderation.user_suspend, user=user) == 2
    assert alice.get("/api/v1/me").status_code == 401  # tokens are gone
    assert api.post("/api/v1/tokens", {"username": "alice", "password": "password123"}).status_code == 401
    assert [i["id"] for i in bob.get("/api/v1/feed").json()["items"]] == []
    assert api.get("/api/v1/users/alice/boards").status_code == 404  # a suspended user is no one
    assert all(api.get(f"/api/v1/boards/{i}").status_code == 404 for i in ids)
    assert not any(redis_data.exists(keys.board(i)) for i in ids)

    assert run(moderation.user_unsuspend, user=user) == 2
    assert api.post("/api/v1/tokens", {"username": "alice", "password": "password123"}).status_code == 201
    # the board staff hid on its own stays hidden
    assert lists(api, bob) == ([ids[2], ids[1]], [ids[2], ids[1]])
    assert ApiToken.objects.filter(user=user).count() == 1


def test_an_edit_racing_a_delete_cannot_bring_the_board_back(api, run, world, redis_data):
    """A PATCH that passed its visibility check, committing after a DELETE (helper's repro)."""
    from feeds import selectors
    from feeds.discovery.queries import Query

    alice, bob, (first, _, _) = world
    stale = selectors.board_get_visible(first)  # the edit has read the board
    run(board_services.board_delete, board=Board.objects.get(pk=first))  # the delete commits first
    with pytest.raises(board_services.BoardGone):
        run(board_services.board_update, board=stale, changes={"tags": ["b"], "title": "edited"})
    assert Board.objects.get(pk=first).state == "deleted" and Board.objects.get(pk=first).title == "b0"
    assert selectors.discover(Query(tags=("b",)), offset=0, limit=10)["total"] == 0
    assert not redis_data.exists(keys.board(first))


# --- a suspended person leaves every follower and following list ------------------------------------


def names(api, path: str, **query) -> tuple[list[str], int]:
    answer = api.get(path, **query).json()
    return [item["username"] for item in answer["items"]], answer["total"]


def counts(api, username: str) -> tuple[int, int]:
    profile = api.get(f"/api/v1/users/{username}").json()
    return profile["followers"], profile["following"]


@pytest.fixture
def circle(api, run):
    """bob follows alice, carol and dave (in that order); alice, carol and dave follow bob."""
    people = {name: api.as_user(name) for name in ("alice", "bob", "carol", "dave")}
    for name in ("alice", "carol", "dave"):
        run(people["bob"].put, f"/api/v1/users/{name}/follow")
        run(people[name].put, "/api/v1/users/bob/follow")
    return people


def test_a_suspended_person_leaves_every_list_with_exact_totals_and_comes_back_in_place(api, run, circle, client):
    carol = User.objects.get(username="carol")
    assert names(api, "/api/v1/users/bob/following") == (["dave", "carol", "alice"], 3)

    run(moderation.user_suspend, user=carol)

    assert names(api, "/api/v1/users/bob/following") == (["dave", "alice"], 2)
    assert names(api, "/api/v1/users/bob/followers") == (["dave", "alice"], 2)
    assert names(api, "/api/v1/users/bob/following", offset="1", limit="1") == (["alice"], 2)
    assert counts(api, "bob") == (2, 2)  # the profile's counts are the lists' totals
    html = client.get("/u/bob/following").content.decode()
    assert "carol" not in html and "2 people" in html
    assert "carol" not in client.get("/u/bob/followers").content.decode()
    assert '<strong data-count="followers">2</strong>' in client.get("/u/bob").content.decode()

    run(moderation.user_unsuspend, user=carol)

    assert names(api, "/api/v1/users/bob/following") == (["dave", "carol", "alice"], 3)  # at its follow time
    assert names(api, "/api/v1/users/bob/followers") == (["dave", "carol", "alice"], 3)
    assert counts(api, "bob") == (3, 3)
    assert counts(api, "carol") == (1, 1)


def test_people_suspended_at_the_same_time_stay_out_of_each_others_lists(api, run, circle):
    bob, carol = User.objects.get(username="bob"), User.objects.get(username="carol")
    run(moderation.user_suspend, user=carol)
    run(moderation.user_suspend, user=bob)
    run(moderation.user_unsuspend, user=carol)
    assert names(api, "/api/v1/users/carol/following") == ([], 0)
    assert counts(api, "carol") == (0, 0)
    run(moderation.user_unsuspend, user=bob)
    assert names(api, "/api/v1/users/carol/following") == (["bob"], 1)
    assert names(api, "/api/v1/users/bob/followers") == (["dave", "carol", "alice"], 3)


def test_a_follow_cannot_land_on_someone_suspended_meanwhile(api, run, circle):
    stale_alice = User.objects.get(username="alice")  # the follow has looked her up
    run(moderation.user_suspend, user=User.objects.get(username="alice"))
    with pytest.raises(UserNotFound):
        run(follows.follow_create, follower=User.objects.get(username="dave"), followee=stale_alice)
    assert not Follow.objects.filter(follower__username="dave", followee__username="alice").exists()
    run(moderation.user_unsuspend, user=stale_alice)
    assert names(api, "/api/v1/users/alice/followers") == (["bob"], 1)


def test_rebuild_redis_leaves_suspended_people_out_too(api, run, circle, redis_data):
    run(moderation.user_suspend, user=User.objects.get(username="carol"))
    redis_data.flushdb()
    call_command("rebuild_redis", stdout=io.StringIO())
    assert names(api, "/api/v1/users/bob/following") == (["dave", "alice"], 2)
    assert names(api, "/api/v1/users/bob/followers") == (["dave", "alice"], 2)
    assert counts(api, "bob") == (2, 2)


def test_the_user_form_cannot_suspend_around_the_moderation_actions(client, circle):
    staff = with_second_factor(User.objects.create_superuser("staffer", password="password123"))
    client.force_login(staff)
    bob = User.objects.get(username="bob")
    page = client.get(f"/admin/social/user/{bob.pk}/change/").content.decode()
    assert 'name="is_active"' not in page  # "Suspend selected users" is the way
