"""PostgreSQL's primary dies (its Patroni and its postgres killed together, as a machine dies)
under a loop of writes through a real site (gunicorn through serve.sh), with a Patroni cluster
of its own: etcd, a primary and a synchronous standby (scripts/pg-ha.sh, as PG_HA=1 make run).

The writes answer 201 or 503 with Retry-After and a detail, never anything else; the standby is
promoted and writing resumes within 30 s, with no site process restarted (libpq's multi-host
connection string finds the new primary); every board answered 201 is on the new primary (the
synchronous standby had each before its 201); /readyz names the new primary; and the old primary,
started again, rejoins as a synchronous standby (Patroni rewinds it with pg_rewind). Then the
new primary dies the same way, and all of it holds a second time: whichever node is primary.

Slow: about three minutes (Patroni's ttl of 20 s is most of each outage)."""

import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg
import pytest
from django.conf import settings as django_settings

from ugcsite.platform.redis import get_redis
from ugcsite.testing import wait_for
from ugcsite.tests.servers import Processes, base_env, call, free_port, services

pytestmark = pytest.mark.skipif(
    django_settings.REDIS_CLUSTER, reason="PostgreSQL's failover does not depend on the Redis: runs in the plain run"
)
DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}
FAILOVER_TARGET_SECONDS = 30


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


def machine_death(node: Path) -> None:
    """kill -9 the node's Patroni, its postmaster and the postmaster's children at once."""
    patroni = int((node / "patroni.pid").read_text())
    postmaster = int((node / "data" / "postmaster.pid").read_text().split()[0])
    os.kill(patroni, signal.SIGKILL)
    os.kill(postmaster, signal.SIGKILL)
    for pid in _children(postmaster):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:  # a backend that ended meanwhile
            continue


def is_primary(api_port: int) -> bool:
    status, _, _ = call(f"http://127.0.0.1:{api_port}", "GET", "/primary", timeout=2)
    return status == 200


def failover_under_writes(base, token, dsn, ha_home, nodes, old, new, etcd) -> float:
    """Kill the primary ``old`` under a loop of writes; check every answer, the promotion of
    ``new`` within the target, that every 201 survived, and that ``old`` rejoins as the
    synchronous standby. Returns the seconds from the kill to the first write that succeeded."""
    stop = threading.Event()  # ends the write loop, whatever happens
    status, _, body = call(base, "GET", "/readyz")
    assert status == 200 and body["database"]["primary"] == f"127.0.0.1:{nodes[old][0]}", body

    answers = []  # (started, status, headers, body) of every write, in order
    killed_at: list[float] = []

    def write_loop():
        i = 0
        while not stop.is_set():
            started = time.monotonic()
            status, headers, body = call(
                base,
                "POST",
                "/api/v1/boards",
                {"title": f"w{i}", "kind": "note", "tags": [], "doc": DOC},
                token,
                30,
            )
            answers.append((started, status, headers, body))
            i += 1

    writer = threading.Thread(target=write_loop, daemon=True)
    writer.start()

    def created_after(moment: float) -> int:
        return sum(1 for started, status, _, _ in list(answers) if status == 201 and started > moment)

    try:
        wait_for(lambda: created_after(0) >= 20, timeout=60, what="20 boards written before the kill")
        machine_death(ha_home / old)
        killed_at.append(time.monotonic())
        wait_for(
            lambda: created_after(killed_at[0]) >= 20,
            timeout=FAILOVER_TARGET_SECONDS + 60,
            interval=0.2,
            what="writes to resume on the promoted standby",
        )
    finally:
        stop.set()
        writer.join(timeout=60)

    unexpected = [(status, body) for _, status, _, body in answers if status not in (201, 503)]
    assert not unexpected, unexpected
    refused = [(headers, body) for _, status, headers, body in answers if status == 503]
    assert refused, "no write met the outage: the kill was not under traffic"
    for headers, body in refused:
        assert int(headers["Retry-After"]) > 0 and "database" in body["detail"], (headers, body)
    resumed = min(started for started, status, _, _ in answers if status == 201 and started > killed_at[0])
    outage = resumed - killed_at[0]
    assert outage <= FAILOVER_TARGET_SECONDS, f"writes resumed {outage:.1f} s after the kill"
    assert is_primary(nodes[new][1])

    # Every board answered 201, before the kill and after, is on the new primary.
    created = {body["id"] for _, status, _, body in answers if status == 201}
    with psycopg.connect(dsn) as db:
        assert db.execute("SELECT pg_is_in_recovery()").fetchone()[0] is False
        stored = {row[0] for row in db.execute("SELECT id FROM feeds_board").fetchall()}
    assert created <= stored, f"{len(created - stored)} boards answered 201 are gone"
    status, _, body = call(base, "GET", "/readyz")
    assert status == 200 and body["database"]["primary"] == f"127.0.0.1:{nodes[new][0]}", body

    # The old primary, started again, rejoins as the synchronous standby of the new one.
    services("patroni_start", str(ha_home / old), old, str(nodes[old][0]), str(nodes[old][1]), str(etcd))
    services("pg_ha_wait", str(nodes[old][1]), "sync_standby", "120")
    log = (ha_home / old / "patroni.log").read_text()
    if "running pg_rewind" in log:
        assert "pg_rewind exit code=0" in log, log[-3000:]
    with psycopg.connect(f"postgresql://ugcsite@127.0.0.1:{nodes[old][0]}/ugcsite") as db:
        assert db.execute("SELECT pg_is_in_recovery()").fetchone()[0] is True
        wait_for(
            lambda: created <= {row[0] for row in db.execute("SELECT id FROM feeds_board").fetchall()},
            timeout=30,
            what="the rejoined standby to hold every board",
        )
    status, _, body = call(
        base, "POST", "/api/v1/boards", {"title": "after", "kind": "note", "tags": [], "doc": DOC}, token
    )
    assert status == 201, body
    return outage


