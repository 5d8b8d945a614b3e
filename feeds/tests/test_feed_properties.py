"""Property tests of the feed engine against PostgreSQL as the oracle.

Random sequences of create / delete / update / follow / unfollow run through the services with
their on-commit work and Celery tasks executed in-process. After every step each user's raw
P and M in Redis hold exactly the ids PostgreSQL says; afterwards every home feed and profile
list as served (ids, order, content, paging by offset and by ``before``) is exactly what a
plain query over PostgreSQL gives, and ``rebuild_redis`` after losing Redis gives the very
same lists back. The follower walk
(``social.graph.followers_batch``) must visit every follower exactly once, ties included.

Each hypothesis example runs inside its own savepoint that is rolled back at its end, on a
freshly flushed data Redis, with fresh users.
"""

import io
import itertools
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import call_command
from django.db import transaction
from hypothesis import HealthCheck, given, settings, strategies as st

from feeds import keys as feed_keys, selectors
from feeds.models import Board
from feeds.services.activity import home_feed_ready
from feeds.services.boards import board_create, board_delete, board_update
from feeds.services.follows import follow_create, follow_delete
from social import graph, keys as social_keys
from social.models import Follow
from social.services import user_create
from ugcsite.platform.redis import get_redis

pytestmark = pytest.mark.django_db

User = get_user_model()

N_USERS = 4
MAX_STEPS = 40
LIMIT = 100  # every list of the small world fits in one page of this size
KINDS = [kind.value for kind in Board.Kind]
TAGS = ["red", "blue", "green", "tiny"]
DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}


@pytest.fixture(autouse=True)
def _small_world_settings(settings):  # pytest-django's settings fixture, restored after the test
    """The hot windows and the back-fill count never cut a small world short (whatever the
    environment says), and fan-out takes one follower a batch, so the batch cursor and the
    tasks' re-enqueueing are exercised too."""
    settings.HOME_TIMELINE_HOT = max(settings.HOME_TIMELINE_HOT, 4 * LIMIT)
    settings.PROFILE_TIMELINE_HOT = max(settings.PROFILE_TIMELINE_HOT, 4 * LIMIT)
    settings.FOLLOW_BACKFILL_COUNT = max(settings.FOLLOW_BACKFILL_COUNT, 4 * LIMIT)
    settings.FANOUT_BATCH_SIZE = 1


PROPERTY_SETTINGS = {
    "deadline": None,
    "database": None,  # no .hypothesis directory in the tree; a failure prints its reproduction blob
    "print_blob": True,
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
}

_names = itertools.count()

# --- the operations -------------------------------------------------------------------------

user_index = st.integers(0, N_USERS - 1)
pick = st.integers(0, 10_000)  # an index into the boards that exist at that step (modulo)
titles = st.text(st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=30)


def _pair(draw_a, offset):
    """Two distinct user indexes from any index and any offset."""
    return draw_a, (draw_a + 1 + offset) % N_USERS


pairs = st.builds(_pair, user_index, st.integers(0, N_USERS - 2))

create_op = st.tuples(
    st.just("create"),
    user_index,
    st.sampled_from(KINDS),
    st.lists(st.sampled_from(TAGS), max_size=2, unique=True),
    titles,
)
OPS = {
    "create": create_op,
    "delete": st.tuples(st.just("delete"), pick),  # a published board, by its author
    "update": st.tuples(st.just("update"), pick, titles),  # a published board's title
    "follow": st.tuples(st.just("follow"), pairs),  # maybe an edge that exists already
    "unfollow": st.tuples(st.just("unfollow"), pick),  # an edge that exists
    "unfollow_pair": st.tuples(st.just("unfollow_pair"), pairs),  # often no edge at all
}
# Pick the kind of step first (roughly uniform over this list, so creates and follows are the
# commonest), and the length of the sequence uniformly: plain st.lists favours very short ones.
operation = st.sampled_from(
    ["create", "follow", "create", "unfollow", "delete", "update", "create", "follow", "unfollow_pair", "update"]
).flatmap(OPS.__getitem__)
operations = st.integers(0, MAX_STEPS).flatmap(lambda n: st.lists(operation, min_size=n, max_size=n))


def _published_boards():
    return list(Board.objects.select_related("author").filter(state=Board.State.PUBLISHED).order_by("id"))


def _make_users() -> list:
    return [
        user_create(username=f"p{next(_names)}_{uuid.uuid4().hex[:8]}", password="password123") for _ in range(N_USERS)
    ]


