"""Discovery (Viki's set-index engine) against PostgreSQL as the oracle."""

import random
import time

import pytest
from django.core.management import call_command
from django.db import transaction
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from feeds import keys
from feeds.discovery import counters, indexes, queries as discovery, trending
from feeds.models import Board
from feeds.services.boards import board_create, board_delete, board_update
from feeds.services.moderation import board_hide, user_suspend
from social.services import user_create

pytestmark = pytest.mark.django_db

DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}
KINDS = ["sketch", "diagram", "note", "comic", "map"]


@pytest.fixture
def people(run):
    return {name: user_create(username=name, password="password123") for name in ("alice", "bob", "carol")}


def make(run, author, kind="sketch", tags=(), title="t"):
    return run(board_create, author=author, title=title, kind=kind, tags=list(tags), doc=DOC)


def ids(answer):
    return [item["id"] for item in answer["items"]]


def test_filters_and_exact_totals(api, run, people):
    a = make(run, people["alice"], "sketch", ["cat", "pet"])
    b = make(run, people["alice"], "map", ["cat"])
    c = make(run, people["bob"], "sketch", ["cat", "pet"])
    make(run, people["carol"], "note", [])
    assert api.get("/api/v1/discover", tag="cat").json() == {
        "total": 3,
        "items": api.get("/api/v1/discover", tag="cat").json()["items"],
    }
    assert ids(api.get("/api/v1/discover", tag="cat").json()) == [c.id, b.id, a.id]
    assert ids(api.get("/api/v1/discover", tag=["cat", "pet"], kind="sketch").json()) == [c.id, a.id]
    answer = api.get("/api/v1/discover", tag="cat", author="ALICE").json()
    assert (answer["total"], ids(answer)) == (2, [b.id, a.id])
    assert api.get("/api/v1/discover", author="nobody").json() == {"total": 0, "items": []}
    assert api.get("/api/v1/discover", author="not a name!").json() == {"total": 0, "items": []}
    page = api.get("/api/v1/discover", limit=2, offset=1).json()
    assert page["total"] == 4 and len(page["items"]) == 2
    assert set(page["items"][0]) == {
        "id",
        "author",
        "title",
        "kind",
        "tags",
        "created_at",
        "updated_at",
        "views",
        "likes",
        "comments",
        "preview_url",
    }


@pytest.mark.parametrize(
    "query",
    [
        {"kind": "painting"},
        {"kind": ""},
        {"tag": "Cat"},
        {"tag": "a_b"},
        {"tag": "x" * 33},
        {"sort": "best"},
        {"limit": 0},
        {"limit": 101},
        {"offset": -1},
    ],
    ids=str,
)
def test_bad_discovery_queries_are_400(api, query):
    response = api.get("/api/v1/discover", **query)
    assert response.status_code == 400 and response.json()["detail"]


def test_popular_and_trending_orders_with_ties_newest_first(api, run, people):
    old, mid, new = (make(run, people["alice"]) for _ in range(3))
    now = time.time()
    for board, recent, long_ago in ((old, 1, 5), (mid, 3, 0), (new, 1, 0)):
        for _ in range(recent):
            counters.view_record(board.id, now=now)
        for _ in range(long_ago):
            counters.view_record(board.id, now=now - 30 * 3600)
    trending.trending_rollup(now=now)
    assert ids(api.get("/api/v1/discover", sort="popular").json()) == [old.id, mid.id, new.id]
    assert ids(api.get("/api/v1/discover", sort="trending").json()) == [mid.id, new.id, old.id]  # tie: newest first
    popular = api.get("/api/v1/discover", sort="popular").json()["items"]
    assert [item["views"] for item in popular] == [6, 3, 1]


