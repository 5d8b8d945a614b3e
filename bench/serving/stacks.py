"""`make bench-serving`: the serving stacks `scripts/serve.sh` can start, measured in one run on
one world, each started through that script with make run's settings and sizes (3 HTTP
processes, 1 live process): which one `make run` ships is chosen from this table.

    make bench-serving                  # about 10 minutes: bench/results/serving.md
    make bench-serving ARGS="--seconds 5 --boards 5000"   # a quick look

Each stack is measured under wrk on loopback (2 threads, 8 connections; 32 for the feed too):
- the trivial view (GET /api/v1/health: the framework and server alone),
- the feed (GET /api/v1/feed of a reader following 500: Redis, no PostgreSQL once warm),
- a profile (GET /api/v1/users/{name}: one PostgreSQL read a request, through the pool),
and it must keep the live boards working: a WebSocket on /ws/me says hello with a token.

The connection pool is compared the same way: Django's psycopg pool in each process (shipped)
against PgBouncer (transaction pooling, started here) with a connection a request and no pool.
"""

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import django

from bench.harness.report import ROOT

RESULTS = ROOT / "bench" / "results"

# (name, environment of scripts/serve.sh). The first is what make run ships.
STACKS = (
    (
        "nginx -> gunicorn (HTTP) + uvicorn (/ws/), psycopg pool [shipped]",
        {"WEB_STACK": "split", "WSGI_SERVER": "gunicorn"},
    ),
    ("nginx -> gunicorn, 2 HTTP processes", {"WEB_STACK": "split", "WSGI_SERVER": "gunicorn", "WEB_WORKERS": "2"}),
    ("nginx -> granian WSGI (HTTP) + uvicorn (/ws/), psycopg pool", {"WEB_STACK": "split", "WSGI_SERVER": "granian"}),
    ("nginx -> granian WSGI, 2 HTTP processes", {"WEB_STACK": "split", "WSGI_SERVER": "granian", "WEB_WORKERS": "2"}),
    (
        "nginx -> gunicorn + uvicorn, PgBouncer, no pool in Django",
        {"WEB_STACK": "split", "WSGI_SERVER": "gunicorn", "DATABASE_POOL_SIZE": "0", "PGBOUNCER": "1"},
    ),
    ("uvicorn ASGI alone (before), psycopg pool", {"WEB_STACK": "uvicorn"}),
    ("granian ASGI alone, psycopg pool", {"WEB_STACK": "granian"}),
)
BEFORE = next(stack for stack in STACKS if "(before)" in stack[0])  # how make run served the site until now
ROWS = ("trivial view", "feed", "feed, 32 connections", "profile (PostgreSQL)")
RAISED = dict.fromkeys(("RATE_LIMIT_READS_PER_MINUTE", "RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE"), "1000000000")


def wrk_ms(text: str) -> float:
    value, unit = float(re.match(r"[\d.]+", text).group()), re.search(r"[a-z]+$", text).group()
    return value * {"us": 0.001, "ms": 1, "s": 1000}[unit]


def wrk(url: str, *, seconds: int, connections: int = 8, headers: dict | None = None) -> dict:
    """wrk -t2 against ``url``: requests/s, p50 and p99 in ms, and the answers that were not 2xx/3xx."""
    flags = [arg for name, value in (headers or {}).items() for arg in ("-H", f"{name}: {value}")]
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", *flags, url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: (.*)", out)
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50": wrk_ms(re.search(r"\s50%\s+([\d.]+\w+)", out).group(1)),
        "p99": wrk_ms(re.search(r"\s99%\s+([\d.]+\w+)", out).group(1)),
        "errors": int(errors.group(1)) if errors else 0,
        "socket_errors": socket_errors.group(1) if socket_errors else "",
    }


def live_says_hello(ws_url: str, token: str) -> bool:
    from websockets.sync.client import connect

    with connect(f"{ws_url}/ws/me", additional_headers={"Authorization": f"Bearer {token}"}, open_timeout=10) as socket:
        return json.loads(socket.recv(timeout=10)).get("type") == "hello"


