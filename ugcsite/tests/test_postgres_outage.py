"""PostgreSQL stopped and started again under a real gunicorn (production settings) and a real
Celery worker, neither restarted: a warm feed still answers from Redis, writes answer 503 with
Retry-After and a detail, nothing is half-written (no board in Redis without its row, or the
reverse), and the first write after the restart succeeds (Django reconnects by itself).

The PostgreSQL is a throwaway one of this test (the suite's stays up), made as `make run` makes
its own (scripts/services.sh pg_start) and migrated; the data Redis too."""

import shutil
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest
from django.conf import settings as django_settings

from feeds import keys
from ugcsite.platform.redis import get_redis
from ugcsite.testing import wait_for
from ugcsite.tests.servers import Processes, base_env, call, free_port, services

QUEUE = "pg-outage"
DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}
pytestmark = [
    pytest.mark.worker,
    pytest.mark.skipif(
        django_settings.REDIS_CLUSTER,
        reason="PostgreSQL's outage does not depend on the Redis: runs once, in the plain run",
    ),
]


def post(base: str, token: str, title: str):
    return call(base, "POST", "/api/v1/boards", {"title": title, "kind": "note", "tags": [], "doc": DOC}, token)


def assert_503(answer, what: str) -> None:
    status, headers, body = answer
    assert status == 503, f"{what}: {status} {body}"
    assert int(headers["Retry-After"]) > 0, what
    assert "database" in body["detail"], (what, body)


def test_warm_feeds_serve_writes_503_and_the_site_recovers_after_postgres_restarts(
    transactional_db, settings, tmp_path
):
    # PostgreSQL runs as its own user when the tests run as root: a folder it can reach.
    pg_home = Path(tempfile.mkdtemp(prefix="ugcsite-pg-outage."))
    pg_home.chmod(0o755)
    pg_dir, pg_port, redis_dir, redis_port = pg_home / "pg", free_port(), tmp_path / "redis", free_port()
    services("pg_start", str(pg_dir), str(pg_port), "fast")
    services("redis_start", str(redis_dir), str(redis_port), "ephemeral")
    dsn = f"postgres://ugcsite@127.0.0.1:{pg_port}/ugcsite"

    def sql(query: str, *args):
        with psycopg.connect(dsn.replace("postgres://", "postgresql://")) as db:
            return db.execute(query, args).fetchall()

    settings.REDIS_URL, settings.REDIS_CLUSTER = f"redis://127.0.0.1:{redis_port}/0", False
    get_redis.cache_clear()
    processes = Processes(tmp_path)
    try:
        # Production settings, and connections kept between requests (CONN_MAX_AGE 60 with
        # health checks), as make run has them: the kept connection is the one that breaks.
        env = base_env(
            DATABASE_URL=dsn,
            DATABASE_CONN_MAX_AGE="60",
            REDIS_URL=settings.REDIS_URL,
            REDIS_CLUSTER="0",
            DJANGO_DEBUG="0",
            SITE_HTTPS="0",
            DJANGO_SECRET_KEY="k" * 60,
            CELERY_QUEUE=QUEUE,
        )
        assert (
            processes.start("migrate", [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], env).wait(
                timeout=120
            )
            == 0
        )
        base = processes.web(env)
        processes.worker(env, QUEUE)
        tokens = {}
        for name in ("author", "reader"):
            assert call(base, "POST", "/api/v1/users", {"username": name, "password": "long-enough"})[0] == 201
            tokens[name] = call(base, "POST", "/api/v1/tokens", {"username": name, "password": "long-enough"})[2][
                "token"
            ]
        assert call(base, "PUT", "/api/v1/users/author/follow", token=tokens["reader"])[0] == 204
        posted = [post(base, tokens["author"], f"before {i}")[2]["id"] for i in range(3)]

        def feed_ids():
            status, _, body = call(base, "GET", "/api/v1/feed", token=tokens["reader"])
            return [item["id"] for item in body["items"]] if status == 200 else (status, body)

        wait_for(lambda: feed_ids() == posted[::-1], timeout=30, what="the reader's feed (warm)")

        services("pg_stop", str(pg_dir))
        # Warm reads answer from Redis alone: the token (cached), the caller (by id), P and G.
        for _ in range(3):
            assert feed_ids() == posted[::-1]
        status, _, body = call(base, "GET", f"/api/v1/boards/{posted[0]}")
        assert status in (200, 503), body
        # Writes: 503 with Retry-After and a detail, never a 500.
        assert_503(post(base, tokens["author"], "while down"), "a post")
        assert_503(call(base, "PUT", "/api/v1/users/reader/follow", token=tokens["author"]), "a follow")
        assert_503(call(base, "POST", "/api/v1/users", {"username": "zoe", "password": "long-enough"}), "a sign-up")
        assert_503(call(base, "PATCH", "/api/v1/me", {"bio": "down"}, token=tokens["reader"]), "a profile change")
        assert_503(call(base, "DELETE", f"/api/v1/boards/{posted[0]}", token=tokens["author"]), "a delete")

        services("pg_start", str(pg_dir), str(pg_port), "fast")
        # The first write after the restart succeeds: the broken kept connections were dropped.
        status, _, body = post(base, tokens["author"], "after")
        assert status == 201, body
        posted.append(body["id"])
        wait_for(
            lambda: feed_ids() == posted[::-1], timeout=30, what="the new board in the feed (the worker reconnects)"
        )
        assert call(base, "GET", "/api/v1/users/zoe")[0] == 404  # the refused sign-up left nothing
        wait_for(
            lambda: sql("SELECT count(*) FROM feeds_outbox")[0][0] == 0,
            timeout=30,
            what="the outbox emptied (every fan-out done)",
        )

        # Nothing half-written: the boards in PostgreSQL are those in Redis (M, G, P), and no other.
        rows = {row[0] for row in sql("SELECT id FROM feeds_board")}
        (author_id,), (reader_id,) = (
            sql("SELECT id FROM social_user WHERE username = %s", name)[0] for name in ("author", "reader")
        )
        redis = get_redis()
        in_m = {int(member) for member in redis.zrange(keys.profile_timeline(author_id), 0, -1)}
        in_p = {int(member) for member in redis.zrange(keys.home_timeline(reader_id), 0, -1)}
        cached = {board_id for board_id in rows | in_m | in_p if redis.exists(keys.board(board_id))}
        assert rows == in_m == in_p == set(posted)
        assert cached <= rows
    finally:
        processes.stop()
        services("pg_stop", str(pg_dir))
        shutil.rmtree(pg_home, ignore_errors=True)
        get_redis().shutdown(nosave=True)
        get_redis.cache_clear()
