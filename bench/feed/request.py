"""A signed-in feed request in-process (issue 42, item 1): GET /api/v1/feed through Django's WSGI
handler as gunicorn calls it (middleware, authentication, the limits, the page, its JSON; all
but the socket), against the trivial view (/api/v1/health), in one world and one run:

- with a token that names its owner (``<user id>.<secret>``, what POST /api/v1/tokens gives now):
  the token, the read limits and the page in one script call;
- with a token of the older form (no owner in it): the usual way, the token's entry, the limits
  and the page each a round trip (what every signed-in feed read cost before).

The limits are on at their defaults (raised out of reach, still counted). Each figure is the
median of ``--rounds`` rounds of ``--calls`` calls; the Redis commands or pipelines sent per
request are counted on the socket (every Redis client of the process).

    scripts/with-servers.sh python -m bench.feed.request [--users 2000 --boards 20000]
    UGC_CLUSTER=1 scripts/with-servers.sh python -m bench.feed.request
"""

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

import django

from bench.harness.measure import wsgi_get

RESULTS = Path(__file__).resolve().parents[1] / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=2_000, help="people in the world (2,000)")
    parser.add_argument("--boards", type=int, default=20_000, help="boards in the world (20,000)")
    parser.add_argument("--calls", type=int, default=1_000, help="calls a round (1,000)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds a figure, interleaved (5)")
    parser.add_argument("--out", default=str(RESULTS / "request.md"))
    parser.add_argument(
        "--profile",
        action="store_true",
        help="and profile the one-call feed (pyinstrument): results/profile-request.txt",
    )
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.DEBUG = False  # no query log
    settings.RATE_LIMIT_READS_PER_MINUTE = settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE = 10**9  # counted
    call_command("migrate", verbosity=0)
    run(args)


def run(args) -> None:
    from django.conf import settings
    from django.core.handlers.wsgi import WSGIHandler
    from redis.connection import AbstractConnection

    from bench.harness import world as worldmod
    from social import tokens
    from social.models import ApiToken, User
    from ugcsite.platform.redis import get_redis

    started = time.perf_counter()
    w = worldmod.World(seed=2026, users=args.users)
    worldmod.SPECIAL.update({"reader50": 50})
    worldmod.build_people(w)
    worldmod.grow_boards(w, args.boards)
    get_redis().flushdb()
    worldmod.build_redis(w)
    reader = User.objects.get(pk=w.special["reader50"])
    worldmod.activate([reader.pk])
    new_token = tokens.token_create(user=reader)
    old_token = ApiToken.new_key()  # a token made before tokens named their owner
    ApiToken.objects.create(
        user=reader,
        key_hash=ApiToken.hash_key(old_token),
        expires_at=ApiToken.objects.get(key_hash=ApiToken.hash_key(new_token)).expires_at,
    )
    handler = WSGIHandler()

    def call(path: str, token: str | None) -> bytes:
        status, body = wsgi_get(handler, path, token)
        assert status.startswith("200"), (path, status, body[:200])
        return body

    rows = {
        "trivial view (GET /api/v1/health)": ("/api/v1/health", None),
        "feed, a token that names its owner (one call)": ("/api/v1/feed", new_token),
        "feed, a token of the older form (the usual way)": ("/api/v1/feed", old_token),
    }
    sent = []
    original = AbstractConnection.send_packed_command

    def counted(self, command, check_health=True):
        sent.append(1)
        return original(self, command, check_health)

    client = get_redis()
    primaries = [n.redis_connection for n in client.get_primaries()] if settings.REDIS_CLUSTER else [client]

    def server_usec() -> float:
        """Microseconds the data Redis spent in scripts since the last CONFIG RESETSTAT (the
        commands a script calls are counted inside it, and again apart: only scripts are summed)."""
        return sum(
            stat.get("usec", 0)
            for node in primaries
            for name, stat in node.info("commandstats").items()
            if name.removeprefix("cmdstat_") in ("evalsha", "eval")
        )

    AbstractConnection.send_packed_command = counted
    trips, redis_us = {}, {}
    for name, (path, token) in rows.items():
        for _ in range(50):
            call(path, token)  # warm: the token's entry filled, scripts loaded, pools open
        for node in primaries:
            node.config_resetstat()
        sent.clear()
        for _ in range(100):
            call(path, token)
        trips[name] = len(sent) / 100
        redis_us[name] = server_usec() / 100
    AbstractConnection.send_packed_command = original
    items = len(json.loads(call("/api/v1/feed", new_token))["items"])
    times: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(args.rounds):  # interleaved, so a swing of the host's speed touches every row alike
        for name, (path, token) in rows.items():
            began = time.perf_counter()
            for _ in range(args.calls):
                call(path, token)
            times[name].append((time.perf_counter() - began) / args.calls * 1000)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    kind = "a Redis Cluster (3 primaries)" if settings.REDIS_CLUSTER else "a plain Redis"
    lines = [
        f"## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {kind}",
        "",
        f"`python -m bench.feed.request --users {args.users} --boards {args.boards} --calls {args.calls} "
        f"--rounds {args.rounds}`; {args.users:,} people, {args.boards:,} boards, the reader follows 50, "
        f"a page of {items} boards; {time.perf_counter() - started:.0f} s. Host load: `{load}`.",
        "",
        "| request | ms a call (median of rounds) | rounds | Redis sends a request | data Redis µs in scripts a request |",
        "|---|---:|---|---:|---:|",
    ]
    for name in rows:
        lines.append(
            f"| {name} | {statistics.median(times[name]):.3f} | "
            f"{' / '.join(f'{t:.3f}' for t in times[name])} | {trips[name]:g} | {redis_us[name]:.0f} |"
        )
    trivial = statistics.median(times["trivial view (GET /api/v1/health)"])
    one = statistics.median(times["feed, a token that names its owner (one call)"])
    usual = statistics.median(times["feed, a token of the older form (the usual way)"])
    lines += [
        "",
        f"Feed over trivial view: {trivial / one:.2f} with one call, {trivial / usual:.2f} the usual way; "
        f"the one call saves {usual - one:.3f} ms a request ({(usual - one) / usual:.0%}).",
        "",
    ]
    if args.profile:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.0001)
        profiler.start()
        for _ in range(args.calls):
            call("/api/v1/feed", new_token)
        profiler.stop()
        (RESULTS / "profile-request.txt").write_text(
            f"# GET /api/v1/feed, a token that names its owner, in-process, {args.calls} calls (profiler on)\n\n"
            + profiler.output_text(unicode=False, color=False, show_all=False)
        )
    text = "\n".join(lines)
    print(text)
    out = Path(args.out)
    head = "# A signed-in feed request in-process (`bench/feed/request.py`)\n\n" if not out.exists() else ""
    with out.open("a") as f:
        f.write(head + text + "\n")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
