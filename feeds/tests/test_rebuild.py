"""Everything a person sees comes back from PostgreSQL after the data Redis is lost.

A small site with deep histories (windows shrunk as in test_history: timelines archived in
bursts by the archiver, with a last stretch past the hot window that it has not moved yet),
follows made before and after the history (back-fills), edits, deletes, a hide, an unfollow,
reads by people who share them and by one who does not, views now, hours ago and days ago.
The scheduled flushes run (the last beat before the loss); every API answer that matters is
recorded; the data Redis is emptied (every primary of a cluster) and ``rebuild_redis`` run; every
answer must be what it was. Real PostgreSQL and Redis throughout; tasks run in-process.

Then what a crash loses is bounded by one flush interval: reads, views and activity recorded
after the last flush are the only ones missing. And a world loaded in bulk (no fan-out ever ran,
as the benchmark builds one) gets every feed whole from the follow edges and the boards.
"""

import io
import random
import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from feeds import keys, selectors
from feeds.discovery import counters, indexes, trending
from feeds.models import Board, BoardViewHour, TimelineChunk
from feeds.services import moderation
from feeds.services.boards import board_create
from feeds.tests.support import sql_feed, sql_ids_stored_twice, sql_profile
from feeds.timelines import activity, archive, fanout, store
from feeds.timelines.ids import board_id_time, next_board_id
from social import reading, services as people_services
from social.graph import FollowerCursor
from social.models import Follow, Read, User
from ugcsite.platform.redis import get_redis, key_count

pytestmark = pytest.mark.django_db

HOT, CHUNK, SLACK, BACKFILL = 30, 20, 120, 15  # a P waits for the archiver at 50 ids, is capped at 150
NAMES = ("ann", "ben", "cat", "dan", "eve", "fay")
WEIGHTS = {"ann": 8, "ben": 4, "cat": 4, "dan": 2, "eve": 2, "fay": 1}  # how much each one posts
SHARING = ("ben", "cat", "dan", "fay")  # eve reads too, but keeps it to herself
EARLY_FOLLOWS = {
    "ann": "ben cat dan",
    "ben": "ann cat dan",
    "cat": "ann ben",
    "dan": "ann cat eve",
    "eve": "ann ben cat dan",
    "fay": "ann",
}
KINDS = ("sketch", "diagram", "note", "comic", "map")
TAGS = ("red", "blue", "green")
DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}
DOC_JSON = '{"width":10,"height":10,"background":"#ffffff","elements":[]}'
DAY, HOUR = 86400, 3600
SPARE_BATCH = "test:{d}:spare-batch"  # in the views' slot, so COPY and RENAME work on a cluster


@pytest.fixture(autouse=True)
def _small_windows(settings):
    settings.PROFILE_TIMELINE_HOT = settings.HOME_TIMELINE_HOT = HOT
    settings.TIMELINE_CHUNK = CHUNK
    settings.HOME_TIMELINE_SLACK = SLACK
    settings.FOLLOW_BACKFILL_COUNT = BACKFILL


# --- building the site ---------------------------------------------------------------------------


def _next_millisecond() -> None:
    """Wait until the clock has left the millisecond of the last id made, so an edge made now is
    strictly newer than every board before it (a follow's back-fill is cut by its time)."""
    last = next_board_id()
    while int(time.time() * 1000) <= int(board_id_time(last).timestamp() * 1000):
        time.sleep(0.001)


def _bulk_boards(rng: random.Random, people: dict, authors: list[str]) -> list[Board]:
    """One published board per name in ``authors`` (real snowflake ids, in that order), inserted
    in one statement, then published to Redis as board_publish does it (indexes and M), with no
    task: fan-out and archival are the caller's."""
    boards = []
    for name in authors:
        board_id = next_board_id()
        tags = sorted(rng.sample(TAGS, rng.randint(0, 2)))
        boards.append(
            Board(
                id=board_id,
                author=people[name],
                title=f"board {board_id % 100000}",
                kind=rng.choice(KINDS),
                tags=tags,
                doc_json=DOC_JSON,
                created_at=board_id_time(board_id),
                updated_at=board_id_time(board_id),
            )
        )
    Board.objects.bulk_create(boards)
    with connection.cursor() as cursor:
        for name in set(authors):
            cursor.execute(
                f"UPDATE {User._meta.db_table} SET boards_count = boards_count + %s WHERE id = %s",
                [authors.count(name), people[name].pk],
            )
    redis = get_redis()
    for board in boards:
        indexes.board_index(board.id, kind=board.kind, tags=board.tags, author=board.author.username)
        redis.zadd(keys.profile_timeline(board.author_id), {board.id: board.id})
    return boards


