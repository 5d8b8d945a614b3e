"""PostgreSQL's backups at the benchmark's 10^6 boards (make bench-pg): a cluster of its own that
archives its WAL to a pgBackRest repository in a temp folder (scripts/pg-backup.sh start, as make
run sets it up), the benchmark's world bulk-loaded into it (20,000 people, 10^6 boards), then, each
timed by scripts/pg-backup.sh as make backup and make restore run it: a full backup, 10,000 more
boards and a differential backup, and a restore to a moment after it with Redis rebuilt from the
restored tables (the data Redis of make bench's throwaway servers). bench/results/pg-backup.md.

    python -m bench.capacity.pg_backup [--boards N]   (under scripts/with-servers.sh)
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.harness.report import ROOT, measured

SCRIPT = str(ROOT / "scripts" / "pg-backup.sh")
RESULTS = ROOT / "bench" / "results" / "pg-backup.md"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def script(env: dict, *args: str) -> tuple[float, str]:
    """scripts/pg-backup.sh ARGS, its output shown as it comes; (seconds, output)."""
    started = time.monotonic()
    process = subprocess.Popen(
        [SCRIPT, *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines = []
    for line in process.stdout:
        print(line, end="", flush=True)
        lines.append(line)
    if process.wait():
        sys.exit(f"pg-backup.sh {' '.join(args)} failed (above).")
    return time.monotonic() - started, "".join(lines)


def seconds_in(output: str, pattern: str) -> str:
    found = re.search(pattern, output)
    return f"{found.group(1)} s" if found else "?"


def repo_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--boards", type=int, default=1_000_000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="ugcsite-bench-pg-", dir="/tmp"))
    folder.chmod(0o755)
    port = free_port()
    env = dict(
        os.environ,
        PG_DATA=str(folder / "pg"),
        PG_PORT=str(port),
        PG_BACKUP_DIR=str(folder / "pgbackrest"),
        DATABASE_URL=f"postgres://ugcsite@127.0.0.1:{port}/ugcsite",
        RUN_DIR=str(folder / "run"),
    )
    try:
        script(env, "start")
        os.environ["DATABASE_URL"] = env["DATABASE_URL"]
        # Django and the world are imported only now: the settings read DATABASE_URL at import.
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection

        from bench.harness import world as worldmod

        call_command("migrate", verbosity=0)
        world = worldmod.World(seed=2026, users=20_000)
        load_started = time.monotonic()
        worldmod.build_people(world)
        worldmod.grow_boards(world, args.boards)
        load = time.monotonic() - load_started
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_database_size('ugcsite')")
            database = cursor.fetchone()[0]
        connection.close()
        full, full_out = script(env, "backup", "full")
        full_repo = repo_size(folder / "pgbackrest" / "repo")
        worldmod.grow_boards(world, args.boards + 10_000)
        connection.close()
        diff, diff_out = script(env, "backup", "diff")
        time.sleep(1.5)
        moment = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f+00")
        time.sleep(1.5)
        restore, restore_out = script(env, "restore", moment)
        info = json.loads(
            subprocess.run(
                [
                    "bash",
                    "-c",
                    "source scripts/services.sh; source scripts/pg-backup.sh; "
                    'pg_backup_prepare "$PG_DATA" "$PG_PORT" >/dev/null; pgbr_info_json',
                ],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        backups = {backup["label"]: backup for backup in info[0]["backup"]}
        full_label, diff_label = (re.search(r"Took in \d+ s: (\S+)", out).group(1) for out in (full_out, diff_out))
        rows = [
            ("database", f"{database / 2**20:,.0f} MB ({args.boards:,} boards, 20,000 people; bulk load {load:.0f} s)"),
            (
                "full backup",
                f"{full:.1f} s (`make backup`); {backups[full_label]['info']['repository']['delta'] / 2**20:,.0f} MB in the repository (zstd), repository {full_repo / 2**20:,.0f} MB with the WAL",
            ),
            (
                "differential backup after 10,000 more boards",
                f"{diff:.1f} s; {backups[diff_label]['info']['repository']['delta'] / 2**20:,.1f} MB",
            ),
            ("restore to a moment after it, end to end (`make restore`)", f"{restore:.1f} s"),
            ("  archive the last WAL", seconds_in(restore_out, r"Archived the last commits \((\d+) s\)")),
            ("  restore, replay and promote", seconds_in(restore_out, r"restored and promoted in (\d+) s")),
            ("  rebuild_redis", seconds_in(restore_out, r"Rebuilt in (\d+) s")),
            ("  the new full backup", seconds_in(restore_out, r"Took in (\d+) s")),
        ]
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        measured(
            RESULTS,
            [
                f"# PostgreSQL backups at {args.boards:,} boards ({when}, make bench-pg)",
                "",
                "pgBackRest 2.45, zstd, process-max 2, on this machine's shared cores; a cluster of its own with",
                "WAL archiving (scripts/pg-backup.sh start), the world bulk-loaded by bench/harness/world.py.",
            ],
            rows,
        )
    finally:
        subprocess.run([SCRIPT, "stop"], cwd=ROOT, env=env, timeout=120)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
