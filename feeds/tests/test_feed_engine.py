"""The feed engine through the API and the storage modules, tasks run in-process."""

import pytest
from django.test import override_settings
from redis.connection import AbstractConnection

from feeds import keys
from feeds.models import Board
from feeds.services import activity
from feeds.timelines import store
from social import graph, keys as social_keys
from social.models import Follow
from ugcsite.platform.redis import get_redis

pytestmark = pytest.mark.django_db

DOC = {
    "width": 100,
    "height": 100,
    "background": "#ffffff",
    "elements": [{"type": "path", "color": "#000000", "width": 2, "points": [[1, 1], [99, 99]]}],
}


def post_board(run, client, title="a board", kind="sketch", tags=()):
    response = run(client.post, "/api/v1/boards", {"title": title, "kind": kind, "tags": list(tags), "doc": DOC})
    assert response.status_code == 201, response.content
    return response.json()["id"]


def feed_ids(client, **query):
    response = client.get("/api/v1/feed", **query)
    assert response.status_code == 200, response.content
    return [item["id"] for item in response.json()["items"]]


def test_follow_post_unfollow_delete_through_the_api(api, run, redis_data):
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    old = post_board(run, alice, "before the follow")
    assert run(bob.put, "/api/v1/users/alice/follow").status_code == 204
    assert feed_ids(bob) == [old]  # back-filled
    new = post_board(run, alice, "after the follow")
    assert feed_ids(bob) == [new, old]  # fanned out
    assert feed_ids(carol) == []

    assert run(bob.delete, "/api/v1/users/alice/follow").status_code == 204
    assert feed_ids(bob) == []
    assert redis_data.zcard(keys.home_timeline(bob_id := api.get("/api/v1/users/bob").json()["id"])) == 0

    run(bob.put, "/api/v1/users/ALICE/follow")
    run(carol.put, "/api/v1/users/alice/follow")
    assert feed_ids(bob) == feed_ids(carol) == [new, old]
    assert run(alice.delete, f"/api/v1/boards/{new}").status_code == 204
    assert feed_ids(bob) == feed_ids(carol) == [old]
    assert redis_data.zscore(keys.home_timeline(bob_id), new) is None
    alice_id = api.get("/api/v1/users/alice").json()["id"]
    assert redis_data.zscore(keys.profile_timeline(alice_id), new) is None
    assert not redis_data.exists(keys.board(new))


def test_a_feed_never_holds_the_callers_own_boards(api, run):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    run(alice.put, "/api/v1/users/bob/follow")
    run(bob.put, "/api/v1/users/alice/follow")
    mine = post_board(run, alice)
    theirs = post_board(run, bob)
    assert feed_ids(alice) == [theirs]
    assert feed_ids(bob) == [mine]


def test_an_update_shows_in_lists_at_once(api, run):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    run(bob.put, "/api/v1/users/alice/follow")
    board_id = post_board(run, alice, "old title")
    run(alice.patch, f"/api/v1/boards/{board_id}", {"title": "new title", "tags": ["fresh"]})
    [item] = bob.get("/api/v1/feed").json()["items"]
    assert (item["title"], item["tags"]) == ("new title", ["fresh"])
    [item] = api.get("/api/v1/users/alice/boards").json()["items"]
    assert item["title"] == "new title"
    assert "doc" not in item and item["preview_url"] == f"/api/v1/boards/{board_id}/preview.svg"


def test_offset_and_before_paging_give_the_same_boards_in_the_same_order(api, run):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    run(bob.put, "/api/v1/users/alice/follow")
    posted = [post_board(run, alice, f"board {i}") for i in range(23)]
    expected = list(reversed(posted))

    by_offset, offset = [], 0
    while True:
        page = bob.get("/api/v1/feed", limit=5, offset=offset).json()
        by_offset += [item["id"] for item in page["items"]]
        offset += 5
        if page["next"] is None:
            break
    by_before, cursor = [], None
    while True:
        query = {"limit": 5} | ({"before": cursor} if cursor else {})
        page = bob.get("/api/v1/feed", **query).json()
        by_before += [item["id"] for item in page["items"]]
        cursor = page["next"]
        if cursor is None:
            break
        assert cursor == str(by_before[-1])
    assert by_offset == by_before == expected
    profile = [i["id"] for i in api.get("/api/v1/users/alice/boards", limit=100).json()["items"]]
    assert profile == expected


def test_next_is_null_exactly_when_no_older_item_exists(api, run):
    alice = api.as_user("alice")
    ids = [post_board(run, alice) for _ in range(4)]
    assert api.get("/api/v1/users/alice/boards", limit=4).json()["next"] is None
    assert api.get("/api/v1/users/alice/boards", limit=3).json()["next"] == str(ids[1])
    assert api.get("/api/v1/users/alice/boards", limit=3, offset=1).json()["next"] is None
    assert api.get("/api/v1/users/alice/boards", before=ids[0]).json() == {"items": [], "next": None}


