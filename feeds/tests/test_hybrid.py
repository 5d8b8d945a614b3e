"""Hybrid fan-out (feeds.timelines.hybrid): authors above FANOUT_PUSH_MAX_FOLLOWERS are not pushed, and each
feed page merges their M at read time. The served feed must be exactly what pushing every board
would give, and the oracle of every check is plain SQL over PostgreSQL: the published boards of
the people the reader follows, newest first.

Real PostgreSQL and real Redis; tasks run in-process (eager). The threshold is lowered to a few
followers so random graphs of a handful of users have big authors, cross the threshold both ways,
and the windows are shrunk so heads, P chunks and big authors' M chunks all take part in paging.
"""

import itertools
import time
import uuid
from datetime import timedelta
from io import StringIO
from unittest import mock

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache
from django.core.management import call_command
from django.db import transaction
from django.test import override_settings
from hypothesis import HealthCheck, event, given, settings as hypothesis_settings, strategies as st, target
from redis.connection import AbstractConnection

from feeds import keys, selectors, tasks
from feeds.discovery import indexes
from feeds.discovery.queries import Query
from feeds.models import Board, TimelineChunk
from feeds.services import activity
from feeds.services.boards import board_create, board_delete
from feeds.services.follows import follow_create, follow_delete
from feeds.tests.support import (
    PASSWORD,
    api_fetch,
    assert_walks_exact,
    boundaries,
    bulk_boards,
    expected_page,
    got_page,
    selector_fetch,
    set_windows,
    sql_feed,
    to_profiles,
)
from feeds.timelines import archive, hybrid
from feeds.timelines.regeneration import idle_sweep
from social import graph
from social.models import Follow
from social.services import user_create
from ugcsite.platform.http import ID_LIMIT
from ugcsite.platform.redis import get_redis

pytestmark = pytest.mark.django_db

THRESHOLD = 2  # in these tests an author with 3 or more followers is big
N_USERS = 7
KINDS = [kind.value for kind in Board.Kind]
DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}


def _windows(*, hot: int, chunk: int, slack: int) -> dict:
    return {
        "PROFILE_TIMELINE_HOT": hot,
        "HOME_TIMELINE_HOT": hot,
        "TIMELINE_CHUNK": chunk,
        "HOME_TIMELINE_SLACK": slack,
    }


def big_windows() -> dict:
    """Nothing is archived or trimmed."""
    return _windows(hot=400, chunk=100, slack=400)


def small_windows() -> dict:
    """A few boards make chunks of every timeline (one is archived at 4 ids; P is capped at 6)."""
    return _windows(hot=2, chunk=2, slack=4)


_names = itertools.count()


@pytest.fixture(autouse=True)
def _hybrid_settings(settings):
    settings.FANOUT_PUSH_MAX_FOLLOWERS = THRESHOLD
    settings.FOLLOW_BACKFILL_COUNT = 1000
    settings.FANOUT_BATCH_SIZE = 1  # walks and fan-outs chain across tasks, one follower a batch
    # No margin: boards made after an author falls back must reach feeds by being pushed alone.
    settings.FANOUT_PULL_MARGIN = timedelta(0)


def _users(count: int) -> list:
    return [user_create(username=f"h{next(_names)}_{uuid.uuid4().hex[:6]}", password=PASSWORD) for _ in range(count)]


def oracle(user_id: int, kind: str | None = None) -> list[int]:
    """The published boards of the people the user follows now (of ``kind``), newest first."""
    boards = Board.objects.filter(
        state=Board.State.PUBLISHED, author_id__in=Follow.objects.filter(follower_id=user_id).values("followee_id")
    )
    if kind is not None:
        boards = boards.filter(kind=kind)
    return list(boards.order_by("-id").values_list("id", flat=True))


def big_authors() -> set[int]:
    return {a for a in Follow.objects.values_list("followee_id", flat=True) if hybrid.author_is_big(a)}


def filtered_fetch(user_id: int, kind: str):
    query = Query(kind=kind)

    def fetch(*, limit, offset=None, before=None):
        return selectors.home_feed_filtered(user_id, query, offset=offset, before=before, limit=limit)

    return fetch


def ids_of(answer) -> list[int]:
    return [item["id"] for item in answer["items"]]


