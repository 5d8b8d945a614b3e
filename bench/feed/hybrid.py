"""Hybrid fan-out, measured (feeds.timelines.hybrid): authors above FANOUT_PUSH_MAX_FOLLOWERS are not pushed,
and each feed page merges their M.

    make bench-hybrid                                   # a star with 1,000,000 followers
    make bench-hybrid ARGS="--followers 100000 --runs 100"

(a) The star posts: the time from ``board_create`` returning (committed) to the board being on
    the first feed page of a follower, polled with the site's own feed read, while a real Celery
    worker runs board_fanout (which pushes nothing for a big author); and board_fanout's own
    cost for that author, in-process.
(b) The first feed page as the API makes it (ready-check + selector), p50/p99: a reader following
    the star, 19 more big authors and 200 ordinary ones; a reader following only the 200
    ordinary ones; and a reader of the same 220 authors with every board pushed into P (what
    full push would give them), for comparison. Also a second page by ``before`` and a page at
    offset 200 (a merge cannot skip by rank: offset pages read offset + limit ids of each head),
    as the site serves it (its first call keeps a feed snapshot that the rest read) and merged at
    every call (the snapshot made stale before each).
(c) The walk that marks every follower when the star crosses the threshold, in one process.

The big authors' followers are written straight into F with pipelines, in batches (members that
are no user); only the three readers are real users, with real Follow rows and following sets.
The read never touches F, so the other 19 big authors get just enough followers to be big.
Writes bench/results/hybrid.md.
"""

import argparse
import os
import platform
import random
import sys
import time
from datetime import UTC, datetime

import django

from bench.harness.report import RESULTS
from bench.harness.worker import celery_worker

FAKE_FOLLOWERS_FROM = 10**12  # F members above every user id: followers that are no user


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--followers", type=int, default=1_000_000, help="followers of the star")
    parser.add_argument("--big", type=int, default=20, help="big authors the hybrid reader follows, the star included")
    parser.add_argument("--ordinary", type=int, default=200, help="ordinary authors every reader follows")
    parser.add_argument("--big-boards", type=int, default=300, help="boards of each big author")
    parser.add_argument("--ordinary-boards", type=int, default=30, help="boards of each ordinary author")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--posts", type=int, default=20)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.DEBUG = False  # no query log
    call_command("migrate", verbosity=0)
    run(args)


def _ids(answer) -> list[int]:
    return [item["id"] for item in answer["items"]]