def test_a_new_board_shows_at_once_through_a_warm_cache(api, run, people, settings):
    settings.DISCOVERY_CACHE_MS = 60_000
    first = make(run, people["alice"], "comic", ["fun"])
    assert ids(api.get("/api/v1/discover", kind="comic", tag="fun").json()) == [first.id]  # now cached
    second = make(run, people["bob"], "comic", ["fun"])
    assert ids(api.get("/api/v1/discover", kind="comic", tag="fun").json()) == [second.id, first.id]


def test_a_repeated_query_reads_its_merged_page_until_any_shard_changes(run, people, redis_data, settings):
    """A filtered query's merged page is cached under {d}: asked again, it is answered without
    the shards (their cached intersections, deleted here, do not come back); a board coming or
    going in any shard makes it stale, and the next answer is merged afresh and exact."""
    settings.DISCOVERY_CACHE_MS = 60_000
    first, second = (make(run, people[name], "comic", ["fun"]) for name in ("alice", "bob"))
    q = discovery.Query(kind="comic", tags=("fun",))
    shard_caches = ["ixq:{d*", "ixqg:{d*"]

    def cached_intersections():
        return [key for pattern in shard_caches for key in redis_data.scan_iter(match=pattern)]

    assert discovery.query(q, offset=0, limit=20) == (2, [second.id, first.id])
    page_key = keys.query_page(q.digest(), 0, 20)
    assert 0 < redis_data.pttl(page_key) <= 60_000
    assert cached_intersections()
    for key in cached_intersections():
        redis_data.delete(key)
    assert discovery.query(q, offset=0, limit=20) == (2, [second.id, first.id])
    assert cached_intersections() == []  # the page came from its cache, not from the shards
    assert discovery.query(q, offset=1, limit=20) == (2, [first.id])  # another page: merged
    assert cached_intersections()

    elsewhere = make(run, people["carol"], "map", ["walk"])  # matches nothing asked, in its own shard
    for key in cached_intersections():
        redis_data.delete(key)
    assert discovery.query(q, offset=0, limit=20) == (2, [second.id, first.id])
    assert cached_intersections(), "a change in any shard leaves no cached page valid"

    third = make(run, people["carol"], "comic", ["fun"])
    assert discovery.query(q, offset=0, limit=20) == (3, [third.id, second.id, first.id])
    run(board_delete, board=Board.objects.get(pk=second.id))
    assert discovery.query(q, offset=0, limit=20) == (2, [third.id, first.id])
    run(board_delete, board=Board.objects.get(pk=elsewhere.id))
    assert discovery.query(q, offset=1, limit=1) == (2, [first.id])


def all_discovery_entries(redis, board_id):
    """Every discovery key that mentions the board, by inspecting Redis itself."""
    found = []
    for pattern in keys.discovery_patterns():
        for key in redis.scan_iter(match=pattern):
            kind = redis.type(key)
            if (
                kind == "set"
                and redis.sismember(key, board_id)
                or kind == "zset"
                and redis.zscore(key, board_id) is not None
                or key == keys.index_tracker(board_id)
            ):
                found.append(key)
    return found


def test_delete_and_hide_leave_no_stale_index_entries(api, run, people, redis_data):
    board = make(run, people["alice"], "map", ["walk", "hill"])
    shard = keys.discovery_shard(board.id)
    assert sorted(all_discovery_entries(redis_data, board.id)) == sorted(
        [
            keys.index(shard, "kind", "map"),
            keys.index(shard, "tag", "walk"),
            keys.index(shard, "tag", "hill"),
            keys.index(shard, "author", "alice"),
            keys.index_tracker(board.id),
            *(keys.sort(shard, order) for order in indexes.SORTS),
        ]
    )
    run(board_delete, board=board)
    assert all_discovery_entries(redis_data, board.id) == []
    assert redis_data.zscore(keys.tag_counts(), "walk") is None
    other = make(run, people["bob"], "map", ["walk"])
    run(board_hide, board=other)
    assert all_discovery_entries(redis_data, other.id) == []
    assert api.get("/api/v1/discover", tag="walk").json() == {"total": 0, "items": []}
    assert indexes.facets()["kinds"]["map"] == 0