def _apply(op, users, capture) -> None:
    """One step, as the API would take it, with its on-commit work and tasks run at once."""
    kind = op[0]
    if kind == "create":
        _, author, board_kind, tags, title = op
        with capture(execute=True) as callbacks:
            board = board_create(author=users[author], title=title, kind=board_kind, tags=tags, doc=DOC)
        # Sanity: the on-commit work registered inside the example's savepoint did run.
        assert callbacks, "board_create registered no on-commit callback"
        newest = selectors.profile_boards(users[author].pk, offset=0, before=None, limit=1)["items"]
        assert [item["id"] for item in newest] == [board.id], "the on-commit write of M did not run"
    elif kind in ("delete", "update"):
        boards = _published_boards()
        if not boards:
            return
        board = boards[op[1] % len(boards)]
        with capture(execute=True):
            if kind == "delete":
                board_delete(board=board)
            else:
                board_update(board=board, changes={"title": op[2]})
    elif kind == "unfollow":
        edges = list(Follow.objects.select_related("follower", "followee").order_by("id"))
        if not edges:
            return
        edge = edges[op[1] % len(edges)]
        with capture(execute=True):
            follow_delete(follower=edge.follower, followee=edge.followee)
    elif kind in ("follow", "unfollow_pair"):
        follower, followee = (users[i] for i in op[1])
        with capture(execute=True):
            if kind == "follow":
                follow_create(follower=follower, followee=followee)
            else:
                follow_delete(follower=follower, followee=followee)
    else:  # pragma: no cover
        raise AssertionError(op)


def _run_world(ops, capture) -> list:
    """Fresh Redis, fresh users, then the steps; the users."""
    get_redis().flushdb()
    cache.clear()
    # Isolation: the previous example's savepoint was rolled back.
    assert not Board.objects.exists() and not Follow.objects.exists()
    users = _make_users()
    for op in ops:
        _apply(op, users, capture)
        # After every step (its tasks all ran), not only at the end: a later step can mask a miss.
        assert_redis_timelines_match_postgres(users)
    return users


# --- the oracle: PostgreSQL only --------------------------------------------------------------


def oracle_feed(user_id: int) -> list[Board]:
    followees = Follow.objects.filter(follower_id=user_id).values("followee_id")
    return list(
        Board.objects.select_related("author")
        .filter(state=Board.State.PUBLISHED, author_id__in=followees)
        .order_by("-id")[:LIMIT]
    )


def oracle_profile(user_id: int) -> list[Board]:
    return list(
        Board.objects.select_related("author")
        .filter(state=Board.State.PUBLISHED, author_id=user_id)
        .order_by("-id")[:LIMIT]
    )


def summaries(boards: list[Board]) -> list[dict]:
    """The summary form straight from the PostgreSQL rows (title, kind, tags, author, times, views)."""
    return [selectors.board_summary(board) for board in boards]


def assert_redis_timelines_match_postgres(users) -> None:
    """The raw P and M sorted sets equal PostgreSQL's answer, read before any list is served
    (serving drops ids it cannot show, which would hide a retraction or clean-up that never
    ran). Cheap enough for every step: two queries and one pipeline for all the users."""
    published = list(Board.objects.filter(state=Board.State.PUBLISHED).order_by("-id").values_list("id", "author_id"))
    edges = set(Follow.objects.values_list("follower_id", "followee_id"))
    pipe = get_redis().pipeline(transaction=False)
    for user in users:
        pipe.zrevrange(feed_keys.home_timeline(user.pk), 0, -1)
        pipe.zrevrange(feed_keys.profile_timeline(user.pk), 0, -1)
    replies = iter(pipe.execute())
    for user in users:
        home, profile = [int(i) for i in next(replies)], [int(i) for i in next(replies)]
        assert home == [i for i, author in published if (user.pk, author) in edges], f"P of {user.pk}"
        assert profile == [i for i, author in published if author == user.pk], f"M of {user.pk}"


def snapshot(users) -> dict:
    """Every user's home feed and profile list as the site serves them (the API makes the feed
    ready first: a new or returning user's P is regenerated before its first page)."""
    for user in users:
        home_feed_ready(user_id=user.pk)
    return {
        user.pk: (
            selectors.home_feed(user.pk, offset=0, before=None, limit=LIMIT),
            selectors.profile_boards(user.pk, offset=0, before=None, limit=LIMIT),
        )
        for user in users
    }


