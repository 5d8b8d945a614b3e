"""Feed snapshots (feeds.timelines.snapshot): a deep page by offset of a merged home feed keeps its
merge, and the next deep pages, by offset or by ``before``, read a range of it. Every page must be
the page a merge made now gives.

The reference is a straightforward merge of what the feed is made of, read back from Redis and
PostgreSQL: P's head and chunks, and each big followee's M head and chunks below its pull_below,
each id once, newest first. A page is that order's range, without the boards the reader may not
see (deleted, hidden, of authors no longer followed, blocked or muted), which keep their places as
on every page; ``next`` is the range's last id. Where nothing is left out, it is plain SQL too.

Real PostgreSQL and Redis, plain and cluster; tasks in-process. The windows are shrunk so P and
the big followees' M have chunks, and the snapshots so a few hundred boards make several; each
change of the feed follows a snapshot that holds the pages read after it, and the builds are
counted: a change of which ids the feed holds makes the next deep page merge again, one that
changes none (a mute, an id that only a chunk holds leaving) keeps the snapshot.
"""

from dataclasses import dataclass
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from redis.connection import AbstractConnection

from feeds import keys, tasks
from feeds.discovery import indexes
from feeds.models import Board
from feeds.services import activity, moderation
from feeds.services.boards import board_create, board_delete
from feeds.services.follows import follow_create, follow_delete
from feeds.services.safety import block_create, mute_create, mute_delete
from feeds.tests.support import (
    PASSWORD,
    api_fetch,
    bulk_boards,
    got_page,
    ids_of,
    selector_fetch,
    set_windows,
    sql_archived_ids,
    sql_feed,
    to_profiles,
    walk,
)
from feeds.timelines import archive, hybrid, pages
from feeds.timelines.regeneration import idle_sweep
from social import hiding
from social.services import user_create
from ugcsite.platform.http import ID_LIMIT

pytestmark = pytest.mark.django_db

THRESHOLD = 2  # an author with 3 or more followers is big
AHEAD = 25
DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}


@dataclass
class Feed:
    reader: object
    big: list  # big1, big2: followed by the reader, merged
    pushed: list  # pushed1, pushed2: followed by the reader, pushed into P
    fans: list  # the followers that make big1 and big2 big
    stranger: object  # an author the reader does not follow (yet), with boards
    star: object  # a big author the reader does not follow (yet), with boards


@pytest.fixture(autouse=True)
def _snapshot_settings(settings):
    settings.FANOUT_PUSH_MAX_FOLLOWERS = THRESHOLD
    settings.FANOUT_PULL_MARGIN = timedelta(0)
    set_windows(settings, hot=20, chunk=10, slack=40)
    settings.FEED_SNAPSHOT_FROM = 0
    settings.FEED_SNAPSHOT_AHEAD = AHEAD
    settings.FEED_SNAPSHOT_MAX_IDS = 10_000


@pytest.fixture
def builds(monkeypatch):
    """The merges kept as snapshots (pages.home_snapshot_page calls), as (offset, depth), or
    ("before", depth) for one below an id."""
    made = []
    original = pages.home_snapshot_page

    def counted(user_id, *, offset, before, limit, depth, facts=None):
        made.append((offset if before is None else "before", depth))
        return original(user_id, offset=offset, before=before, limit=limit, depth=depth, facts=facts)

    monkeypatch.setattr(pages, "home_snapshot_page", counted)
    return made


def _users(*names):
    return [user_create(username=name, password=PASSWORD) for name in names]


def _post(redis, authors, rounds):
    """Boards in bulk, as publishing and fan-out would place them, then the archiver's run."""
    boards = bulk_boards(authors * rounds)
    to_profiles(redis, boards)
    for board_id, kind, author in Board.objects.filter(pk__in=[b.id for b in boards]).values_list(
        "id", "kind", "author__username"
    ):
        indexes.board_index(board_id, kind=kind, tags=[], author=author, views=0)
    for board in boards:
        if not hybrid.author_is_big(board.author_id):
            tasks.board_fanout(board.id)
    _archive_all(authors)
    return boards


def _archive_all(users):
    archive.flag_waiting("m", [u.pk for u in users])
    archive.flag_waiting("p", [u.pk for u in users])
    assert archive.archive_waiting(trigger="test").errors == ""