def run(args) -> None:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from tqdm import tqdm

    from bench.harness import measure
    from bench.harness.world import DOC, _copy
    from feeds import keys, selectors, tasks
    from feeds.models import Board
    from feeds.rules import Timeline
    from feeds.services import activity
    from feeds.services.boards import board_create
    from feeds.services.follows import follow_create
    from feeds.timelines import hybrid, rebuild, store
    from feeds.timelines.ids import board_id_time, next_board_id
    from social import graph, keys as social_keys
    from ugcsite.celery import app
    from ugcsite.platform.redis import get_redis

    started = time.perf_counter()
    redis = get_redis()
    redis.flushdb()
    User = get_user_model()
    rng = random.Random(2026)
    threshold = settings.FANOUT_PUSH_MAX_FOLLOWERS
    tag = datetime.now(UTC).strftime("%H%M%S")
    names = (
        [f"big{i}_{tag}" for i in range(args.big)]
        + [f"ord{i}_{tag}" for i in range(args.ordinary)]
        + [f"{who}_{tag}" for who in ("hybrid", "plain", "pushed")]
    )
    User.objects.bulk_create([User(username=name, password="!") for name in names])
    ids = dict(User.objects.filter(username__in=names).values_list("username", "id"))
    big = [ids[f"big{i}_{tag}"] for i in range(args.big)]
    ordinary = [ids[f"ord{i}_{tag}"] for i in range(args.ordinary)]
    star = big[0]
    hybrid_reader, plain_reader, pushed_reader = (ids[f"{who}_{tag}"] for who in ("hybrid", "plain", "pushed"))

    # Boards: the authors' histories interleaved in time, real snowflake ids, into PostgreSQL and M.
    authors = [a for a in big for _ in range(args.big_boards)] + [
        a for a in ordinary for _ in range(args.ordinary_boards)
    ]
    rng.shuffle(authors)
    rows = []
    for author_id in authors:
        board_id = next_board_id()
        created = board_id_time(board_id)
        rows.append(
            (
                board_id,
                author_id,
                f"board {board_id % 100000}",
                rng.choice(("sketch", "note", "map")),
                "{}",
                DOC,
                created,
                created,
                0,
                "published",
            )
        )
    _copy(
        Board._meta.db_table,
        ["id", "author_id", "title", "kind", "tags", "doc_json", "created_at", "updated_at", "views", "state"],
        tqdm(rows, desc="boards", unit="board", disable=None),
    )
    pipe = redis.pipeline(transaction=False)
    for board_id, author_id, *_ in rows:
        pipe.zadd(keys.profile_timeline(author_id), {board_id: board_id})
    pipe.execute()

    # F of the big authors, straight into Redis in batches; then their mode, as a follow would flip it.
    now = time.time()
    sizes = {star: args.followers, **dict.fromkeys(big[1:], threshold + 10000)}
    next_fake = FAKE_FOLLOWERS_FROM
    with tqdm(total=sum(sizes.values()), desc="followers in F", unit="edge", disable=None) as bar:
        for author_id, size in sizes.items():
            for start in range(0, size, 100_000):
                pipe = redis.pipeline(transaction=False)
                for part in range(start, min(start + 100_000, size), 10_000):
                    count = min(10_000, size - part)
                    pipe.zadd(
                        social_keys.followers(author_id),
                        {next_fake + i: now - rng.random() * 86400 * 365 for i in range(count)},
                    )
                    next_fake += count
                pipe.execute()
                bar.update(min(start + 100_000, size) - start)
    walk_started = time.perf_counter()
    rebuild.rebuild_big_authors([star], lambda *_: None)  # recount (flips to big) + the marking walk
    walk_seconds = time.perf_counter() - walk_started
    rebuild.rebuild_big_authors(big[1:], lambda *_: None)
    assert all(hybrid.author_is_big(a) for a in big)

    # The readers: real follows through the service (back-fills run in-process), and one whose
    # P holds what full push would have put there.
    app.conf.task_always_eager = True
    people = {u.pk: u for u in User.objects.filter(pk__in=[*big, *ordinary, hybrid_reader, plain_reader])}
    for reader, followees in ((hybrid_reader, big + ordinary), (plain_reader, ordinary)):
        for followee in tqdm(followees, desc=f"follows of {User.objects.get(pk=reader).username}", disable=None):
            follow_create(follower=people[reader], followee=people[followee])
    for followee in big + ordinary:
        graph.follow_add(follower_id=pushed_reader, followee_id=followee, at=now)
    activity.user_seen(user_id=pushed_reader)
    for reader in (hybrid_reader, plain_reader, pushed_reader):
        activity.home_feed_ready(user_id=reader)  # a new reader's first read regenerates P: done here
    app.conf.task_always_eager = False
    pushed = sorted((r[0] for r in rows), reverse=True)[: settings.HOME_TIMELINE_HOT]
    store.timeline_replace(Timeline.HOME, pushed_reader, pushed)
    assert set(hybrid.big_followees(hybrid_reader)) == set(big) and not hybrid.big_followees(plain_reader)
    assert not hybrid.big_followees(pushed_reader)
    first = _ids(selectors.home_feed(hybrid_reader, offset=0, before=None, limit=20))
    assert first == _ids(selectors.home_feed(pushed_reader, offset=0, before=None, limit=20)) == pushed[:20]

    table = []

    def add(what, figures, note=""):
        table.append((what, figures, note))
        print(
            f"{what}: " + (f"p50 {figures['p50']:,.2f} ms, p99 {figures['p99']:,.2f} ms" if figures else note),
            flush=True,
        )

    # (b) reads
    print(
        f"\n{redis.zcard(social_keys.followers(star)):,} followers of the star; "
        f"{len(big)} big authors, {len(ordinary)} ordinary ones",
        flush=True,
    )
    for label, reader in (
        (f"following {len(big)} big + {len(ordinary)} ordinary (hybrid)", hybrid_reader),
        (f"following {len(ordinary)} ordinary only", plain_reader),
        (f"following the same {len(big) + len(ordinary)}, all pushed into P", pushed_reader),
    ):
        add(f"feed first page, {label}", measure.timings(measure.site_feed(reader), runs=args.runs))
    short = (("hybrid", hybrid_reader), ("ordinary only", plain_reader), ("all pushed", pushed_reader))
    for label, reader in short:
        cursor = int(selectors.home_feed(reader, offset=0, before=None, limit=20)["next"])
        add(
            f"feed second page by before, {label}",
            measure.timings(
                lambda r=reader, c=cursor: selectors.home_feed(r, offset=None, before=c, limit=20), runs=args.runs
            ),
        )
    for label, reader in short:
        add(
            f"feed page at offset 200, {label}",
            measure.timings(measure.site_feed(reader, offset=200), runs=args.runs // 2),
            "as served: a page the one script call cannot make keeps a feed snapshot at its first call",
        )
        add(
            f"feed page at offset 200, merged at every call, {label}",
            measure.timings(
                measure.site_feed(reader, offset=200), runs=args.runs // 2, setup=measure.feed_changed(reader)
            ),
        )

    # (a) a post by the star, through a real worker
    visible = []
    with celery_worker("bench-hybrid", concurrency=2, ready=app):
        star_user = User.objects.get(pk=star)
        doc = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}
        for n in range(args.posts):
            time.sleep(0.2)  # the previous post's board_fanout is done: each post measured alone
            with transaction.atomic():
                board = board_create(author=star_user, title=f"news {n}", kind="note", tags=[], doc=doc)
            returned = time.perf_counter()  # committed: M and G written, board_fanout enqueued
            reads = 0
            while True:
                reads += 1
                if board.id in _ids(selectors.home_feed(hybrid_reader, offset=0, before=None, limit=20)):
                    break
            visible.append(((time.perf_counter() - returned) * 1000, reads))
            print(
                f"post {n}: on the follower's first page {visible[-1][0]:.2f} ms after board_create returned, "
                f"at read {reads}",
                flush=True,
            )
        broker = app.connection().default_channel.client
        deadline = time.monotonic() + 30
        while broker.llen("celery") and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the last task taken is done by now
        pushed_to = redis.zscore(keys.home_timeline(hybrid_reader), board.id)
        print(
            f"board_fanout ran in the worker (queue empty: {not broker.llen('celery')}); "
            f"the follower's P holds the board: {pushed_to is not None}"
        )
    spans = sorted(ms for ms, _ in visible)
    add(
        f"post by an author with {args.followers:,} followers: board_create returned -> on a follower's first page",
        {"p50": spans[len(spans) // 2], "p99": spans[-1]},
        f"{args.posts} posts, each on the first read after the create returned (the time is that one read); "
        f"pushed to no P",
    )
    add(
        "board_fanout for that author (in-process: one row, one HGET, no push)",
        measure.timings(lambda: tasks.board_fanout(board.id), runs=args.runs),
    )
    add(
        f"marking walk when the star crossed {threshold:,} followers (one process)",
        None,
        f"{args.followers:,} followers in {walk_seconds:.1f} s = {args.followers / walk_seconds:,.0f} per second",
    )

    elapsed = time.perf_counter() - started
    machine = f"{platform.node()}: {os.cpu_count()} cores, {platform.platform()}, Python {platform.python_version()}"
    lines = ["| measure | p50 | p99 (max for posts) | note |", "|---|---:|---:|---|"]
    for what, figures, note in table:
        p50, p99 = (f"{figures[k]:,.2f}" if figures else "—" for k in ("p50", "p99"))
        lines.append(f"| {what} | {p50} | {p99} | {note} |")
    command = "make bench-hybrid" + ("" if sys.argv[1:] == [] else f' ARGS="{" ".join(sys.argv[1:])}"')
    text = (
        f"# Hybrid fan-out\n\n{datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine}; `{command}`, "
        f"{elapsed / 60:.1f} minutes; FANOUT_PUSH_MAX_FOLLOWERS {threshold:,}; {len(rows):,} boards. "
        f"Times in milliseconds.\n\n" + "\n".join(lines) + "\n"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "hybrid.md").write_text(text)
    print("\n" + text + "\nwritten: bench/results/hybrid.md")


if __name__ == "__main__":
    main()
