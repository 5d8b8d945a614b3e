"""Test fixtures shared by every app: real PostgreSQL (pytest-django's test database), real Redis
(the data database flushed around each test), and a real Celery worker process on demand.

`make test` starts throwaway servers and points DATABASE_URL / REDIS_URL at them.
"""

import os
import subprocess
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management.base import CommandError
from django.db.utils import OperationalError
from django.test import TransactionTestCase

from feeds.services import activity
from ugcsite.platform.redis import get_redis
from ugcsite.serving import Site, worker_command
from ugcsite.testing import ApiClient

ROOT = Path(__file__).resolve().parent


@pytest.fixture(scope="session", autouse=True)
def _flush_retries_a_deadlock():
    """A committed test's teardown empties the database with one TRUNCATE of every table. A task the
    session's Celery worker or ASGI server is still running for an earlier step (a live board's
    compaction once its last editor left, a fan-out) can hold row locks on some of those tables and
    wait for another, and PostgreSQL then ends one side as a deadlock; when that side is the
    TRUNCATE, the next test would start on the last one's rows. The other side finishes, so the
    flush is tried again."""
    teardown = TransactionTestCase._fixture_teardown

    def patient_teardown(self):
        for attempt in range(5):
            try:
                return teardown(self)
            except CommandError as error:
                if attempt == 4 or not isinstance(error.__cause__, OperationalError):
                    raise
                time.sleep(0.5)

    TransactionTestCase._fixture_teardown = patient_teardown
    yield
    TransactionTestCase._fixture_teardown = teardown


@pytest.fixture(autouse=True)
def redis_data():
    """The data Redis, empty at the start and end of every test (its own database, never the broker's)."""
    client = get_redis()
    client.flushdb()
    yield client
    client.flushdb()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """PBKDF2's cost is for attackers, not for the hundreds of test accounts."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fresh_activity():
    """Each test starts with no user recorded active in this process (feeds.services.activity.user_seen
    throttles per process)."""
    activity._seen.clear()
    yield
    activity._seen.clear()


@pytest.fixture(autouse=True)
def _fresh_cache():
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture
def api(client):
    """An anonymous JSON client; ``api.as_user("alice")`` gives a signed-in one."""
    return ApiClient(client)


@pytest.fixture
def eager_tasks():
    """Run Celery tasks in-process for this test only (pair with django_capture_on_commit_callbacks)."""
    from ugcsite.celery import app

    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager = False
    app.conf.task_eager_propagates = False


@pytest.fixture
def run(django_capture_on_commit_callbacks, eager_tasks):
    """``run(fn, *args, **kwargs)``: call a write (a service, or an API client method) and run its
    on-commit work, and the tasks that enqueues, in-process at once."""

    def call(fn, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return fn(*args, **kwargs)

    return call


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker):
    """A real `celery -A ugcsite worker` process on the test database and test Redis."""
    from ugcsite.celery import app

    db = settings.DATABASES["default"]
    env = dict(os.environ)
    env["DATABASE_URL"] = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    env["FANOUT_BATCH_SIZE"] = "2"  # so that tests see fan-out chain across several tasks
    app.control.purge()
    log = (
        open(ROOT / ".pytest_cache" / "celery-worker.log", "w")
        if (ROOT / ".pytest_cache").exists()
        else subprocess.DEVNULL
    )
    process = subprocess.Popen(
        worker_command(f"test-{os.getpid()}@%h", "--pool=solo", loglevel="info"),
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while not app.control.ping(timeout=0.5):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail("The Celery worker did not start; see .pytest_cache/celery-worker.log")
    yield process
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture
def celery_worker(celery_worker_process, transactional_db):
    """Use in tests whose tasks must run in the real worker; the database is committed for real."""
    return celery_worker_process


def site_env(**more: str) -> dict:
    """The environment of a process of the site on the test database and Redis, with make run's
    settings (DEBUG off, plain HTTP) and the secret key of the tests (their sessions sign in there too)."""
    db = settings.DATABASES["default"]
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "DJANGO_DEBUG": "0",
        "SITE_HTTPS": "0",
        "DJANGO_SECRET_KEY": settings.SECRET_KEY,
        **more,
    }


@pytest.fixture(scope="session")
def asgi_server_process(django_db_setup, django_db_blocker, tmp_path_factory):
    """The site as `make run` serves it (scripts/serve.sh: nginx in front of the web server and the
    live server, make run's settings) on the test database and Redis, on a free port, without
    Celery's worker and beat (the tests run their own): ``.url`` (http://...), ``.ws`` (ws://...),
    ``.restart()`` kills every process (SIGKILL) and starts the site again on the same port."""
    run_dir = tmp_path_factory.mktemp("site")
    server = Site(run_dir, site_env(SERVE_TASKS="0", STATIC_ROOT=str(run_dir / "static")))
    server.collect_static()
    try:
        server.start()
    except RuntimeError as error:
        pytest.fail(str(error))
    yield server
    server.stop()
    (ROOT / "test-artifacts").mkdir(exist_ok=True)
    (ROOT / "test-artifacts" / "site.log").write_bytes(server.log_path.read_bytes())


@pytest.fixture
def asgi_server(asgi_server_process, transactional_db):
    """Use in tests that talk to the real ASGI server; the database is committed for real."""
    return asgi_server_process
