"""Measurements: each returns p50/p99 (ms) of a callable, or a figure, measured in this process."""

import io
import os
import statistics
import sys
import time
from collections.abc import Callable

from django.conf import settings
from django.db import connection


def timings(
    fn: Callable[[], object],
    *,
    runs: int,
    warmup: int = 5,
    setup: Callable[[], object] | None = None,
    keep_samples: bool = False,
) -> dict:
    """p50/p99/mean in milliseconds of ``fn`` over ``runs`` calls after ``warmup``; ``setup``, when
    given, runs before each call, untimed. ``cpu`` is the CPU a call took, in milliseconds, this
    process's and the data Redis's (what other work on a shared machine does not inflate, as it
    does the p99), ``redis_cpu`` the data Redis's alone (its cost to the node); ``load`` the
    machine's load average (1 minute) when the calls ended. With ``keep_samples`` the sorted
    samples come too (for pooled())."""
    for _ in range(warmup):
        if setup is not None:
            setup()
        fn()
    samples = []
    process_before, redis_before = time.process_time(), redis_cpu_seconds()
    for _ in range(runs):
        if setup is not None:
            setup()
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    process, server = time.process_time() - process_before, redis_cpu_seconds() - redis_before
    samples.sort()
    summary = {
        **summarize(samples),
        "cpu": (process + server) / runs * 1000,
        "redis_cpu": server / runs * 1000,
        "load": os.getloadavg()[0],
    }
    if keep_samples:
        summary["samples"] = samples
    return summary


