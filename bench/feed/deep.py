"""The deep feed page alone, at 1,000,000 boards: the world `make bench` builds (bench/harness/world.py,
built the same way, step by step through 10,000 and 100,000 boards), then the page of the reader
following 500 at offset 2,000:
- as `make bench` measures it (bench/measure.site_feed): its first call merges and keeps a feed
  snapshot (feeds.timelines.snapshot), the next read it;
- merged at every call: the snapshot made stale before each (as any change of the feed does);
- by cursor (``before`` the id above it), merged at every call;
- the pages from there down by cursor, as the site's pages scroll (each call the next page);
with the first page beside them.

    make bench-deep                        # build, then measure (about twenty minutes)
    make bench-deep ARGS="--runs 600"

With ``--no-build`` it measures the world already in the servers it is given (for a world kept
between runs by hand). Writes bench/results/deep.md.
"""

import argparse
import os
import platform
import time
from collections.abc import Callable
from datetime import UTC, datetime

import django

from bench.harness.report import RESULTS

SIZES = [10_000, 100_000, 1_000_000]
DEEP = 2_000


def build() -> dict[str, int]:
    """The world of `make bench` at its largest size, built through the same steps; the special
    readers' ids."""
    from bench.harness import world as worldmod
    from ugcsite.platform.redis import get_redis

    w = worldmod.World(seed=2026, users=20_000)
    worldmod.build_people(w)
    for size in SIZES:
        worldmod.grow_boards(w, size)
        get_redis().flushdb()
        worldmod.build_redis(w)
        worldmod.activate(list(w.special.values()))
        for name in ("reader50", "reader500"):
            worldmod.feed_history(w.special[name], 2_500)
    return w.special


def specials() -> dict[str, int]:
    from django.contrib.auth import get_user_model

    from bench.harness.world import SPECIAL

    return dict(get_user_model().objects.filter(username__in=SPECIAL).values_list("username", "id"))


def cursor_at(user_id: int, offset: int) -> int:
    """The ``next`` of the page that ends just above ``offset``: what the site's own pages send
    as ``before`` to reach it."""
    from feeds.services import activity

    answer = activity.home_feed_read(user_id=user_id, offset=offset - 20, before=None, limit=20)
    return int(answer["next"])


def scroll_from(user_id: int, cursor: int) -> Callable[[], dict]:
    """The site's pages scrolling down from ``cursor``: each call the next page by ``before``
    (back to ``cursor`` at the end of the feed)."""
    from bench.harness import measure

    at = [cursor]

    def call():
        answer = measure.site_feed(user_id, offset=None, before=at[0])()
        at[0] = int(answer["next"]) if answer["next"] else cursor
        return answer

    return call


def measure_all(reader: int, runs: int) -> list[tuple[str, dict]]:
    """The first page; the deep page by offset as `make bench` measures it (its first call keeps
    a snapshot that the rest read), then merged at every call (the snapshot made stale before
    each, as any change of the feed does); the same page by cursor, merged at every call, and
    the pages from there down as the site's pages scroll."""
    from bench.harness import measure

    cursor = cursor_at(reader, DEEP)
    deep = measure.site_feed(reader, offset=DEEP)
    stale = measure.feed_changed(reader)
    scroll = scroll_from(reader, cursor)
    for _ in range(runs):  # the boards the scroll reaches into G, as any page that was read before
        scroll()
    return [
        ("feed page (offset 0)", measure.timings(measure.site_feed(reader), runs=runs)),
        (f"deep page (offset {DEEP:,}), as make bench measures it", measure.timings(deep, runs=runs)),
        (f"deep page (offset {DEEP:,}), merged at every call", measure.timings(deep, runs=runs, setup=stale)),
        (
            f"deep page by cursor (before the id at {DEEP:,}), merged at every call",
            measure.timings(measure.site_feed(reader, offset=None, before=cursor), runs=runs, setup=stale),
        ),
        (
            f"pages by cursor from {DEEP:,} down, as the site scrolls",
            measure.timings(scroll_from(reader, cursor), runs=runs),
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--no-build", action="store_true", help="measure the world already there")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.DEBUG = False  # no query log
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    readers = specials() if args.no_build else build()
    rows = measure_all(readers["reader500"], args.runs)
    lines = ["| measure (reader following 500, 1,000,000 boards) | p50 | p99 | mean |", "|---|---:|---:|---:|"]
    for what, t in rows:
        print(f"  {what:<52} p50 {t['p50']:.2f} p99 {t['p99']:.2f} mean {t['mean']:.2f} ms", flush=True)
        lines.append(f"| {what} | {t['p50']:.2f} | {t['p99']:.2f} | {t['mean']:.2f} |")
    machine = f"{platform.node()}: {os.cpu_count()} cores, {platform.platform()}, Python {platform.python_version()}"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "deep.md").write_text(
        f"# The deep feed page\n\n{datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine}; `make bench-deep`, "
        f"{(time.perf_counter() - started) / 60:.1f} minutes, {args.runs} calls each. Times in milliseconds.\n\n"
        + "\n".join(lines)
        + "\n"
    )


if __name__ == "__main__":
    main()
