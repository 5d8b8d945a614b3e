"""Timeline history (DESIGN.md "History: list of lists"): a timeline is a hot head in a Redis
sorted set plus TimelineChunk rows in PostgreSQL, read as one list by feeds.timelines.pages.page().

Real PostgreSQL and real Redis throughout; tasks run in-process (eager) where they run at all.
The oracle of every walk is plain SQL over PostgreSQL: the published boards of the owner (M) or
of the people the reader follows (P), newest first. Windows are shrunk with the ``settings``
fixture so a few hundred boards cross several chunks; boards are bulk-inserted with real
snowflake ids and put in Redis with pipelines (hydration falls back to PostgreSQL for G misses).
The oracles, loaders and walkers are in feeds.tests.support, which other timeline tests share.
"""

import random
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from feeds import keys, tasks
from feeds.models import ArchiveRun, Board, TimelineChunk
from feeds.scripts import scripts
from feeds.services import activity, boards as board_services, moderation
from feeds.tests.support import (
    LIMITS,
    PASSWORD,
    Posted,
    World,
    api_fetch,
    assert_walks_exact,
    boundaries,
    bulk_boards,
    expected_page,
    got_page,
    head_ids,
    ids_of,
    load_world,
    selector_fetch,
    set_windows,
    sql_archived_ids,
    sql_chunk_totals,
    sql_feed,
    sql_ids_stored_twice,
    sql_oracle,
    sql_profile,
    to_profiles,
    walk,
    zadd_many,
)
from feeds.timelines import archive, fanout, store
from social.graph import FollowerCursor
from social.services import user_create

pytestmark = pytest.mark.django_db


class Killed(BaseException):
    """The process dies here (not an Exception: nothing in the code under test may catch it)."""


@pytest.fixture
def world(run):
    users = [user_create(username=name, password=PASSWORD) for name in ("alice", "bob", "carol", "reader")]
    w = World(*users, run=run)
    w.follow(w.reader, w.alice)
    w.follow(w.reader, w.bob)  # not carol: her boards are noise the feed must not show
    return w


def mark_field(kind: str) -> str:
    return archive._MAX_FIELD[kind]


# =================================================================================================
# 1. The paging contract, run against every storage state (TestBaseFeed's idea)
# =================================================================================================

# tier: (hot window, chunk size). "crashed": the run dies after committing its second chunk, and
# the mark is then raised past a third chunk that is never written (both crash points at once).
TIERS = {
    "head": (1000, 100),
    "archived": (30, 100),
    "archived_small_chunks": (5, 7),
    "mixed": (150, 100),
    "crashed": (100, 100),
}


