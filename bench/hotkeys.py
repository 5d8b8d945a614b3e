"""The keys every request may touch on one Redis node, measured: what each costs the server, and
so how many a second one node can take (its ceiling) before it must be spread.

    make bench-hotkeys        # on a plain Redis; UGC_CLUSTER=1 make bench-hotkeys on a cluster

- discovery ({d}): a query (cached intersection, and uncached), and a board view (pending count,
  hour count, popular order, G);
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

    from ugcsite.redis import get_redis

    client = get_redis()
    if not settings.REDIS_CLUSTER:
        return client
    return client.nodes_manager.get_node_from_slot(key_slot(key.encode())).redis_connection


def _server_usec(node, run, calls: int) -> float:
    """Server microseconds per call of ``run`` (summed over every command it sends)."""
    node.config_resetstat()
    for _ in range(calls):
        run()
    stats = node.info("commandstats")
    return sum(v["usec"] for v in stats.values()) / calls


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    django.setup()
    from feeds import keys
    from feeds.discovery import counters, indexes, queries
    from feeds.rules import BOARD_KINDS
    from feeds.timelines import home_touch
    from ugcsite.redis import get_redis

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
    d = _node_of(keys.index_generation())
    q = queries.Query(kind="sketch", tags=("tag3",), sort="popular")
    queries.query(q, offset=0, limit=20)
    rows = []
    cached = _server_usec(d, lambda: queries.query(q, offset=0, limit=20), 2000)
    rows.append(("discovery query, cached (kind + tag, popular)", cached))
    uncached_q = [queries.Query(kind=k, tags=(f"tag{t}",), sort="popular") for k in BOARD_KINDS for t in range(1, 40)]
    it = iter(uncached_q * 10)

    def fresh():
        get_redis().incr(keys.index_generation())  # a new generation: the cache is stale
        queries.query(next(it), offset=0, limit=20)

    rows.append(("discovery query, uncached (kind + tag, popular)", _server_usec(d, fresh, 190)))
    view_ids = [rng.randrange(1, boards) for _ in range(5000)]
    views = iter(view_ids)
    rows.append(
        (
            "board view (pending, hour, popular: the {d} node's part)",
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
