"""The data Redis killed (kill -9) and started again on its append-only file, under traffic, with
a real gunicorn and a real Celery worker that nobody restarts: they reconnect by themselves, the
requests made during the outage answer 503 with Retry-After (never a 500), no board answered 201
is lost, and the view counters lose at most what Redis had not yet written (measured)."""

import threading
import time

import pytest
from django.conf import settings as django_settings

from feeds import keys
from feeds.discovery.counters import pending_views
from feeds.models import Board
from feeds.tasks import board_fanout
from ugcsite.platform.redis import get_redis
from ugcsite.testing import wait_for
from ugcsite.tests.servers import Processes, base_env, call, free_port, redis_kill, services

QUEUE = "redis-restart"  # only this test's worker takes it
READERS = 3
DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}
pytestmark = [
    pytest.mark.worker,
    pytest.mark.skipif(
        django_settings.REDIS_CLUSTER,
        reason="a plain Redis of its own, with AOF: runs once, in the "
        "plain run (a cluster primary killed is test_cluster_failover)",
    ),
]


class Traffic(threading.Thread):
    """Posts by the author, feed reads by the readers and anonymous board views, one after the
    other until stopped; every answer is kept as (time, what, status, headers, body)."""

    def __init__(self, base: str, author: str, readers: list[str]):
        super().__init__(daemon=True)
        self.base, self.author, self.readers = base, author, readers
        self.answers: list[tuple[float, str, int, dict, object]] = []
        self.stopping = threading.Event()
        self.last_board: int | None = None

    def run(self):
        step = 0
        while not self.stopping.is_set():
            step += 1
            if step % 3 == 0:
                what, answer = (
                    "post",
                    call(
                        self.base,
                        "POST",
                        "/api/v1/boards",
                        {"title": f"b{step}", "kind": "note", "tags": [], "doc": DOC},
                        self.author,
                    ),
                )
                if answer[0] == 201:
                    self.last_board = answer[2]["id"]
            elif step % 3 == 1 or self.last_board is None:
                what, answer = (
                    "feed",
                    call(self.base, "GET", "/api/v1/feed", token=self.readers[step % len(self.readers)]),
                )
            else:
                what, answer = f"view {self.last_board}", call(self.base, "GET", f"/api/v1/boards/{self.last_board}")
            self.answers.append((time.monotonic(), what, *answer))
            time.sleep(0.01)

    def between(self, start: float, end: float):
        return [answer for answer in self.answers if start <= answer[0] < end]


def test_the_site_and_the_worker_come_back_by_themselves_after_redis_restarts(transactional_db, settings, tmp_path):
    redis_dir, port = tmp_path / "redis", free_port()
    services("redis_start", str(redis_dir), str(port))  # as make run starts it: appendonly, fsync every second
    settings.REDIS_URL, settings.REDIS_CLUSTER = f"redis://127.0.0.1:{port}/0", False
    get_redis.cache_clear()
    processes = Processes(tmp_path)
    traffic = None
    try:
        env = base_env(REDIS_URL=settings.REDIS_URL, REDIS_CLUSTER="0", CELERY_QUEUE=QUEUE)
        base = processes.web(env)
        processes.worker(env, QUEUE)
        tokens = []
        for name in ["author", *[f"reader{i}" for i in range(READERS)]]:
            assert call(base, "POST", "/api/v1/users", {"username": name, "password": "long-enough"})[0] == 201
            tokens.append(
                call(base, "POST", "/api/v1/tokens", {"username": name, "password": "long-enough"})[2]["token"]
            )
        author, readers = tokens[0], tokens[1:]
        for reader in readers:
            assert call(base, "PUT", "/api/v1/users/author/follow", token=reader)[0] == 204
        reader_ids = [call(base, "GET", "/api/v1/me", token=reader)[2]["id"] for reader in readers]

        traffic = Traffic(base, author, readers)
        traffic.start()
        wait_for(lambda: sum(a[2] == 201 for a in traffic.answers) >= 5, timeout=30, what="boards before the outage")
        # A fan-out the worker takes while Redis is down: the reader lost the board, and the
        # task is sent again. Nothing but the task's own retry can bring it back (no beat runs).
        redelivered = traffic.last_board
        wait_for(
            lambda: get_redis().zscore(keys.home_timeline(reader_ids[0]), redelivered) is not None,
            timeout=30,
            what="the board's first delivery",
        )
        get_redis().zrem(keys.home_timeline(reader_ids[0]), redelivered)

        killed_at = time.monotonic()
        redis_kill(redis_dir)
        board_fanout.apply_async((redelivered,), {"resend": True}, queue=QUEUE)
        time.sleep(2)
        services("redis_start", str(redis_dir), str(port))  # the same port and folder: the AOF is replayed
        back_at = time.monotonic()
        wait_for(
            lambda: any(a[2] == 201 for a in traffic.between(back_at, time.monotonic())),
            timeout=20,
            what="a post answered 201 after the restart (the site reconnects by itself)",
        )
        time.sleep(1)
        traffic.stopping.set()
        traffic.join(timeout=30)

        statuses = sorted({a[2] for a in traffic.answers})
        assert set(statuses) <= {200, 201, 503}, f"answers: {statuses}"
        outage = [a for a in traffic.between(killed_at, back_at) if a[2] == 503]
        assert outage, "no request met the outage: the test tested nothing"
        for _, what, status, headers, body in traffic.answers:
            if status == 503:
                assert int(headers["Retry-After"]) > 0 and "Redis" in body["detail"], (what, body)

        # No board lost: each one answered 201 is in PostgreSQL, its author's timeline and every
        # reader's feed; each one refused (503) left nothing behind.
        posted = {a[4]["id"] for a in traffic.answers if a[1] == "post" and a[2] == 201}
        refused = sum(a[1] == "post" and a[2] == 503 for a in traffic.answers)
        assert set(Board.objects.values_list("id", flat=True)) == posted
        mine = call(base, "GET", "/api/v1/users/author/boards?limit=100")[2]["items"]
        assert {item["id"] for item in mine} == posted

        def feeds_whole():
            return all(
                {item["id"] for item in call(base, "GET", "/api/v1/feed?limit=100", token=reader)[2]["items"]} == posted
                for reader in readers
            )

        wait_for(
            feeds_whole, timeout=60, interval=0.5, what="every board in every reader's feed (the worker reconnects)"
        )

        # Counters: every view answered 200 was counted, except at most those Redis had not yet
        # written to its append-only file (written before each answer; 2 s at most when a sync lags).
        answered: dict[int, list[float]] = {}
        for at, what, status, *_ in traffic.answers:
            if what.startswith("view ") and status == 200:
                answered.setdefault(int(what.split()[1]), []).append(at)
        pending = pending_views(answered)
        stored = dict(Board.objects.filter(pk__in=answered).values_list("id", "views"))
        lost = sum(max(len(times) - stored[board] - pending[board], 0) for board, times in answered.items())
        at_risk = sum(killed_at - 2 <= at < killed_at for times in answered.values() for at in times)
        print(
            f"\nRedis down {back_at - killed_at:.1f} s: {len(outage)} requests answered 503, {refused} posts refused whole; "
            f"{len(posted)} boards posted, none lost; views answered {sum(map(len, answered.values()))}, "
            f"lost {lost} (at risk: {at_risk} in the last 2 s before the kill)"
        )
        assert lost <= at_risk
    finally:
        if traffic is not None:
            traffic.stopping.set()
        processes.stop()
        try:
            get_redis().shutdown(nosave=True)
        except Exception:
            pass
        get_redis.cache_clear()