def load_tier(w: World, redis, settings, kind: str, tier: str) -> int:
    hot, chunk = TIERS[tier]
    set_windows(settings, hot=hot, chunk=chunk)
    load_world(w, redis)
    owner = w.owner(kind).pk
    key = keys.timeline_key(kind, owner)
    size = redis.zcard(key)
    assert size == len(sql_oracle(kind, owner))
    assert (size > hot) != (tier == "head")
    if tier == "crashed":
        committed = []

        def die_on_second(ids):
            committed.append(ids)
            if len(committed) == 2:
                raise Killed

        with pytest.raises(Killed):
            archive.timeline_archive(kind, owner, on_committed=die_on_second)
        assert redis.zscore(key, committed[1][0]) is not None  # committed, not trimmed
        third = [int(i) for i in redis.zrange(key, chunk, 2 * chunk - 1)]
        scripts.hset_max(keys=[keys.timeline_meta(owner)], field=mark_field(kind), value=max(third))
        assert TimelineChunk.objects.filter(owner_id=owner, timeline=kind).count() == 2
    else:
        chunks, moved = archive.timeline_archive(kind, owner)
        assert chunks == max((size - hot) // chunk, 0) and moved == chunks * chunk
        assert redis.zcard(key) == size - moved
        assert (chunks == 0) == (tier == "head")
    return owner


class TimelineContract:
    """Paging tests every storage state must pass, for profile (M) and home (P) timelines."""

    tier: str

    @pytest.fixture(params=["m", "p"])
    def tl(self, request, world, redis_data, settings):
        kind = request.param
        owner = load_tier(world, redis_data, settings, kind, self.tier)
        return kind, owner, selector_fetch(kind, owner)

    def test_offset_and_before_walks_give_every_board_once_newest_first(self, tl):
        kind, owner, fetch = tl
        assert_walks_exact(fetch, sql_oracle(kind, owner), limits=(7, 100))

    def test_pages_starting_at_around_and_past_the_head_boundary(self, tl, redis_data):
        kind, owner, fetch = tl
        oracle = sql_oracle(kind, owner)
        for limit in LIMITS:
            for boundary in boundaries(redis_data, kind, owner):
                for start in (boundary - 1, boundary, boundary + 1):
                    if start < 0:
                        continue
                    want = expected_page(oracle, start, limit)
                    assert got_page(fetch(limit=limit, offset=start)) == want, ("offset", limit, boundary, start)
                    if 1 <= start <= len(oracle):
                        assert got_page(fetch(limit=limit, before=oracle[start - 1])) == want, (
                            "before",
                            limit,
                            boundary,
                            start,
                        )

    def test_next_is_none_exactly_at_the_end(self, tl):
        kind, owner, fetch = tl
        oracle = sql_oracle(kind, owner)
        n = len(oracle)
        for limit in (1, 7, 100):
            last = fetch(limit=limit, offset=n - limit)
            assert got_page(last) == {"ids": oracle[-limit:], "next": None}
            one_more = fetch(limit=limit, offset=n - limit - 1)
            assert got_page(one_more) == {"ids": oracle[n - limit - 1 : n - 1], "next": str(oracle[n - 2])}
            by_cursor = fetch(limit=limit, before=oracle[n - limit - 1])
            assert got_page(by_cursor) == {"ids": oracle[-limit:], "next": None}
            by_cursor = fetch(limit=limit, before=oracle[n - limit - 2])
            assert got_page(by_cursor) == {"ids": oracle[n - limit - 1 : n - 1], "next": str(oracle[n - 2])}

    def test_beyond_the_end_is_empty(self, tl):
        kind, owner, fetch = tl
        oracle = sql_oracle(kind, owner)
        for offset in (len(oracle), len(oracle) + 1, len(oracle) + 1000):
            for limit in (1, 100):
                assert fetch(limit=limit, offset=offset) == {"items": [], "next": None}
        assert fetch(limit=20, before=oracle[-1]) == {"items": [], "next": None}
        assert fetch(limit=20, before=1) == {"items": [], "next": None}


class TestContractAllInRedisHead(TimelineContract):
    tier = "head"


class TestContractMostlyArchived(TimelineContract):
    tier = "archived"


class TestContractMostlyArchivedInSmallChunks(TimelineContract):
    tier = "archived_small_chunks"


class TestContractMixed(TimelineContract):
    tier = "mixed"


class TestContractAfterCrashes(TimelineContract):
    tier = "crashed"


# =================================================================================================
# 2. The figures, through the HTTP API
# =================================================================================================


def test_5000_boards_of_one_author_page_exactly_through_the_api(api, world, redis_data, settings):
    set_windows(settings, hot=80)
    other = bulk_boards([world.bob] * 300)  # another archive in the same table, never to show
    to_profiles(redis_data, other)
    for _ in range(5):  # posted in bursts, archived between them as the beat would
        to_profiles(redis_data, bulk_boards([world.alice] * 1000))
        archive.flag_waiting("m", [world.alice.pk, world.bob.pk])
        run = archive.archive_waiting(trigger="test")
        assert run.errors == ""
        assert redis_data.zcard(keys.profile_timeline(world.alice.pk)) < 80 + 100
    oracle = sql_profile(world.alice.pk)
    assert len(oracle) == 5000
    assert len(sql_archived_ids(world.alice.pk, "m")) >= 4800
    assert sql_ids_stored_twice(world.alice.pk, "m") == []

    fetch = api_fetch(api, "/api/v1/users/alice/boards")
    assert_walks_exact(fetch, oracle, limits=(100,))
    for boundary in boundaries(redis_data, "m", world.alice.pk):
        for start in (boundary - 1, boundary, boundary + 1):
            assert got_page(fetch(limit=100, offset=start)) == expected_page(oracle, start, 100)
            assert got_page(fetch(limit=100, before=oracle[start - 1])) == expected_page(oracle, start, 100)


def test_3000_items_of_one_feed_page_exactly_through_the_api(api, world, redis_data, settings):
    hot, chunk, slack = 50, 100, 300
    set_windows(settings, hot=hot, chunk=chunk, slack=slack)
    world.follow(world.reader, world.carol)  # a third author
    other = user_create(username="other", password=PASSWORD)
    world.follow(other, world.alice)  # another follower: its P is archived alongside
    authors = [world.alice, world.bob, world.carol]
    rng = random.Random(7)
    key = keys.home_timeline(world.reader.pk)
    runs = 0
    for _burst in range(15):
        boards = bulk_boards([rng.choice(authors) for _ in range(200)])
        to_profiles(redis_data, boards)
        for board in boards:
            waiting = fanout.fanout_batch(
                board_id=board.id, author_id=board.author_id, cursor=FollowerCursor(), batch_size=1000
            )
            archive.flag_waiting("p", waiting)  # what tasks.archive_soon does, minus the task
            assert redis_data.zcard(key) < hot + slack, "P reached its cap: ids were dropped unarchived"
        archive.flag_waiting("m", [a.pk for a in authors])
        archive.archive_waiting(trigger="test")
        runs += 1
        assert redis_data.zcard(key) < hot + chunk
    oracle = sql_feed(world.reader.pk)
    assert len(oracle) == 3000
    archived = sql_archived_ids(world.reader.pk, "p")
    assert len(archived) >= 2800 and set(archived) | set(head_ids(redis_data, "p", world.reader.pk)) == set(oracle)
    assert ArchiveRun.objects.filter(trigger="test").count() == runs

    reader = api.as_user("reader", PASSWORD)
    fetch = api_fetch(reader, "/api/v1/feed")
    assert_walks_exact(fetch, oracle, limits=(100,))
    for boundary in boundaries(redis_data, "p", world.reader.pk):
        for start in (boundary - 1, boundary, boundary + 1):
            assert got_page(fetch(limit=100, offset=start)) == expected_page(oracle, start, 100)
            assert got_page(fetch(limit=100, before=oracle[start - 1])) == expected_page(oracle, start, 100)
    # the other follower's feed (alice only) is whole too
    assert_walks_exact(selector_fetch("p", other.pk), sql_feed(other.pk), limits=(100,))


# =================================================================================================
# 3. A crash between the archive's steps leaves a duplicate that the next run absorbs, never a loss
# =================================================================================================


@pytest.mark.parametrize("kind", ["m", "p"])
@pytest.mark.parametrize("die_at", [1, 2])
def test_a_crash_between_commit_and_trim_leaves_no_loss_and_no_duplicate(world, redis_data, settings, kind, die_at):
    set_windows(settings, hot=50)
    load_world(world, redis_data, cycles=90)  # M: 270 boards, P: 360
    owner = world.owner(kind).pk
    key = keys.timeline_key(kind, owner)
    size = redis_data.zcard(key)
    committed = []

    def die(ids):
        committed.append(ids)
        if len(committed) == die_at:
            raise Killed

    with pytest.raises(Killed):
        archive.timeline_archive(kind, owner, on_committed=die)
    victim = committed[-1]
    rows = TimelineChunk.objects.filter(owner_id=owner, timeline=kind).order_by("-last_id")
    assert rows.count() == die_at
    assert rows.first().ids == victim  # the row is committed (the newest row: chunks go oldest first) ...
    assert all(score is not None for score in redis_data.zmscore(key, victim))  # ... and still in the head
    assert redis_data.zcard(key) == size - (die_at - 1) * 100
    assert archive.archived_max(owner, kind) == max(victim)
    fetch = selector_fetch(kind, owner)
    assert_walks_exact(fetch, sql_oracle(kind, owner))  # each board once: the duplicate is merged away

    # boards keep coming before the next run
    late = bulk_boards([world.alice] * 30)
    to_profiles(redis_data, late)
    zadd_many(redis_data, keys.home_timeline(world.reader.pk), [b.id for b in late])
    chunks, moved = archive.timeline_archive(kind, owner)
    assert chunks == (size + 30 - 50) // 100 - (die_at - 1)
    assert sql_ids_stored_twice(owner, kind) == []
    archived = sql_archived_ids(owner, kind)
    assert len(archived) == ((size + 30 - 50) // 100) * 100
    assert all(score is None for score in redis_data.zmscore(key, archived))  # the head let them go
    assert sorted(set(archived) | set(head_ids(redis_data, kind, owner)), reverse=True) == sql_oracle(kind, owner)
    assert_walks_exact(fetch, sql_oracle(kind, owner))


@pytest.mark.parametrize("kind", ["m", "p"])
def test_a_crash_after_the_mark_before_the_commit_loses_nothing(world, redis_data, settings, kind):
    set_windows(settings, hot=50)
    load_world(world, redis_data, cycles=90)
    owner = world.owner(kind).pk
    key = keys.timeline_key(kind, owner)
    oldest = [int(i) for i in redis_data.zrange(key, 0, 99)]
    # step 1 of timeline_archive (the mark), then the process dies: no row, ids in the head
    scripts.hset_max(keys=[keys.timeline_meta(owner)], field=mark_field(kind), value=max(oldest))
    assert archive.archived_max(owner, kind) == max(oldest)
    assert not TimelineChunk.objects.filter(owner_id=owner).exists()
    fetch = selector_fetch(kind, owner)
    assert_walks_exact(fetch, sql_oracle(kind, owner))
    for limit in LIMITS:
        for boundary in boundaries(redis_data, kind, owner):
            oracle = sql_oracle(kind, owner)
            assert got_page(fetch(limit=limit, offset=boundary)) == expected_page(oracle, boundary, limit)

    archive.timeline_archive(kind, owner)
    assert sql_ids_stored_twice(owner, kind) == []
    assert set(oldest) <= set(sql_archived_ids(owner, kind))
    assert all(score is None for score in redis_data.zmscore(key, oldest))
    assert archive.archived_max(owner, kind) == max(sql_archived_ids(owner, kind))
    assert_walks_exact(fetch, sql_oracle(kind, owner))


def test_archiving_twice_in_a_row_changes_nothing(world, redis_data, settings):
    set_windows(settings, hot=50)
    load_world(world, redis_data, cycles=90)
    owner = world.alice.pk
    first = archive.timeline_archive("m", owner)
    rows = list(TimelineChunk.objects.filter(owner_id=owner).values_list("first_id", "last_id", "ids"))
    head = head_ids(redis_data, "m", owner)
    assert first[0] > 0
    assert archive.timeline_archive("m", owner) == (0, 0)
    assert list(TimelineChunk.objects.filter(owner_id=owner).values_list("first_id", "last_id", "ids")) == rows
    assert head_ids(redis_data, "m", owner) == head


# =================================================================================================
# 4. Boards deleted or hidden after their chunk was archived
# =================================================================================================


def _archived_world(world, redis_data, settings):
    set_windows(settings, hot=30)
    load_world(world, redis_data, cycles=90)
    for kind in ("m", "p"):
        archive.timeline_archive(kind, world.owner(kind).pk)
    # alice's boards that sit in an archived chunk of both her M and reader's P
    in_both = sorted(set(sql_archived_ids(world.alice.pk, "m")) & set(sql_archived_ids(world.reader.pk, "p")))
    assert len(in_both) > 50
    return in_both


def _assert_gone_everywhere(api, reader, world, gone: list[int]):
    for kind, owner, fetch, limits in (
        ("m", world.alice.pk, api_fetch(api, "/api/v1/users/alice/boards"), (100,)),
        ("p", world.reader.pk, api_fetch(reader, "/api/v1/feed"), (100,)),
        ("m", world.alice.pk, selector_fetch("m", world.alice.pk), (7, 100)),
        ("p", world.reader.pk, selector_fetch("p", world.reader.pk), (7, 100)),
    ):
        oracle = sql_oracle(kind, owner)
        assert not set(gone) & set(oracle)
        for mode in ("offset", "before"):
            for limit in limits:
                got, _ = walk(fetch, limit=limit, mode=mode, strict=False)
                assert not set(gone) & set(got), (
                    f"{sorted(set(gone) & set(got))} still listed in {kind}, {mode} walk, limit {limit}"
                )
                assert got == oracle, (kind, mode, limit)


def test_a_board_deleted_after_archiving_leaves_the_archive_pages(api, world, redis_data, settings):
    in_both = _archived_world(world, redis_data, settings)
    reader = api.as_user("reader", PASSWORD)
    assert_walks_exact(selector_fetch("p", world.reader.pk), sql_feed(world.reader.pk))  # G is warm now
    victims = [in_both[5], in_both[len(in_both) // 2]]
    for board_id in victims:
        world.run(lambda b=board_id: board_services.board_delete(board=Board.objects.get(pk=b)))
    assert Board.objects.filter(pk__in=victims, state=Board.State.DELETED).count() == 2
    _assert_gone_everywhere(api, reader, world, victims)


# A state saved around the services while the board's G entry is warm is not supported: G would
# show it until it expires. Every state change of the site goes through feeds.services (the admin
# too), so only the cold-cache save is checked here, as a fallback.
@pytest.mark.parametrize("how", ["service", "state_saved_cache_cold"])
def test_a_board_hidden_after_archiving_leaves_the_archive_pages(api, world, redis_data, settings, how):
    """``service``: moderation.board_hide. ``state_saved_*``: the state set to
    'hidden' and saved, as the admin's change form does, with the board's G entry gone (expired)
    or still there (the lists were just read)."""
    in_both = _archived_world(world, redis_data, settings)
    reader = api.as_user("reader", PASSWORD)
    assert_walks_exact(selector_fetch("m", world.alice.pk), sql_profile(world.alice.pk))  # G is warm now
    victim = Board.objects.get(pk=in_both[len(in_both) // 3])
    assert redis_data.exists(keys.board(victim.pk))
    if how == "service":
        world.run(lambda: moderation.board_hide(board=victim))
    else:
        victim.state = Board.State.HIDDEN
        world.run(lambda: victim.save())
        if how == "state_saved_cache_cold":
            redis_data.delete(keys.board(victim.pk))
    assert Board.objects.get(pk=victim.pk).state == Board.State.HIDDEN
    _assert_gone_everywhere(api, reader, world, [victim.pk])


def test_an_unfollowed_authors_archived_boards_leave_the_feed(api, world, redis_data, settings):
    """Archived chunks keep what was delivered while the follow held; the feed shows only the
    people followed now, archive pages included."""
    from feeds.services.follows import follow_delete

    _archived_world(world, redis_data, settings)
    bob_archived = set(sql_archived_ids(world.reader.pk, "p")) & {
        b.id for b in world.boards if b.author_id == world.bob.pk
    }
    assert bob_archived
    world.run(lambda: follow_delete(follower=world.reader, followee=world.bob))
    oracle = sql_feed(world.reader.pk)
    assert oracle == sorted((b.id for b in world.boards if b.author_id == world.alice.pk), reverse=True)
    reader = api.as_user("reader", PASSWORD)
    for fetch, limits in ((api_fetch(reader, "/api/v1/feed"), (100,)), (selector_fetch("p", world.reader.pk), (7,))):
        for limit in limits:
            for mode in ("offset", "before"):
                got, _ = walk(fetch, limit=limit, mode=mode, strict=False)
                assert got == oracle, (mode, limit)


# =================================================================================================
# 5. A hot feed's memory stays bounded
# =================================================================================================


def _hot_feed(world, redis_data, count: int):
    """``count`` boards by alice, bob and carol (reader follows all three), bulk-inserted."""
    world.follow(world.reader, world.carol)
    rng = random.Random(11)
    boards = bulk_boards([rng.choice([world.alice, world.bob, world.carol]) for _ in range(count)])
    to_profiles(redis_data, boards)
    return boards


def _reference_memory(redis_data, ids) -> int:
    """MEMORY USAGE of a plain sorted set holding these ids the way P holds them."""
    ref = "test:reference-zset"
    zadd_many(redis_data, ref, ids)
    used = redis_data.memory_usage(ref, samples=0)
    redis_data.delete(ref)
    return used


def test_a_hot_feed_without_the_archiver_never_passes_hot_plus_slack(world, redis_data, settings):
    hot, slack = 50, 150
    set_windows(settings, hot=hot, slack=slack)
    boards = _hot_feed(world, redis_data, 2000)
    key = keys.home_timeline(world.reader.pk)
    sizes, flagged = [], 0
    for board in boards:
        flagged += len(store.home_deliver([world.reader.pk], board.author_id, [board.id]))
        sizes.append(redis_data.zcard(key))
    assert max(sizes) == hot + slack  # reached, never passed
    assert flagged > 0  # it did ask for the archiver, which never came
    assert not TimelineChunk.objects.exists()
    assert head_ids(redis_data, "p", world.reader.pk) == [b.id for b in boards][::-1][: hot + slack]
    cap_memory = _reference_memory(redis_data, [b.id for b in boards][-(hot + slack) :])
    all_memory = _reference_memory(redis_data, [b.id for b in boards])
    assert redis_data.memory_usage(key, samples=0) <= cap_memory * 1.25 < all_memory
    max_listpack = int(redis_data.config_get("zset-max-listpack-entries").get("zset-max-listpack-entries", 128))
    encoding = redis_data.object("encoding", key)
    assert encoding == ("listpack" if hot + slack <= max_listpack else "skiplist") or (
        encoding == "ziplist" and hot + slack <= max_listpack
    )


def test_a_hot_feed_with_the_archiver_stays_below_hot_plus_one_chunk(world, redis_data, settings):
    hot, slack, chunk = 50, 150, 100
    set_windows(settings, hot=hot, slack=slack, chunk=chunk)
    boards = _hot_feed(world, redis_data, 2000)
    key = keys.home_timeline(world.reader.pk)
    runs, memory = 0, []
    for board in boards:
        waiting = store.home_deliver([world.reader.pk], board.author_id, [board.id])
        assert redis_data.zcard(key) <= hot + slack
        if archive.flag_waiting("p", waiting):
            archive.archive_waiting(trigger="test")
            runs += 1
            assert redis_data.zcard(key) < hot + chunk
            memory.append(redis_data.memory_usage(key, samples=0))
    assert runs >= (2000 - hot) // chunk - 1
    archived = sql_archived_ids(world.reader.pk, "p")
    assert len(archived) == len(set(archived)) == runs * chunk
    assert sorted(set(archived) | set(head_ids(redis_data, "p", world.reader.pk)), reverse=True) == sql_feed(
        world.reader.pk
    )
    bound = _reference_memory(redis_data, [b.id for b in boards][-(hot + chunk) :])
    assert max(memory) <= bound * 1.25
    assert max(memory) < _reference_memory(redis_data, [b.id for b in boards]) / 5
    assert_walks_exact(selector_fetch("p", world.reader.pk), sql_feed(world.reader.pk), limits=(100,))


# =================================================================================================
# 6. Idle readers: no fan-out while away, the whole feed back on return
# =================================================================================================


def _post_and_deliver(redis_data, authors, count: int, rng) -> list[Posted]:
    """``count`` boards by ``authors`` (random), into M and fanned out as board_fanout does, with
    P flagged for the archiver when due (archive_soon without the task)."""
    boards = bulk_boards([rng.choice(authors) for _ in range(count)])
    to_profiles(redis_data, boards)
    for board in boards:
        waiting = fanout.fanout_batch(
            board_id=board.id, author_id=board.author_id, cursor=FollowerCursor(), batch_size=1000
        )
        archive.flag_waiting("p", waiting)
    return boards


def _go_idle(redis_data, user_id: int) -> None:
    """What time does to an idle user: the active mark expires (its TTL), and the idle sweeper
    (beat) archives their P and drops it from Redis."""
    from feeds.timelines.regeneration import idle_sweep

    activity._seen.pop(user_id, None)  # this process forgets it saw them (it would, in days)
    redis_data.delete(keys.active(user_id))
    redis_data.zadd(keys.last_seen(user_id), {user_id: 0})  # last seen long ago
    idle_sweep()
    assert not redis_data.exists(keys.home_timeline(user_id))


def test_an_idle_reader_gets_no_fanout_and_their_feed_comes_back_whole(api, world, redis_data, settings):
    hot, slack = 50, 200
    set_windows(settings, hot=hot, slack=slack)
    world.follow(world.reader, world.carol)
    reader = api.as_user("reader", PASSWORD)
    authors = [world.alice, world.bob, world.carol]
    rng = random.Random(3)
    key = keys.home_timeline(world.reader.pk)
    before_idle = []
    for _ in range(5):
        before_idle += _post_and_deliver(redis_data, authors, 100, rng)
        archive.flag_waiting("m", [a.pk for a in authors])
        archive.archive_waiting(trigger="test")
    archived_before = set(sql_archived_ids(world.reader.pk, "p"))
    assert len(archived_before) >= 300  # older boards really were archived before the idle time
    assert redis_data.zcard(key) > 0

    _go_idle(redis_data, world.reader.pk)
    archived_before = set(sql_archived_ids(world.reader.pk, "p"))  # the sweeper archived the head too
    while_idle = []
    for _ in range(3):
        while_idle += _post_and_deliver(redis_data, authors, 120, rng)
        assert not redis_data.exists(key), "fan-out recreated an idle reader's P"
        archive.flag_waiting("m", [a.pk for a in authors])
        archive.archive_waiting(trigger="test")
    assert set(sql_archived_ids(world.reader.pk, "p")) == archived_before  # nothing of theirs moved

    assert reader.get("/api/v1/me").status_code == 200  # back: any authenticated call
    assert redis_data.exists(keys.active(world.reader.pk))
    fetch = api_fetch(reader, "/api/v1/feed")
    first = fetch(limit=20)  # regenerates P; home_gap_fill runs (eager)
    oracle = sql_feed(world.reader.pk)
    assert ids_of(first) == oracle[:20]
    assert 0 < redis_data.zcard(key) <= hot + slack
    assert {b.id for b in while_idle} <= set(oracle) and set(oracle) & archived_before
    assert_walks_exact(fetch, oracle, limits=(37, 100))
    for boundary in boundaries(redis_data, "p", world.reader.pk):
        for start in (boundary - 1, boundary, boundary + 1):
            assert got_page(fetch(limit=20, offset=start)) == expected_page(oracle, start, 20)
            assert got_page(fetch(limit=20, before=oracle[start - 1])) == expected_page(oracle, start, 20)
    assert sql_ids_stored_twice(world.reader.pk, "p") == []

    # and fan-out reaches them again
    fresh = _post_and_deliver(redis_data, authors, 1, rng)[0]
    assert redis_data.zscore(key, fresh.id) == fresh.id
    assert ids_of(fetch(limit=1)) == [fresh.id]


def test_an_idle_reader_whose_feed_was_never_archived_gets_it_back_whole(api, world, redis_data, settings):
    """Before going idle the reader's P held everything (never past hot + one chunk, so never
    archived); while idle more boards came. On return the feed must still reach the oldest."""
    hot, slack = 50, 200
    set_windows(settings, hot=hot, slack=slack)
    reader = api.as_user("reader", PASSWORD)
    rng = random.Random(5)
    authors = [world.alice, world.bob]
    _post_and_deliver(redis_data, authors, 120, rng)  # P: 120 < hot + chunk = 150
    assert redis_data.zcard(keys.home_timeline(world.reader.pk)) == 120
    assert archive.archived_max(world.reader.pk, "p") == 0
    _go_idle(redis_data, world.reader.pk)
    _post_and_deliver(redis_data, authors, 200, rng)
    archive.flag_waiting("m", [a.pk for a in authors])
    archive.archive_waiting(trigger="test")

    assert reader.get("/api/v1/me").status_code == 200  # back: any authenticated call
    assert redis_data.exists(keys.active(world.reader.pk))
    fetch = api_fetch(reader, "/api/v1/feed")
    oracle = sql_feed(world.reader.pk)
    assert len(oracle) == 320
    assert_walks_exact(fetch, oracle, limits=(100,))


def test_a_board_delivered_between_the_return_and_the_first_feed_read_leaves_no_gap(api, world, redis_data, settings):
    """The reader comes back (any authenticated call marks them active), a followee posts (fan-out
    reaches them again, so P exists), then they open their feed: it must still be whole."""
    hot, slack = 50, 200
    set_windows(settings, hot=hot, slack=slack)
    reader = api.as_user("reader", PASSWORD)
    rng = random.Random(9)
    authors = [world.alice, world.bob]
    for _ in range(3):
        _post_and_deliver(redis_data, authors, 100, rng)
        archive.archive_waiting(trigger="test")
    assert archive.archived_max(world.reader.pk, "p") > 0
    _go_idle(redis_data, world.reader.pk)
    _post_and_deliver(redis_data, authors, 150, rng)

    assert reader.get("/api/v1/me").status_code == 200  # back
    assert redis_data.exists(keys.active(world.reader.pk))
    _post_and_deliver(redis_data, authors, 1, rng)  # fanned out to them: they are active again
    fetch = api_fetch(reader, "/api/v1/feed")
    oracle = sql_feed(world.reader.pk)
    assert_walks_exact(fetch, oracle, limits=(100,))


# =================================================================================================
# 7. The scheduled archival: the beat task and the management command
# =================================================================================================


def _flagged_world(world, redis_data, settings):
    """Several timelines past their window, flagged; one flagged but within it. Returns the
    expected (timelines, chunks, ids) and the timelines as (kind, owner, size before)."""
    hot, chunk = 40, 100
    set_windows(settings, hot=hot, chunk=chunk)
    load_world(world, redis_data, cycles=80)  # alice 240, bob 80, carol 80; reader's P 320
    world.follow(world.bob, world.alice)
    zadd_many(
        redis_data, keys.home_timeline(world.bob.pk), [b.id for b in world.boards if b.author_id == world.alice.pk]
    )
    timelines_ = [("m", world.alice.pk), ("m", world.bob.pk), ("p", world.reader.pk), ("p", world.bob.pk)]
    for kind, owner in timelines_:
        assert archive.flag_waiting(kind, [owner]) == [owner]
    sizes = {(kind, owner): redis_data.zcard(keys.timeline_key(kind, owner)) for kind, owner in timelines_}
    chunks = sum(max((size - hot) // chunk, 0) for size in sizes.values())
    assert chunks == 2 + 0 + 2 + 2
    return (len(timelines_), chunks, chunks * chunk), sizes


def _assert_archived_as_expected(world, redis_data, settings, sizes):
    hot, chunk = settings.HOME_TIMELINE_HOT, settings.TIMELINE_CHUNK
    assert archive.waiting_count() == 0
    for (kind, owner), size in sizes.items():
        key = keys.timeline_key(kind, owner)
        moved = max((size - hot) // chunk, 0) * chunk
        oracle = sql_oracle(kind, owner)
        archived = sql_archived_ids(owner, kind)
        assert sorted(archived) == sorted(oracle)[:moved]  # exactly the oldest, each once
        assert redis_data.zcard(key) == size - moved < hot + chunk
        assert_walks_exact(selector_fetch(kind, owner), oracle, limits=(100,))


def test_the_beat_task_archives_every_flagged_timeline_and_records_the_run(world, redis_data, settings):
    (timelines_n, chunks, ids), sizes = _flagged_world(world, redis_data, settings)
    summary = tasks.archive_run()  # what beat runs, in-process
    run = ArchiveRun.objects.get()
    assert run.trigger == "beat" and run.finished_at is not None and run.errors == ""
    assert (run.timelines, run.chunks, run.ids) == (timelines_n, chunks, ids)
    assert summary == {"timelines": timelines_n, "chunks": chunks, "ids": ids, "errors": False}
    assert sql_chunk_totals() == (chunks, ids)
    _assert_archived_as_expected(world, redis_data, settings, sizes)
    assert tasks.archive_run() == {"timelines": 0, "chunks": 0, "ids": 0, "errors": False}  # nothing waits now


def test_the_archive_now_command_does_the_same(world, redis_data, settings):
    (timelines_n, chunks, ids), sizes = _flagged_world(world, redis_data, settings)
    out, err = StringIO(), StringIO()
    try:
        call_command("archive_now", stdout=out, stderr=err)
    except CommandError as error:
        if "Unknown command" in str(error):
            pytest.skip("manage.py archive_now does not exist yet")
        raise
    run = ArchiveRun.objects.get()
    assert run.trigger == "command" and run.errors == ""
    assert (run.timelines, run.chunks, run.ids) == (timelines_n, chunks, ids)
    assert sql_chunk_totals() == (chunks, ids)
    assert f"{ids:,} ids in {chunks:,} chunks from {timelines_n:,} timelines" in out.getvalue()
    _assert_archived_as_expected(world, redis_data, settings, sizes)


def test_the_archive_now_command_takes_unflagged_users(world, redis_data, settings):
    set_windows(settings, hot=40)
    load_world(world, redis_data, cycles=80)
    assert archive.waiting_count() == 0
    try:
        call_command("archive_now", "--user", str(world.alice.pk), stdout=StringIO(), stderr=StringIO())
    except CommandError as error:
        if "Unknown command" in str(error):
            pytest.skip("manage.py archive_now does not exist yet")
        raise
    assert len(sql_archived_ids(world.alice.pk, "m")) == (240 - 40) // 100 * 100
    assert sql_archived_ids(world.bob.pk, "m") == []
    assert_walks_exact(selector_fetch("m", world.alice.pk), sql_profile(world.alice.pk), limits=(100,))


def test_a_timeline_that_fails_waits_again_and_the_run_records_the_error(world, redis_data, settings):
    set_windows(settings, hot=40)
    load_world(world, redis_data, cycles=80)
    broken = keys.profile_timeline(world.bob.pk)
    redis_data.delete(broken)
    redis_data.set(broken, "not a sorted set")  # a real failure: WRONGTYPE on the first command
    archive.flag_waiting("m", [world.alice.pk, world.bob.pk])
    run = archive.archive_waiting(trigger="test")
    assert run.timelines == 1 and f"m:{world.bob.pk}" in run.errors and "WRONGTYPE" in run.errors
    assert archive.take_waiting(10) == [("m", world.bob.pk)]  # waits for the next run
    assert len(sql_archived_ids(world.alice.pk, "m")) == run.ids == 200
    assert ArchiveRun.objects.get(pk=run.pk).errors == run.errors
