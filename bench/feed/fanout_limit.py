"""Fan-out against Redis's own limit: one board delivered to 10^4, 10^5 and 10^6 followers by the
site's own fan-out code (the walk of F a batch at a time and home_deliver.lua, exactly what each
Celery batch task runs, here in this process one batch after the other), beside
`redis-benchmark -c 1 -P 16` ZADD on the same server: one client, 16 commands a round trip, the
rate at which one connection can write sorted sets at all.

    make bench-fanout-limit                               # 10^4, 10^5, 10^6 followers
    make bench-fanout-limit ARGS="--followers 10000 100000 --batch 1000 5000 --chunk 200 1000"

Each follower has a follow edge (F[a], following[f]) and an active mark, written straight into
Redis (PostgreSQL is not involved: the fan-out reads none of it). The figure is deliveries per
second; the ratio is that over the ZADD rate. Every combination of FANOUT_BATCH_SIZE (--batch)
and FANOUT_SCRIPT_CHUNK (--chunk) is measured; the best is marked. Results go to
bench/results/fanout-limit.md.
"""

import argparse
import os
import platform
import time
from datetime import UTC, datetime

import django

from bench.harness.report import RESULTS
from bench.harness.targets import zadd_rate

AUTHOR = 999_999_999  # no user of the benchmark's worlds


def build_followers(count: int) -> None:
    """F[AUTHOR] with ``count`` followers (ids 1,000,001 on), their following sets and active marks."""
    from tqdm import tqdm

    from feeds import keys
    from social import graph
    from ugcsite.platform.redis import get_redis

    client = get_redis()
    have = client.zcard(_followers_key())
    now = time.time()
    with tqdm(total=count, initial=have, desc="followers", unit="user", disable=None) as bar:
        for start in range(have, count, 10_000):
            pipe = client.pipeline(transaction=False)
            for follower in range(1_000_001 + start, 1_000_001 + min(start + 10_000, count)):
                graph.follow_add(follower_id=follower, followee_id=AUTHOR, at=now, pipe=pipe)
                pipe.set(keys.active(follower), 1, ex=3600)
            pipe.execute()
            bar.update(min(start + 10_000, count) - start)


def _followers_key() -> str:
    from social import keys as social_keys

    return social_keys.followers(AUTHOR)


def deliver_all(board_id: int, *, batch: int) -> float:
    """Walk F[AUTHOR] a batch at a time and deliver, as the fan-out tasks do. Returns seconds."""
    from feeds.timelines import fanout
    from social.graph import FollowerCursor

    cursor = FollowerCursor()
    following = []
    started = time.perf_counter()
    while cursor is not None:
        following.clear()
        fanout.fanout_batch(board_id=board_id, author_id=AUTHOR, cursor=cursor, batch_size=batch, then=following.append)
        cursor = following[0] if following else None
    return time.perf_counter() - started


def measure(followers: list[int], batches: list[int], chunks: list[int], *, quiet: bool = False) -> list[dict]:
    """Deliveries per second for each size, batch size and script chunk, with the ZADD limit
    measured just before each size. Returns one row per combination."""
    from django.conf import settings

    from bench.harness.measure import redis_cpu_seconds
    from feeds import keys
    from ugcsite.platform.redis import get_redis

    client = get_redis()
    rows = []
    board_id = 10**15
    for count in sorted(followers):
        build_followers(count)
        limit = zadd_rate(max(200_000, min(count, 1_000_000)))
        for batch in batches:
            for chunk in chunks:
                settings.FANOUT_SCRIPT_CHUNK = chunk
                board_id += 1
                deliver_all(board_id, batch=batch)  # warm-up, and every P exists from here on
                board_id += 1
                redis_before = redis_cpu_seconds()
                seconds = deliver_all(board_id, batch=batch)
                redis_us = (redis_cpu_seconds() - redis_before) / count * 1e6
                last = 1_000_000 + count
                assert client.zscore(keys.home_timeline(last), board_id) is not None, (
                    "the walk missed the last follower"
                )
                rate = count / seconds
                rows.append(
                    {
                        "followers": count,
                        "batch": batch,
                        "chunk": chunk,
                        "seconds": seconds,
                        "rate": rate,
                        "limit": limit,
                        "ratio": rate / limit if limit else None,
                        "redis_us": redis_us,  # the data Redis's CPU a delivery, in microseconds
                    }
                )
                if not quiet:
                    print(
                        f"  {count:>9,} followers, batch {batch:>5,}, script chunk {chunk:>4}: {rate:>10,.0f} deliveries/s"
                        + (
                            f" = {rate / limit:.2f} of redis-benchmark -c 1 -P 16 ZADD ({limit:,.0f}/s)"
                            if limit
                            else ""
                        ),
                        flush=True,
                    )
    return rows


def markdown(rows: list[dict]) -> str:
    lines = [
        "| followers | FANOUT_BATCH_SIZE | FANOUT_SCRIPT_CHUNK | deliveries/s | ZADD limit (-c 1 -P 16) | ratio |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    best = {}
    for row in rows:
        if row["rate"] > best.get(row["followers"], {"rate": 0})["rate"]:
            best[row["followers"]] = row
    for row in rows:
        mark = " (best)" if best[row["followers"]] is row else ""
        lines.append(
            f"| {row['followers']:,} | {row['batch']:,} | {row['chunk']:,} | {row['rate']:,.0f}{mark} | "
            f"{row['limit']:,.0f} | {row['ratio']:.2f} |"
            if row["limit"]
            else f"| {row['followers']:,} | {row['batch']:,} | {row['chunk']:,} | {row['rate']:,.0f}{mark} | — | — |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--followers", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--batch", type=int, nargs="+", default=[1_000, 5_000])
    parser.add_argument("--chunk", type=int, nargs="+", default=[200, 1_000])
    args = parser.parse_args()
    django.setup()
    from ugcsite.platform.redis import get_redis

    get_redis().flushdb()
    started = time.perf_counter()
    rows = measure(args.followers, args.batch, args.chunk)
    machine = f"{platform.node()}: {os.cpu_count()} cores, {platform.platform()}, Python {platform.python_version()}"
    text = (
        f"# Fan-out against Redis's own limit\n\n{datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine}; "
        f"`make bench-fanout-limit`, {(time.perf_counter() - started) / 60:.1f} minutes. In-process (the batch "
        f"tasks' code, one batch after the other), plain Redis.\n\n{markdown(rows)}\n"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "fanout-limit.md").write_text(text)
    print("\n" + markdown(rows) + "\n\nwritten: bench/results/fanout-limit.md")


if __name__ == "__main__":
    main()