# =================================================================================================
# 1. Random graphs, random steps: the merged feed equals full push (SQL) for every reader
# =================================================================================================

user_index = st.integers(0, N_USERS - 1)
STARS = 2  # users 0 and 1 are followed and post more than the others, so they often become big
star_index = st.one_of(st.integers(0, STARS - 1), user_index)
pairs = st.builds(
    lambda follower, followee: (follower if follower != followee else (follower + 1) % N_USERS, followee),
    user_index,
    star_index,
)
pick = st.integers(0, 10_000)

PHASE_ONE = {  # big windows: graph and boards, the threshold crossed both ways
    "create": st.tuples(
        st.just("create"), st.sampled_from([0, 0, 0, 0, 1, 1, 1, 1, *range(N_USERS)]), st.sampled_from(KINDS)
    ),
    "delete": st.tuples(st.just("delete"), pick),
    "follow": st.tuples(st.just("follow"), pairs),
    "crowd": st.tuples(st.just("crowd"), star_index, st.sets(user_index, min_size=1, max_size=4)),
    "unfollow": st.tuples(st.just("unfollow"), pick),
}
PHASE_TWO = {  # small windows, every timeline archived: more boards, unfollows, idle readers
    "create": PHASE_ONE["create"],
    "delete": PHASE_ONE["delete"],
    "unfollow": PHASE_ONE["unfollow"],
    "follow_big": st.tuples(st.just("follow_big"), pairs),
    "archive": st.tuples(st.just("archive")),
    "idle": st.tuples(st.just("idle"), user_index),
    "back": st.tuples(st.just("back"), user_index),
}


def _steps(table: dict, weights: list[str], least: int, most: int):
    step = st.sampled_from(weights).flatmap(table.__getitem__)
    # lengths uniform (plain st.lists favours very short ones)
    return st.sampled_from(range(least, most + 1)).flatmap(lambda n: st.lists(step, min_size=n, max_size=n))


phase_one = _steps(PHASE_ONE, ["create"] * 4 + ["follow", "follow", "crowd", "unfollow", "delete"], 15, 45)
phase_two = _steps(PHASE_TWO, ["create"] * 4 + ["unfollow", "follow_big", "archive", "delete", "idle", "back"], 5, 40)


def _is_active(user_id: int) -> bool:
    return bool(get_redis().exists(keys.active(user_id)))


def _go_idle(user_id: int) -> None:
    """What days away do: the active mark expires (IDLE_AFTER after the last activity, which is
    when it was last set), and the idle sweeper archives and drops P."""
    activity._seen.pop(user_id, None)
    client = get_redis()
    client.delete(keys.active(user_id))
    client.zadd(keys.last_seen(user_id), {user_id: time.time() - django_settings.IDLE_AFTER.total_seconds() - 1})
    idle_sweep()


def _come_back(user_id: int) -> None:
    """Any authenticated call, then the feed's ready-check (a returning user's P is regenerated)."""
    activity._seen.pop(user_id, None)
    activity.user_seen(user_id=user_id)
    activity.home_feed_ready(user_id=user_id)


def _archive_everything(users) -> None:
    """The beat run over every timeline that is past its (small) window."""
    archive.flag_waiting("m", [u.pk for u in users])
    archive.flag_waiting("p", [u.pk for u in users if get_redis().exists(keys.home_timeline(u.pk))])
    assert archive.archive_waiting(trigger="test").errors == ""


