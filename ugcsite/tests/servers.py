"""Real processes for the fault tests: a data Redis started (and killed, and started again) the
way `make run` starts it (scripts/services.sh), the site as `make run` serves it (scripts/serve.sh) and a Celery worker on the
test database, and an HTTP client that never raises on an error status."""

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.db import connection

from ugcsite.celery import app
from ugcsite.serving import Site, worker_command

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def services(function: str, *args: str) -> None:
    """Run a function of scripts/services.sh or scripts/pg-ha.sh (redis_start, pg_start,
    pg_replica_start, ...), as make run does."""
    subprocess.run(
        [
            "bash",
            "-c",
            f'source scripts/services.sh; source scripts/pg-ha.sh; ensure_postgres; {function} "$@"',
            "_",
            *args,
        ],
        cwd=ROOT,
        check=True,
        timeout=120,
    )


def redis_kill(directory: Path) -> None:
    """kill -9 the Redis kept in ``directory``, and wait until it is gone."""
    pid = int((directory / "redis.pid").read_text())
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and "Z" not in _state(pid):
        assert time.monotonic() < deadline, "Redis did not die"
        time.sleep(0.02)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def call(base: str, method: str, path: str, body=None, token: str | None = None, timeout: float = 15):
    """(status, headers, parsed JSON body or None)."""
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, head, raw = response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        status, head, raw = error.code, dict(error.headers), error.read()
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = None
    return status, head, parsed


def base_env(**more: str) -> dict:
    """The environment of a process on the test database (committed data: transactional_db)."""
    db = connection.settings_dict
    env = dict(
        os.environ,
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        RATE_LIMIT_AUTH_PER_MINUTE="0",
        RATE_LIMIT_WRITES_PER_MINUTE="0",
        RATE_LIMIT_WRITES_PER_ADDRESS_PER_MINUTE="0",
        RATE_LIMIT_READS_PER_MINUTE="0",
        RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE="0",
    )
    env.update(more)
    return env


class Processes:
    """Started processes, stopped (TERM, then KILL) in reverse order at the end."""

    def __init__(self, log_dir: Path):
        self.log_dir = log_dir
        self.started: list[subprocess.Popen] = []
        self.sites: list[Site] = []

    def start(self, name: str, argv: list[str], env: dict) -> subprocess.Popen:
        log = open(self.log_dir / f"{name}.log", "w")
        process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        self.started.append(process)
        return process

    def web(self, env: dict) -> str:
        """The site as `make run` serves it (scripts/serve.sh: nginx, the web and live servers; not
        its Celery worker and beat) on a free port; returns its base URL once it answers."""
        run_dir = self.log_dir / "site"
        site = Site(run_dir, {**env, "SERVE_TASKS": "0", "STATIC_ROOT": str(run_dir / "static")})
        site.collect_static()
        try:
            site.start()
        except RuntimeError as error:
            pytest.fail(str(error))
        self.sites.append(site)
        return site.url

    def worker(self, env: dict, queue: str) -> subprocess.Popen:
        """A Celery worker (solo pool) taking only ``queue``; returns once it answers a ping."""
        name = f"{queue}-{os.getpid()}@localhost"
        process = self.start(
            "worker",
            worker_command(name, "--pool=solo", "-Q", queue, loglevel="info"),
            dict(env, CELERY_QUEUE=queue),
        )
        deadline = time.monotonic() + 60
        while not app.control.ping(destination=[name], timeout=0.5):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the Celery worker did not start; see {self.log_dir / 'worker.log'}")
        return process

    def stop(self) -> None:
        for site in self.sites:
            site.stop()
        for process in reversed(self.started):
            if process.poll() is None:
                process.terminate()
        for process in reversed(self.started):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
