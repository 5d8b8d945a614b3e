"""The keys every request may touch on one Redis node, measured: what each costs the server, and
so how many a second one node can take (its ceiling) before it must be spread.

    make bench-hotkeys        # on a plain Redis; UGC_CLUSTER=1 make bench-hotkeys on a cluster

- discovery: a query (cached intersection, and uncached) over its DISCOVERY_SHARDS shards, summed
  over every node that holds one (its ceiling over the cluster is make bench-cluster's), and a
  board view (the {d} node's part: pending count, hour count; the popular order is its shard's);
- the last-seen index (seen:{seen:N}, 64 buckets): one activity record;
- idgen:lease: one INCR per process start, never per request.
Server time comes from INFO commandstats (usec per call) of the node that holds the key, after
CONFIG RESETSTAT, so the client's speed does not enter the ceiling.
"""

import os
import random
import time

import django


def _node_of(key: str):
    from django.conf import settings
    from redis.crc import key_slot

    from ugcsite.platform.redis import get_redis

    client = get_redis()
    if not settings.REDIS_CLUSTER:
        return client
    return client.nodes_manager.get_node_from_slot(key_slot(key.encode())).redis_connection


def _primaries():
    from django.conf import settings

    from ugcsite.platform.redis import get_redis

    client = get_redis()
    if not settings.REDIS_CLUSTER:
        return [client]
    return [node.redis_connection for node in client.get_primaries()]


def _server_usec(node, run, calls: int, *, skip=()) -> float:
    """Server microseconds per call of ``run`` (summed over every command it sends but the
    commands ``skip`` names, and over every node when ``node`` is a list)."""
    nodes = node if isinstance(node, list) else [node]
    for each in nodes:
        each.config_resetstat()
    for _ in range(calls):
        run()
    total = 0
    for each in nodes:
        stats = each.info("commandstats")
        total += sum(v["usec"] for name, v in stats.items() if name.removeprefix("cmdstat_") not in skip)
    return total / calls


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    django.setup()
    from feeds import keys
    from feeds.discovery import counters, indexes, queries
    from feeds.rules import BOARD_KINDS, DISCOVERY_SHARDS
    from feeds.timelines import home_touch
    from ugcsite.platform.redis import get_redis

    boards = 200_000
    rng = random.Random(2026)
    get_redis().flushdb()
    print(f"indexing {boards:,} boards", flush=True)
    for start in range(0, boards, 10_000):
        indexes.index_bulk(
            (
                i,
                rng.choice(BOARD_KINDS),
                [f"tag{int(rng.paretovariate(1.2)) % 500}"],
                f"u{i % 5000}",
                rng.randrange(100),
                0,
            )
            for i in range(start + 1, start + 10_001)
        )
    d, every = _node_of(keys.tag_counts()), _primaries()
    q = queries.Query(kind="sketch", tags=("tag3",), sort="popular")
    queries.query(q, offset=0, limit=20)
    rows = []
    cached = _server_usec(every, lambda: queries.query(q, offset=0, limit=20), 2000)
    rows.append(("discovery query, cached (kind + tag, popular; every shard's node)", cached))
    uncached_q = [queries.Query(kind=k, tags=(f"tag{t}",), sort="popular") for k in BOARD_KINDS for t in range(1, 40)]
    it = iter(uncached_q * 10)

    def fresh():
        pipe = get_redis().pipeline(transaction=False)
        for shard in range(DISCOVERY_SHARDS):  # a new generation: the caches are stale
            pipe.incr(keys.index_generation(shard))
        pipe.execute()
        queries.query(next(it), offset=0, limit=20)

    rows.append(
        (
            "discovery query, uncached (kind + tag, popular; every shard's node)",
            _server_usec(every, fresh, 190, skip=("incr",)),
        )
    )
    view_ids = [rng.randrange(1, boards) for _ in range(5000)]
    views = iter(view_ids)
    rows.append(
        (
            "board view (pending, hour: the {d} node's part; on a plain Redis its popular order too)",
            _server_usec(d, lambda: counters.view_record(next(views)), 4000),
        )
    )
    users = iter(range(1, 10**6))
    seen = _node_of(keys.last_seen(0))
    rows.append(
        (
            "activity record (one seen bucket + the user's own keys)",
            _server_usec(seen, lambda: home_touch(next(users)), 4000),
        )
    )
    lease = _node_of(keys.id_generator_lease())
    rows.append(
        (
            "id generator lease (once per process)",
            _server_usec(lease, lambda: get_redis().incr(keys.id_generator_lease()), 4000),
        )
    )
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(
        f"\n{stamp}; {'cluster' if os.environ.get('REDIS_CLUSTER') == '1' else 'plain Redis'}; "
        f"{boards:,} boards indexed\n"
    )
    print("| operation | server µs per call | ceiling per node (calls/s) |")
    print("|---|---:|---:|")
    for name, usec in rows:
        print(f"| {name} | {usec:.1f} | {1e6 / usec:,.0f} |")


if __name__ == "__main__":
    main()
