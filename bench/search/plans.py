"""Board search's plans across what a bulk load leaves behind (issue 42, item 4): builds the world
of `make bench-search` (its boards; the people stay the world's 20,000 authors) and measures each
board shape in three states of the terms' table, in one world: right after the load (no
statistics, no visibility map: what PostgreSQL holds until autovacuum comes), after ANALYZE alone,
and after VACUUM (ANALYZE) (what `make bench-search` measures). For each: the PostgreSQL CPU a
search (its backend, from /proc, over ``--runs`` searches) and the window's plan; with
``--explain``, EXPLAIN (ANALYZE, BUFFERS) of the commonest word and two common words too.

``--before`` plans the window with the planner settings of cb8d0b5 (hash joins, hash aggregation
and parallel workers off; sorts, bitmap scans, nested loops and JIT left on), so both are
measured on the same world. Run as ``scripts/with-servers.sh python -m bench.search.plans``;
``--boards 100000`` takes a minute.
"""

import argparse
import os
import re
import time

import django


def _backend_cpu(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _use_settings(search, settings: dict) -> None:
    """Plan the window with ``settings`` (feeds.search builds its queries from them at import)."""
    search._STATS = search._STATS.replace(
        search._STREAM, ", ".join(f"set_config('{n}', '{v}', true)" for n, v in settings.items())
    )
    search._STREAM_SETTINGS = settings
    search._BUILD = f"SELECT {search._TSQUERY}::text, " + ", ".join(f"current_setting('{n}')" for n in settings)
    search._STREAM = ", ".join(f"set_config('{n}', '{v}', true)" for n, v in settings.items())
    search._RESTORE = ", ".join(f"set_config('{n}', %(was_{n})s, true)" for n in settings)


def _window_plan(search, q: str, *, analyze: bool) -> list[str]:
    """The window query's plan as boards_search plans it (its statistics query sets the settings)."""
    from django.db import connection, transaction

    sent = []

    def keep(execute, sql, params, many, context):
        sent.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        search.boards_search(q, offset=0, limit=20)
    _, stats, window = sent[-3:]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(*stats)
        cursor.execute(("EXPLAIN (ANALYZE, BUFFERS) " if analyze else "EXPLAIN ") + window[0], window[1])
        return [row[0] for row in cursor.fetchall()]


def _nodes(plan: list[str]) -> str:
    """The window's scans, joins and sorts, in one line."""
    found = []
    for line in plan:
        if "CTE Scan" in line or "InitPlan" in line:
            break
        match = re.search(r"->\s+(.+?)(?:\s+on (\w+))?(?:\s+using \w+)?(?:\s+on \w+)?\s+\(cost", line)
        if match and re.search(r"Scan|Sort|Join|Unique|Append", match.group(1)):
            found.append(match.group(1) + (f" {match.group(2)}" if match.group(2) else ""))
    return ", ".join(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--boards", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--before", action="store_true", help="the planner settings of cb8d0b5")
    parser.add_argument("--explain", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    settings.DEBUG = False
    call_command("migrate", verbosity=0)
    from bench.harness import world as worldmod
    from bench.search.shapes import queries
    from feeds import search

    if args.before:
        _use_settings(
            search, {"enable_hashjoin": "off", "enable_hashagg": "off", "max_parallel_workers_per_gather": "0"}
        )
    w = worldmod.World(seed=2026, users=20_000)
    worldmod.build_people(w)
    started = time.perf_counter()
    worldmod.grow_boards(w, args.boards)
    print(f"{w.boards:,} boards loaded in {time.perf_counter() - started:.0f} s; settings {search._STREAM_SETTINGS}")
    shapes = [(what, q) for what, kind, q in queries(w.boards) if kind == "boards"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    for state, command in (
        ("right after the load", None),
        ("after ANALYZE", "ANALYZE feeds_boardterm"),
        ("after VACUUM (ANALYZE)", "VACUUM (ANALYZE) feeds_boardterm"),
    ):
        if command:
            with connection.cursor() as cursor:
                cursor.execute(command)
        with connection.cursor() as cursor:
            cursor.execute("SELECT relpages, relallvisible, reltuples FROM pg_class WHERE relname = 'feeds_boardterm'")
            pages, visible, tuples = cursor.fetchone()
        print(f"\n## {state}: feeds_boardterm {pages:,} pages, {visible:,} all-visible, reltuples {tuples:,.0f}")
        for what, q in shapes:
            search.boards_search(q, offset=0, limit=20)
            before = _backend_cpu(pid)
            for _ in range(args.runs):
                search.boards_search(q, offset=0, limit=20)
            cpu = (_backend_cpu(pid) - before) / args.runs * 1000
            print(
                f"- {what}: {cpu:.1f} ms of PostgreSQL CPU a search; {_nodes(_window_plan(search, q, analyze=False))}"
            )
        if args.explain:
            for what, q in shapes:
                if "commonest" in what or "two common" in what:
                    print(f"\n### {what} ({state})\n```")
                    print("\n".join(_window_plan(search, q, analyze=True)) + "\n```")


if __name__ == "__main__":
    main()
