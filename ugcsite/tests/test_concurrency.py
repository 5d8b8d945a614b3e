"""The site as `make run` ships it (scripts/serve.sh: nginx, the web and live servers, Celery's
worker and beat) under CONCURRENCY_CLIENTS concurrent clients of mixed traffic for
CONCURRENCY_SECONDS (60): no request fails, the site's PostgreSQL connections never exceed what
its pools allow (ugcsite.serving), and afterwards a write succeeds and /readyz says ok.

And the pool's edge in-process: a request that finds every connection taken waits
DATABASE_POOL_TIMEOUT, then answers 503 with Retry-After; it never hangs."""

import http.client
import json
import os
import random
import threading
import time
from collections import Counter
from urllib.parse import urlsplit

import psycopg
import pytest
from django.conf import settings
from django.db import connection, transaction

from social.models import User
from ugcsite.serving import SITE_CONNECTIONS_SQL, Site, site_connections_max
from ugcsite.testing import assert_problem

CLIENTS = int(os.environ.get("CONCURRENCY_CLIENTS", "16"))
SECONDS = float(os.environ.get("CONCURRENCY_SECONDS", "60"))
QUEUE = "concurrency"  # this site's own worker takes its tasks, not the session's
DOC = {
    "width": 200,
    "height": 100,
    "background": "#ffffff",
    "elements": [{"type": "rect", "color": "#c0392b", "width": 2, "x": 10, "y": 10, "w": 50, "h": 40}],
}
pytestmark = [
    pytest.mark.worker,
    pytest.mark.skipif(
        settings.REDIS_CLUSTER, reason="the connection budget does not depend on the Redis: runs once, in the plain run"
    ),
]


class Person:
    """One client: its own keep-alive connection to the site, a bearer token, a session cookie."""

    def __init__(self, site: Site, name: str):
        address = urlsplit(site.url)
        self.http = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
        self.name = name
        self.token = None
        self.cookie = None

    def call(self, method: str, path: str, body=None, *, auth: bool = True, headers=None) -> tuple[int, bytes, dict]:
        sent = dict(headers or {})
        if body is not None:
            sent["Content-Type"] = "application/json"
        if auth and self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        if self.cookie and not auth:
            sent["Cookie"] = self.cookie
        for attempt in (1, 2):  # a keep-alive connection the server closed while idle is opened again once
            try:
                self.http.request(method, path, body=json.dumps(body) if body is not None else None, headers=sent)
                answer = self.http.getresponse()
                return answer.status, answer.read(), dict(answer.getheaders())
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.http.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def sign_up(person: Person) -> None:
    password = "long-enough-1"
    status, body, _ = person.call("POST", "/api/v1/users", {"username": person.name, "password": password}, auth=False)
    assert status == 201, body
    status, body, _ = person.call("POST", "/api/v1/tokens", {"username": person.name, "password": password}, auth=False)
    assert status == 201, body
    person.token = json.loads(body)["token"]


def drive(person: Person, everyone: list[str], until: float, outcomes: Counter, failures: list, lock) -> None:
    """Mixed traffic as one person until ``until``: feed reads and pages, posts, follows and
    unfollows, board reads, discovery, search, HTML pages; every answer must be the expected one."""
    rng = random.Random(person.name)
    mine: list[int] = []
    following: set[str] = set()
    while time.monotonic() < until:
        roll = rng.random()
        if roll < 0.35:
            what, expected = "feed", (200,)
            status, body, _ = person.call("GET", "/api/v1/feed?limit=20")
        elif roll < 0.45:
            what, expected = "post", (201,)
            status, body, _ = person.call(
                "POST",
                "/api/v1/boards",
                {"title": f"busy {rng.randrange(10**6)}", "kind": "note", "tags": ["busy"], "doc": DOC},
            )
            if status == 201:
                mine.append(json.loads(body)["id"])
        elif roll < 0.55:
            other = rng.choice([name for name in everyone if name != person.name])
            if other in following:
                what, expected = "unfollow", (204,)
                status, body, _ = person.call("DELETE", f"/api/v1/users/{other}/follow")
                following.discard(other)
            else:
                what, expected = "follow", (204,)
                status, body, _ = person.call("PUT", f"/api/v1/users/{other}/follow")
                following.add(other)
        elif roll < 0.65 and mine:
            what, expected = "board", (200,)
            status, body, _ = person.call("GET", f"/api/v1/boards/{rng.choice(mine)}")
        elif roll < 0.72:
            what, expected = "discover", (200,)
            status, body, _ = person.call("GET", "/api/v1/discover?tag=busy")
        elif roll < 0.79:
            what, expected = "search", (200,)
            status, body, _ = person.call("GET", "/api/v1/search?q=busy")
        elif roll < 0.86:
            what, expected = "profile", (200,)
            status, body, _ = person.call("GET", f"/api/v1/users/{rng.choice(everyone)}/boards")
        else:
            what, expected = "page", (200,)
            path = rng.choice(["/", "/discover", f"/u/{rng.choice(everyone)}", "/login"])
            status, body, _ = person.call("GET", path, auth=False)
        with lock:
            outcomes[what] += 1
            if status not in expected:
                failures.append(f"{what} as {person.name}: {status} {body[:200]!r}")


