"""End to end through the HTTP API with a real Celery worker process (conftest.celery_worker):
nothing here runs a task in-process, so what the feed shows is what the worker did."""

import pytest

from feeds import keys
from ugcsite.testing import wait_for

pytestmark = pytest.mark.worker

DOC = {
    "width": 200,
    "height": 100,
    "background": "#fffdf0",
    "elements": [{"type": "text", "color": "#222222", "size": 20, "x": 10, "y": 50, "text": "hello"}],
}


def feed_ids(client):
    return [item["id"] for item in client.get("/api/v1/feed").json()["items"]]


def test_follow_post_unfollow_and_delete_reach_feeds_through_the_worker(celery_worker, api, redis_data):
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    early = alice.post("/api/v1/boards", {"title": "early", "kind": "note", "doc": DOC}).json()["id"]

    assert bob.put("/api/v1/users/alice/follow").status_code == 204
    assert carol.put("/api/v1/users/alice/follow").status_code == 204
    wait_for(lambda: feed_ids(bob) == [early], what="the follow back-fill")

    response = alice.post("/api/v1/boards", {"title": "fresh", "kind": "sketch", "tags": ["new"], "doc": DOC})
    assert response.status_code == 201
    fresh = response.json()["id"]
    assert alice.get("/api/v1/users/alice/boards").json()["items"][0]["id"] == fresh  # M at once
    wait_for(lambda: feed_ids(bob) == [fresh, early] and feed_ids(carol) == [fresh, early], what="the fan-out")

    assert bob.delete("/api/v1/users/alice/follow").status_code == 204
    wait_for(lambda: feed_ids(bob) == [], what="the unfollow clean-up")
    bob_id = bob.get("/api/v1/me").json()["id"]
    wait_for(lambda: redis_data.zcard(keys.home_timeline(bob_id)) == 0, what="P emptied in Redis")

    assert alice.delete(f"/api/v1/boards/{fresh}").status_code == 204
    assert api.get(f"/api/v1/boards/{fresh}").status_code == 404
    carol_id = carol.get("/api/v1/me").json()["id"]
    wait_for(lambda: redis_data.zscore(keys.home_timeline(carol_id), fresh) is None, what="the retraction")
    assert feed_ids(carol) == [early]


def test_fanout_reenqueues_itself_across_batches_in_the_worker(celery_worker, api, redis_data):
    """The worker runs with FANOUT_BATCH_SIZE=2 (conftest), so 7 followers take 4 chained tasks."""
    star = api.as_user("star")
    fans = [api.as_user(f"fan{i}") for i in range(7)]
    for fan in fans:
        assert fan.put("/api/v1/users/star/follow").status_code == 204
    board_id = star.post("/api/v1/boards", {"title": "for all", "kind": "comic", "doc": DOC}).json()["id"]
    for fan in fans:
        wait_for(lambda fan=fan: board_id in feed_ids(fan), what="every fan reached")


def test_a_big_author_is_merged_not_pushed_through_the_worker(celery_worker, api, redis_data, settings):
    """Past the threshold (2 here; the mode flips in this process, where follows are made) the
    worker's marking walk, in batches of 2, reaches the followers from before the crossing, and
    a new board shows in every feed at once, from the author's M, pushed into no P."""
    settings.FANOUT_PUSH_MAX_FOLLOWERS = 2
    star = api.as_user("star")
    fans = [api.as_user(f"fan{i}") for i in range(5)]
    early = star.post("/api/v1/boards", {"title": "early", "kind": "note", "doc": DOC}).json()["id"]
    for fan in fans:
        assert fan.put("/api/v1/users/star/follow").status_code == 204
    fan_ids = [fan.get("/api/v1/me").json()["id"] for fan in fans]
    wait_for(
        lambda: all(
            redis_data.zscore(keys.big_following(f), star.get("/api/v1/me").json()["id"]) is not None for f in fan_ids
        ),
        what="the marking walk",
    )
    for fan in fans:
        assert feed_ids(fan) == [early]

    fresh = star.post("/api/v1/boards", {"title": "fresh", "kind": "note", "doc": DOC}).json()["id"]
    for fan in fans:
        assert feed_ids(fan) == [fresh, early]  # at once: no fan-out stands between
    assert all(redis_data.zscore(keys.home_timeline(f), fresh) is None for f in fan_ids)