def _burst(rng, people, count: int, *, archive_after: bool, by: tuple = NAMES) -> list[Board]:
    """``count`` boards by the authors ``by`` (ann the most, fay the least), fanned out to every
    follower as the fan-out task does (P flagged for the archiver when due), M flagged too;
    then, as beat would, the archival."""
    authors = rng.choices(by, weights=[WEIGHTS[name] for name in by], k=count)
    boards = _bulk_boards(rng, people, authors)
    for board in boards:
        waiting = fanout.fanout_batch(
            board_id=board.id, author_id=board.author_id, cursor=FollowerCursor(), batch_size=1000
        )
        archive.flag_waiting("p", waiting)
    archive.flag_waiting("m", [people[name].pk for name in set(authors)])
    for user in people.values():  # the cap was never reached: nothing was dropped unarchived
        assert get_redis().zcard(keys.home_timeline(user.pk)) < HOT + SLACK
    if archive_after:
        assert archive.archive_waiting(trigger="test").errors == ""
    return boards


def _post(run, client, rng, title: str) -> int:
    body = {"title": title, "kind": rng.choice(KINDS), "tags": sorted(rng.sample(TAGS, rng.randint(0, 2))), "doc": DOC}
    response = run(client.post, "/api/v1/boards", body)
    assert response.status_code == 201, response.content
    return response.json()["id"]


