"""`make bench-broker`: what a task costs Celery's broker (a plain Redis, kombu's Redis transport
with the site's settings: late acknowledgement, prefetch 1), so the capacity plan can say when
one broker is full. A task that does nothing is sent ``--tasks`` times from this process, then a
real `celery worker` (the site's app, ``--workers`` processes) takes and acknowledges them all;
the broker server's CPU (INFO's used_cpu, which other work on the machine does not inflate) is
read around each half and divided by the tasks.

    make bench-broker                       # 20,000 tasks, 2 worker processes (about a minute)
    make bench-broker ARGS="--tasks 50000"

Writes bench/results/broker.md.
"""

import argparse
import os
import platform
import sys
import time
from datetime import UTC, datetime

import django

from bench.harness.worker import celery_worker

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
django.setup()

from django.conf import settings  # noqa: E402 (after django.setup(): the worker imports this module too)
from redis import Redis  # noqa: E402

from bench.harness.report import RESULTS  # noqa: E402
from ugcsite.celery import app  # noqa: E402

HALF_A_CORE_US = 500_000  # the budget of a Redis node the capacity plan keeps (docs/capacity.md)


@app.task(name="bench.serving.broker.nothing")
def nothing() -> None:
    """A task that does nothing: what remains of its cost is the broker's and the worker's."""


def broker_cpu(client: Redis) -> float:
    """CPU seconds (user + system) the broker's Redis has used since it started."""
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def command_us(client: Redis) -> tuple[float, dict[str, int]]:
    """Microseconds spent inside commands since the last CONFIG RESETSTAT (INFO commandstats: the
    figure make bench-hotkeys reads), and the calls of each command."""
    stats = {name.removeprefix("cmdstat_"): row for name, row in client.info("commandstats").items()}
    stats = {name: row for name, row in stats.items() if name not in ("info", "config|resetstat", "llen", "hlen")}
    return sum(row["usec"] for row in stats.values()), {name: row["calls"] for name, row in stats.items()}


def waiting(client: Redis) -> int:
    """Messages not yet acknowledged: in the queue, or taken and unacknowledged (kombu's hash)."""
    return client.llen(settings.CELERY_TASK_DEFAULT_QUEUE) + client.hlen("unacked")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    broker = Redis.from_url(settings.CELERY_BROKER_URL)
    broker.delete(settings.CELERY_TASK_DEFAULT_QUEUE, "unacked", "unacked_index")
    for _ in range(200):  # warm-up: the connection pool, the producer
        nothing.apply_async()
    broker.delete(settings.CELERY_TASK_DEFAULT_QUEUE)

    idle_before, started = broker_cpu(broker), time.perf_counter()
    time.sleep(2)
    idle = (broker_cpu(broker) - idle_before) / (time.perf_counter() - started)  # its own timers, per second

    broker.config_resetstat()
    cpu, started = broker_cpu(broker), time.perf_counter()
    for _ in range(args.tasks):
        nothing.apply_async()
    send_seconds = time.perf_counter() - started
    send_cpu = broker_cpu(broker) - cpu - idle * send_seconds
    send_commands, send_calls = command_us(broker)
    assert waiting(broker) == args.tasks, "every task is in the queue"

    broker.config_resetstat()
    cpu, started = broker_cpu(broker), time.perf_counter()
    options = ("-I", "bench.serving.broker", "--without-heartbeat")
    with celery_worker("bench-broker", concurrency=args.workers, options=options) as worker:
        while waiting(broker):
            if worker.poll() is not None:
                sys.exit("the Celery worker stopped")
            time.sleep(0.05)
        take_seconds = time.perf_counter() - started
        take_cpu = broker_cpu(broker) - cpu - idle * take_seconds
        take_commands, take_calls = command_us(broker)

    send_us, take_us = send_cpu / args.tasks * 1e6, take_cpu / args.tasks * 1e6
    send_in, take_in = send_commands / args.tasks, take_commands / args.tasks

    def calls(counts: dict[str, int]) -> str:
        return ", ".join(
            f"{name} {n / args.tasks:.2f}"
            for name, n in sorted(counts.items(), key=lambda x: -x[1])
            if n / args.tasks >= 0.01
        )

    rows = [
        (
            "send (`apply_async`, one client)",
            send_us,
            send_in,
            f"{args.tasks / send_seconds:,.0f} tasks/s sent; commands a task: {calls(send_calls)}",
        ),
        (
            f"take and acknowledge (a real worker, {args.workers} processes)",
            take_us,
            take_in,
            f"{args.tasks / take_seconds:,.0f} tasks/s done, the worker's start included; "
            f"commands a task: {calls(take_calls)}",
        ),
        (
            "a task, both",
            send_us + take_us,
            send_in + take_in,
            f"{HALF_A_CORE_US / (send_us + take_us):,.0f} tasks/s in half a core of the broker's CPU",
        ),
    ]
    machine = f"{platform.node()}: {os.cpu_count()} cores, {platform.platform()}, Python {platform.python_version()}"
    text = (
        "# Celery's broker\n\n"
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine}; `make bench-broker`"
        f"{'' if args.tasks == 20_000 else f' ARGS=--tasks={args.tasks}'}, load average {os.getloadavg()[0]:.1f}. "
        f"{args.tasks:,} tasks that do nothing through a plain Redis with the site's Celery settings; the "
        f"broker's CPU a task (INFO's used_cpu, less its idle {idle * 1e3:.1f} ms a second: the process's whole "
        "cost, reading and writing sockets included), and the part of it spent inside commands (INFO commandstats, "
        "the figure make bench-hotkeys reports).\n\n"
        "| step | broker CPU µs a task | of which inside commands (commandstats) | |\n|---|---:|---:|---|\n"
        + "\n".join(f"| {what} | {us:.1f} | {inside:.1f} | {note} |" for what, us, inside, note in rows)
        + "\n"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "broker.md").write_text(text)
    print(text + "\nwritten: bench/results/broker.md")


if __name__ == "__main__":
    main()