def _apply(op, users, capture, dropped_at_read: list[int]) -> None:
    """One step, as the API would take it, with its on-commit work and tasks run at once. A board
    deleted while an archived chunk holds it, or an author unfollowed by a reader whose P has
    chunks, goes into ``dropped_at_read``: such ids stay in chunks and are dropped at read."""
    kind = op[0]
    with capture(execute=True):
        if kind == "create":
            board_create(author=users[op[1]], title="t", kind=op[2], tags=[], doc=DOC)
        elif kind == "delete":
            boards = list(Board.objects.filter(state=Board.State.PUBLISHED).order_by("id"))
            if boards:
                board = boards[op[1] % len(boards)]
                if TimelineChunk.objects.filter(ids__contains=[board.pk]).exists():
                    dropped_at_read.append(board.pk)
                board_delete(board=board)
        elif kind == "unfollow":
            edges = list(Follow.objects.select_related("follower", "followee").order_by("id"))
            if edges:
                edge = edges[op[1] % len(edges)]
                if TimelineChunk.objects.filter(owner_id=edge.follower_id, timeline="p").exists():
                    dropped_at_read.append(edge.followee_id)
                follow_delete(follower=edge.follower, followee=edge.followee)
        elif kind == "follow":
            follow_create(follower=users[op[1][0]], followee=users[op[1][1]])
        elif kind == "crowd":  # several follows of one author at once: the count often crosses
            for follower in sorted(op[2] - {op[1]}):
                follow_create(follower=users[follower], followee=users[op[1]])
        elif kind == "follow_big":
            # Only a follow that leaves the followee big: full push back-fills just the newest boards
            # of a pushed followee's M head, so with archived history it differs from the SQL oracle
            # too (and equally); a big followee's whole history is merged, archive included.
            follower, followee = users[op[1][0]], users[op[1][1]]
            if Follow.objects.filter(followee=followee).exclude(follower=follower).count() >= THRESHOLD:
                follow_create(follower=follower, followee=followee)
        elif kind == "archive":
            _archive_everything(users)
        elif kind == "idle":
            if _is_active(users[op[1]].pk) and Follow.objects.filter(follower=users[op[1]]).exists():
                event("a reader of someone went idle")
                _go_idle(users[op[1]].pk)
        elif kind == "back":
            if not _is_active(users[op[1]].pk):
                _come_back(users[op[1]].pk)
        else:  # pragma: no cover
            raise AssertionError(op)