def test_update_touches_only_the_indexes_that_changed(api, run, people, redis_data):
    board = make(run, people["alice"], "note", ["a", "b"])
    shard = keys.discovery_shard(board.id)
    generation = redis_data.get(keys.index_generation(shard))
    run(board_update, board=board, changes={"title": "a new title"})
    assert redis_data.get(keys.index_generation(shard)) == generation  # no index write for a title
    assert ids(api.get("/api/v1/discover", tag="a").json()) == [board.id]
    assert api.get("/api/v1/discover", tag="a").json()["items"][0]["title"] == "a new title"
    run(board_update, board=board, changes={"tags": ["b", "c"], "kind": "comic"})
    assert sorted(redis_data.smembers(keys.index_tracker(board.id))) == sorted(
        [
            keys.index(shard, "kind", "comic"),
            keys.index(shard, "tag", "b"),
            keys.index(shard, "tag", "c"),
            keys.index(shard, "author", "alice"),
        ]
    )
    assert not redis_data.sismember(keys.index(shard, "tag", "a"), board.id)
    assert not redis_data.sismember(keys.index(shard, "kind", "note"), board.id)
    assert ids(api.get("/api/v1/discover", tag="c", kind="comic").json()) == [board.id]
    assert api.get("/api/v1/discover", tag="a").json()["total"] == 0
    assert dict(indexes.facets()["tags"]) == {"b": 1, "c": 1}


def test_facets_count_kinds_and_top_tags(run, people):
    make(run, people["alice"], "map", ["x", "y"])
    make(run, people["bob"], "map", ["x"])
    make(run, people["bob"], "note", ["x"])
    facets = indexes.facets()
    assert facets["kinds"] == {"sketch": 0, "diagram": 0, "note": 1, "comic": 0, "map": 2}
    assert facets["tags"] == [("x", 3), ("y", 1)]


def test_the_filtered_feed_equals_sql(api, run, people):
    reader = api.as_user("reader")
    run(reader.put, "/api/v1/users/alice/follow")
    run(reader.put, "/api/v1/users/bob/follow")
    for i in range(30):
        author = [people["alice"], people["bob"], people["carol"]][i % 3]
        make(run, author, KINDS[i % 2], ["odd" if i % 2 else "even"] + (["five"] if i % 5 == 0 else []))
    reader_user = Board.objects.none().model.author.field.related_model.objects.get(username="reader")
    followees = reader_user.following_edges.values("followee")
    for query in ({"kind": "sketch"}, {"tag": "odd"}, {"tag": ["even", "five"]}, {"kind": "diagram", "tag": "five"}):
        expected = Board.objects.filter(author__in=followees, state="published")
        if "kind" in query:
            expected = expected.filter(kind=query["kind"])
        for tag in [query["tag"]] if isinstance(query.get("tag"), str) else query.get("tag", []):
            expected = expected.filter(tags__contains=[tag])
        expected = list(expected.order_by("-id").values_list("id", flat=True))
        by_before, cursor = [], None
        while True:
            page = reader.get("/api/v1/feed", limit=3, **query, **({"before": cursor} if cursor else {})).json()
            by_before += ids(page)
            cursor = page["next"]
            if cursor is None:
                break
        by_offset = ids(reader.get("/api/v1/feed", limit=100, **query).json())
        assert by_before == by_offset == expected, query
    assert reader.get("/api/v1/feed", kind="bogus").status_code == 400


def test_rebuild_restores_discovery(api, run, people, redis_data):
    boards = [make(run, people["alice"], KINDS[i % 5], [f"t{i % 3}"]) for i in range(12)]
    for board in boards[:4]:
        counters.view_record(board.id)
    queries = [{}, {"tag": "t1"}, {"kind": "map"}, {"sort": "popular"}, {"tag": "t0", "sort": "popular"}]
    before = [api.get("/api/v1/discover", **q).json() for q in queries]
    counters.views_flush()
    redis_data.flushdb()
    call_command("rebuild_redis")
    after = [api.get("/api/v1/discover", **q).json() for q in queries]
    assert after == before