def site_connections(dsn: str) -> int:
    with psycopg.connect(dsn) as db:
        return db.execute(SITE_CONNECTIONS_SQL).fetchone()[0]


def test_sustained_mixed_traffic_stays_inside_the_connection_budget(transactional_db, tmp_path):
    db = connection.settings_dict
    dsn = f"postgresql://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    env = {
        **os.environ,
        "DATABASE_URL": dsn.replace("postgresql://", "postgres://"),
        "DJANGO_DEBUG": "0",
        "SITE_HTTPS": "0",
        "DJANGO_SECRET_KEY": "c" * 60,
        "STATIC_ROOT": str(tmp_path / "static"),
        "CELERY_QUEUE": QUEUE,
        "RATE_LIMIT_AUTH_PER_MINUTE": "0",
        "RATE_LIMIT_WRITES_PER_MINUTE": "0",
        "RATE_LIMIT_WRITES_PER_ADDRESS_PER_MINUTE": "0",
        "RATE_LIMIT_READS_PER_MINUTE": "0",
        "RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE": "0",
    }
    site = Site(tmp_path / "site", env)
    budget = site_connections_max(site.env)
    site.collect_static()
    site.start()
    try:
        names = [f"busy{i:02d}" for i in range(CLIENTS)]
        people = [Person(site, name) for name in names]
        for person in people:
            sign_up(person)

        samples: list[int] = []
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                samples.append(site_connections(dsn))
                stop.wait(0.25)

        outcomes, failures, lock = Counter(), [], threading.Lock()
        until = time.monotonic() + SECONDS
        sampler = threading.Thread(target=sample, daemon=True)
        clients = [
            threading.Thread(target=drive, args=(person, names, until, outcomes, failures, lock), daemon=True)
            for person in people
        ]
        sampler.start()
        for client in clients:
            client.start()
        for client in clients:
            client.join(timeout=SECONDS + 120)
        stop.set()
        sampler.join(timeout=10)
        requests = sum(outcomes.values())
        print(
            f"\n{CLIENTS} clients, {SECONDS:.0f} s: {requests:,} requests ({requests / SECONDS:,.0f}/s) {dict(outcomes)}; "
            f"the site's PostgreSQL connections: at most {max(samples)} (its pools allow {budget}), "
            f"{samples[-1]} at the end"
        )
        assert not any(client.is_alive() for client in clients), "a client hung"
        assert not failures, f"{len(failures)} of {requests} requests failed: {failures[:10]}"
        assert requests > CLIENTS * SECONDS, "too little traffic to judge anything"
        assert outcomes["post"] and outcomes["follow"] and outcomes["page"]
        assert max(samples) > 0, "no connection of the site was seen: the count names the wrong processes"
        assert max(samples) <= budget, f"the site held {max(samples)} connections; its pools allow {budget}"

        writer = people[0]
        status, body, _ = writer.call(
            "POST", "/api/v1/boards", {"title": "after the rush", "kind": "note", "tags": [], "doc": DOC}
        )
        assert status == 201, body
        status, body, _ = writer.call("GET", "/readyz", auth=False)
        assert status == 200 and json.loads(body)["status"] == "ok", body
    finally:
        site.stop()


def test_a_request_that_finds_the_pool_taken_answers_503_with_retry_after(transactional_db, client):
    """One connection in the pool, held by this thread in a transaction: a sign-up on another
    thread waits the pool's timeout and answers 503 with Retry-After, and nothing is written."""
    pool_options = connection.settings_dict["OPTIONS"]["pool"]
    saved = dict(pool_options)
    connection.close_pool()
    pool_options.update(min_size=1, max_size=1, timeout=0.5)
    answers = []
    try:
        with transaction.atomic():
            User.objects.exists()  # this thread now holds the pool's only connection

            def sign_up_elsewhere() -> None:
                started = time.monotonic()
                answers.append(
                    (
                        client.post(
                            "/api/v1/users",
                            {"username": "waiter", "password": "long-enough"},
                            content_type="application/json",
                        ),
                        time.monotonic() - started,
                    )
                )

            elsewhere = threading.Thread(target=sign_up_elsewhere, daemon=True)
            elsewhere.start()
            elsewhere.join(timeout=30)
            assert not elsewhere.is_alive(), "the request hung on an exhausted pool"
    finally:
        connection.close()
        connection.close_pool()
        pool_options.clear()
        pool_options.update(saved)
    response, waited = answers[0]
    body = assert_problem(response, 503)
    assert int(response["Retry-After"]) > 0 and "database" in body["detail"]
    assert 0.4 < waited < 10
    assert not User.objects.filter(username="waiter").exists()