def assert_lists_match_postgres(users, snap) -> None:
    for user in users:
        feed, profile = snap[user.pk]
        expected_feed, expected_profile = oracle_feed(user.pk), oracle_profile(user.pk)
        assert [item["id"] for item in feed["items"]] == [b.id for b in expected_feed], f"home feed of {user.pk}"
        assert [item["id"] for item in profile["items"]] == [b.id for b in expected_profile], f"profile of {user.pk}"
        # Same boards, and the same current content (an update shows everywhere).
        assert [item["title"] for item in feed["items"]] == [b.title for b in expected_feed]
        assert [item["title"] for item in profile["items"]] == [b.title for b in expected_profile]
        assert feed["items"] == summaries(expected_feed)
        assert profile["items"] == summaries(expected_profile)
        assert feed["next"] is None and profile["next"] is None  # everything fits in one page


def walk_by_offset(read, user_id: int, limit: int, total: int) -> list[int]:
    """Every id, page by page by offset; ``next`` must be None exactly on the page that ends the list."""
    ids, offset = [], 0
    for _ in range(LIMIT):
        page = read(user_id, offset=offset, before=None, limit=limit)
        ids += [item["id"] for item in page["items"]]
        assert len(page["items"]) <= limit
        assert (page["next"] is None) == (len(ids) >= total), (len(ids), total, page["next"])
        if page["next"] is None:
            return ids
        assert page["next"] == str(ids[-1])
        offset += limit
    raise AssertionError("offset paging never ended")


def walk_by_before(read, user_id: int, limit: int, total: int) -> list[int]:
    """Every id, page by page following ``next`` as ``before``; same rule for ``next``."""
    ids, before = [], None
    for _ in range(LIMIT):
        page = read(user_id, offset=0 if before is None else None, before=before, limit=limit)
        ids += [item["id"] for item in page["items"]]
        assert len(page["items"]) <= limit
        assert (page["next"] is None) == (len(ids) >= total), (len(ids), total, page["next"])
        if page["next"] is None:
            return ids
        assert page["next"] == str(ids[-1])
        before = int(page["next"])
    raise AssertionError("before paging never ended")


# --- 1. every list equals the PostgreSQL oracle --------------------------------------------


@settings(max_examples=45, **PROPERTY_SETTINGS)
@given(ops=operations)
def test_feeds_and_profiles_equal_the_postgres_oracle(ops, django_capture_on_commit_callbacks, eager_tasks):
    with transaction.atomic():
        users = _run_world(ops, django_capture_on_commit_callbacks)

        assert_lists_match_postgres(users, snapshot(users))

        for user in users:
            full_feed = [b.id for b in oracle_feed(user.pk)]
            assert walk_by_offset(selectors.home_feed, user.pk, 3, len(full_feed)) == full_feed
            assert walk_by_before(selectors.home_feed, user.pk, 3, len(full_feed)) == full_feed
            full_profile = [b.id for b in oracle_profile(user.pk)]
            assert walk_by_offset(selectors.profile_boards, user.pk, 3, len(full_profile)) == full_profile
            assert walk_by_before(selectors.profile_boards, user.pk, 3, len(full_profile)) == full_profile

            # The follow graph in Redis and the denormalised counts agree with the edges.
            followers = set(Follow.objects.filter(followee_id=user.pk).values_list("follower_id", flat=True))
            following = set(Follow.objects.filter(follower_id=user.pk).values_list("followee_id", flat=True))
            redis_followers, total_followers = graph.followers_page(user.pk, offset=0, limit=LIMIT)
            redis_following, total_following = graph.following_page(user.pk, offset=0, limit=LIMIT)
            assert (set(redis_followers), total_followers) == (followers, len(followers))
            assert (set(redis_following), total_following) == (following, len(following))
            fresh = User.objects.get(pk=user.pk)
            published = Board.objects.filter(author_id=user.pk, state=Board.State.PUBLISHED).count()
            assert (fresh.followers_count, fresh.following_count, fresh.boards_count) == (
                len(followers),
                len(following),
                published,
            )

        transaction.set_rollback(True)


# --- 2. rebuild_redis gives back every list -------------------------------------------------