@pytest.mark.parametrize(
    "query",
    [
        {"limit": 0},
        {"limit": 101},
        {"limit": "x"},
        {"limit": -1},
        {"offset": -1},
        {"offset": "1.5"},
        {"before": "abc"},
        {"before": 0},
        {"offset": 0, "before": 5},
    ],
    ids=str,
)
def test_bad_paging_is_a_400(api, query):
    alice = api.as_user("alice")
    for client, path in ((alice, "/api/v1/feed"), (api, "/api/v1/users/alice/boards")):
        response = client.get(path, **query)
        assert response.status_code == 400, (path, query)
        assert response.json()["detail"]
    if "before" not in query:
        assert api.get("/api/v1/users/alice/followers", **query).status_code == 400


def test_unknown_user_is_404_before_a_bad_query(api):
    assert api.get("/api/v1/users/nobody/boards", limit=0).status_code == 404
    assert api.get("/api/v1/users/nobody/followers", limit=0).status_code == 404


def test_follow_rules(api, run):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    assert api.put("/api/v1/users/alice/follow").status_code == 401
    assert run(alice.put, "/api/v1/users/alice/follow").status_code == 400
    assert run(alice.put, "/api/v1/users/ghost/follow").status_code == 404
    assert run(alice.delete, "/api/v1/users/ghost/follow").status_code == 404
    for _ in range(2):  # idempotent
        assert run(bob.put, "/api/v1/users/alice/follow").status_code == 204
    assert Follow.objects.count() == 1
    assert api.get("/api/v1/users/alice").json() | {"id": 0} == {
        "id": 0,
        "username": "alice",
        "display_name": "",
        "bio": "",
        "followers": 1,
        "following": 0,
        "boards": 0,
        "followed_by_me": False,
        "avatar_url": "/u/alice/avatar?v=0",
    }
    assert bob.get("/api/v1/users/Alice").json()["followed_by_me"] is True
    assert bob.get("/api/v1/me").json()["following"] == 1
    for _ in range(2):
        assert run(bob.delete, "/api/v1/users/alice/follow").status_code == 204
    assert bob.get("/api/v1/users/alice").json()["followed_by_me"] is False
    assert api.get("/api/v1/users/alice").json()["followers"] == 0


def test_followers_and_following_lists_newest_first(api, run):
    alice = api.as_user("alice")
    fans = [api.as_user(f"fan{i}") for i in range(5)]
    for fan in fans:
        run(fan.put, "/api/v1/users/alice/follow")
    answer = api.get("/api/v1/users/alice/followers", limit=3).json()
    assert answer["total"] == 5
    assert [p["username"] for p in answer["items"]] == ["fan4", "fan3", "fan2"]
    answer = api.get("/api/v1/users/alice/followers", limit=3, offset=3).json()
    assert [p["username"] for p in answer["items"]] == ["fan1", "fan0"]
    assert api.get("/api/v1/users/fan0/following").json() == {
        "items": [{"id": alice.get("/api/v1/me").json()["id"], "username": "alice"}],
        "total": 1,
    }
    profile = api.get("/api/v1/users/alice").json()
    assert profile["followers"] == 5


@override_settings(FANOUT_BATCH_SIZE=3)
def test_fanout_walks_every_follower_in_batches(api, run, redis_data):
    from feeds.services.follows import follow_create
    from social.services import user_create

    author = user_create(username="star", password="password123")
    fans = [user_create(username=f"fan{i}", password="password123") for i in range(10)]
    for fan in fans:
        run(lambda f=fan: follow_create(follower=f, followee=author))
    star = api.as_user("star", "password123")
    board_id = post_board(run, star)
    for fan in fans:
        assert redis_data.zscore(keys.home_timeline(fan.pk), board_id) == board_id
    assert Board.objects.get(pk=board_id).author_id == author.pk


def test_the_unfollow_race_leaves_no_stale_board(api, run, redis_data):
    """A fan-out batch reads its followers, the follower unfollows (and the clean-up runs), and
    only then does the batch write: the board must not land in the ex-follower's feed."""
    from feeds.services.follows import follow_create, follow_delete
    from social.services import user_create

    author = user_create(username="author", password="password123")
    reader = user_create(username="reader", password="password123")
    run(lambda: follow_create(follower=reader, followee=author))
    board = Board.objects.create(
        id=10**12,
        author=author,
        title="t",
        kind="note",
        doc_json="{}",
        created_at="2026-01-01T00:00Z",
        updated_at="2026-01-01T00:00Z",
    )

    followers, _ = graph.followers_batch(author.pk, graph.FollowerCursor(), 1000)  # the batch reads F
    assert followers == [reader.pk]
    run(lambda: follow_delete(follower=reader, followee=author))  # unfollow + clean-up complete
    store.home_deliver(followers, author.pk, [board.pk])  # the late batch writes
    assert redis_data.zscore(keys.home_timeline(reader.pk), board.pk) is None

    # The same late write for someone who still follows does land (the guard is the edge, not luck).
    run(lambda: follow_create(follower=reader, followee=author))
    store.home_deliver(followers, author.pk, [board.pk])
    assert redis_data.zscore(keys.home_timeline(reader.pk), board.pk) == board.pk