@pytest.fixture
def feed(run, redis_data):
    reader, big1, big2, pushed1, pushed2, stranger, star, fan1, fan2 = _users(
        "reader", "big1", "big2", "pushed1", "pushed2", "stranger", "star", "fan1", "fan2"
    )
    for author in (big1, big2, pushed1, pushed2):
        run(lambda a=author: follow_create(follower=reader, followee=a))
    for author in (big1, big2, star):
        for fan in (fan1, fan2, *([stranger] if author is star else [pushed1])):
            run(lambda a=author, f=fan: follow_create(follower=f, followee=a))
    assert set(hybrid.big_followees(reader.pk)) == {big1.pk, big2.pk} and hybrid.author_is_big(star.pk)
    everyone = [reader, big1, big2, pushed1, pushed2, stranger, star]
    _post(redis_data, [big1, pushed1, big2, pushed2, pushed1, stranger, star], 40)
    _archive_all(everyone)
    activity.home_feed_ready(user_id=reader.pk)  # what the API does first: a new reader's P is regenerated
    f = Feed(
        reader=reader, big=[big1, big2], pushed=[pushed1, pushed2], fans=[fan1, fan2], stranger=stranger, star=star
    )
    for owner, kind in ((reader.pk, "p"), (big1.pk, "m"), (big2.pk, "m")):
        assert len(sql_archived_ids(owner, kind)) >= 20, (owner, kind)
    return f


# --- the reference -----------------------------------------------------------------------------


def reference_order(redis, reader_id: int) -> list[int]:
    """The straightforward merge: every id of P (head and chunks) and of each big followee's M
    (head and chunks) below its pull_below, each once, newest first."""
    found = {int(i) for i in redis.zrange(keys.home_timeline(reader_id), 0, -1)}
    found |= set(sql_archived_ids(reader_id, "p"))
    for author_id in hybrid.big_followees(reader_id):
        below = int(redis.hget(keys.timeline_meta(author_id), hybrid.PULL_BELOW) or ID_LIMIT)
        ids = {int(i) for i in redis.zrange(keys.profile_timeline(author_id), 0, -1)}
        found |= {i for i in ids | set(sql_archived_ids(author_id, "m")) if i < below}
    return sorted(found, reverse=True)


def visible(reader_id: int) -> set[int]:
    """What the reader may see (SQL: the published boards of the people they follow), less the
    authors they block, are blocked by or mute."""
    hidden = set(hiding.hidden_all(reader_id))
    return {
        board_id
        for board_id, author_id in Board.objects.filter(
            pk__in=sql_feed(reader_id), state=Board.State.PUBLISHED
        ).values_list("id", "author_id")
        if author_id not in hidden
    }


def expected(order: list[int], shown: set[int], start: int, limit: int) -> dict:
    window = order[start : start + limit]
    return {"ids": [i for i in window if i in shown], "next": str(window[-1]) if start + limit < len(order) else None}


def assert_pages_exact(redis, reader_id: int, *, step: int = 9, limits=(1, 7, 20)) -> list[int]:
    """Pages by offset at every ``step``-th offset, by ``before`` after each id of those, and a
    whole walk each way, against the reference. Returns the reference order."""
    order, shown = reference_order(redis, reader_id), visible(reader_id)
    fetch = selector_fetch("p", reader_id)
    for limit in limits:
        for start in range(0, len(order) + 2, step):
            assert got_page(fetch(limit=limit, offset=start)) == expected(order, shown, start, limit), (limit, start)
            if 0 < start <= len(order):
                assert got_page(fetch(limit=limit, before=order[start - 1])) == expected(order, shown, start, limit), (
                    "before",
                    limit,
                    start,
                )
    strict = shown == set(order)
    for mode in ("offset", "before"):
        got, _ = walk(fetch, limit=20, mode=mode, strict=strict)
        assert got == [i for i in order if i in shown], mode
    if strict:
        assert order == sql_feed(reader_id)
    return order


# --- paging ------------------------------------------------------------------------------------


def test_deep_pages_from_snapshots_equal_the_merge_and_sql(feed, redis_data, builds):
    order = assert_pages_exact(redis_data, feed.reader.pk)
    assert order == sql_feed(feed.reader.pk) and len(order) == 200
    assert redis_data.exists(keys.feed_snapshot(feed.reader.pk), keys.feed_snapshot_facts(feed.reader.pk)) == 2
    assert redis_data.ttl(keys.feed_snapshot(feed.reader.pk)) > 0
    # a walk by offset merges again only when it runs past what it kept: every AHEAD ids or so
    builds.clear()
    redis_data.delete(keys.feed_snapshot_facts(feed.reader.pk))
    got, pages_read = walk(selector_fetch("p", feed.reader.pk), limit=7, mode="offset")
    assert got == order
    assert 0 < len(builds) <= len(order) // AHEAD + 1 < pages_read // 2, builds
    for offset, depth in builds:
        assert depth == offset + 7 + 1 + AHEAD


