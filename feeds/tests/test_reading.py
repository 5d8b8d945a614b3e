"""Social reading (who of the people I follow read these boards), popular lists and view counters."""

import random
import time

import pytest

from feeds import keys as feed_keys
from feeds.discovery import counters, trending
from feeds.models import Board
from feeds.services.boards import board_create
from feeds.services.moderation import board_hide
from social import keys, reading
from social.models import User
from social.services import user_create

pytestmark = pytest.mark.django_db

DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}
DAY = 86400


def board(run, author, title="t"):
    return run(board_create, author=author, title=title, kind="note", tags=[], doc=DOC)


def share(*clients) -> None:
    """These people share their reads (share_reading is off until each turns it on)."""
    for client in clients:
        assert client.patch("/api/v1/me", {"share_reading": True}).json()["share_reading"] is True


def test_reads_age_out_after_30_days_on_a_controlled_clock(run, redis_data):
    alice = user_create(username="alice", password="password123")
    first, second = board(run, alice), board(run, alice)
    t0 = 1_800_000_000.0
    reading.read_record(alice.pk, first.id, now=t0)
    reading.read_record(alice.pk, second.id, now=t0 + 10 * DAY)
    assert reading.readers_of([first.id, second.id], [alice.pk], now=t0 + 29 * DAY) == {
        first.id: [alice.pk],
        second.id: [alice.pk],
    }
    assert reading.readers_of([first.id, second.id], [alice.pk], now=t0 + 31 * DAY) == {
        first.id: [],
        second.id: [alice.pk],
    }
    # a later write trims what aged out, and the key carries the retention as its TTL
    reading.read_record(alice.pk, second.id, now=t0 + 31 * DAY)
    assert redis_data.zrange(keys.reads(alice.pk), 0, -1) == [str(second.id)]
    assert 29 * DAY < redis_data.ttl(keys.reads(alice.pk)) <= 30 * DAY
    # reading again keeps one entry with the newer time
    reading.read_record(alice.pk, second.id, now=t0 + 32 * DAY)
    assert redis_data.zrange(keys.reads(alice.pk), 0, -1, withscores=True) == [(str(second.id), t0 + 32 * DAY)]


def test_the_n_by_m_answer_equals_brute_force_on_random_data(run, redis_data):
    rng = random.Random(7)
    people = [user_create(username=f"p{i}", password="password123") for i in range(12)]
    boards = [board(run, people[0], f"b{i}") for i in range(30)]
    now = 1_800_000_000.0
    events = sorted((now - rng.uniform(0, 40 * DAY), rng.choice(people).pk, rng.choice(boards).id) for _ in range(400))
    truth = {}  # (reader, board) -> last read time: the brute-force model, a plain dict
    for at, reader, item in events:  # reads happen in time order
        reading.read_record(reader, item, now=at)
        truth[(reader, item)] = at
    asked = [b.id for b in rng.sample(boards, 20)]
    readers = [p.pk for p in rng.sample(people, 8)]
    expected = {b: sorted(r for r in readers if truth.get((r, b), 0) >= now - 30 * DAY) for b in asked}
    answer = reading.readers_of(asked, readers, now=now)
    assert {b: sorted(r) for b, r in answer.items()} == expected
    assert any(expected.values())  # the random data does exercise hits
    # Asking about 2 boards, readers hold many more reads than ids: the script probes instead.
    few = [b for b in asked if expected[b]][:2]
    assert all(redis_data.zcard(keys.reads(r)) > 4 * len(few) for r in readers)
    answer = reading.readers_of(few, readers, now=now)
    assert {b: sorted(r) for b, r in answer.items()} == {b: expected[b] for b in few}
    # Read sets written before id sets existed (no rs:{u}) are walked instead: the same answer.
    assert all(redis_data.exists(keys.read_ids(r)) for r in readers)
    for r in readers[::2]:
        redis_data.delete(keys.read_ids(r))
    answer = reading.readers_of(asked, readers, now=now)
    assert {b: sorted(r) for b, r in answer.items()} == expected


def test_reading_endpoint_rules(api, run):
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    author = api.as_user("dave")
    ids = [
        run(author.post, "/api/v1/boards", {"title": f"b{i}", "kind": "note", "doc": DOC}).json()["id"]
        for i in range(3)
    ]
    share(bob, carol)
    run(alice.put, "/api/v1/users/bob/follow")
    run(alice.put, "/api/v1/users/carol/follow")
    bob.get(f"/api/v1/boards/{ids[0]}")
    carol.get(f"/api/v1/boards/{ids[0]}")
    carol.get(f"/api/v1/boards/{ids[1]}")
    alice.get(f"/api/v1/boards/{ids[2]}")  # her own read is not "someone I follow"
    api.get(f"/api/v1/boards/{ids[2]}")  # anonymous reads are views, not reads
    answer = alice.get("/api/v1/reading", ids=f"{ids[0]},{ids[1]},{ids[2]},999").json()
    assert {k: sorted(v) for k, v in answer.items()} == {
        str(ids[0]): ["bob", "carol"],
        str(ids[1]): ["carol"],
        str(ids[2]): [],
    }
    # privacy: dave follows nobody, so he learns nothing of who read what
    assert author.get("/api/v1/reading", ids=f"{ids[0]}").json() == {str(ids[0]): []}
    assert api.get("/api/v1/reading", ids=f"{ids[0]}").status_code == 401
    for bad in ("", "x", ",".join(["1"] * 101), "1,-2", "1.5", "١"):
        response = alice.get("/api/v1/reading", ids=bad)
        assert response.status_code == 400, bad
        assert response.json()["detail"]
    run(author.delete, f"/api/v1/boards/{ids[0]}")
    assert str(ids[0]) not in alice.get("/api/v1/reading", ids=f"{ids[0]},{ids[1]}").json()