def test_writes_survive_a_primary_killed_and_resume_on_the_promoted_standby(transactional_db, settings, tmp_path):
    ha_home = Path(tempfile.mkdtemp(prefix="ugcsite-ha."))
    ha_home.chmod(0o755)  # Patroni and PostgreSQL run as their own user when the tests run as root
    etcd, peer, pg1, api1, pg2, api2 = (free_port() for _ in range(6))
    nodes = {"n1": (pg1, api1), "n2": (pg2, api2)}
    redis_port = free_port()
    services("redis_start", str(tmp_path / "redis"), str(redis_port), "ephemeral")
    settings.REDIS_URL, settings.REDIS_CLUSTER = f"redis://127.0.0.1:{redis_port}/0", False
    get_redis.cache_clear()
    processes = Processes(tmp_path)
    try:
        services("pg_ha_start", str(ha_home), *map(str, (etcd, peer, pg1, api1, pg2, api2)))
        dsn = f"postgresql://ugcsite@127.0.0.1:{pg1},127.0.0.1:{pg2}/ugcsite?target_session_attrs=read-write"
        env = base_env(
            DATABASE_URL=dsn.replace("postgresql://", "postgres://") + "&connect_timeout=3",
            REDIS_URL=settings.REDIS_URL,
            REDIS_CLUSTER="0",
            DJANGO_DEBUG="0",
            SITE_HTTPS="0",
            DJANGO_SECRET_KEY="k" * 60,
            CELERY_QUEUE="pg-failover",  # no worker: the fan-outs wait in a queue of their own
        )
        migrate = [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"]
        assert processes.start("migrate", migrate, env).wait(timeout=120) == 0
        base = processes.web(env)
        assert call(base, "POST", "/api/v1/users", {"username": "author", "password": "long-enough"})[0] == 201
        token = call(base, "POST", "/api/v1/tokens", {"username": "author", "password": "long-enough"})[2]["token"]

        outages = []
        for _ in range(2):  # whichever node is primary dies, twice in a row
            old = next(name for name, (_, api) in nodes.items() if is_primary(api))
            new = next(name for name in nodes if name != old)
            outages.append(failover_under_writes(base, token, dsn, ha_home, nodes, old, new, etcd))
        print(f"\nfailover: writes resumed {outages[0]:.1f} s and {outages[1]:.1f} s after each kill")
    finally:
        processes.stop()
        services("pg_ha_stop", str(ha_home))
        shutil.rmtree(ha_home, ignore_errors=True)
        get_redis().shutdown(nosave=True)
        get_redis.cache_clear()