def test_a_walk_by_cursor_keeps_snapshots_below_ps_archive_mark(feed, redis_data, builds, monkeypatch, settings):
    """The site's pages walk by ``before``: above P's archive mark as before (the heads), below
    it a page keeps the next FEED_SNAPSHOT_AHEAD ids too, and the pages after it read them, in
    one round trip on a plain Redis."""
    order = reference_order(redis_data, feed.reader.pk)
    mark = archive.archived_max(feed.reader.pk, "p")
    fetch = selector_fetch("p", feed.reader.pk)
    assert walk(fetch, limit=7, mode="before")[0] == order
    deep = len([i for i in order if i < mark])
    by_cursor = [depth for kind, depth in builds if kind == "before"]
    assert set(builds) - {("before", 7 + 1 + AHEAD)} <= {(0, 7 + 1 + AHEAD)}  # a cluster's first page: by offset
    assert 0 < len(by_cursor) <= deep // AHEAD + 1 < deep // 7
    first = next(i for i, board_id in enumerate(order) if board_id <= mark)
    for skip in (0, 7, 14):
        fetch(limit=7, before=order[first + skip])  # the first keeps a snapshot below it; fills G
    builds.clear()
    sent = []
    original = AbstractConnection.send_packed_command
    monkeypatch.setattr(
        AbstractConnection,
        "send_packed_command",
        lambda self, command, check_health=True: sent.append(1) or original(self, command, check_health),
    )
    for skip in (0, 7, 14):
        sent.clear()
        answer = fetch(limit=7, before=order[first + skip])
        assert got_page(answer) == expected(order, set(order), first + skip + 1, 7)
        if not settings.REDIS_CLUSTER:
            assert len(sent) == 1, skip
    assert builds == []
    assert got_page(fetch(limit=7, offset=first + 1)) == expected(order, set(order), first + 1, 7)
    assert builds == [(first + 1, first + 1 + 8 + AHEAD)]  # a snapshot below an id knows no offsets


def test_a_deep_page_from_a_snapshot_is_one_round_trip_on_a_plain_redis(
    feed, redis_data, builds, monkeypatch, settings
):
    order = reference_order(redis_data, feed.reader.pk)
    fetch = selector_fetch("p", feed.reader.pk)
    assert ids_of(fetch(limit=20, offset=100)) == order[100:120]  # merges, keeps the snapshot
    for offset in (110, 120):
        fetch(limit=20, offset=offset)  # fills G
    assert len(builds) == 1
    sent = []
    original = AbstractConnection.send_packed_command
    monkeypatch.setattr(
        AbstractConnection,
        "send_packed_command",
        lambda self, command, check_health=True: sent.append(1) or original(self, command, check_health),
    )
    for offset, before in ((110, None), (120, None), (None, order[114])):
        sent.clear()
        answer = fetch(limit=20, offset=offset, before=before)
        start = offset if before is None else 115
        assert got_page(answer) == {"ids": order[start : start + 20], "next": str(order[start + 19])}
        if not settings.REDIS_CLUSTER:
            assert len(sent) == 1, (offset, before)
    assert len(builds) == 1


def test_pages_past_the_longest_snapshot_merge_as_before(feed, redis_data, builds, settings):
    settings.FEED_SNAPSHOT_MAX_IDS = 100
    order = reference_order(redis_data, feed.reader.pk)
    fetch = selector_fetch("p", feed.reader.pk)
    assert got_page(fetch(limit=20, offset=150)) == expected(order, set(order), 150, 20)
    assert builds == []
    assert got_page(fetch(limit=20, offset=60)) == expected(order, set(order), 60, 20)
    assert builds == [(60, 100)]  # as deep as it may be
    assert got_page(fetch(limit=20, offset=80)) == expected(order, set(order), 80, 20)  # the end of it
    assert got_page(fetch(limit=20, offset=81)) == expected(order, set(order), 81, 20)  # one past: merged
    assert builds == [(60, 100)]
    settings.FEED_SNAPSHOT_FROM = 200
    assert got_page(fetch(limit=20, offset=10)) == expected(order, set(order), 10, 20)  # shallow: no snapshot
    assert builds == [(60, 100)]


