"""Batches by node, measured: the same work on a plain Redis and on a 3-primary Redis Cluster.

    make bench-cluster     # runs this on both, back to back, and prints the ratios

- fan-out: home_deliver to 100,000 followers in batches of FANOUT_BATCH_SIZE, in this process
  (the Celery end-to-end figure is make bench-fanout, with or without UGC_CLUSTER=1);
- social reading: which of 450 followees (50 reads each in 30 days) read 100 boards.
Each run writes its figures to bench/results/cluster-<plain|cluster>.json; --compare prints both.

    python -m bench.cluster.scale --discovery     # make bench-cluster's last step

- discovery's ceiling: the uncached kind + tag query (popular order, first page of 20) over
  200,000 boards, on a 1-node and on a 3-node Redis Cluster that this process starts, the same
  data in each, in one run. This machine has 2 cores, so the load generator cannot drive three
  nodes to their limit and a wall-clock rate says more about the client than the nodes. The
  ceiling is therefore derived from what each query costs each node in CPU (INFO's
  used_cpu_user + used_cpu_sys, less the node's idle rate measured just before): the cluster
  serves at most 1 / (the busiest node's CPU seconds a query) queries a second, each node a core
  of its own. The wall-clock rate of two client processes is printed beside it, labelled as
  such. Also the cached query's CPU ceiling. Figures: bench/results/cluster-discovery.json.
"""

import argparse
import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import django
import redis

from bench.harness.report import ROOT

RESULTS = ROOT / "bench" / "results"
DISCOVERY_RESULTS = RESULTS / "cluster-discovery.json"  # --discovery's figures; make bench's table reads them
DISCOVERY_BOARDS = 200_000  # as make bench-hotkeys indexes them
DISCOVERY_TARGET = 2.5  # issue 26: 3 nodes serve at least 2.5x the uncached queries of one
WALL_SECONDS = 5.0


def measure() -> dict:
    from django.conf import settings

    from feeds import keys
    from feeds.timelines import store
    from social import keys as social_keys, reading
    from ugcsite.platform.redis import get_redis

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


# --- discovery's ceiling on 1 and 3 nodes ---------------------------------------------------------