def test_rebuild_if_empty_leaves_a_redis_with_data_alone_and_fills_an_empty_one(api, run, people, redis_data):
    board = make(run, people["alice"], "map", ["t0"])
    redis_data.delete(keys.board_sort(board.id, "recent"))  # a Redis with data, but not all of it: left alone
    call_command("rebuild_redis", "--if-empty")
    assert api.get("/api/v1/discover").json()["total"] == 0
    redis_data.flushdb()
    call_command("rebuild_redis", "--if-empty")
    assert [item["id"] for item in api.get("/api/v1/discover").json()["items"]] == [board.id]


board_specs = st.lists(
    st.tuples(
        st.sampled_from(KINDS[:3]),
        st.sets(st.sampled_from(["a", "b", "c"]), max_size=3),
        st.integers(0, 2),
        st.integers(0, 3),
        st.integers(0, 2),
    ),
    min_size=1,
    max_size=14,
)
queries = st.tuples(
    st.none() | st.sampled_from(KINDS[:3]),
    st.sets(st.sampled_from(["a", "b", "c"]), max_size=2),
    st.none() | st.integers(0, 2),
    st.sampled_from(["recent", "popular", "trending"]),
    st.integers(0, 5),
    st.integers(1, 6),
)


@hsettings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(specs=board_specs, asked=st.lists(queries, min_size=1, max_size=6))
def test_discovery_equals_sql_on_random_data(api, run, people, redis_data, specs, asked):
    """For random boards (kind, tags, author, recent views, old views) and random queries,
    total and items equal a plain SQL query over PostgreSQL, in the same order."""
    now = time.time()
    authors = [people["alice"], people["bob"], people["carol"]]
    with transaction.atomic():
        redis_data.flushdb()
        recent_views = {}
        for kind, tags, author, recent, old in specs:
            board = make(run, authors[author], kind, sorted(tags))
            recent_views[board.id] = recent
            for _ in range(recent):
                counters.view_record(board.id, now=now)
            for _ in range(old):
                counters.view_record(board.id, now=now - 30 * 3600)
        trending.trending_rollup(now=now)
        counters.views_flush()
        for kind, tags, author, sort, offset, limit in asked:
            rows = Board.objects.filter(state="published")
            if kind:
                rows = rows.filter(kind=kind)
            for tag in tags:
                rows = rows.filter(tags__contains=[tag])
            if author is not None:
                rows = rows.filter(author=authors[author])
            matching = list(rows.values_list("id", "views"))
            key = {
                "recent": lambda r: (r[0],),
                "popular": lambda r: (r[1], r[0]),
                "trending": lambda r: (recent_views[r[0]], r[0]),
            }[sort]
            expected = [r[0] for r in sorted(matching, key=key, reverse=True)]
            query = {"sort": sort, "offset": offset, "limit": limit, "tag": sorted(tags)}
            if kind:
                query["kind"] = kind
            if author is not None:
                query["author"] = authors[author].username
            answer = api.get("/api/v1/discover", **query).json()
            assert answer["total"] == len(expected), query
            assert ids(answer) == expected[offset : offset + limit], query
        transaction.set_rollback(True)


fates = st.sampled_from(["shown", "shown", "shown", "hidden", "deleted"])
moderated_specs = st.lists(
    st.tuples(
        st.sampled_from(KINDS[:3]),
        st.sets(st.sampled_from(["a", "b", "c"]), max_size=3),
        st.integers(0, 2),
        st.integers(0, 3),
        fates,
    ),
    min_size=1,
    max_size=16,
)


