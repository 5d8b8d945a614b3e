"""How long `rebuild_redis` takes, step by step: the RTO after a restore at scale
(docs/operations.md, "Backups, restore and failover"), where PostgreSQL is back in seconds and
the site then waits on Redis.

    python -m bench.capacity.rebuild [--users 20000] [--boards 10000] [--profile]
    (under scripts/with-servers.sh; `make bench-rebuild`)

Builds the benchmark's world in PostgreSQL (bench/harness/world.py: ``--users`` people with its
heavy-tailed follow graph, ``--boards`` boards), empties the data Redis, then runs every step of
``rebuild_redis`` as the command does, timing each. ``--profile`` writes the home timelines'
step as a pyinstrument profile (bench/results/profile-rebuild-home.txt). Writes
bench/results/rebuild.md.
"""

import argparse
import os
import platform
import time
from datetime import UTC, datetime

import django

from bench.harness.report import RESULTS


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--boards", type=int, default=10_000)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from bench.harness import world as worldmod
    from feeds.models import Board
    from feeds.timelines import rebuild
    from social.models import Follow
    from ugcsite.platform.redis import get_redis

    call_command("migrate", verbosity=0)
    world = worldmod.World(seed=2026, users=args.users)
    started = time.monotonic()
    worldmod.build_people(world)
    worldmod.grow_boards(world, args.boards)
    load = time.monotonic() - started
    connection.close()
    follows = Follow.objects.count()
    get_redis().flushdb()
    user_ids = list(world.user_ids)
    rows = []

    def timed(label, work):
        began = time.monotonic()
        work()
        rows.append((label, time.monotonic() - began))
        print(f"  {label:<24} {rows[-1][1]:8.1f} s", flush=True)

    timed("profile counts", rebuild.recount_profiles)
    for label, step in rebuild.USER_STEPS:
        if label == "home timelines" and args.profile:
            from pyinstrument import Profiler

            profiler = Profiler()
            profiler.start()
            timed(label, lambda step=step: step(user_ids, lambda n=1: None))
            profiler.stop()
            (RESULTS / "profile-rebuild-home.txt").write_text(profiler.output_text(unicode=False, color=False))
        else:
            timed(label, lambda step=step: step(user_ids, lambda n=1: None))
    timed("discovery indexes", lambda: rebuild.rebuild_discovery(lambda n=1: None))
    total = sum(seconds for _, seconds in rows)
    machine = f"{platform.node()}: {os.cpu_count()} cores, {platform.platform()}, Python {platform.python_version()}"
    lines = [
        "# rebuild_redis, step by step",
        "",
        f'`make bench-rebuild ARGS="--users {args.users} --boards {args.boards}"`, '
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {machine}; load average {os.getloadavg()[0]:.1f} at the end.",
        f"World: {args.users:,} people, {follows:,} follows, {Board.objects.count():,} boards "
        f"(bulk load {load:.0f} s). Every step as `rebuild_redis` runs it, on an emptied data Redis.",
        "",
        "| step | seconds | share |",
        "|---|---:|---:|",
        *(f"| {label} | {seconds:,.1f} | {seconds / total:.0%} |" for label, seconds in rows),
        f"| **all** | **{total:,.1f}** | |",
        "",
    ]
    (RESULTS / "rebuild.md").write_text("\n".join(lines))
    print("\n".join(lines) + "written: bench/results/rebuild.md")


if __name__ == "__main__":
    main()