def summarize(samples: list[float]) -> dict:
    """p50/p99/mean of sorted samples (ms). The p99 of n samples is the one with n // 100 above it."""
    return {
        "p50": samples[len(samples) // 2],
        "p99": samples[min(len(samples) - 1, int(len(samples) * 0.99))],
        "mean": statistics.fmean(samples),
        "runs": len(samples),
    }


def pooled(rounds: list[dict]) -> dict:
    """One figure from rounds of timings(keep_samples=True): p50/p99/mean over every sample of
    every round, the mean CPU a call, and the rounds themselves (without their samples)."""
    samples = sorted(s for r in rounds for s in r["samples"])
    return {
        **summarize(samples),
        "cpu": statistics.fmean(r["cpu"] for r in rounds),
        "redis_cpu": statistics.fmean(r["redis_cpu"] for r in rounds),
        "rounds": [{k: v for k, v in r.items() if k != "samples"} for r in rounds],
    }


def redis_cpu_seconds() -> float:
    """CPU seconds the data Redis has used since it started (user + system, every primary of a
    cluster), from INFO: subtract two readings for the CPU of what ran between them. O(nodes)."""
    from ugcsite.platform.redis import get_redis

    client = get_redis()
    nodes = [n.redis_connection for n in client.get_primaries()] if settings.REDIS_CLUSTER else [client]
    return sum(float(i["used_cpu_user"]) + float(i["used_cpu_sys"]) for i in (n.info("cpu") for n in nodes))


def postgres_settle(*, timeout: float = 120.0) -> float:
    """Wait until no autovacuum worker runs in this database (at most ``timeout`` seconds), so a
    vacuum of what the benchmark just bulk-loaded does not share the cores with a measurement:
    it lasts seconds at 10^4 boards and minutes at 10^6, so it would bias a growth ratio.
    Returns the seconds waited."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE backend_type = 'autovacuum worker' AND datname = current_database()"
            )
            if not cursor.fetchone()[0]:
                break
        time.sleep(0.5)
    return time.perf_counter() - started


# --- the feed, and the naive design people would write instead ---------------------------------


def site_feed(
    user_id: int, *, offset: int | None = 0, before: int | None = None, limit: int = 20
) -> Callable[[], dict]:
    """The site's feed request minus HTTP: what the API view does (the activity touch, the
    regeneration check and the page, one script call when warm)."""
    from feeds.services import activity

    return lambda: activity.home_feed_read(user_id=user_id, offset=offset, before=before, limit=limit)


def feed_changed(user_id: int) -> Callable[[], None]:
    """What any change of a reader's feed does to their feed snapshot (feeds.timelines.snapshot):
    it no longer holds, so the next deep page merges again (P's revision bumped)."""
    from feeds.rules import Timeline
    from feeds.timelines import store

    return lambda: store.revision_bump(user_id, Timeline.HOME)


BASELINE_INDEX = (
    "CREATE INDEX IF NOT EXISTS bench_board_author_published ON feeds_board (author_id, id DESC) "
    "WHERE state = 'published'"
)


def sql_feed(user_id: int, *, offset: int = 0, limit: int = 20) -> Callable[[], list]:
    """Fan-out-on-read in SQL over the same data, with the best index for it: the followees'
    boards, newest first, joined to their authors, as the same summaries."""
    from feeds.models import Board
    from feeds.selectors import board_summary

    with connection.cursor() as cursor:
        cursor.execute(BASELINE_INDEX)

    def call():
        rows = (
            Board.objects.filter(author__follower_edges__follower_id=user_id, state="published")
            .select_related("author")
            .defer("doc_json")
            .order_by("-id")[offset : offset + limit]
        )
        return [board_summary(board) for board in rows]

    return call


# --- discovery, reading ------------------------------------------------------------------------


def discovery_query(kind: str, tag: str, sort: str = "popular") -> Callable[[], dict]:
    from feeds import selectors
    from feeds.discovery.queries import Query

    query = Query(kind=kind, tags=(tag,), sort=sort)
    return lambda: selectors.discover(query, offset=0, limit=20)


def reading_user_to_boards(board_ids: list[int], reader_ids: list[int]) -> Callable[[], dict]:
    from social.reading import readers_of

    return lambda: readers_of(board_ids, reader_ids)


def likes_by_followees(board_ids: list[int], person_ids: list[int]) -> Callable[[], dict]:
    """ "Liked by people you follow": the same N x M question over the liked sets."""
    from feeds.likes import likers_of

    return lambda: likers_of(board_ids, person_ids)


def like_storm(board_id: int, liker_ids: list[int]) -> dict:
    """Each of ``liker_ids`` likes one board, one after the other, through the site's own
    service (the row, the count, the gathered notification, then Redis): a storm on one row.
    {"likes", "seconds", "rate" (likes/s), "per_minute"}."""
    from django.contrib.auth import get_user_model

    from feeds.models import Board
    from feeds.services.likes import like

    board = Board.objects.get(pk=board_id)
    people = list(get_user_model().objects.filter(pk__in=liker_ids))
    started = time.perf_counter()
    for person in people:
        like(user=person, board=board)
    seconds = time.perf_counter() - started
    return {
        "likes": len(people),
        "seconds": seconds,
        "rate": len(people) / seconds,
        "per_minute": 60 * len(people) / seconds,
    }


def board_readers_build(reader_ids: list[int], board_ids: list[int]) -> None:
    """The model RockMelt rejected, board -> readers, built from the same reads for comparison:
    one sorted set per board (bench keys, social.keys.board_readers)."""
    from social import keys
    from ugcsite.platform.redis import get_redis

    client = get_redis()
    wanted = set(board_ids)
    pipe = client.pipeline(transaction=False)
    for reader_id in reader_ids:
        pipe.zrange(keys.reads(reader_id), 0, -1, withscores=True)
    per_board: dict[int, dict[int, float]] = {}
    for reader_id, rows in zip(reader_ids, pipe.execute()):
        for board_id, at in rows:
            if int(board_id) in wanted:
                per_board.setdefault(int(board_id), {})[reader_id] = at
    pipe = client.pipeline(transaction=False)
    for board_id, readers in per_board.items():
        pipe.zadd(keys.board_readers(board_id), readers)
    pipe.execute()


def reading_board_to_readers(board_ids: list[int], reader_ids: list[int]) -> Callable[[], dict]:
    """The same question on the board -> readers model: one ZMSCORE per board, M members each."""
    from social import keys
    from ugcsite.platform.redis import get_redis

    def call():
        cutoff = time.time() - 30 * 86400
        pipe = get_redis().pipeline(transaction=False)
        for board_id in board_ids:
            pipe.zmscore(keys.board_readers(board_id), reader_ids)
        return {
            board_id: [r for r, score in zip(reader_ids, scores) if score is not None and score >= cutoff]
            for board_id, scores in zip(board_ids, pipe.execute())
        }

    return call


# --- memory ------------------------------------------------------------------------------------


def timeline_memory(user_ids: list[int]) -> dict:
    """Bytes per hot timeline entry over the given users' P, and the encodings Redis chose."""
    from feeds import keys
    from ugcsite.platform.redis import get_redis

    client = get_redis()
    total_bytes = total_entries = 0
    encodings: dict[str, int] = {}
    for user_id in user_ids:
        key = keys.home_timeline(user_id)
        entries = client.zcard(key)
        if entries < 100:
            continue
        total_bytes += client.memory_usage(key, samples=0)
        total_entries += entries
        encoding = client.object("encoding", key)
        encodings[encoding] = encodings.get(encoding, 0) + 1
    return {
        "bytes_per_entry": total_bytes / max(total_entries, 1),
        "encodings": encodings,
        "timelines": sum(encodings.values()),
        "entries": total_entries,
    }


def wsgi_get(handler, path: str, token: str | None = None) -> tuple[str, bytes]:
    """GET ``path`` through a Django WSGIHandler in this process, as the web server would call it
    (from 127.0.0.1, with ``token`` as a bearer token when given): (status line, body)."""
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "HTTP_HOST": "127.0.0.1",
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr,
        "SERVER_PROTOCOL": "HTTP/1.1",
    }
    if token is not None:
        environ["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    status = []
    chunks = handler(environ, lambda line, headers: status.append(line))
    body = b"".join(chunks)
    if hasattr(chunks, "close"):
        chunks.close()
    return status[0], body