@settings(max_examples=25, **PROPERTY_SETTINGS)
@given(ops=operations)
def test_rebuild_after_losing_redis_gives_the_same_lists(ops, django_capture_on_commit_callbacks, eager_tasks):
    with transaction.atomic():
        users = _run_world(ops, django_capture_on_commit_callbacks)
        before = snapshot(users)

        get_redis().flushdb()
        assert snapshot(users) == {u.pk: ({"items": [], "next": None},) * 2 for u in users}  # really lost
        call_command("rebuild_redis", stdout=io.StringIO(), stderr=io.StringIO())
        assert_redis_timelines_match_postgres(users)
        after = snapshot(users)

        assert_lists_match_postgres(users, after)  # the rebuild is right on its own
        assert after == before  # and the online path had built the same thing
        transaction.set_rollback(True)


# --- 3. the follower walk -------------------------------------------------------------------


def walk_followers(user_id: int, batch_size: int, limit_batches: int = 1000) -> list[int]:
    visited, cursor = [], graph.FollowerCursor()
    for _ in range(limit_batches):
        batch, cursor = graph.followers_batch(user_id, cursor, batch_size)
        assert len(batch) <= batch_size
        visited += batch
        if cursor is None:
            return visited
    raise AssertionError("the follower walk never ended")


def test_followers_batch_visits_every_follower_once_when_all_scores_tie(redis_data):
    followee = 500
    followers = list(range(5, 30))  # one and two digits: ties are ordered by the members' text
    for follower in followers:
        graph.follow_add(follower_id=follower, followee_id=followee, at=1_767_225_600.25)
    assert redis_data.zcard(social_keys.followers(followee)) == 25

    visited = walk_followers(followee, 4)

    assert sorted(visited) == followers
    assert len(visited) == len(set(visited)) == 25
    assert visited == [int(m) for m in redis_data.zrange(social_keys.followers(followee), 0, -1)]


@pytest.mark.parametrize("leaves", ["a follower already visited", "the last follower visited"])
def test_an_unfollow_during_a_walk_of_tied_followers_skips_no_one(redis_data, leaves):
    """`make soak` found it: all of an author's followers at one score (a bulk load), and one
    whom the walk has passed unfollows before the next batch. An offset into the tie would then
    start one member late, and the follower it stepped over never got the board."""
    followee = 500
    followers = list(range(5, 30))
    for follower in followers:
        graph.follow_add(follower_id=follower, followee_id=followee, at=1_767_225_600.25)

    first, cursor = graph.followers_batch(followee, graph.FollowerCursor(), 4)
    gone = first[0] if leaves == "a follower already visited" else first[-1]
    graph.follow_remove(follower_id=gone, followee_id=followee)
    rest = []
    while cursor is not None:
        batch, cursor = graph.followers_batch(followee, cursor, 4)
        rest += batch

    assert sorted(first + rest) == followers  # everyone, the one who left included (visited before)
    assert len(first + rest) == len(set(first + rest))


def test_a_cursor_of_the_previous_release_walks_on_by_offset(redis_data):
    """A batch task queued before the upgrade carries (score, done) only; its walk goes on."""
    for follower in range(5, 30):
        graph.follow_add(follower_id=follower, followee_id=500, at=1_767_225_600.25)
    order = [int(m) for m in redis_data.zrange(social_keys.followers(500), 0, -1)]
    batch, cursor = graph.followers_batch(500, graph.FollowerCursor(1_767_225_600.25, 8), 10)
    assert batch == order[8:18] and cursor[2] == order[17]


@settings(max_examples=60, **PROPERTY_SETTINGS)
@given(
    scores=st.lists(
        st.sampled_from([1_767_225_600.0, 1_767_225_600.5, 1_767_225_601.125, 1_800_000_000.0, 3.0]), max_size=30
    ),
    batch_size=st.integers(1, 7),
)
def test_followers_batch_visits_every_follower_once_in_score_order(scores, batch_size):
    client = get_redis()
    client.flushdb()
    followee = 500
    expected_scores = {}
    for i, score in enumerate(scores):
        follower = 1 + (i * 37) % 101  # 1 to 3 digits: text order (ties) differs from number order
        graph.follow_add(follower_id=follower, followee_id=followee, at=score)
        expected_scores[follower] = score

    visited = walk_followers(followee, batch_size)

    assert len(visited) == len(set(visited)), f"a follower was visited twice: {visited}"
    assert set(visited) == set(expected_scores)
    # In follow order: scores never go down along the walk.
    walked_scores = [expected_scores[f] for f in visited]
    assert walked_scores == sorted(walked_scores)
    assert visited == [int(m) for m in client.zrange(social_keys.followers(followee), 0, -1)]