@hsettings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    specs=moderated_specs,
    suspended=st.sets(st.integers(0, 2), max_size=1),
    asked=st.lists(queries, min_size=1, max_size=4),
    page_size=st.integers(1, 5),
)
def test_discovery_equals_sql_with_moderation_facets_and_paging(
    api, run, people, redis_data, settings, specs, suspended, asked, page_size
):
    """For random boards, some hidden by staff, deleted or of a suspended author: every query's
    total and page, every page of it walked by offset, the facets, and the feed filtered by kind
    and tag walked by ``before`` and by offset, each equal to the SQL rule over PostgreSQL (the
    published boards), on a plain Redis and on the cluster alike."""
    settings.RATE_LIMIT_AUTH_PER_MINUTE = 100_000  # a reader signs up for every example
    User = Board.author.field.related_model
    authors = [people["alice"], people["bob"], people["carol"]]
    now = time.time()
    with transaction.atomic():
        redis_data.flushdb()
        reader = api.as_user("reader")
        for author in authors:
            run(reader.put, f"/api/v1/users/{author.username}/follow")
        views = {}
        for kind, tags, author, seen, fate in specs:
            board = make(run, authors[author], kind, sorted(tags))
            views[board.id] = seen
            for _ in range(seen):
                counters.view_record(board.id, now=now)
            if fate == "hidden":
                run(board_hide, board=board)
            elif fate == "deleted":
                run(board_delete, board=board)
        for author in suspended:
            run(user_suspend, user=User.objects.get(pk=authors[author].pk))
        trending.trending_rollup(now=now)
        published = list(Board.objects.filter(state="published").values_list("id", "kind", "tags", "author_id"))

        def matching(kind, tags, author):
            return [
                board_id
                for board_id, board_kind, board_tags, author_id in published
                if (kind is None or board_kind == kind)
                and set(tags) <= set(board_tags)
                and (author is None or author_id == authors[author].pk)
            ]

        for kind, tags, author, sort, offset, limit in asked:
            key = {"recent": lambda i: i, "popular": lambda i: (views[i], i), "trending": lambda i: (views[i], i)}[sort]
            expected = sorted(matching(kind, tags, author), key=key, reverse=True)
            query = {"sort": sort, "tag": sorted(tags)}
            if kind:
                query["kind"] = kind
            if author is not None:
                query["author"] = authors[author].username
            answer = api.get("/api/v1/discover", offset=offset, limit=limit, **query).json()
            assert (answer["total"], ids(answer)) == (len(expected), expected[offset : offset + limit]), query
            walked = []
            for start in range(0, len(expected) + page_size, page_size):
                page = api.get("/api/v1/discover", offset=start, limit=page_size, **query).json()
                assert page["total"] == len(expected), query
                walked += ids(page)
            assert walked == expected, query

        facets = indexes.facets()
        assert facets["kinds"] == {kind: len(matching(kind, (), None)) for kind in KINDS}
        tag_counts = {tag: len(matching(None, (tag,), None)) for tag in "abc"}
        assert dict(facets["tags"]) == {tag: count for tag, count in tag_counts.items() if count}

        for kind, tags in ((KINDS[0], ()), (None, ("a",)), (KINDS[1], ("b", "c"))):
            expected = sorted(matching(kind, tags, None), reverse=True)
            query = {"tag": list(tags), **({"kind": kind} if kind else {})}
            by_before, cursor = [], None
            while True:
                page = reader.get("/api/v1/feed", limit=page_size, **query, **({"before": cursor} if cursor else {}))
                by_before += ids(page.json())
                cursor = page.json()["next"]
                if cursor is None:
                    break
            by_offset = []
            for start in range(0, len(expected) + page_size, page_size):
                by_offset += ids(reader.get("/api/v1/feed", offset=start, limit=page_size, **query).json())
            assert by_before == by_offset == expected, query
        transaction.set_rollback(True)