def test_a_snapshot_kept_without_page_warms_facts_reads_them_itself(feed, redis_data, builds):
    """pages.home_page called alone (no page_warm before it) reads the reader's facts in its own
    MULTI: the snapshot it keeps serves the next pages the same."""
    order = reference_order(redis_data, feed.reader.pk)
    mark = archive.archived_max(feed.reader.pk, "p")
    first = next(i for i, board_id in enumerate(order) if board_id <= mark)
    page = pages.home_page(feed.reader.pk, offset=100, limit=20)
    assert (page.ids, page.has_more) == (order[100:120], True)
    page = pages.home_page(feed.reader.pk, before=order[first], limit=20)
    assert (page.ids, page.has_more) == (order[first + 1 : first + 21], True)
    assert builds == [(100, 121 + AHEAD), ("before", 21 + AHEAD)]
    fetch = selector_fetch("p", feed.reader.pk)
    assert got_page(fetch(limit=20, before=order[first + 20])) == expected(order, set(order), first + 21, 20)
    assert len(builds) == 2


def test_the_end_of_the_feed_is_in_the_snapshot(feed, redis_data, builds):
    order = reference_order(redis_data, feed.reader.pk)
    fetch = selector_fetch("p", feed.reader.pk)
    start = len(order) - 10
    assert got_page(fetch(limit=20, offset=start)) == {"ids": order[start:], "next": None}
    assert builds == [(start, start + 21 + AHEAD)]
    for offset in (start - 5, len(order) - 1, len(order), len(order) + 50):
        assert got_page(fetch(limit=20, offset=offset)) == expected(order, set(order), offset, 20)
    assert got_page(fetch(limit=20, before=order[-1])) == {"ids": [], "next": None}
    assert got_page(fetch(limit=5, before=order[-7])) == {"ids": order[-6:-1], "next": str(order[-2])}
    assert len(builds) == 1  # the snapshot holds the whole feed: every page past it too


def test_deep_pages_through_the_api(feed, redis_data, builds, api):
    order = reference_order(redis_data, feed.reader.pk)
    client = api.as_user("reader", PASSWORD)
    fetch = api_fetch(client, "/api/v1/feed")
    for limit in (7, 100):
        for mode in ("offset", "before"):
            assert walk(fetch, limit=limit, mode=mode)[0] == order
    assert builds


# --- every change after a snapshot ----------------------------------------------------------------


def _newest(author) -> Board:
    return Board.objects.filter(author=author, state=Board.State.PUBLISHED).order_by("-id").first()


def _newest_archived(redis, author, owner_id: int, kind: str) -> Board:
    """The author's newest published board that a chunk of ``owner_id``'s timeline of ``kind``
    holds and its head does not."""
    chunked = set(sql_archived_ids(owner_id, kind)) - {
        int(i) for i in redis.zrange(keys.timeline_key(kind, owner_id), 0, -1)
    }
    boards = Board.objects.filter(author=author, state=Board.State.PUBLISHED, pk__in=chunked).order_by("-id")
    return boards.first()


def _go_idle(redis, user_id: int) -> None:
    activity._seen.pop(user_id, None)
    redis.delete(keys.active(user_id))
    redis.zadd(keys.last_seen(user_id), {user_id: 1.0})
    idle_sweep()


def _come_back(user_id: int) -> None:
    activity._seen.pop(user_id, None)
    activity.user_seen(user_id=user_id)
    activity.home_feed_ready(user_id=user_id)


def _post_one(run, author):
    return run(lambda: board_create(author=author, title="new", kind="note", tags=[], doc=DOC))