class PgBouncer:
    """A PgBouncer in front of the benchmark's PostgreSQL: transaction pooling, its server pool as
    large as the site's budget, any number of clients."""

    def __init__(self, run_dir: Path, database_url: str, pool_size: int):
        from urllib.parse import urlsplit

        from ugcsite.serving import free_port

        target = urlsplit(database_url)
        self.port = free_port()
        self.dir = run_dir
        (run_dir / "pgbouncer.ini").write_text(
            f"[databases]\n{target.path.lstrip('/')} = host={target.hostname} port={target.port}\n"
            f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {self.port}\nauth_type = trust\n"
            f"auth_file = {run_dir / 'users.txt'}\npool_mode = transaction\ndefault_pool_size = {pool_size}\n"
            f"max_client_conn = 2000\nlogfile = {run_dir / 'pgbouncer.log'}\npidfile = {run_dir / 'pgbouncer.pid'}\n"
            f"unix_socket_dir =\nignore_startup_parameters = extra_float_digits,options\n"
        )
        (run_dir / "users.txt").write_text(f'"{target.username}" ""\n')
        self.url = database_url.replace(f"{target.hostname}:{target.port}", f"127.0.0.1:{self.port}")
        user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if user:
            shutil.chown(run_dir, "postgres")
        self.process = subprocess.Popen(
            [*user, "pgbouncer", str(run_dir / "pgbouncer.ini")], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
        )
        time.sleep(1)
        if self.process.poll() is not None:
            raise SystemExit(f"PgBouncer did not start; see {run_dir / 'pgbouncer.log'}")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=20)


def world(boards: int) -> dict:
    from django.core.management import call_command

    from bench.harness.world import World, activate, build_people, build_redis, grow_boards
    from social import tokens
    from social.models import User

    call_command("migrate", verbosity=0)
    w = World(seed=11, users=5000)
    build_people(w)
    grow_boards(w, boards)
    build_redis(w)
    activate(w.user_ids)
    reader = User.objects.get(pk=w.special["reader500"])
    return {"token": tokens.token_create(user=reader), "someone": User.objects.get(pk=w.user_ids[1]).username}


def measure(name: str, overrides: dict, *, token: str, someone: str, seconds: int, run_dir: Path) -> dict:
    from ugcsite.serving import Site, connection_budget

    env = {
        **os.environ,
        "DJANGO_DEBUG": "0",
        "SITE_HTTPS": "0",
        "DJANGO_SECRET_KEY": "bench-" + "s" * 50,
        "STATIC_ROOT": str(run_dir / "static"),
        "SERVE_TASKS": "0",
        **RAISED,
        **{k: v for k, v in overrides.items() if k != "PGBOUNCER"},
    }
    bouncer = None
    if overrides.get("PGBOUNCER"):
        bouncer = PgBouncer(
            Path(tempfile.mkdtemp(prefix="pgbouncer.", dir=run_dir)), os.environ["DATABASE_URL"], connection_budget()
        )
        env["DATABASE_URL"] = bouncer.url
    site = Site(run_dir / f"site-{len(list(run_dir.glob('site-*')))}", env)
    if not (run_dir / "static").exists():
        site.collect_static()
    print(f"\n{name}", flush=True)
    site.start()
    try:
        auth = {"Authorization": f"Bearer {token}"}
        figures = {"live": live_says_hello(site.ws, token)}
        for label, (path, headers, connections) in zip(
            ROWS,
            (
                ("/api/v1/health", None, 8),
                ("/api/v1/feed", auth, 8),
                ("/api/v1/feed", auth, 32),
                (f"/api/v1/users/{someone}", None, 8),
            ),
        ):
            wrk(site.url + path, seconds=2, connections=connections, headers=headers)  # warm
            figures[label] = wrk(site.url + path, seconds=seconds, connections=connections, headers=headers)
            f = figures[label]
            print(
                f"  {label:<22} {f['rps']:>8,.0f} req/s  p50 {f['p50']:6.2f} ms  p99 {f['p99']:6.2f} ms"
                + (f"  {f['errors']} errors" if f["errors"] else "")
                + (f"  socket: {f['socket_errors']}" if f["socket_errors"] else ""),
                flush=True,
            )
        print(f"  live boards: /ws/me {'says hello' if figures['live'] else 'FAILED'}", flush=True)
        return figures
    finally:
        site.stop()
        if bouncer:
            bouncer.stop()