def test_popular_scopes(api, run):
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    author = api.as_user("dave")
    a, b, c = (run(author.post, "/api/v1/boards", {"title": t, "kind": "note", "doc": DOC}).json()["id"] for t in "abc")
    share(bob, carol)
    views = ((bob, a, ""), (carol, a, ""), (bob, b, ""), (api, c, "one"), (api, c, "two"), (api, c, "three"))
    for client, board_id, browser in views:  # three anonymous visitors, told apart by their browsers
        client.get(f"/api/v1/boards/{board_id}", headers={"User-Agent": browser} if browser else None)
    trending.trending_rollup()
    run(alice.put, "/api/v1/users/bob/follow")
    run(alice.put, "/api/v1/users/carol/follow")

    def shape(answer):
        return [(item["board"]["id"], item["reads"]) for item in answer["items"]]

    assert shape(api.get("/api/v1/popular").json()) == [(c, 3), (a, 2), (b, 1)]
    assert shape(api.get("/api/v1/popular", scope="trending").json()) == [(c, 3), (a, 2), (b, 1)]
    assert shape(alice.get("/api/v1/popular", scope="following").json()) == [(a, 2), (b, 1)]
    assert shape(api.get("/api/v1/popular", limit=1, offset=1).json()) == [(a, 2)]
    assert api.get("/api/v1/popular", scope="following").status_code == 401
    assert api.get("/api/v1/popular", scope="everyone").status_code == 400
    run(board_hide, board=Board.objects.get(pk=a))
    assert shape(api.get("/api/v1/popular").json()) == [(c, 3), (b, 1)]
    assert shape(alice.get("/api/v1/popular", scope="following").json()) == [(b, 1)]


def test_only_reads_of_people_who_share_them_appear_and_stopping_counts_at_once(api, run, client):
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    author = api.as_user("dave")
    board_id = run(author.post, "/api/v1/boards", {"title": "b", "kind": "note", "doc": DOC}).json()["id"]
    run(alice.put, "/api/v1/users/bob/follow")
    run(alice.put, "/api/v1/users/carol/follow")
    bob.get(f"/api/v1/boards/{board_id}")
    carol.get(f"/api/v1/boards/{board_id}")

    def seen():
        readers = sorted(alice.get("/api/v1/reading", ids=str(board_id)).json()[str(board_id)])
        popular = [
            (item["board"]["id"], item["reads"])
            for item in alice.get("/api/v1/popular", scope="following").json()["items"]
        ]
        return readers, popular

    assert seen() == ([], [])  # nobody shares until they say so
    share(bob)
    assert seen() == (["bob"], [(board_id, 1)])
    share(carol)
    assert seen() == (["bob", "carol"], [(board_id, 2)])
    assert bob.patch("/api/v1/me", {"share_reading": False}).status_code == 200
    assert seen() == (["carol"], [(board_id, 1)])  # at once, not when a cache expires
    client.force_login(User.objects.get(username="alice"))
    page = client.get(f"/b/{board_id}").content.decode()
    assert "Read by carol" in page and "bob" not in page


def test_views_are_live_and_flushed_to_postgres(api, run, redis_data):
    author = api.as_user("alice")
    board_id = run(author.post, "/api/v1/boards", {"title": "x", "kind": "note", "doc": DOC}).json()["id"]

    def view(n):  # the n-th anonymous visitor (a view counts once per visitor and day)
        return api.get(f"/api/v1/boards/{board_id}", headers={"User-Agent": f"visitor {n}"})

    for n in range(1, 4):
        assert view(n).json()["views"] == n
    assert Board.objects.get(pk=board_id).views == 0  # no PostgreSQL write per view
    assert api.get("/api/v1/users/alice/boards").json()["items"][0]["views"] == 3
    assert counters.views_flush() == 1
    assert Board.objects.get(pk=board_id).views == 3
    assert view(4).json()["views"] == 4
    redis_data.delete(feed_keys.board(board_id))  # G lost: refilled with the live figure
    assert api.get("/api/v1/users/alice/boards").json()["items"][0]["views"] == 4
    # a flush that died after renaming the hash aside is finished by the next one
    redis_data.rename(feed_keys.views_pending(), feed_keys.views_flushing())
    view(5)
    assert view(6).json()["views"] == 6
    counters.views_flush()
    assert Board.objects.get(pk=board_id).views == 4
    counters.views_flush()
    assert Board.objects.get(pk=board_id).views == 6


def test_a_view_counts_once_per_person_and_day_and_never_the_authors(api, run):
    author, reader = api.as_user("alice"), api.as_user("bob")
    board_id = run(author.post, "/api/v1/boards", {"title": "x", "kind": "note", "doc": DOC}).json()["id"]
    for _ in range(100):
        assert reader.get(f"/api/v1/boards/{board_id}").status_code == 200
    for _ in range(5):
        author.get(f"/api/v1/boards/{board_id}")  # the author's own reads never count
    for _ in range(3):
        api.get(f"/api/v1/boards/{board_id}")  # one anonymous visitor, three reads
    assert api.get(f"/api/v1/boards/{board_id}").json()["views"] == 2
    assert counters.pending_views([board_id])[board_id] == 2
    tomorrow = time.time() + 24 * 3600
    assert counters.view_seen(board_id, "u:1", now=tomorrow) and not counters.view_seen(board_id, "u:1", now=tomorrow)