# change -> (what it does, whether the next deep page must merge again)
CHANGES = {
    "a pushed author posts": (lambda f, run, r: _post_one(run, f.pushed[0]), True),
    "a big author posts": (lambda f, run, r: _post_one(run, f.big[0]), True),
    "a board in P's head is deleted": (lambda f, run, r: run(lambda: board_delete(board=_newest(f.pushed[1]))), True),
    "a big author's newest board is deleted": (
        lambda f, run, r: run(lambda: board_delete(board=_newest(f.big[1]))),
        True,
    ),
    "a board only a chunk of P holds is deleted": (
        lambda f, run, r: run(lambda: board_delete(board=_newest_archived(r, f.pushed[1], f.reader.pk, "p"))),
        False,
    ),
    "a big author's archived board is deleted": (
        lambda f, run, r: run(lambda: board_delete(board=_newest_archived(r, f.big[0], f.big[0].pk, "m"))),
        True,
    ),
    "staff hide a board": (lambda f, run, r: run(lambda: moderation.board_hide(board=_newest(f.pushed[0]))), True),
    "a pushed author is unfollowed": (
        lambda f, run, r: run(lambda: follow_delete(follower=f.reader, followee=f.pushed[0])),
        True,
    ),
    "a big author is unfollowed": (
        lambda f, run, r: run(lambda: follow_delete(follower=f.reader, followee=f.big[1])),
        True,
    ),
    "an author is followed (back-fill)": (
        lambda f, run, r: run(lambda: follow_create(follower=f.reader, followee=f.stranger)),
        True,
    ),
    "a big author is followed": (
        lambda f, run, r: run(lambda: follow_create(follower=f.reader, followee=f.star)),
        True,
    ),
    "an author is muted": (lambda f, run, r: run(lambda: mute_create(muter=f.reader, muted=f.pushed[1])), False),
    "a big author blocks the reader": (
        lambda f, run, r: run(lambda: block_create(blocker=f.big[0], blocked=f.reader)),
        True,
    ),
    "the reader blocks a pushed author": (
        lambda f, run, r: run(lambda: block_create(blocker=f.reader, blocked=f.pushed[1])),
        True,
    ),
    "a big author falls back": (
        lambda f, run, r: [run(lambda x=x: follow_delete(follower=x, followee=f.big[1])) for x in f.fans],
        True,
    ),
    "a pushed author becomes big": (
        lambda f, run, r: [run(lambda x=x: follow_create(follower=x, followee=f.pushed[1])) for x in f.fans],
        True,
    ),
    "a big author is suspended": (lambda f, run, r: run(lambda: moderation.user_suspend(user=f.big[0])), True),
    "the reader goes idle and comes back": (
        lambda f, run, r: (_go_idle(r, f.reader.pk), run(lambda: _come_back(f.reader.pk))),
        True,
    ),
    "rebuild_redis": (
        lambda f, run, r: call_command("rebuild_redis", stdout=StringIO(), stderr=StringIO()),
        True,
    ),
}


@pytest.mark.parametrize("change", CHANGES)
def test_every_change_after_a_snapshot_shows_in_the_next_deep_pages(change, feed, redis_data, run, builds):
    do, merges_again = CHANGES[change]
    reader = feed.reader.pk
    fetch = selector_fetch("p", reader)
    order, shown = reference_order(redis_data, reader), visible(reader)
    assert got_page(fetch(limit=20, offset=100)) == expected(order, shown, 100, 20)  # the snapshot
    assert got_page(fetch(limit=20, offset=90)) == expected(order, shown, 90, 20)  # read from it
    assert len(builds) == 1
    do(feed, run, redis_data)
    activity.home_feed_ready(user_id=reader)  # the API's ready-check
    order, shown = reference_order(redis_data, reader), visible(reader)
    assert got_page(fetch(limit=20, offset=90)) == expected(order, shown, 90, 20)
    assert len(builds) == (2 if merges_again else 1), builds
    assert_pages_exact(redis_data, reader, step=13, limits=(7,))


def test_an_unmute_shows_the_boards_again_from_the_same_snapshot(feed, redis_data, run, builds):
    reader = feed.reader.pk
    fetch = selector_fetch("p", reader)
    run(lambda: mute_create(muter=feed.reader, muted=feed.big[0]))
    order, shown = reference_order(redis_data, reader), visible(reader)
    assert got_page(fetch(limit=20, offset=100)) == expected(order, shown, 100, 20)
    assert any(i not in shown for i in order[100:120])
    run(lambda: mute_delete(muter=feed.reader, muted=feed.big[0]))
    assert got_page(fetch(limit=20, offset=100)) == expected(order, set(order), 100, 20)
    assert len(builds) == 1


def test_archiving_moves_ids_without_changing_a_page(feed, redis_data, run, builds, settings):
    """The archiver moves P's and the big followees' oldest ids to chunks: the feed holds the same
    ids, so no page changes, from the snapshot made before or one made after."""
    reader = feed.reader.pk
    fetch = selector_fetch("p", reader)
    set_windows(settings, hot=1000, chunk=20, slack=1000)  # nothing moves while they post
    for _ in range(25):
        for author in (feed.big[0], feed.pushed[0]):
            _post_one(run, author)
    order = reference_order(redis_data, reader)
    assert got_page(fetch(limit=20, offset=100)) == expected(order, set(order), 100, 20)
    set_windows(settings, hot=20, chunk=10, slack=40)
    moved = len(sql_archived_ids(reader, "p")) + len(sql_archived_ids(feed.big[0].pk, "m"))
    _archive_all([feed.reader, *feed.big, *feed.pushed])
    assert len(sql_archived_ids(reader, "p")) + len(sql_archived_ids(feed.big[0].pk, "m")) >= moved + 40
    assert reference_order(redis_data, reader) == order
    assert_pages_exact(redis_data, reader, step=13, limits=(7,))
