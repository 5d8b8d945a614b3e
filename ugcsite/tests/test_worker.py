"""End to end through the HTTP API with a real Celery worker process (conftest.celery_worker):
nothing here runs a task in-process, so what the feed shows is what the worker did."""

import pytest

from feeds import keys
from ugcsite.testing import wait_for

pytestmark = pytest.mark.worker

DOC = {"width": 200, "height": 100, "background": "#fffdf0",
       "elements": [{"type": "text", "color": "#222222", "size": 20, "x": 10, "y": 50, "text": "hello"}]}


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