def test_home_timeline_is_trimmed_to_its_hot_size(api, run, redis_data, settings):
    settings.HOME_TIMELINE_HOT, settings.HOME_TIMELINE_SLACK = 10, 5
    from feeds.services.follows import follow_create
    from social.services import user_create

    author = user_create(username="author", password="password123")
    reader = user_create(username="reader", password="password123")
    run(lambda: follow_create(follower=reader, followee=author))
    for board_id in range(1, 41):
        store.home_deliver([reader.pk], author.pk, [board_id])
        assert redis_data.zcard(keys.home_timeline(reader.pk)) <= 15
    assert redis_data.zrevrange(keys.home_timeline(reader.pk), 0, 0) == ["40"]


def test_hydration_reads_redis_and_only_misses_touch_postgres(api, run, redis_data, django_assert_num_queries):
    from feeds.selectors import home_feed

    alice, bob = api.as_user("alice"), api.as_user("bob")
    run(bob.put, "/api/v1/users/alice/follow")
    ids = [post_board(run, alice, f"b{i}") for i in range(5)]
    bob_id = bob.get("/api/v1/me").json()["id"]
    with django_assert_num_queries(0):
        assert [i["id"] for i in home_feed(bob_id, offset=0, before=None, limit=20)["items"]] == ids[::-1]
    redis_data.delete(keys.board(ids[0]), keys.board(ids[2]))
    with django_assert_num_queries(1):
        home_feed(bob_id, offset=0, before=None, limit=20)
    assert redis_data.exists(keys.board(ids[0]), keys.board(ids[2])) == 2  # written back
    with django_assert_num_queries(0):
        home_feed(bob_id, offset=0, before=None, limit=20)


def test_a_deleted_board_still_in_a_feed_is_dropped_at_read(api, run, redis_data):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    run(bob.put, "/api/v1/users/alice/follow")
    keep, gone = post_board(run, alice), post_board(run, alice)
    Board.objects.filter(pk=gone).update(state=Board.State.HIDDEN)  # as if the retraction lagged
    redis_data.delete(keys.board(gone))
    assert feed_ids(bob) == [keep]
    bob_id = bob.get("/api/v1/me").json()["id"]
    assert redis_data.zscore(keys.home_timeline(bob_id), gone) is None


def test_graph_keys_carry_the_owner_hash_tag():
    assert keys.home_timeline(42).endswith("{u:42}")
    assert keys.profile_timeline(42).endswith("{u:42}")
    assert social_keys.followers(42).endswith("{u:42}")
    assert social_keys.following(42).endswith("{u:42}")
    assert keys.board(7) == "g:{b:7}"


def test_a_warm_feed_request_makes_no_postgresql_query(api, run, django_assert_num_queries):
    """The profile of the feed request (bench/results/profile-feed.txt) had the bearer-token
    lookup as its biggest cost: the caller is now known from Redis, and the feed is Redis only."""
    alice, bob = api.as_user("alice"), api.as_user("bob")
    run(bob.put, "/api/v1/users/alice/follow")
    for i in range(3):
        post_board(run, alice, f"b{i}")
    assert len(feed_ids(bob)) == 3  # warms the token cache and G
    with django_assert_num_queries(0):
        assert len(feed_ids(bob)) == 3


def test_a_warm_feed_page_is_one_round_trip_to_redis(api, run, monkeypatch, settings):
    """A warm page (G filled, nothing archived, no big followee) is one script call on a plain
    Redis: the ids, G, the following check and the activity mark (timeline_page.lua); on a
    cluster G and the following check are two more. A board of someone no longer followed is
    left out of the same page and taken out of P."""
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    run(bob.put, "/api/v1/users/alice/follow")
    run(bob.put, "/api/v1/users/carol/follow")
    ids = [post_board(run, alice, f"a{i}") for i in range(3)]
    gone = post_board(run, carol, "c")
    bob_id = bob.get("/api/v1/me").json()["id"]
    assert len(feed_ids(bob)) == 4  # fills G
    graph.follow_remove(follower_id=bob_id, followee_id=carol.get("/api/v1/me").json()["id"])  # no clean-up ran

    sent = []
    original = AbstractConnection.send_packed_command
    monkeypatch.setattr(
        AbstractConnection,
        "send_packed_command",
        lambda self, command, check_health=True: sent.append(1) or original(self, command, check_health),
    )
    answer = activity.home_feed_read(user_id=bob_id, offset=0, before=None, limit=20)
    assert [item["id"] for item in answer["items"]] == ids[::-1]
    if settings.REDIS_CLUSTER:  # the script; G, one send per node holding some; ZMSCORE; the stale id's ZREM
        assert 4 <= len(sent) <= 3 + len(get_redis().get_primaries())
    else:
        assert len(sent) == 1
    assert gone not in store.home_ids(bob_id)
