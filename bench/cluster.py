"""Batches by node, measured: the same work on a plain Redis and on a 3-primary Redis Cluster.

    make bench-cluster     # runs this on both, back to back, and prints the ratios

- fan-out: home_deliver to 100,000 followers in batches of FANOUT_BATCH_SIZE, in this process
  (the Celery end-to-end figure is make bench-fanout, with or without UGC_CLUSTER=1);
- social reading: which of 450 followees (50 reads each in 30 days) read 100 boards.
Each run writes its figures to bench/results/cluster-<plain|cluster>.json; --compare prints both.
"""

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

import django

RESULTS = Path(__file__).resolve().parent / "results"


def measure() -> dict:
    from django.conf import settings

    from feeds import keys
    from feeds.timelines import store
    from social import keys as social_keys, reading
    from ugcsite.redis import get_redis

    client = get_redis()
    client.flushdb()
    followers, author = 100_000, 10**9
    pipe = client.pipeline(transaction=False)
    for follower in range(1, followers + 1):
        pipe.zadd(social_keys.following(follower), {author: 1})
        pipe.set(keys.active(follower), 1, ex=3600)
        if follower % 5000 == 0:
            pipe.execute()
            pipe = client.pipeline(transaction=False)
    batch = settings.FANOUT_BATCH_SIZE
    ids = list(range(1, followers + 1))
    rates = []
    for board in range(1, 5):
        started = time.perf_counter()
        for i in range(0, followers, batch):
            store.home_deliver(ids[i : i + batch], author, [board])
        rates.append(followers / (time.perf_counter() - started))
    rng = random.Random(2026)
    now = time.time()
    readers, boards = list(range(1, 451)), list(range(1, 20_001))
    for reader in readers:
        pipe = client.pipeline(transaction=False)
        for board in rng.sample(boards, 50):
            reading.read_record(reader, board, now=now - rng.random() * 20 * 86400, pipe=pipe)
        pipe.execute()
    asked = rng.sample(boards, 100)
    times = []
    for n in range(320):
        started = time.perf_counter()
        reading.readers_of(asked, readers, now=now)
        if n >= 20:
            times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {
        "fanout_per_s": sorted(rates[1:])[len(rates[1:]) // 2],
        "reading_p50_ms": times[len(times) // 2],
        "reading_p99_ms": times[int(len(times) * 0.99)],
        "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compare", action="store_true", help="print the two runs' figures side by side")
    args = parser.parse_args()
    if args.compare:
        plain, cluster = (json.loads((RESULTS / f"cluster-{k}.json").read_text()) for k in ("plain", "cluster"))
        print("\n| measure | plain Redis | 3-primary cluster | cluster / plain |\n|---|---:|---:|---:|")
        print(
            f"| fan-out, deliveries/s (in-process) | {plain['fanout_per_s']:,.0f} | {cluster['fanout_per_s']:,.0f} | "
            f"{cluster['fanout_per_s'] / plain['fanout_per_s']:.2f} |"
        )
        for q in ("p50", "p99"):
            a, b = plain[f"reading_{q}_ms"], cluster[f"reading_{q}_ms"]
            print(f"| reading 100 x 450, {q} ms | {a:.2f} | {b:.2f} | {b / a:.2f} |")
        return
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    django.setup()
    from django.conf import settings

    kind = "cluster" if settings.REDIS_CLUSTER else "plain"
    figures = measure()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"cluster-{kind}.json").write_text(json.dumps(figures, indent=1))
    print(f"{kind}: {figures}", file=sys.stderr)


if __name__ == "__main__":
    main()
