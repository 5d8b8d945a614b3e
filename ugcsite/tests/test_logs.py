"""Production settings (DJANGO_DEBUG=0) log one JSON object a line, each request with its id,
method, path, status and time; a line logged while serving a request names that request."""

import json
import logging
import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.db import connection

from ugcsite.platform.logs import JsonFormatter, RequestContextFilter

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import logging, django
django.setup()
from django.test import Client
client = Client()
print(client.get("/healthz")["X-Request-ID"])
print(client.get("/api/v1/boards/1", HTTP_X_REQUEST_ID="proxy-given.42")["X-Request-ID"])
print(client.get("/api/v1/feed", HTTP_X_REQUEST_ID="not a token {}")["X-Request-ID"])
try:
    1 / 0
except ZeroDivisionError:
    logging.getLogger("ugcsite.test").exception("outside any request: ünïcode")
"""


def test_production_logs_are_one_json_object_a_line_with_the_request(transactional_db):
    db = connection.settings_dict
    env = {
        "PATH": "/usr/bin:/bin",
        "DJANGO_SETTINGS_MODULE": "ugcsite.settings",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "s" * 60,
        "SITE_HTTPS": "0",
        "REDIS_URL": settings.REDIS_URL,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
    }
    env["REDIS_CLUSTER"] = "1" if settings.REDIS_CLUSTER else "0"
    env["CACHE_URL"] = settings.CACHES["default"]["LOCATION"]
    env["CELERY_BROKER_URL"] = settings.CELERY_BROKER_URL
    env["CHANNEL_LAYER_URL"] = settings.CHANNEL_LAYER_URL
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    ids = done.stdout.split()
    assert ids[1] == "proxy-given.42" and len(ids[0]) == 32 and len(ids[2]) == 32  # a bad one is replaced

    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines
    entries = [json.loads(line) for line in lines]  # every line is one JSON object
    for entry in entries:
        assert {"time", "level", "logger", "message"} <= entry.keys(), entry
        assert entry["time"].endswith("+00:00")
    requests = [e for e in entries if e["logger"] == "ugcsite.requests"]
    assert [(e["method"], e["path"], e["status"], e["request_id"]) for e in requests] == [
        ("GET", "/healthz", 200, ids[0]),
        ("GET", "/api/v1/boards/1", 404, ids[1]),
        ("GET", "/api/v1/feed", 401, ids[2]),
    ]
    assert all(e["duration_ms"] >= 0 for e in requests)
    # Django's own line about the 404 names the same request.
    assert any(
        e["logger"] == "django.request" and e.get("request_id") == ids[1] and e["path"] == "/api/v1/boards/1"
        for e in entries
    ), entries
    crash = next(e for e in entries if e["logger"] == "ugcsite.test")
    assert crash["level"] == "ERROR" and "ünïcode" in crash["message"] and "ZeroDivisionError" in crash["exception"]
    assert "request_id" not in crash


def test_django_s_line_about_a_refusal_keeps_its_sentence_and_loses_its_traceback():
    """A 403 page (PermissionDenied) or a 400 (BadRequest) is logged by Django with the whole
    traceback of the refusal; a 5xx keeps its traceback."""
    try:
        raise PermissionError("Only this board's author and the editors they invited can change its drawing.")
    except PermissionError:
        exc_info = sys.exc_info()
    lines = {}
    for status in (403, 400, 500):
        record = logging.LogRecord(
            "django.request", logging.WARNING, __file__, 1, "Refused: %s", ("/b/1/edit",), exc_info
        )
        record.status_code = status
        assert RequestContextFilter().filter(record)
        lines[status] = json.loads(JsonFormatter().format(record))
    assert lines[403]["message"] == lines[400]["message"] == "Refused: /b/1/edit"
    assert "exception" not in lines[403] and "exception" not in lines[400]
    assert "PermissionError" in lines[500]["exception"]


def test_a_task_that_met_an_outage_logs_a_line_without_its_traceback():
    """Celery's line about a task that failed because PostgreSQL or Redis was unreachable (a
    failover's seconds fill the worker's log with them) says so in one line at its level; a
    task's own bug, or a deadlock, keeps its traceback."""
    import psycopg
    from django.db import OperationalError
    from redis.exceptions import ConnectionError as RedisConnectionError

    def failure(make) -> dict:
        try:
            make()
        except Exception:
            exc_info = sys.exc_info()
        record = logging.LogRecord(
            "celery.app.trace",
            logging.ERROR,
            __file__,
            1,
            "Task %(name)s[%(id)s] raised unexpected: %(exc)s",
            {"name": "feeds.tasks.archive_run", "id": "42", "exc": repr(exc_info[1])},
            exc_info,
        )
        assert RequestContextFilter().filter(record)
        return json.loads(JsonFormatter().format(record))

    def unreachable():
        raise OperationalError("couldn't get a connection after 3.00 sec")

    def deadlock():
        try:
            raise psycopg.errors.DeadlockDetected("deadlock detected")
        except psycopg.Error as error:
            raise OperationalError(str(error)) from error

    def redis_down():
        raise RedisConnectionError("Error 111 connecting to 127.0.0.1:63790. Connection refused.")

    database, store = failure(unreachable), failure(redis_down)
    assert "exception" not in database and "exception" not in store
    assert database["level"] == store["level"] == "ERROR"
    assert database["message"].startswith("Task feeds.tasks.archive_run[42] raised unexpected: OperationalError")
    assert database["message"].endswith("(the database was unreachable)")
    assert store["message"].endswith("(the data store (Redis) was unreachable)")
    assert "DeadlockDetected" in failure(deadlock)["exception"]
    assert "ZeroDivisionError" in failure(lambda: 1 / 0)["exception"]
