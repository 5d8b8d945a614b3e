"""Two `make run`s side by side (issue 37, item 4): scripts/run.sh started twice at once, each with
a var/ of its own and only PORT apart, chooses its servers' ports without the other's (the
defaults of scripts/ports.env for the first to take them, free ones for the other), keeps them in
its var/ports.env, and both sites serve their own demo world. About a minute; the plain pass
only (make run's own servers: nothing of the cluster)."""

import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings

from ugcsite.serving import free_port

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 300  # two sites migrating and seeding at once on two shared cores
SERVER_VARIABLES = (
    "DATABASE_URL",
    "REDIS_URL",
    "REDIS_CLUSTER",
    "REDIS_CLUSTER_PORTS",
    "PLAIN_REDIS_URL",
    "CELERY_BROKER_URL",
    "CACHE_URL",
    "CHANNEL_LAYER_URL",
    "EMAIL_HOST",
    "EMAIL_PORT",
    "MAIL_DIR",
    "REDIS_PORT",
)

pytestmark = pytest.mark.skipif(settings.REDIS_CLUSTER, reason="make run's own servers: the plain pass covers it")


def ports_of(folder: Path) -> dict[str, int]:
    """The ports of a ports.env (a var/'s, or scripts/'s defaults)."""
    lines = (folder / "ports.env").read_text().splitlines()
    return {
        name: int(port) for name, _, port in (line.partition("=") for line in lines if "=" in line and line[0] != "#")
    }


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture
def folder():
    """A folder PostgreSQL's own user can reach (pytest's tmp_path is root's alone)."""
    path = Path(tempfile.mkdtemp(prefix="ugcsite-two-sites."))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_two_sites_run_side_by_side_with_only_port_apart(folder):
    tmp_path = folder
    env = {name: value for name, value in os.environ.items() if name not in SERVER_VARIABLES}
    sites = []
    for name in ("a", "b"):
        var, port = tmp_path / name, free_port()
        var.mkdir()
        log = (tmp_path / f"{name}.log").open("w")
        process = subprocess.Popen(
            ["scripts/run.sh"],
            cwd=ROOT,
            env={**env, "PORT": str(port), "UGC_VAR": str(var), "STATIC_ROOT": str(var / "static")},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped whole, as Ctrl-C stops make run
        )
        sites.append((name, var, port, process))
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        for name, _, port, process in sites:
            while not answers(f"http://127.0.0.1:{port}/healthz"):
                assert process.poll() is None, f"site {name} stopped: {(tmp_path / f'{name}.log').read_text()[-3000:]}"
                assert time.monotonic() < deadline, (
                    f"site {name} did not answer: {(tmp_path / f'{name}.log').read_text()[-3000:]}"
                )
                time.sleep(1)
        a, b = ports_of(sites[0][1]), ports_of(sites[1][1])
        assert a.keys() == b.keys() == ports_of(ROOT / "scripts").keys() >= {"PG_PORT", "REDIS_PORT", "BROKER_PORT"}
        assert not set(a.values()) & set(b.values())  # no server shared
        for _, _, port, _ in sites:
            assert answers(f"http://127.0.0.1:{port}/api/v1/users/alice")  # each its own demo world
    finally:
        for _, _, _, process in sites:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGINT)
        for _, _, _, process in sites:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
    # Ctrl-C stopped every server each started: make run without PG_REPLICAS or PG_HA starts
    # PostgreSQL, the two Redis and the mail catcher. The replica's and Patroni's ports are only
    # claimed (another test's Patroni, just stopped, may still hold one of them for a moment).
    started = ("PG_PORT", "REDIS_PORT", "BROKER_PORT", "MAIL_PORT")
    for name, var, _, _ in sites:
        for variable, port in ports_of(var).items():
            if variable in started:
                assert port_is_free(port), f"site {name} left a server on port {port} ({variable})"


def port_is_free(port: int) -> bool:
    probe = subprocess.run(
        ["bash", "-c", f'source scripts/services.sh && port_is_free "{port}"'], cwd=ROOT, check=False
    )
    return probe.returncode == 0
