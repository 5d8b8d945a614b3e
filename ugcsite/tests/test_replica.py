"""A streaming replica under a real site (gunicorn through serve.sh): a profile and a search read
by others come from the replica (stale while its replay is paused), their author reads her own
writes from the primary until the replica has replayed their LSN, a replica too far behind or
down is skipped at once, and /readyz reports its lag.

The primary and the replica are throwaway ones of this test, made as `PG_REPLICAS=1 make run`
makes them (scripts/services.sh pg_start, scripts/pg-ha.sh pg_replica_start: pg_basebackup)."""

import shutil
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest
from django.conf import settings as django_settings

from ugcsite.platform.redis import get_redis
from ugcsite.testing import wait_for
from ugcsite.tests.servers import Processes, base_env, call, free_port, services

pytestmark = pytest.mark.skipif(
    django_settings.REDIS_CLUSTER, reason="the replica does not depend on the Redis: runs once, in the plain run"
)
MAX_LAG = 1024 * 1024


def test_others_read_the_replica_and_a_writer_her_own_writes(transactional_db, settings, tmp_path):
    pg_home = Path(tempfile.mkdtemp(prefix="ugcsite-replica."))
    pg_home.chmod(0o755)  # PostgreSQL runs as its own user when the tests run as root
    primary_dir, replica_dir = pg_home / "primary", pg_home / "replica"
    primary_port, replica_port, redis_port = free_port(), free_port(), free_port()
    services("pg_start", str(primary_dir), str(primary_port), "fast")
    services("pg_replica_start", str(replica_dir), str(replica_port), str(primary_port), "fast")
    services("redis_start", str(tmp_path / "redis"), str(redis_port), "ephemeral")

    def sql(port: int, query: str):
        with psycopg.connect(f"postgresql://ugcsite@127.0.0.1:{port}/ugcsite", autocommit=True) as db:
            cursor = db.execute(query)
            return cursor.fetchall() if cursor.description else None

    settings.REDIS_URL, settings.REDIS_CLUSTER = f"redis://127.0.0.1:{redis_port}/0", False
    get_redis.cache_clear()
    processes = Processes(tmp_path)
    try:
        env = base_env(
            DATABASE_URL=f"postgres://ugcsite@127.0.0.1:{primary_port}/ugcsite",
            DATABASE_REPLICA_URL=f"postgres://ugcsite@127.0.0.1:{replica_port}/ugcsite",
            REPLICA_MAX_LAG_BYTES=str(MAX_LAG),
            REPLICA_CHECK_SECONDS="0.2",
            REPLICA_CONNECT_TIMEOUT="0.5",  # a replica that just died costs each web process at most this, once
            REDIS_URL=settings.REDIS_URL,
            REDIS_CLUSTER="0",
            CELERY_QUEUE="replica-reads",  # no worker: a board's fan-out waits in a queue of its own
            DJANGO_DEBUG="0",
            SITE_HTTPS="0",
            DJANGO_SECRET_KEY="k" * 60,
        )
        migrate = [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"]
        assert processes.start("migrate", migrate, env).wait(timeout=120) == 0
        base = processes.web(env)
        tokens = {}
        for name in ("alice", "bob"):
            assert call(base, "POST", "/api/v1/users", {"username": name, "password": "long-enough"})[0] == 201
            tokens[name] = call(base, "POST", "/api/v1/tokens", {"username": name, "password": "long-enough"})[2][
                "token"
            ]

        def bio(reader: str | None) -> str:
            status, _, body = call(base, "GET", "/api/v1/users/alice", token=tokens.get(reader))
            assert status == 200, body
            return body["bio"]

        def replica_seen() -> dict:
            status, _, body = call(base, "GET", "/readyz")
            assert status == 200, body
            assert body["database"]["primary"] == f"127.0.0.1:{primary_port}"
            return body["database"]["replica"]

        wait_for(lambda: bio(None) == "" and replica_seen()["used"], timeout=30, what="the replica to have alice")

        # Replay paused: the replica stops where it is. Alice writes; she reads her write (the
        # primary), everyone else reads the replica's older profile.
        sql(replica_port, "SELECT pg_wal_replay_pause()")
        status, _, body = call(base, "PATCH", "/api/v1/me", {"bio": "first"}, token=tokens["alice"])
        assert status == 200, body
        for _ in range(5):
            assert bio("alice") == "first"
        time.sleep(0.5)  # every web process has probed the replica since the write
        for _ in range(5):
            assert bio("bob") == "" and bio(None) == ""
        seen = replica_seen()
        assert seen["status"] == "streaming" and 0 < seen["lag_bytes"] <= MAX_LAG, seen
        # Search too: alice's new board is found by her (the primary), not yet by bob (the replica).
        doc = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}
        status, _, body = call(
            base, "POST", "/api/v1/boards", {"title": "zebra", "kind": "note", "tags": [], "doc": doc}, tokens["alice"]
        )
        assert status == 201, body

        def found(reader: str) -> list:
            status, _, body = call(base, "GET", "/api/v1/search?q=zebra", token=tokens[reader])
            assert status == 200, body
            return [item["id"] for item in body["items"]]

        assert found("alice") == [body["id"]]
        time.sleep(0.5)
        assert found("bob") == []

        # Too far behind (3 MB of WAL it has not replayed): skipped, everyone reads the primary.
        sql(primary_port, "CREATE TABLE filler AS SELECT repeat('x', 1000) AS pad FROM generate_series(1, 3000)")
        wait_for(lambda: bio("bob") == "first", timeout=5, what="bob's read to leave the lagging replica")
        seen = replica_seen()
        assert seen["status"] == "behind" and seen["lag_bytes"] > MAX_LAG and not seen["used"], seen

        # Replay resumed: the replica catches up and serves again; the rule is the same.
        sql(replica_port, "SELECT pg_wal_replay_resume()")
        wait_for(lambda: replica_seen()["used"], timeout=30, what="the replica to catch up")
        sql(replica_port, "SELECT pg_wal_replay_pause()")
        assert call(base, "PATCH", "/api/v1/me", {"bio": "second"}, token=tokens["alice"])[0] == 200
        assert bio("alice") == "second"
        time.sleep(0.5)
        assert bio("bob") == "first" and bio(None) == "first"
        sql(replica_port, "SELECT pg_wal_replay_resume()")
        wait_for(lambda: bio("bob") == "second", timeout=30, what="the replica to replay the second write")
        assert bio("alice") == "second"

        # The replica down: skipped at once, never waited on; /readyz says so and stays 200.
        services("pg_stop", str(replica_dir))
        started = time.monotonic()
        for _ in range(5):
            assert bio("bob") == "second" and bio(None) == "second"
        assert time.monotonic() - started < 3, "reads waited on the stopped replica"
        seen = replica_seen()
        assert seen["status"].startswith("unreachable") and not seen["used"], seen
    finally:
        processes.stop()
        services("pg_stop", str(replica_dir))
        services("pg_stop", str(primary_dir))
        shutil.rmtree(pg_home, ignore_errors=True)
        get_redis().shutdown(nosave=True)
        get_redis.cache_clear()