def report(results: dict, *, seconds: int, boards: int, minutes: float) -> str:
    shipped, before = next(iter(results)), next(name for name in results if "(before)" in name)
    lines = [
        "# Serving stacks, measured in one run",
        "",
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.node()}: {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; `make bench-serving` ({seconds} s a row, {boards:,} boards, 5,000 people), "
        f"{minutes:.1f} minutes. Each stack started by scripts/serve.sh with make run's settings and sizes "
        "(3 HTTP processes, 1 live process); wrk -t2 on the same 2 cores. req/s, then p50 / p99 in ms.",
        "",
        "| stack | trivial view | feed (c8) | feed (c32) | profile, PostgreSQL (c8) | feed / trivial | feed / uvicorn before | /ws/me |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, f in results.items():

        def cell(row, f=f):
            r = f[row]
            return f"{r['rps']:,.0f} ({r['p50']:.1f} / {r['p99']:.1f})" + (
                f", {r['errors']} errors" if r["errors"] else ""
            )

        lines.append(
            f"| {name} | {cell('trivial view')} | {cell('feed')} | {cell('feed, 32 connections')} | "
            f"{cell('profile (PostgreSQL)')} | {f['feed']['rps'] / f['trivial view']['rps']:.2f} | "
            f"{f['feed']['rps'] / results[before]['feed']['rps']:.2f}x | {'hello' if f['live'] else 'FAILED'} |"
        )
    s, b = results[shipped], results[before]
    lines += [
        "",
        f"Targets (issue: serving): the feed through the shipped stack at least 0.8 of a trivial view on the same "
        f"server: **{s['feed']['rps'] / s['trivial view']['rps']:.2f}**; at least 1.5x uvicorn's feed before: "
        f"**{s['feed']['rps'] / b['feed']['rps']:.2f}x** ({s['feed']['rps']:,.0f} against {b['feed']['rps']:,.0f} req/s).",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=15, help="wrk's run for each row (15)")
    parser.add_argument("--boards", type=int, default=100_000, help="boards in the world (100,000)")
    parser.add_argument("--only", default="", help="measure only stacks whose name contains this")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    django.setup()
    from bench.harness.report import ensure_tool

    if (
        not ensure_tool("wrk", "wrk")
        or not ensure_tool("nginx", "nginx-light")
        or not ensure_tool("pgbouncer", "pgbouncer")
    ):
        raise SystemExit("error: wrk, nginx and pgbouncer are needed; install them and run again.")
    started = time.monotonic()
    w = world(args.boards)
    run_dir = Path(tempfile.mkdtemp(prefix="ugcsite-serving."))
    run_dir.chmod(0o755)
    results = {}
    try:
        for name, overrides in STACKS:
            if args.only and args.only not in name and "(before)" not in name and "[shipped]" not in name:
                continue
            results[name] = measure(
                name, overrides, token=w["token"], someone=w["someone"], seconds=args.seconds, run_dir=run_dir
            )
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    text = report(results, seconds=args.seconds, boards=args.boards, minutes=(time.monotonic() - started) / 60)
    print("\n" + text)
    name = "serving.md" if args.seconds >= 15 else "serving-short.md"
    (RESULTS / name).write_text(text + "\n")
    print(f"\nwritten to bench/results/{name}")


if __name__ == "__main__":
    main()
