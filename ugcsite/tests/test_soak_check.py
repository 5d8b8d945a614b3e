"""`make soak`'s check (bench.serving.soak.check_feeds) sees what it must: on a tiny world whose feeds are
right it finds nothing, and it counts a board taken out of a follower's feed as a miss, an
unfollow whose clean-up never ran as an extra, and a follow set Redis lost as a mismatch."""

import time

import pytest

from bench.serving.soak import check_feeds
from feeds import keys
from social import graph, services as people
from social.models import User

pytestmark = pytest.mark.django_db

DOC = {
    "width": 100,
    "height": 100,
    "background": "#ffffff",
    "elements": [{"type": "path", "color": "#000000", "width": 2, "points": [[1, 1], [99, 99]]}],
}


def test_the_soak_check_counts_misses_extras_and_graph_mismatches(api, run, redis_data):
    author, *readers = [api.as_user(name) for name in ("ann", "ben", "cat", "dan")]
    for reader in readers:
        assert run(reader.put, "/api/v1/users/ann/follow").status_code == 204
    time.sleep(0.01)  # the board is posted after the follows (its time has millisecond precision)
    response = run(author.post, "/api/v1/boards", {"title": "posted in the soak", "kind": "note", "doc": DOC})
    board = int(response.json()["id"])

    clean = check_feeds(world_max_id=0, soak_started=None)
    assert (
        clean["pairs"],
        clean["misses"],
        clean["served_extras"],
        clean["stale_in_head"],
        clean["graph_mismatches"],
    ) == (3, 0, 0, 0, 0)

    ann, ben, cat, dan = (User.objects.get(username=n) for n in ("ann", "ben", "cat", "dan"))
    redis_data.zrem(keys.home_timeline(ben.pk), board)  # lost on its way to ben
    run(people.follow_delete, follower=cat, followee=ann)  # the edge goes, its feed clean-up never runs
    graph.follow_remove(follower_id=dan.pk, followee_id=ann.pk)  # Redis forgets an edge PostgreSQL keeps

    found = check_feeds(world_max_id=0, soak_started=None)
    assert found["pairs"] == 2  # ben and dan still follow ann: cat's pair is no longer owed
    assert found["misses"] == 2  # ben's, and dan's (a feed shows only authors its following set names)
    assert found["stale_in_head"] == 1 and found["served_extras"] == 0  # cat's P; the read filter hides it
    assert found["graph_mismatches"] == 2  # dan's following set and ann's followers set