def assert_first_pages_exact(users, *, deep: bool = False) -> None:
    """Every active reader's feed, one page of everything, as the API serves it (ready-check
    first); with ``deep``, two pages by offset inside it too (with feed snapshots on, they keep
    or read a snapshot, so the next step's change must show in the next ones)."""
    for user in users:
        if not _is_active(user.pk):
            continue  # the API would mark them active (and regenerate) before reading
        activity.home_feed_ready(user_id=user.pk)
        answer = selectors.home_feed(user.pk, offset=0, before=None, limit=100)
        full = oracle(user.pk)
        assert ids_of(answer) == full, f"feed of {user.pk}"
        assert answer["next"] is None
        assert all(item["author"] != user.username for item in answer["items"])
        for start in (1, len(full) // 2) if deep else ():
            page = selectors.home_feed(user.pk, offset=start, before=None, limit=2)
            assert got_page(page) == expected_page(full, start, 2), f"feed of {user.pk} at {start}"


@hypothesis_settings(
    max_examples=20,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(first=phase_one, second=phase_two, limit=st.integers(1, 3), snapshots=st.booleans())
def test_the_merged_feed_equals_full_push_for_every_reader(
    first, second, limit, snapshots, django_capture_on_commit_callbacks, eager_tasks
):
    # (the autouse fixture set the big windows; per example only context managers, which undo)
    # With ``snapshots``, every page by offset of a reader of big authors keeps a feed snapshot of
    # a few ids more (feeds.timelines.snapshot: no merge in the script call, none too shallow),
    # and deep pages are read after every step: each step's change must reach the pages read after it.
    snapshot_settings = {"FEED_SNAPSHOT_FROM": 0, "FEED_SNAPSHOT_AHEAD": 2} if snapshots else {}
    with (
        transaction.atomic(),
        override_settings(**small_windows(), **snapshot_settings),
        mock.patch.object(hybrid, "SCRIPT_MERGE_MAX_IDS", 0 if snapshots else hybrid.SCRIPT_MERGE_MAX_IDS),
    ):
        get_redis().flushdb()
        cache.clear()
        assert not Board.objects.exists() and not Follow.objects.exists()
        users = _users(N_USERS)
        dropped_at_read: list[int] = []
        with override_settings(**big_windows()):
            for op in first:
                _apply(op, users, django_capture_on_commit_callbacks, dropped_at_read)
                assert_first_pages_exact(users, deep=snapshots)

        _archive_everything(users)
        for op in second:
            _apply(op, users, django_capture_on_commit_callbacks, dropped_at_read)
            assert_first_pages_exact(users, deep=snapshots and not dropped_at_read)

        big = big_authors()
        fell_back = {
            a
            for a in Follow.objects.values_list("followee_id", flat=True)
            if get_redis().hget(keys.timeline_meta(a), hybrid.PULL_BELOW) not in (None, str(ID_LIMIT))
        }
        event(f"big authors now: {min(len(big), 2)}{'+' if len(big) > 1 else ''}")
        if snapshots:
            event(f"a feed snapshot is kept: {any(get_redis().exists(keys.feed_snapshot(u.pk)) for u in users)}")
        event(f"an author fell back: {bool(fell_back)}")
        merged = {a for u in users for a in hybrid.big_followees(u.pk)}
        merged_chunks = TimelineChunk.objects.filter(owner_id__in=merged, timeline="m").count()
        target(float(merged_chunks), label="chunks of merged M")
        event(f"a merged M has chunks: {bool(merged_chunks)}")
        for user in users:
            if not _is_active(user.pk):
                _come_back(user.pk)
            # the big followees' entries are in place: the merge is what makes their boards show
            followed = set(Follow.objects.filter(follower=user).values_list("followee_id", flat=True))
            assert big & followed <= set(hybrid.big_followees(user.pk))
            # A board deleted, or an author unfollowed, after a chunk was archived stays in the chunk
            # and is dropped as the page is hydrated, in full push too: the walk is exact, but a
            # page may come up short.
            strict = not dropped_at_read
            full = oracle(user.pk)
            fetch = selector_fetch("p", user.pk)
            assert_walks_exact(fetch, full, limits=(limit, 100), strict=strict)
            for start in range(0, len(full) + 1, 2) if strict else ():
                assert got_page(fetch(limit=limit, offset=start)) == expected_page(full, start, limit)
                if start:
                    assert got_page(fetch(limit=limit, before=full[start - 1])) == expected_page(full, start, limit)
            assert_walks_exact(filtered_fetch(user.pk, "note"), oracle(user.pk, "note"), limits=(limit,), strict=strict)
        transaction.set_rollback(True)


# =================================================================================================
# 2. The mechanics, one at a time
# =================================================================================================


def _star_with(run, followers: int):
    star, *fans = _users(1 + followers)
    for fan in fans:
        run(lambda f=fan: follow_create(follower=f, followee=star))
    return star, fans


def test_a_big_authors_board_is_in_every_followers_feed_at_once_without_any_push(run, redis_data):
    star, fans = _star_with(run, THRESHOLD + 1)
    assert hybrid.author_is_big(star.pk)
    assert all(hybrid.big_followees(fan.pk) == [star.pk] for fan in fans)
    board = run(lambda: board_create(author=star, title="big news", kind="note", tags=[], doc=DOC))
    for fan in fans:
        assert redis_data.zscore(keys.home_timeline(fan.pk), board.pk) is None  # board_fanout pushed nothing
        assert ids_of(selectors.home_feed(fan.pk, offset=0, before=None, limit=20)) == [board.pk]
    assert ids_of(selectors.home_feed(star.pk, offset=0, before=None, limit=20)) == []  # never one's own


def test_a_warm_merged_page_is_one_round_trip_on_a_plain_redis(run, redis_data, monkeypatch, settings):
    """A reader following a big author and a pushed one: the warm page (P and the big author's M
    merged, G, the following check) is one script call on a plain Redis (timeline_page.lua); a
    merge that would read more than hybrid.SCRIPT_MERGE_MAX_IDS ids, and any page on a cluster,
    goes home_page's way, to the same answer."""
    star, fans = _star_with(run, THRESHOLD + 1)
    reader, plain = fans[0], _users(1)[0]
    run(lambda: follow_create(follower=reader, followee=plain))
    made = [
        run(lambda a=author, i=i: board_create(author=a, title=f"t{i}", kind="note", tags=[], doc=DOC)).pk
        for i, author in enumerate([star, plain, star, plain, star])
    ]
    expected = made[::-1]
    assert ids_of(selectors.home_feed(reader.pk, offset=0, before=None, limit=20)) == expected  # fills G

    sent = []
    original = AbstractConnection.send_packed_command
    monkeypatch.setattr(
        AbstractConnection,
        "send_packed_command",
        lambda self, command, check_health=True: sent.append(1) or original(self, command, check_health),
    )
    for offset, before, limit in ((0, None, 20), (1, None, 2), (None, expected[1], 2)):
        sent.clear()
        answer = selectors.home_feed(reader.pk, offset=offset, before=before, limit=limit)
        start = offset if before is None else 2
        assert ids_of(answer) == expected[start : start + limit]
        assert answer["next"] == (str(expected[start + limit - 1]) if start + limit < len(expected) else None)
        if not settings.REDIS_CLUSTER:
            assert len(sent) == 1, (offset, before, limit)
    monkeypatch.setattr(hybrid, "SCRIPT_MERGE_MAX_IDS", 10)  # 2 streams x (3 + 2 + 1) ids: merged in Python
    sent.clear()
    assert ids_of(selectors.home_feed(reader.pk, offset=3, before=None, limit=2)) == expected[3:5]
    assert len(sent) > 1


def test_crossing_up_marks_every_follower_and_falling_back_pushes_again(run, redis_data):
    star, fans = _star_with(run, THRESHOLD)
    early = run(lambda: board_create(author=star, title="pushed", kind="note", tags=[], doc=DOC))
    assert not hybrid.author_is_big(star.pk)
    assert all(redis_data.zscore(keys.home_timeline(f.pk), early.pk) for f in fans)  # pushed
    assert all(hybrid.big_followees(f.pk) == [] for f in fans)

    (late_fan,) = _users(1)
    run(lambda: follow_create(follower=late_fan, followee=star))  # the follow that crosses
    assert hybrid.author_is_big(star.pk)
    everyone = [*fans, late_fan]
    assert all(hybrid.big_followees(f.pk) == [star.pk] for f in everyone)  # the walk marked them all
    pulled = run(lambda: board_create(author=star, title="merged", kind="note", tags=[], doc=DOC))
    assert not any(redis_data.zscore(keys.home_timeline(f.pk), pulled.pk) for f in everyone)

    run(lambda: follow_delete(follower=late_fan, followee=star))  # back to the threshold
    assert not hybrid.author_is_big(star.pk)
    assert hybrid.big_followees(late_fan.pk) == []
    pushed = run(lambda: board_create(author=star, title="pushed again", kind="note", tags=[], doc=DOC))
    for fan in fans:
        assert redis_data.zscore(keys.home_timeline(fan.pk), pushed.pk) == pushed.pk
        # the entry stays: the boards of the big spell are still merged, below the boundary
        assert hybrid.big_followees(fan.pk) == [star.pk]
        assert ids_of(selectors.home_feed(fan.pk, offset=0, before=None, limit=20)) == [pushed.pk, pulled.pk, early.pk]
    assert ids_of(selectors.home_feed(late_fan.pk, offset=0, before=None, limit=20)) == []
    below = int(redis_data.hget(keys.timeline_meta(star.pk), hybrid.PULL_BELOW))
    assert pulled.pk < below <= pushed.pk < ID_LIMIT

    (newcomer,) = _users(1)  # crosses again: big, and the newcomer's pages merge the star at once
    run(lambda: follow_create(follower=newcomer, followee=star))
    assert hybrid.author_is_big(star.pk) and hybrid.big_followees(newcomer.pk) == [star.pk]
    assert ids_of(selectors.home_feed(newcomer.pk, offset=0, before=None, limit=20)) == [pushed.pk, pulled.pk, early.pk]


def test_the_unfollow_race_leaves_no_stale_big_following_entry(run, redis_data):
    """The marking walk reads a batch of followers, one unfollows (clean-up done), and only then
    does the batch write: the ex-follower must not get the entry back."""
    star, fans = _star_with(run, THRESHOLD + 1)
    reader = fans[0]
    followers, _ = graph.followers_batch(star.pk, graph.FollowerCursor(), 1000)  # the batch reads F
    assert reader.pk in followers
    run(lambda: follow_delete(follower=reader, followee=star))
    assert hybrid.big_followees(reader.pk) == []
    hybrid.followers_mark(star.pk, followers)  # the late batch writes
    assert hybrid.big_followees(reader.pk) == []
    assert all(hybrid.big_followees(f.pk) == [star.pk] for f in fans[1:])

    run(lambda: follow_create(follower=reader, followee=star))  # the guard is the edge, not luck
    redis_data.delete(keys.big_following(reader.pk))
    assert hybrid.followers_mark(star.pk, followers) == 1
    assert hybrid.big_followees(reader.pk) == [star.pk]


def test_a_walk_for_an_older_big_spell_stops_and_a_fall_back_does_not_stop_a_walk(run, redis_data, settings):
    star, fans = _star_with(run, THRESHOLD + 1)
    since = hybrid.pull_since(star.pk)
    redis_data.delete(*[keys.big_following(f.pk) for f in fans])
    tasks.big_author_walk(star.pk, since=since - 1)  # an older spell's walk: a newer one owns it
    assert all(hybrid.big_followees(f.pk) == [] for f in fans)
    run(lambda: follow_delete(follower=fans[0], followee=star))  # falls back meanwhile
    assert not hybrid.author_is_big(star.pk)
    tasks.big_author_walk(star.pk, since=since)  # goes on: the spell's boards stay merged
    assert all(hybrid.big_followees(f.pk) == [star.pk] for f in fans[1:])


def test_an_idle_reader_comes_back_to_a_whole_feed_of_big_and_fallen_back_authors(run, redis_data):
    """While the reader is away: a big author posts (merged), another falls back and posts
    (pushed, but not to an idle reader), a pushed author posts. On return the regenerated P
    leaves out only the author still big, and the feed is whole."""
    star, fans = _star_with(run, THRESHOLD + 1)
    fading, fading_fans = _star_with(run, THRESHOLD)  # the reader's follow makes it big
    (small,) = _users(1)
    reader = fans[0]
    for author in (fading, small):
        run(lambda a=author: follow_create(follower=reader, followee=a))
    assert hybrid.author_is_big(star.pk) and hybrid.author_is_big(fading.pk)

    def post(author, title):
        return run(lambda: board_create(author=author, title=title, kind="note", tags=[], doc=DOC)).pk

    before = [post(star, "s1"), post(fading, "f1"), post(small, "p1")]
    _go_idle(reader.pk)
    away = [post(star, "s2"), post(fading, "f2")]
    run(lambda: follow_delete(follower=fading_fans[0], followee=fading))  # falls back
    assert not hybrid.author_is_big(fading.pk)
    away += [post(fading, "f3"), post(small, "p2"), post(star, "s3")]
    assert redis_data.zscore(keys.home_timeline(fading_fans[1].pk), away[2]) is not None  # pushed to the active
    assert not redis_data.exists(keys.home_timeline(reader.pk))  # not to the idle reader

    _come_back(reader.pk)
    assert hybrid.merged_whole(reader.pk) == {star.pk}
    assert (
        ids_of(selectors.home_feed(reader.pk, offset=0, before=None, limit=20))
        == oracle(reader.pk)
        == sorted(before + away, reverse=True)
    )


def test_a_reader_whose_p_held_nothing_when_swept_gets_every_board_made_while_away(run, redis_data, settings):
    """Nothing was in P to archive (its followee had not posted yet, or was merged): the boards
    made while the reader was away, older than the regenerated head, come back by the gap fill."""
    set_windows(settings, hot=5, chunk=5, slack=10)
    author, reader = _users(2)
    run(lambda: follow_create(follower=reader, followee=author))
    _go_idle(reader.pk)
    made = [
        run(lambda i=i: board_create(author=author, title=f"b{i}", kind="note", tags=[], doc=DOC)).pk for i in range(12)
    ]
    assert not redis_data.exists(keys.home_timeline(reader.pk))
    run(lambda: _come_back(reader.pk))
    assert_walks_exact(selector_fetch("p", reader.pk), made[::-1], limits=(5, 100))


def test_deleting_a_big_authors_board_takes_it_out_of_every_feed(run, redis_data):
    star, fans = _star_with(run, THRESHOLD + 1)
    boards = [
        run(lambda i=i: board_create(author=star, title=f"b{i}", kind="note", tags=[], doc=DOC)) for i in range(3)
    ]
    assert hybrid.board_never_pushed(star.pk, boards[1].pk)
    run(lambda: board_delete(board=boards[1]))
    for fan in fans:
        assert ids_of(selectors.home_feed(fan.pk, offset=0, before=None, limit=20)) == [boards[2].pk, boards[0].pk]


def test_paging_a_merged_feed_across_every_head_and_archive(api, run, redis_data, settings, django_assert_num_queries):
    """A reader following two big authors (one fell back) and two pushed ones: P, both M heads
    and archives, and the pushed authors' boards in P's chunks, paged exactly; and the first
    page, warm, reads no PostgreSQL (archives are opened only when a page reaches them)."""
    set_windows(settings, hot=30, chunk=20, slack=60)
    reader, alice, bob, carol, dave = _users(5)
    fans = _users(THRESHOLD)
    for author in (alice, bob, carol, dave):
        run(lambda a=author: follow_create(follower=reader, followee=a))
    for author in (alice, bob):
        for fan in fans:
            run(lambda a=author, f=fan: follow_create(follower=f, followee=a))
    assert hybrid.author_is_big(alice.pk) and hybrid.author_is_big(bob.pk)
    assert set(hybrid.big_followees(reader.pk)) == {alice.pk, bob.pk}

    def post(authors, rounds):
        boards = bulk_boards(authors * rounds)
        to_profiles(redis_data, boards)
        for board_id, kind, author in Board.objects.filter(pk__in=[b.id for b in boards]).values_list(
            "id", "kind", "author__username"
        ):
            indexes.board_index(board_id, kind=kind, tags=[], author=author, views=0)  # as board_publish does
        for board in boards:
            if not hybrid.author_is_big(board.author_id):
                tasks.board_fanout(board.id)  # what the task does, in-process
        archive.flag_waiting("m", [a.pk for a in (alice, bob, carol, dave)])
        archive.flag_waiting("p", [reader.pk])
        archive.archive_waiting(trigger="test")

    post([alice, bob, carol, alice, dave], 40)
    run(lambda: follow_delete(follower=fans[0], followee=bob))  # bob falls back: pushed again from here
    assert not hybrid.author_is_big(bob.pk)
    post([bob, alice, carol, bob], 30)

    full = sql_feed(reader.pk)
    assert len(full) == 200 + 120
    for owner, kind in ((alice.pk, "m"), (bob.pk, "m"), (reader.pk, "p")):
        assert TimelineChunk.objects.filter(owner_id=owner, timeline=kind).count() >= 3, (owner, kind)

    fetch = selector_fetch("p", reader.pk)
    assert_walks_exact(fetch, full, limits=(1, 7, 100))
    for limit in (1, 20):
        for start in sorted(
            {0, 1, *boundaries(redis_data, "p", reader.pk), *boundaries(redis_data, "m", alice.pk), len(full) - 1}
        ):
            assert got_page(fetch(limit=limit, offset=start)) == expected_page(full, start, limit), (limit, start)
            if start:
                assert got_page(fetch(limit=limit, before=full[start - 1])) == expected_page(full, start, limit)
    assert_walks_exact(filtered_fetch(reader.pk, "sketch"), oracle(reader.pk, "sketch"), limits=(7,))

    client = api.as_user(reader.username, PASSWORD)
    api_feed = api_fetch(client, "/api/v1/feed")
    assert ids_of(api_feed(limit=20)) == full[:20]  # warms the token cache and G
    with django_assert_num_queries(0):
        assert ids_of(api_feed(limit=20)) == full[:20]


def test_rebuild_after_losing_redis_gives_big_authors_and_their_readers_back(run, redis_data):
    star, fans = _star_with(run, THRESHOLD + 1)
    (small,) = _users(1)
    run(lambda: follow_create(follower=fans[0], followee=small))
    for author in (star, small, star):
        run(lambda a=author: board_create(author=a, title="t", kind="note", tags=[], doc=DOC))
    before = {f.pk: selectors.home_feed(f.pk, offset=0, before=None, limit=20) for f in fans}
    redis_data.flushdb()
    call_command("rebuild_redis", stdout=StringIO(), stderr=StringIO())
    assert hybrid.author_is_big(star.pk) and not hybrid.author_is_big(small.pk)
    assert all(hybrid.big_followees(f.pk) == [star.pk] for f in fans)
    for fan in fans:
        assert selectors.home_feed(fan.pk, offset=0, before=None, limit=20) == before[fan.pk]
        assert ids_of(before[fan.pk]) == oracle(fan.pk)
