"""Search on a streaming replica (make bench-replica): does a replica add search capacity, and how
far behind the primary does it fall under writes? docs/capacity.md names streaming replicas as the
remedy of search's wall (searches are CPU-bound reads), and ugcsite.platform.replicas routes
search to one; this measures the database tier itself.

A primary (scripts/services.sh pg_start) with the benchmark's world bulk-loaded (20,000 people,
``--boards`` boards) and a streaming replica made from it (scripts/pg-ha.sh pg_replica_start, as
``PG_REPLICAS=1 make run`` makes it). The searches are the SQL the site itself runs for the
shapes of bench/search/shapes.py, captured from feeds.selectors.search and replayed by pgbench
(C, a few percent of a core), so the client does not take the cores it measures.

- **Throughput.** The primary alone, pinned to one core (taskset), against the primary and the
  replica each pinned to a core of their own, both searched at once: the same load per server.
  One core a server stands for "each replica brings its own cores" on this 2-core machine.
- **Lag.** The primary takes ``--writes`` board updates a second (pgbench --rate) while the
  replica serves searches; the replica's replay lag (pg_stat_replication on the primary: bytes
  and time) is read every 0.2 s.

    python -m bench.capacity.replica [--boards N] [--seconds S] [--clients C] [--writes W]
    (under scripts/with-servers.sh, for the data Redis the world fills; make bench-replica)
bench/results/replica.md.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.capacity.pg_backup import free_port
from bench.harness.report import ROOT, measured

RESULTS = ROOT / "bench" / "results" / "replica.md"
PG_BIN = os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin")


def shell(script: str, env: dict) -> None:
    """Run ``script`` with scripts/services.sh and scripts/pg-ha.sh loaded, as make run does."""
    subprocess.run(
        ["bash", "-c", f"set -e; source scripts/services.sh; source scripts/pg-ha.sh; {script}"],
        cwd=ROOT,
        env=env,
        check=True,
    )


def pin(data: Path, core: int) -> None:
    """Pin a PostgreSQL server (its postmaster, every process it has forked, and so every backend
    it forks later) to one core."""
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    pids = [postmaster]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == postmaster:
                    pids.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    for pid in pids:
        subprocess.run(["taskset", "-a", "-c", "-p", str(core), str(pid)], check=True, capture_output=True)


def pgbench(port: int, files: list[Path], *, clients: int, seconds: int, rate: int | None = None) -> float:
    """Transactions a second of pgbench's run of ``files`` (chosen at random each time)."""
    command = [f"{PG_BIN}/pgbench", "-h", "127.0.0.1", "-p", str(port), "-U", "ugcsite", "-n"]
    command += ["-c", str(clients), "-j", str(min(clients, 2)), "-T", str(seconds)]
    if rate:
        command += ["-R", str(rate)]
    for path in files:
        command += ["-f", str(path)]
    out = subprocess.run(command + ["ugcsite"], capture_output=True, text=True, check=True).stdout
    return float(re.search(r"tps = ([\d.]+)", out).group(1))