def _build_site(api, run):
    """The site; returns (clients by name, users by name, board ids asked about in /reading)."""
    rng = random.Random(18)
    clients = {name: api.as_user(name) for name in NAMES}
    people = {user.username: user for user in User.objects.filter(username__in=NAMES)}
    for name in SHARING:
        assert clients[name].patch("/api/v1/me", {"share_reading": True}).status_code == 200
    for follower, followees in EARLY_FOLLOWS.items():
        for followee in followees.split():
            assert run(clients[follower].put, f"/api/v1/users/{followee}/follow").status_code == 204

    # history, archived burst by burst
    history = []
    for _ in range(4):
        history += _burst(rng, people, 80, archive_after=True)

    # the services at work (tasks in-process: archival at once when due)
    posted = [_post(run, clients[name], rng, f"{name} posts {i}") for i in range(4) for name in ("ann", "cat", "ben")]
    mine = [b for b in history if b.author_id == people["ben"].pk]
    assert (
        run(clients["ben"].patch, f"/api/v1/boards/{mine[-1].id}", {"title": "renamed", "tags": ["blue"]}).status_code
        == 200
    )
    anns = [b.id for b in history if b.author_id == people["ann"].pk]
    for gone in (anns[3], posted[0]):  # one deep in the archives, one in the heads
        assert run(clients["ann"].delete, f"/api/v1/boards/{gone}").status_code == 204
    dans = [b for b in history if b.author_id == people["dan"].pk]
    assert run(moderation.board_hide, board=Board.objects.get(pk=dans[len(dans) // 2].id))
    assert run(clients["ben"].delete, "/api/v1/users/cat/follow").status_code == 204  # cat's archived boards stay out
    # a late follow: fay follows cat after cat posted more than a back-fill's worth above her
    # archive mark, so the back-fill brings only cat's newest FOLLOW_BACKFILL_COUNT
    assert archive.archived_max(people["fay"].pk, "p") > 0
    _burst(rng, people, BACKFILL + 10, archive_after=True, by=("cat",))
    _next_millisecond()
    assert run(clients["fay"].put, "/api/v1/users/cat/follow").status_code == 204
    # dan follows fay: her older boards join his head below his mark, and no archival has run
    # since (follow_create and its back-fill task, with the archival left to beat)
    run(people_services.follow_create, follower=people["dan"], followee=people["fay"])
    archive.flag_waiting("p", fanout.follow_backfill(follower_id=people["dan"].pk, followee_id=people["fay"].pk))
    posted += [_post(run, clients["fay"], rng, f"fay posts {i}") for i in range(2)]

    # the last stretch: past the hot window, flagged, not archived yet
    recent = _burst(rng, people, 60, archive_after=False)

    # reads: now (signed-in board reads), ten days ago, and 35 days ago (outside the window)
    readable = list(
        Board.objects.filter(pk__in=[b.id for b in history[-40:] + recent] + posted, state="published")
        .order_by("id")
        .values_list("id", flat=True)
    )
    asked = rng.sample(readable, 12) + [anns[3], history[5].id]
    now = time.time()
    for name in ("ben", "cat", "dan", "eve", "fay"):
        for board_id in rng.sample(asked[:12], 5):
            assert clients[name].get(f"/api/v1/boards/{board_id}").status_code == 200
        reading.read_record(people[name].pk, rng.choice(asked[:12]), now=now - 10 * DAY)
        reading.read_record(people[name].pk, rng.choice(asked[:12]), now=now - 35 * DAY)
    # views: now (anonymous reads), three hours ago, and 30 hours ago (outside the trending window)
    for board_id in rng.choices(readable, k=25):
        assert api.get(f"/api/v1/boards/{board_id}").status_code == 200
    for board_id in rng.choices(readable, k=15):
        counters.view_record(board_id, now=now - 3 * HOUR)
    for board_id in rng.choices(readable, k=10):
        counters.view_record(board_id, now=now - 30 * HOUR)
    trending.trending_rollup()
    return clients, people, asked


def _last_beat() -> None:
    """What beat does every half minute: views, reads and activity into PostgreSQL."""
    counters.views_flush()
    reading.reads_flush()
    activity.last_seen_flush()


# --- the answers -----------------------------------------------------------------------------------


def _walk(client, path: str, *, limit: int, mode: str, **query) -> list:
    """Every page of a list, by ``before`` (following ``next``) or by offset, to the end."""
    pages, offset, cursor = [], 0, None
    while True:
        at = {"before": cursor} if mode == "before" and cursor else {"offset": offset} if mode == "offset" else {}
        response = client.get(path, limit=limit, **at, **query)
        assert response.status_code == 200, response.content
        answer = response.json()
        pages.append(answer)
        if answer["next"] is None:
            return pages
        cursor, offset = answer["next"], offset + limit
        assert len(pages) < 1000, "paging does not end"


def _answers(api, clients, asked) -> dict:
    """Every answer that matters, by what was asked."""
    got = {}
    for name, client in clients.items():
        for mode, limit in (("before", 7), ("offset", 10)):
            got[f"{name}: feed by {mode}"] = _walk(client, "/api/v1/feed", limit=limit, mode=mode)
            got[f"{name}: profile by {mode}"] = _walk(api, f"/api/v1/users/{name}/boards", limit=limit, mode=mode)
        got[f"{name}: feed of notes"] = _walk(client, "/api/v1/feed", limit=5, mode="before", kind="note")
        got[f"{name}: me"] = client.get("/api/v1/me").json()
        got[f"{name}: reading"] = {
            board: sorted(names)
            for board, names in client.get("/api/v1/reading", ids=",".join(map(str, asked))).json().items()
        }
        got[f"{name}: popular following"] = client.get("/api/v1/popular", scope="following", limit=100).json()
        for other in NAMES:
            got[f"{name}: /users/{other}"] = client.get(f"/api/v1/users/{other}").json()
        got[f"/users/{name} anonymous"] = api.get(f"/api/v1/users/{name}").json()
        for side in ("followers", "following"):
            got[f"{name}: {side}"] = api.get(f"/api/v1/users/{name}/{side}", limit=100).json()
    for scope in ("all", "trending"):
        got[f"popular {scope}"] = api.get("/api/v1/popular", scope=scope, limit=100).json()
    for sort in ("recent", "popular", "trending"):
        for query in ({}, {"kind": "note"}, {"tag": "red"}, {"tag": ["red", "blue"]}, {"author": "ann"}):
            for offset in (0, 40):
                got[f"discover {sort} {query} at {offset}"] = api.get(
                    "/api/v1/discover", sort=sort, offset=offset, limit=100, **query
                ).json()
    return got


def _assert_same(before: dict, after: dict) -> None:
    differing = [what for what in before if before[what] != after.get(what)]
    assert not differing, f"{len(differing)} answers changed, e.g. {differing[:5]}"
    assert after.keys() == before.keys()


def _flush_data_redis() -> None:
    get_redis().flushdb()  # a cluster client sends it to every primary
    assert key_count() == 0


def test_after_losing_redis_every_answer_comes_back_the_same(api, run, redis_data):
    clients, people, asked = _build_site(api, run)
    _last_beat()

    # the world is what it should be: deep, partly archived, partly waiting, and seen by the answers
    redis = get_redis()
    for name in NAMES:
        feed = [
            item["id"]
            for page in _walk(clients[name], "/api/v1/feed", limit=100, mode="before")
            for item in page["items"]
        ]
        everything = sql_feed(people[name].pk)  # every board of the people followed
        if name == "fay":  # she followed cat late: the back-fill brought cat's newest only
            followed = Follow.objects.get(follower=people["fay"], followee=people["cat"]).created_at
            older = Board.objects.filter(author=people["cat"], state="published", created_at__lt=followed)
            assert set(everything) - set(feed) == set(older.order_by("-id").values_list("id", flat=True)[BACKFILL:])
            assert set(feed) <= set(everything)
        else:
            assert feed == everything, name
    waiting_stretch = 0
    for user in people.values():
        mark = archive.archived_max(user.pk, "p")
        above = redis.zcount(keys.home_timeline(user.pk), f"({mark}", "+inf")
        waiting_stretch += max(above - HOT, 0)  # what a rebuild of the newest HOT alone would lose
    assert waiting_stretch > 100
    dan, dan_mark = people["dan"].pk, archive.archived_max(people["dan"].pk, "p")
    below = [int(i) for i in redis.zrangebyscore(keys.home_timeline(dan), "-inf", dan_mark)]
    assert below and not archive.archived_among(dan, "p", below)  # back-filled below the mark, in Redis only
    assert archive.waiting_count() > 0
    assert (
        TimelineChunk.objects.filter(timeline="p").count() > 10 and TimelineChunk.objects.filter(timeline="m").exists()
    )
    assert Read.objects.count() > 20 and BoardViewHour.objects.exists()
    assert User.objects.filter(username__in=NAMES, last_seen__isnull=False).count() == len(NAMES)

    before = _answers(api, clients, asked)
    assert any(before[f"{name}: reading"][str(board)] for name in NAMES for board in asked[:12])
    assert before["ann: popular following"]["items"] and before["popular trending"]["items"]
    assert before["eve: popular following"] != before["dan: popular following"]

    _flush_data_redis()
    call_command("rebuild_redis", stdout=io.StringIO(), stderr=io.StringIO())
    after = _answers(api, clients, asked)

    _assert_same(before, after)
    for user in people.values():  # no id is both in a rebuilt head and in the archive below it
        mark = archive.archived_max(user.pk, "p")
        low = [int(i) for i in redis.zrangebyscore(keys.home_timeline(user.pk), "-inf", mark)]
        assert not archive.archived_among(user.pk, "p", low)
    assert redis.zrangebyscore(keys.home_timeline(dan), "-inf", dan_mark) == [str(i) for i in below]
    # activity came back too: fan-out reaches the followers again (this process would not mark
    # them active for another minute), so a new board is in their feeds at once
    rng = random.Random(1)
    fresh = _post(run, clients["ann"], rng, "after the rebuild")
    for name in ("ben", "cat", "dan", "eve", "fay"):
        assert clients[name].get("/api/v1/feed", limit=1).json()["items"][0]["id"] == fresh


def test_a_crash_loses_at_most_what_came_after_the_last_flush(api, run, redis_data):
    """Reads, views and activity recorded after the last flush are gone after a loss; everything
    flushed is back (and a view flush that died after its commit is not counted twice)."""
    ann, bob = api.as_user("ann"), api.as_user("bob")
    assert bob.patch("/api/v1/me", {"share_reading": True}).status_code == 200
    assert run(ann.put, "/api/v1/users/bob/follow").status_code == 204
    rng = random.Random(2)
    flushed, late = (_post(run, bob, rng, title) for title in ("flushed", "late"))
    for n, board_id in enumerate((flushed, flushed, late)):
        assert bob.get(f"/api/v1/boards/{board_id}").status_code == 200  # a read (an author's view never counts)
        assert api.get(f"/api/v1/boards/{board_id}", headers={"User-Agent": f"visitor {n}"}).status_code == 200
    _last_beat()
    # a view flush that dies after its commit, before it clears its batch (the batch is copied
    # aside and put back after a whole flush): the next flush clears it, counting nothing twice
    assert api.get(f"/api/v1/boards/{flushed}", headers={"User-Agent": "visitor 3"}).status_code == 200
    redis = get_redis()
    redis.rename(keys.views_pending(), keys.views_flushing())
    redis.hset(keys.views_flushing(), keys.VIEWS_BATCH_FIELD, "a-batch-that-died")
    redis.copy(keys.views_flushing(), SPARE_BATCH)
    assert counters.views_flush() == 1
    redis.rename(SPARE_BATCH, keys.views_flushing())
    counters.views_flush()
    assert not redis.exists(keys.views_flushing())
    assert Board.objects.get(pk=flushed).views == 3
    # after the last flush: a read of a new board (a view too), and a newcomer's activity
    after_flush = _post(run, bob, rng, "after the flush")
    assert bob.get(f"/api/v1/boards/{after_flush}").status_code == 200
    assert api.get(f"/api/v1/boards/{after_flush}", headers={"User-Agent": "visitor 4"}).status_code == 200
    assert api.as_user("cyd").get("/api/v1/me").status_code == 200

    _flush_data_redis()
    call_command("rebuild_redis", stdout=io.StringIO(), stderr=io.StringIO())

    reads = ann.get("/api/v1/reading", ids=f"{flushed},{late},{after_flush}").json()
    assert reads == {str(flushed): ["bob"], str(late): ["bob"], str(after_flush): []}
    views = {item["id"]: item["views"] for item in api.get("/api/v1/users/bob/boards").json()["items"]}
    assert views == {flushed: 3, late: 1, after_flush: 0}
    assert redis.exists(keys.active(User.objects.get(username="bob").pk))
    assert not redis.exists(keys.active(User.objects.get(username="cyd").pk))  # seen only after the flush


def test_a_world_loaded_in_bulk_gets_every_feed_whole(redis_data, settings):
    """No fan-out ever ran (the benchmark's COPY-loaded world): each P is made from the follow
    edges (every board since the follow, and its back-fill before it) and the boards, the
    newest HOT in the head and a stretch longer than the cap straight into the archive."""
    rng = random.Random(3)
    people = {name: User.objects.create_user(username=name, password="password123") for name in NAMES}
    early = _bulk_boards(rng, people, rng.choices(["ben", "cat", "dan"], k=120))
    _next_millisecond()
    for followee in ("ben", "cat", "dan"):  # after 120 boards: each brings its back-fill only
        Follow.objects.create(follower=people["ann"], followee=people[followee])
    Follow.objects.create(follower=people["eve"], followee=people["ben"])
    _next_millisecond()
    later = _bulk_boards(rng, people, rng.choices(["ben", "cat", "dan"], k=300))
    # eve was last seen long ago: her feed stays out of Redis until she comes back
    User.objects.filter(pk=people["eve"].pk).update(last_seen=timezone.now() - settings.IDLE_AFTER - timedelta(days=1))
    get_redis().flushdb()

    call_command("rebuild_redis", stdout=io.StringIO(), stderr=io.StringIO())

    ann = people["ann"].pk
    backfill = {
        board.id
        for name in ("ben", "cat", "dan")
        for board in sorted((b for b in early if b.author.username == name), key=lambda b: -b.id)[:BACKFILL]
    }
    expected = sorted(backfill | {b.id for b in later}, reverse=True)
    assert len(expected) > HOT + SLACK
    head = [int(i) for i in get_redis().zrevrange(keys.home_timeline(ann), 0, -1)]
    assert head == expected[:HOT]
    assert sorted(archive.archived_ids_desc(ann, "p"), reverse=True) == expected[HOT:]
    assert sql_ids_stored_twice(ann, "p") == []
    feed = []
    while page := selectors.home_feed(ann, offset=None, before=feed[-1]["id"] if feed else None, limit=37)["items"]:
        feed += page
    assert [item["id"] for item in feed] == expected
    assert not get_redis().exists(keys.home_timeline(people["eve"].pk))
    assert [int(i) for i in get_redis().zrevrange(keys.profile_timeline(people["ben"].pk), 0, -1)] == sql_profile(
        people["ben"].pk
    )


# --- the flushes on their own -----------------------------------------------------------------------


def test_views_reach_postgres_by_hour_and_leave_it_after_the_trending_window(run):
    author = User.objects.create_user(username="ann", password="password123")
    board = run(lambda: board_create(author=author, title="t", kind="note", tags=[], doc=DOC))
    now = time.time()
    hour = trending.current_hour(now)
    for ago in (0, 3 * HOUR, 3 * HOUR, 30 * HOUR):
        counters.view_record(board.id, now=now - ago)
    assert counters.views_flush() == 1
    assert Board.objects.get(pk=board.id).views == 4
    assert set(BoardViewHour.objects.values_list("board_id", "hour", "views")) == {
        (board.id, hour, 1),
        (board.id, hour - 3, 2),
        (board.id, hour - 30, 1),
    }
    counters.view_record(board.id, now=now)  # pending: counted in the window too
    assert counters.view_hours_recent(now=now) == {hour: {board.id: 2}, hour - 3: {board.id: 2}}
    assert counters.view_history_prune(now=now) == 1
    assert set(BoardViewHour.objects.values_list("hour", flat=True)) == {hour, hour - 3}


def test_the_last_seen_index_is_copied_from_where_the_last_copy_ended(redis_data):
    ann, ben = (User.objects.create_user(username=name, password="password123") for name in ("ann", "ben"))
    now = time.time()
    store.home_touch(ann.pk, now=now - 600)
    assert activity.last_seen_flush(now=now) == 1
    store.home_touch(ben.pk, now=now + 5)
    assert activity.last_seen_flush(now=now + 10) == 1  # ann's entry is older than the last copy: not read again
    User.objects.filter(pk=ann.pk).update(last_seen=timezone.now() + timedelta(hours=1))
    store.home_touch(ann.pk, now=now - 30)  # read again (the overlap), but older: never moves it back
    store.home_touch(ben.pk, now=now + 8)
    assert activity.last_seen_flush(now=now + 20) == 2
    seen = dict(User.objects.filter(pk__in=[ann.pk, ben.pk]).values_list("id", "last_seen"))
    assert seen[ann.pk] > timezone.now() + timedelta(minutes=50)
    assert seen[ben.pk].timestamp() == pytest.approx(now + 8, abs=1e-5)


def test_a_rebuild_over_a_redis_that_was_not_lost_keeps_what_only_redis_held(api, run, redis_data):
    ann, bob = api.as_user("ann"), api.as_user("bob")
    assert bob.patch("/api/v1/me", {"share_reading": True}).status_code == 200
    assert run(ann.put, "/api/v1/users/bob/follow").status_code == 204
    board_id = _post(run, bob, random.Random(4), "read")
    assert bob.get(f"/api/v1/boards/{board_id}").status_code == 200  # a read, unflushed
    assert api.get(f"/api/v1/boards/{board_id}").status_code == 200  # a view (not the author's), unflushed

    call_command("rebuild_redis", stdout=io.StringIO(), stderr=io.StringIO())

    assert ann.get("/api/v1/reading", ids=str(board_id)).json() == {str(board_id): ["bob"]}
    assert api.get("/api/v1/popular", scope="trending").json()["items"][0]["reads"] == 1
    assert api.get("/api/v1/users/bob/boards").json()["items"][0]["views"] == 1