def test_deep_pages_and_lopsided_shards_merge_exactly(redis_data):
    """The shards' windows at every depth, against a plain sort of the same boards: many views
    alike (ties, newest first), pages from the first to past the last, and a query whose best
    boards all lie in one shard, past every margin (the windows widen until they hold the page)."""
    rng = random.Random(26)
    board_ids = rng.sample(range(10**15, 10**15 + 10**7), 3000)
    rows = {
        i: (rng.choice(KINDS[:2]), ["t"] if rng.random() < 0.7 else [], "alice", rng.randrange(4)) for i in board_ids
    }
    # the 200 best boards by views, all in shard 0: every window of the other shards is empty at the top
    lopsided = [i for i in range(10**14, 10**14 + 20_000) if keys.discovery_shard(i) == 0][:200]
    rows.update({i: ("map", ["t"], "bob", 100 + n % 7) for n, i in enumerate(lopsided)})
    indexes.index_bulk((i, kind, tags, author, views, 0) for i, (kind, tags, author, views) in rows.items())

    def expected(test):
        return sorted((i for i, row in rows.items() if test(row)), key=lambda i: (rows[i][3], i), reverse=True)

    cases = [
        (discovery.Query(sort="popular"), expected(lambda row: True)),
        (discovery.Query(tags=("t",), sort="popular"), expected(lambda row: "t" in row[1])),
        (
            discovery.Query(kind="sketch", tags=("t",), sort="recent"),
            sorted((i for i, r in rows.items() if r[:2] == ("sketch", ["t"])), reverse=True),
        ),
    ]
    for q, order in cases:
        for offset in [0, 1, 19, 150, 199, 200, 201, 777, 1500, len(order) - 21, len(order) - 1, len(order), 10**9]:
            for limit in (1, 20, 100):
                assert discovery.query(q, offset=offset, limit=limit) == (len(order), order[offset : offset + limit]), (
                    q,
                    offset,
                    limit,
                )
    ranked = discovery.top("popular", offset=190, limit=30)
    assert [int(member) for member, _ in ranked] == cases[0][1][190:220]
    assert [score for _, score in ranked] == [rows[i][3] for i in cases[0][1][190:220]]


def test_rebuild_discovery_moves_the_single_node_layout_to_the_shards(api, run, people, redis_data):
    """A Redis that an older release filled (every discovery key under the one tag {d}) is moved to
    the shards by ``manage.py rebuild_discovery``: the old keys go, and every answer is PostgreSQL's."""
    boards = [make(run, people["alice"], KINDS[i % 5], [f"t{i % 3}"]) for i in range(9)]
    run(board_hide, board=boards[0])
    indexes.index_clear()
    # the previous release's key names, written as it wrote them (they are no key of feeds.keys any more)
    legacy = {
        "ix:{d}:kind:sketch": [b.id for b in boards[:5]],
        "ix:{d}:tag:t0": [boards[0].id],
        f"ixt:{{d}}:{boards[1].id}": ["ix:{d}:kind:sketch"],
    }
    for key, members in legacy.items():
        redis_data.sadd(key, *members)
    redis_data.zadd("ixs:{d}:recent", {b.id: b.id for b in boards})
    redis_data.set("ixg:{d}", 7)
    redis_data.zadd("ixc:{d}:tags", {"t0": 3, "gone": 5})
    call_command("rebuild_discovery")
    assert not any(redis_data.exists(key) for key in [*legacy, "ixs:{d}:recent", "ixg:{d}"])
    shown = sorted((b.id for b in boards[1:]), reverse=True)
    assert api.get("/api/v1/discover").json()["total"] == len(shown)
    assert ids(api.get("/api/v1/discover").json()) == shown
    assert ids(api.get("/api/v1/discover", tag="t0").json()) == [b.id for b in boards[1:] if "t0" in b.tags][::-1]
    assert dict(indexes.facets()["tags"]) == {"t0": 2, "t1": 3, "t2": 3}