def search_scripts(folder: Path) -> tuple[list[Path], list[str]]:
    """One pgbench file per shape of bench/search/shapes.py: the SQL feeds.selectors.search runs for
    it (PostgreSQL's part; G's hydration is Redis's)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from bench.search.shapes import queries
    from feeds import selectors
    from feeds.models import Board

    files, labels = [], []
    for n, (label, kind, q) in enumerate(queries(Board.objects.count())):
        with CaptureQueriesContext(connection) as captured:
            selectors.search(q, kind=kind, offset=0, limit=20)
        statements = [query["sql"].rstrip(";") + ";" for query in captured.captured_queries]
        path = folder / f"search-{n}.sql"
        path.write_text("\n".join(statements) + "\n")
        files.append(path)
        labels.append(label)
    return files, labels


def lag_samples(port: int, stop: threading.Event, into: list) -> None:
    import psycopg

    with psycopg.connect(f"postgresql://ugcsite@127.0.0.1:{port}/postgres", autocommit=True) as db:
        while not stop.is_set():
            row = db.execute(
                "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), "
                "coalesce(extract(epoch FROM replay_lag), 0) FROM pg_stat_replication"
            ).fetchone()
            if row:
                into.append((float(row[0]), float(row[1])))
            time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--boards", type=int, default=200_000)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--clients", type=int, default=4, help="pgbench clients a server")
    parser.add_argument("--writes", type=int, default=100, help="board updates a second on the primary")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="ugcsite-bench-replica-", dir="/tmp"))
    folder.chmod(0o755)
    primary, replica = folder / "pg", folder / "pg-replica"
    port, replica_port = free_port(), free_port()
    env = dict(os.environ)
    try:
        print(f"==> A primary on :{port} with {args.boards:,} boards", flush=True)
        shell(f"pg_start {primary} {port} fast", env)
        os.environ["DATABASE_URL"] = f"postgres://ugcsite@127.0.0.1:{port}/ugcsite"
        # Django and the world only now: the settings read DATABASE_URL at import.
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection

        from bench.harness import world as worldmod

        call_command("migrate", verbosity=0)
        world = worldmod.World(seed=2026, users=20_000)
        worldmod.build_people(world)
        worldmod.grow_boards(world, args.boards)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
            cursor.execute("SELECT min(id), max(id) FROM feeds_board")
            low, high = cursor.fetchone()
        files, labels = search_scripts(folder)
        connection.close()
        print(f"==> A streaming replica on :{replica_port}", flush=True)
        shell(f"pg_replica_start {replica} {replica_port} {port} fast", env)
        pin(primary, 0)
        pin(replica, 1)
        for server_port in (port, replica_port):  # warm both caches the same way
            pgbench(server_port, files, clients=args.clients, seconds=5)

        print(f"==> Searches on the primary alone (core 0), {args.seconds} s", flush=True)
        alone = pgbench(port, files, clients=args.clients, seconds=args.seconds)
        print(f"==> Searches on the primary (core 0) and the replica (core 1) at once, {args.seconds} s", flush=True)
        both: dict[int, float] = {}
        threads = [
            threading.Thread(
                target=lambda p=p: both.__setitem__(p, pgbench(p, files, clients=args.clients, seconds=args.seconds))
            )
            for p in (port, replica_port)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        print(f"==> {args.writes} writes a second on the primary, searches on the replica", flush=True)
        write = folder / "write.sql"
        write.write_text(
            f"\\set lo random({low}, {high})\n"
            "UPDATE feeds_board SET views = views + 1 WHERE id = "
            "(SELECT id FROM feeds_board WHERE id >= :lo ORDER BY id LIMIT 1);\n"
        )
        samples: list[tuple[float, float]] = []
        stop = threading.Event()
        sampler = threading.Thread(target=lag_samples, args=(port, stop, samples))
        reads = threading.Thread(
            target=pgbench, args=(replica_port, files), kwargs={"clients": 2, "seconds": args.seconds}
        )
        sampler.start()
        reads.start()
        written = pgbench(port, [write], clients=2, seconds=args.seconds, rate=args.writes)
        reads.join()
        stop.set()
        sampler.join()

        lag_bytes = sorted(b for b, _ in samples)
        lag_seconds = sorted(s for _, s in samples)
        load = os.getloadavg()[0]
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        ratio = sum(both.values()) / alone
        rows = [
            ("searches a second, the primary alone (one core)", f"{alone:,.0f}"),
            (
                "searches a second, primary + replica (a core each), at once",
                f"{sum(both.values()):,.0f} ({both[port]:,.0f} + {both[replica_port]:,.0f})",
            ),
            ("primary + replica against the primary alone (target ≥ 1.7×)", f"**{ratio:.2f}×**"),
            (
                f"replica lag at {written:,.0f} writes a second (searches on the replica)",
                f"p50 {statistics.median(lag_bytes) / 1024:,.1f} KiB, max {lag_bytes[-1] / 1024:,.1f} KiB; "
                f"replay_lag p50 {statistics.median(lag_seconds) * 1000:,.1f} ms, max {lag_seconds[-1] * 1000:,.1f} ms "
                f"({len(samples)} samples)",
            ),
        ]
        measured(
            RESULTS,
            [
                f"# Search on a streaming replica ({when}, make bench-replica, load {load:.1f})",
                "",
                f"{args.boards:,} boards, 20,000 people; the SQL of {len(files)} search shapes ({', '.join(labels)}),",
                f"replayed by pgbench with {args.clients} clients a server for {args.seconds} s. The primary and the",
                "replica each pinned to one of this machine's two cores (taskset), pgbench unpinned. The",
                "servers run without fsync, as the benchmarks' do.",
            ],
            rows,
        )
    finally:
        shell(f"pg_stop {replica}; pg_stop {primary}", env)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