def _free_ports(n: int) -> list[int]:
    out = subprocess.run(
        ["bash", "-c", 'source scripts/services.sh; free_ports "$@"', "services.sh", str(n)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [int(port) for port in out.split()]


@contextmanager
def own_cluster(nodes: int):
    """A throwaway Redis Cluster of ``nodes`` primaries (no replicas, no persistence, the options
    of scripts/services.sh's redis_cluster_start), each given an even run of the slots, as
    ``redis-cli --cluster create`` gives them (which needs 3 primaries at least). Yields its
    nodes' clients; stopped and deleted afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=f"ugcsite-disc{nodes}."))
    ports = _free_ports(2 * nodes)
    ports, buses = ports[:nodes], ports[nodes:]
    clients = []
    try:
        for port, bus in zip(ports, buses):
            (folder / str(port)).mkdir()
            subprocess.run(
                ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder / str(port)),
                 "--daemonize", "yes", "--pidfile", str(folder / str(port) / "redis.pid"),
                 "--logfile", str(folder / str(port) / "redis.log"), "--appendonly", "no", "--save", "",
                 "--zset-max-listpack-entries", "1200", "--cluster-enabled", "yes",
                 "--cluster-config-file", "nodes.conf", "--cluster-port", str(bus)],
                check=True,
            )  # fmt: skip
        for port in ports:
            client = redis.Redis(port=port, decode_responses=True)
            for _ in range(100):
                try:
                    client.ping()
                    break
                except redis.ConnectionError:
                    time.sleep(0.05)
            clients.append(client)
        for i, client in enumerate(clients):
            client.execute_command("CLUSTER ADDSLOTSRANGE", i * 16384 // nodes, (i + 1) * 16384 // nodes - 1)
            if i:
                client.execute_command("CLUSTER MEET", "127.0.0.1", ports[0], buses[0])
        for client in clients:
            for _ in range(300):
                if client.cluster("info")["cluster_state"] == "ok" and len(client.cluster("nodes")) == nodes:
                    break
                time.sleep(0.05)
            else:
                raise RuntimeError(f"the {nodes}-node cluster did not come up; see {folder}")
        time.sleep(0.5)  # every node agrees on the layout
        yield clients
    finally:
        for client in clients:
            try:
                client.shutdown(nosave=True)
            except redis.RedisError:
                pass
        time.sleep(0.2)
        shutil.rmtree(folder, ignore_errors=True)


def _cpu(node) -> float:
    info = node.info("cpu")
    return info["used_cpu_user"] + info["used_cpu_sys"]


def _cpu_per_call(nodes, run, calls: int) -> tuple[list[float], float]:
    """Each node's CPU seconds per call of ``run`` (its idle rate over the same time taken off),
    and the wall seconds the calls took."""
    idle_before = [_cpu(node) for node in nodes]
    time.sleep(1.0)
    idle = [_cpu(node) - before for node, before in zip(nodes, idle_before)]  # a second of idling
    before = [_cpu(node) for node in nodes]
    started = time.perf_counter()
    for _ in range(calls):
        run()
    wall = time.perf_counter() - started
    spent = [_cpu(node) - b - rate * wall for node, b, rate in zip(nodes, before, idle)]
    return [max(s, 0.0) / calls for s in spent], wall


def _queries():
    from feeds.discovery import queries
    from feeds.rules import BOARD_KINDS

    return [queries.Query(kind=k, tags=(f"tag{t}",), sort="popular") for k in BOARD_KINDS for t in range(1, 40)]


def _wall_worker(url: str, seconds: float, counter) -> None:
    """A load process: uncached queries for ``seconds``, their number added to ``counter``."""
    from django.conf import settings

    from feeds.discovery import queries
    from ugcsite.platform.redis import get_redis

    settings.REDIS_URL, settings.REDIS_CLUSTER, settings.DISCOVERY_CACHE_MS = url, True, 1
    get_redis.cache_clear()
    asked, done = _queries(), 0
    random.Random(os.getpid()).shuffle(asked)
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        queries.query(asked[done % len(asked)], offset=0, limit=20)
        done += 1
    with counter.get_lock():
        counter.value += done


def discovery_ceiling(nodes: int, *, boards: int, wall_seconds: float) -> dict:
    from django.conf import settings

    from feeds.discovery import indexes, queries
    from feeds.rules import BOARD_KINDS
    from ugcsite.platform.redis import get_redis

    with own_cluster(nodes) as clients:
        url = f"redis://127.0.0.1:{clients[0].connection_pool.connection_kwargs['port']}/0"
        settings.REDIS_URL, settings.REDIS_CLUSTER = url, True
        get_redis.cache_clear()
        rng = random.Random(2026)
        print(f"{nodes} node(s): indexing {boards:,} boards", file=sys.stderr, flush=True)
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
                for i in range(start + 1, min(start + 10_000, boards) + 1)
            )
        asked = _queries()
        keys_per_node = [client.dbsize() for client in clients]
        settings.DISCOVERY_CACHE_MS = 1  # gone before the same query comes again: every query intersects
        for q in asked:
            queries.query(q, offset=0, limit=20)  # warm: scripts loaded, connections open
        it = iter(asked * 3)
        uncached, uncached_wall = _cpu_per_call(
            clients, lambda: queries.query(next(it), offset=0, limit=20), len(asked) * 3
        )
        settings.DISCOVERY_CACHE_MS = 600_000
        cached_q = asked[2]
        queries.query(cached_q, offset=0, limit=20)
        cached, _ = _cpu_per_call(clients, lambda: queries.query(cached_q, offset=0, limit=20), 3000)
        counter = multiprocessing.get_context("fork").Value("i", 0)
        get_redis().close()
        get_redis.cache_clear()
        workers = [
            multiprocessing.get_context("fork").Process(target=_wall_worker, args=(url, wall_seconds, counter))
            for _ in range(2)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        get_redis.cache_clear()
    busiest = max(uncached)
    return {
        "nodes": nodes,
        "keys_per_node": keys_per_node,
        "uncached_cpu_ms_per_node": [round(c * 1000, 4) for c in uncached],
        "uncached_cpu_ms_total": sum(uncached) * 1000,
        "uncached_ceiling_per_s": 1 / busiest,
        "uncached_sequential_per_s": len(asked) * 3 / uncached_wall,
        "uncached_wall_per_s": counter.value / wall_seconds,
        "cached_cpu_ms_per_node": [round(c * 1000, 4) for c in cached],
        "cached_ceiling_per_s": 1 / max(cached),
    }


def discovery_table(found: dict) -> str:
    one, three = found["1"], found["3"]
    ratio = three["uncached_ceiling_per_s"] / one["uncached_ceiling_per_s"]
    wall_ratio = three["uncached_wall_per_s"] / one["uncached_wall_per_s"]
    lines = [
        f"\n{found['at']}; {found['boards']:,} boards, {found['shards']} discovery shards; the uncached query is kind + tag,"
        " popular, the first 20 (195 kind/tag pairs in turn)\n",
        "| measure | 1 node | 3 nodes | 3 / 1 |",
        "|---|---:|---:|---:|",
        f"| uncached: CPU ms a query, each node | {' / '.join(f'{c:.3f}' for c in one['uncached_cpu_ms_per_node'])} | "
        f"{' / '.join(f'{c:.3f}' for c in three['uncached_cpu_ms_per_node'])} | |",
        f"| uncached: CPU ms a query, all nodes | {one['uncached_cpu_ms_total']:.3f} | {three['uncached_cpu_ms_total']:.3f} | "
        f"{three['uncached_cpu_ms_total'] / one['uncached_cpu_ms_total']:.2f} |",
        f"| **uncached ceiling, queries/s of the cluster (CPU-derived: 1 / busiest node's CPU a query)** | "
        f"{one['uncached_ceiling_per_s']:,.0f} | {three['uncached_ceiling_per_s']:,.0f} | **{ratio:.2f}** |",
        f"| uncached, wall clock: 2 client processes for {found['wall_seconds']:.0f} s (client-bound on 2 cores) | "
        f"{one['uncached_wall_per_s']:,.0f} | {three['uncached_wall_per_s']:,.0f} | {wall_ratio:.2f} |",
        f"| uncached, wall clock: one client, one query at a time | {one['uncached_sequential_per_s']:,.0f} | "
        f"{three['uncached_sequential_per_s']:,.0f} | "
        f"{three['uncached_sequential_per_s'] / one['uncached_sequential_per_s']:.2f} |",
        f"| cached ceiling, queries/s of the cluster (CPU-derived) | {one['cached_ceiling_per_s']:,.0f} | "
        f"{three['cached_ceiling_per_s']:,.0f} | {three['cached_ceiling_per_s'] / one['cached_ceiling_per_s']:.2f} |",
        "",
        f"Target: 3 nodes >= {DISCOVERY_TARGET}x one node (uncached ceiling, CPU-derived): {ratio:.2f}x, "
        + ("reached." if ratio >= DISCOVERY_TARGET else "not reached."),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compare", action="store_true", help="print the two runs' figures side by side")
    parser.add_argument("--discovery", action="store_true", help="discovery's ceiling on a 1- and a 3-node cluster")
    parser.add_argument("--boards", type=int, default=DISCOVERY_BOARDS, help="boards indexed (--discovery)")
    parser.add_argument("--wall-seconds", type=float, default=WALL_SECONDS, help="the wall-clock run (--discovery)")
    args = parser.parse_args()
    if args.discovery:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
        django.setup()
        found = {str(n): discovery_ceiling(n, boards=args.boards, wall_seconds=args.wall_seconds) for n in (1, 3)}
        from feeds.rules import DISCOVERY_SHARDS

        found.update(boards=args.boards, wall_seconds=args.wall_seconds, shards=DISCOVERY_SHARDS)
        found["at"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        RESULTS.mkdir(exist_ok=True)
        DISCOVERY_RESULTS.write_text(json.dumps(found, indent=1))
        print(discovery_table(found))
        return
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
        if DISCOVERY_RESULTS.exists():
            print(discovery_table(json.loads(DISCOVERY_RESULTS.read_text())))
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
