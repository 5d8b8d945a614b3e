"""`make soak`: a bounded mixed workload against the real processes on loopback, then a check
that nothing was lost.

    make soak                      # 5 minutes of load (SOAK_SECONDS=300)
    make soak SOAK_SECONDS=30      # a quick run
    make soak SOAK_CLIENTS=60 SOAK_WAIT=0-0.1   # harder (SOAK_PEOPLE sets the world's size)

Runs inside scripts/with-servers.sh (its own throwaway PostgreSQL and Redis). Steps:
1. a world: SOAK_PEOPLE people (3,000) following ~30 each, popular people chosen more often
   (Zipf), 30,000 boards loaded in bulk, every Redis structure built by the site's own rebuild
   and archival code, and a bearer token each (ApiToken rows in bulk);
2. uvicorn (ASGI) + a Celery worker + Celery beat under supervisord (scripts/supervisord.conf, as
   `make run` runs them) on a free port, the write rate limits raised out of the way;
3. locust, headless, SOAK_CLIENTS (40) clients for SOAK_SECONDS: ~90% feed reads (some paging
   with before=), ~5% posts, ~5% follows and unfollows, each as a random person
   (bench/soak_locustfile.py; who posts is drawn with the world's Zipf activity weights);
4. the drain: how long until the broker's queue is empty, no task is in flight and no outbox row
   is left;
5. the check, against PostgreSQL's follow edges at the end: every board posted during the soak
   must be in the feed of every follower who followed its author before it was posted and still
   does (paging feeds.selectors.home_feed, hot head and archive); no feed may serve, and no hot
   head P may hold, a board of someone its reader does not follow (an unfollow's clean-up); and
   the follow sets in Redis must equal PostgreSQL's edges.

Prints the figures and writes them to bench/results/soak.md (soak-short.md for runs under
300 s, so a quick run never overwrites the full one's figures). Exits 1 when a board was missed,
a feed holds an extra, the graph differs, or a request failed. No timing is asserted.
"""

import argparse
import json
import math
import os
import platform
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import django

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
FULL_SECONDS = 300  # runs this long or longer write soak.md; shorter ones soak-short.md


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=int(os.environ.get("SOAK_SECONDS", "300")),
                        help="how long locust runs (SOAK_SECONDS, default 300)")
    parser.add_argument("--people", type=int, default=int(os.environ.get("SOAK_PEOPLE", "3000")))
    parser.add_argument("--clients", type=int, default=int(os.environ.get("SOAK_CLIENTS", "40")),
                        help="locust users (simulated clients)")
    parser.add_argument("--wait", default=os.environ.get("SOAK_WAIT", "0.1-0.5"),
                        help="seconds each client waits between requests, MIN-MAX (SOAK_WAIT, default 0.1-0.5)")
    parser.add_argument("--following", type=int, default=30, help="how many people each person follows, about")
    parser.add_argument("--boards", type=int, default=30_000, help="boards in the world before the soak")
    parser.add_argument("--drain-timeout", type=int, default=int(os.environ.get("SOAK_DRAIN_TIMEOUT", "900")))
    args = parser.parse_args()
    try:
        args.wait_min, args.wait_max = (float(x) for x in args.wait.split("-"))
    except ValueError:
        sys.exit(f"error: SOAK_WAIT must be MIN-MAX in seconds, like 0.1-0.5; it was {args.wait!r}")
    if args.seconds < 5 or args.people < 50 or args.clients < 1:
        sys.exit("error: SOAK_SECONDS must be at least 5, --people at least 50 and --clients at least 1")
    django.setup()
    from django.core.management import call_command

    started = time.monotonic()
    print("Migrating", flush=True)
    call_command("migrate", verbosity=0)
    run_dir = Path(tempfile.mkdtemp(prefix="ugcsite-soak."))
    keep_run_dir = True
    try:
        world = build_world(people=args.people, following=args.following, boards=args.boards, seed=13)
        (run_dir / "world.json").write_text(json.dumps(world["clients"]))
        site = Site(run_dir)
        load_before = os.getloadavg()
        site.start()
        try:
            site.wait_ready()
            print(f"Site up on {site.url} (uvicorn, WEB_WORKERS processes, Celery worker --concurrency=2, beat); "
                  f"load average before the soak {load_before[0]:.2f}", flush=True)
            load = run_locust(site.url, run_dir, seconds=args.seconds, clients=args.clients, wait=args.wait)
            drain = wait_drain(timeout=args.drain_timeout)
            lag = fanout_lag(site.url)
            load_after = os.getloadavg()
        finally:
            site.stop()
        print("Checking every feed against PostgreSQL's follow edges", flush=True)
        check = check_feeds(world_max_id=world["max_board_id"], soak_started=world["soak_started"])
        figures = {"args": vars(args), "world": world["summary"], "load": load, "drain": drain, "lag": lag,
                   "check": check, "load_avg": (load_before, load_after), "minutes": (time.monotonic() - started) / 60}
        figures["diagnosis"] = diagnose(check["missed"], writes=run_dir / "writes.jsonl", world_since=world["follow_since"])
        text = report(figures)
        print("\n" + text)
        name = "soak.md" if args.seconds >= FULL_SECONDS else "soak-short.md"
        (RESULTS / name).write_text(text + "\n")
        print(f"\nwritten to bench/results/{name}")
        problems = verdict(figures)
        if problems:
            print("\nSOAK FAILED:\n  " + "\n  ".join(problems))
            print(f"The site's log (uvicorn, worker, beat) is kept in {run_dir}/site.log; "
                  f"the locust figures in {run_dir}/locust.json.")
            sys.exit(1)
        keep_run_dir = False
        print("Nothing lost: every board reached every follower it should, and no feed holds an extra.")
    finally:
        if not keep_run_dir:
            shutil.rmtree(run_dir, ignore_errors=True)


# --- the world -------------------------------------------------------------------------------

def build_world(*, people: int, following: int, boards: int, seed: int) -> dict:
    """People, a heavy-tailed follow graph, boards, Redis built by the site's own code, tokens.
    Returns what the clients need (names, tokens, whom each follows) and the world's figures."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone
    from tqdm import tqdm

    from bench.world import World, _accumulate, _copy, activate, build_redis, grow_boards
    from feeds.models import Board
    from social.models import ApiToken, Follow

    User = get_user_model()
    rng = random.Random(seed)
    names = [f"soak{i:05d}" for i in range(people)]
    now = timezone.now()
    print(f"Building the world: {people:,} people following ~{following} each, {boards:,} boards", flush=True)
    _copy(User._meta.db_table,
          ["password", "is_superuser", "username", "first_name", "last_name", "email", "is_staff", "is_active",
           "date_joined", "followers_count", "following_count", "boards_count"],
          (("!", False, name, "", "", "", False, True, now, 0, 0, 0) for name in names))  # "!": no password login
    by_name = dict(User.objects.filter(username__in=names).values_list("username", "id"))
    ids = [by_name[name] for name in names]  # rank order: the first are the most followed
    cumulative = list(_accumulate(1 / (rank + 1) ** 0.9 for rank in range(people)))
    edges: list[tuple[int, int]] = []
    follows_of: dict[int, list[int]] = {}
    for user_id in tqdm(ids, desc="follow graph", unit="person", disable=None):
        want = min(max(int(rng.lognormvariate(math.log(following), 0.5)), 3), people - 1)
        chosen: set[int] = set()
        while len(chosen) < want:
            chosen.update(a for a in rng.choices(ids, cum_weights=cumulative, k=want - len(chosen)) if a != user_id)
        follows_of[user_id] = sorted(chosen)
        edges.extend((user_id, author) for author in chosen)
    since = now - timedelta(days=1)  # every edge of the world is older than any board of the soak (one instant:
    # a bulk load; many followers of one author share a score in F, as after any bulk import)
    _copy(Follow._meta.db_table, ["follower_id", "followee_id", "created_at"], ((a, b, since) for a, b in edges))
    world = World(seed=seed, users=people, user_ids=ids)
    grow_boards(world, boards, authors=ids)
    build_redis(world)
    activate(ids)  # everyone has been active lately: fan-out reaches them all

    keys_ = [ApiToken.new_key() for _ in ids]
    expires = now + settings.API_TOKEN_LIFETIME
    ApiToken.objects.bulk_create([ApiToken(user_id=user_id, key_hash=ApiToken.hash_key(key), expires_at=expires)
                                  for user_id, key in zip(ids, keys_)], batch_size=2000)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {User._meta.db_table}, {Follow._meta.db_table}, {ApiToken._meta.db_table}")
    name_of = dict(zip(ids, names))
    followers = Counter(b for _, b in edges)
    clients = {"people": [{"name": name_of[u], "token": k, "following": [name_of[f] for f in follows_of[u]]}
                          for u, k in zip(ids, keys_)],
               "ranked": names}
    summary = {"people": people, "edges": len(edges), "boards": world.boards,
               "max_followers": max(followers.values()), "median_followers": sorted(followers[u] for u in ids)[people // 2]}
    print(f"World: {people:,} people, {len(edges):,} follow edges (most followed: {summary['max_followers']:,} "
          f"followers, median {summary['median_followers']}), {world.boards:,} boards", flush=True)
    max_board_id = Board.objects.order_by("-id").values_list("id", flat=True).first() or 0
    return {"clients": clients, "summary": summary, "max_board_id": max_board_id, "soak_started": datetime.now(UTC),
            "follow_since": since}


# --- the site under supervisord --------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Site:
    """scripts/supervisord.conf's processes (web, worker, beat), as `make run` starts them and
    ugcsite/tests/test_supervised.py does, on a free port; their output goes to site.log."""

    def __init__(self, run_dir: Path):
        self.run_dir = run_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        limits = {"RATE_LIMIT_WRITES_PER_MINUTE": "100000", "RATE_LIMIT_WRITES_PER_ADDRESS_PER_MINUTE": "1000000",
                  "RATE_LIMIT_AUTH_PER_MINUTE": "100000", "RATE_LIMIT_READS_PER_MINUTE": "100000",
                  "RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE": "10000000"}  # one address, thousands of people: raised, still counted
        (run_dir / "prometheus").mkdir()
        self.env = dict(os.environ, RUN_DIR=str(run_dir), PORT=str(self.port),
                        PROMETHEUS_MULTIPROC_DIR=str(run_dir / "prometheus"), DJANGO_DEBUG="0", SITE_HTTPS="0",
                        DJANGO_SECRET_KEY=secrets.token_urlsafe(50), STATIC_ROOT=str(run_dir / "static"), **limits)

    def start(self) -> None:
        print("Collecting static files and starting uvicorn, the worker and beat under supervisord", flush=True)
        subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=ROOT, check=True,
                       env=self.env)
        self.log = open(self.run_dir / "site.log", "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "supervisor.supervisord", "-c", "scripts/supervisord.conf"],
            cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 90) -> None:
        from ugcsite.celery import app

        deadline = time.monotonic() + timeout
        while not self._ready():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self._give_up("the site did not answer 200 on /readyz")
            time.sleep(0.5)
        while not app.control.ping(timeout=1):
            if time.monotonic() > deadline:
                self._give_up("the Celery worker did not answer a ping")

    def _ready(self) -> bool:
        try:
            return urllib.request.urlopen(self.url + "/readyz", timeout=2).status == 200
        except OSError:
            return False

    def _give_up(self, what: str) -> None:
        tail = (self.run_dir / "site.log").read_text(errors="replace").splitlines()[-30:]
        print("\n".join(tail))
        sys.exit(f"error: {what} within 90 s. The last lines of its log are above "
                 f"(all of it in {self.run_dir}/site.log); fix what they name and run `make soak` again.")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


# --- load, drain ------------------------------------------------------------------------------

def run_locust(url: str, run_dir: Path, *, seconds: int, clients: int, wait: str) -> dict:
    print(f"Soaking for {seconds} s with {clients} locust clients waiting {wait} s between requests "
          f"(a progress line every 10 s)", flush=True)
    stats = run_dir / "locust.json"
    low, high = wait.split("-")
    env = dict(os.environ, SOAK_WORLD=str(run_dir / "world.json"), SOAK_STATS=str(stats),
               SOAK_WRITES=str(run_dir / "writes.jsonl"),
               SOAK_WAIT_MIN=low, SOAK_WAIT_MAX=high)
    command = [sys.executable, "-m", "locust", "-f", str(ROOT / "bench" / "soak_locustfile.py"), "--headless",
               "--users", str(clients), "--spawn-rate", str(clients), "--run-time", f"{seconds}s", "--host", url,
               "--only-summary", "--exit-code-on-error", "0", "--loglevel", "WARNING", "--stop-timeout", "5"]
    finished = subprocess.run(command, cwd=ROOT, env=env)
    if finished.returncode != 0 or not stats.exists():
        sys.exit(f"error: locust stopped with status {finished.returncode} before writing its figures; its own "
                 f"message is above (`{' '.join(command[2:4])}` with SOAK_WORLD={env['SOAK_WORLD']}).")
    return json.loads(stats.read_text())


def backlog() -> dict:
    """Tasks waiting in the broker's queue (every priority list kombu uses), tasks delivered to
    a worker and not yet acknowledged (acks_late: running or reserved), and outbox rows."""
    import redis
    from django.conf import settings

    from feeds.models import Outbox

    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    names = [queue] + [f"{queue}\x06\x16{p}" for p in (3, 6, 9)]
    return {"queued": sum(broker.llen(name) for name in names), "unacked": broker.hlen("unacked"),
            "outbox": Outbox.objects.count()}


def wait_drain(*, timeout: int, steady: float = 1.0) -> dict:
    """Poll until nothing is queued, in flight or in the outbox, and that holds for ``steady``
    seconds (a task popped from the queue is in no list for an instant before kombu records it
    unacknowledged); returns the backlog when the load stopped, whether it drained, and how long
    after the load stopped it was first empty for good."""
    at_end = backlog()
    print(f"Load stopped; backlog: {at_end['queued']:,} queued tasks, {at_end['unacked']:,} in flight, "
          f"{at_end['outbox']:,} outbox rows. Waiting for it to drain.", flush=True)
    started = last_print = time.monotonic()
    now, empty_since = at_end, None
    while True:
        if any(now.values()):
            empty_since = None
        else:
            empty_since = time.monotonic() if empty_since is None else empty_since
            if time.monotonic() - empty_since >= steady:
                return {"at_end": at_end, "drained": True, "left": now, "seconds": empty_since - started}
        if time.monotonic() - started > timeout:
            print(f"error: the backlog did not drain within {timeout} s (now {now}); raise SOAK_DRAIN_TIMEOUT "
                  f"if the machine is busy, or read the worker's log.", flush=True)
            return {"at_end": at_end, "drained": False, "left": now, "seconds": None}
        if time.monotonic() - last_print >= 5:
            last_print = time.monotonic()
            print(f"  draining {last_print - started:4.0f} s: {now['queued']:,} queued, {now['unacked']:,} in flight, "
                  f"{now['outbox']:,} outbox rows", flush=True)
        time.sleep(0.1)
        now = backlog()


def fanout_lag(url: str) -> dict:
    """The fan-out lag histogram of /metrics (creation to last follower written): count, mean,
    and the bucket holding the 50th and 99th percentiles."""
    try:
        text = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    except OSError as error:
        return {"error": str(error)}
    buckets, total, count = [], 0.0, 0
    for line in text.splitlines():
        if line.startswith("ugcsite_fanout_lag_seconds_bucket"):
            le = line.split('le="')[1].split('"')[0]
            buckets.append((math.inf if le == "+Inf" else float(le), float(line.rsplit(" ", 1)[1])))
        elif line.startswith("ugcsite_fanout_lag_seconds_sum"):
            total = float(line.rsplit(" ", 1)[1])
        elif line.startswith("ugcsite_fanout_lag_seconds_count"):
            count = int(float(line.rsplit(" ", 1)[1]))
    buckets.sort()

    def upper(q: float):
        return next((le for le, n in buckets if count and n >= q * count), None)

    return {"count": count, "mean": total / count if count else None, "p50_le": upper(0.5), "p99_le": upper(0.99)}


# --- the check -------------------------------------------------------------------------------

def check_feeds(*, world_max_id: int, soak_started: datetime) -> dict:
    """Compare every feed with PostgreSQL's follow edges at the end (the truth):
    misses: (reader, board) where the board was posted during the soak, the reader followed its
    author before it was posted and still does, and the reader's feed (home_feed, paged through
    head and archive) does not serve it;
    extras: (reader, board) where the board's author is not followed by the reader at the end and
    the feed serves it or the hot head P still holds it (the unfollow's clean-up missed it);
    graph mismatches: edges where Redis's following/followers sets differ from PostgreSQL."""
    from django.contrib.auth import get_user_model
    from tqdm import tqdm

    from feeds import keys, selectors
    from feeds.models import Board
    from social import keys as social_keys
    from social.models import Follow
    from ugcsite.redis import get_redis

    redis = get_redis()
    user_ids = list(get_user_model().objects.order_by("id").values_list("id", flat=True))
    author_of = dict(Board.objects.filter(state=Board.State.PUBLISHED).values_list("id", "author_id"))
    followed: dict[int, dict[int, datetime]] = defaultdict(dict)  # reader -> {author: followed since}
    followers: dict[int, set[int]] = defaultdict(set)
    for reader, author, since in Follow.objects.values_list("follower_id", "followee_id", "created_at").iterator(chunk_size=20_000):
        followed[reader][author] = since
        followers[author].add(reader)
    soak_boards = list(Board.objects.filter(id__gt=world_max_id).values_list("id", "author_id", "created_at", "state"))
    expected: dict[int, set[int]] = defaultdict(set)
    for board_id, author, created, state in soak_boards:
        if state != Board.State.PUBLISHED:
            continue
        for reader in followers[author]:
            if followed[reader][author] < created:
                expected[reader].add(board_id)

    graph_mismatches = 0
    stale_in_head: Counter = Counter()  # reader -> ids of unfollowed authors in P
    head_sizes = []
    batch = 500
    with tqdm(total=len(user_ids), desc="hot heads and follow sets", unit="person", disable=None) as bar:
        for start in range(0, len(user_ids), batch):
            chunk = user_ids[start:start + batch]
            pipe = redis.pipeline(transaction=False)
            for user_id in chunk:
                pipe.zrange(keys.home_timeline(user_id), 0, -1)
                pipe.zrange(social_keys.following(user_id), 0, -1)
                pipe.zrange(social_keys.followers(user_id), 0, -1)
            answers = pipe.execute()
            for n, user_id in enumerate(chunk):
                head, following_set, follower_set = answers[3 * n: 3 * n + 3]
                head_sizes.append(len(head))
                mine = followed.get(user_id, {})
                stale_in_head[user_id] = sum(1 for i in head if author_of.get(int(i)) not in mine)
                graph_mismatches += len({int(i) for i in following_set} ^ set(mine))
                graph_mismatches += len({int(i) for i in follower_set} ^ followers.get(user_id, set()))
            bar.update(len(chunk))

    misses, served_extras, pages = 0, 0, 0
    missed: list[tuple[int, int]] = []
    with tqdm(total=len(expected), desc="feeds served", unit="reader", disable=None) as bar:
        for reader, want in expected.items():
            lowest, served, before = min(want), set(), None
            while True:
                answer = selectors.home_feed(reader, offset=None, before=before, limit=100)
                pages += 1
                for item in answer["items"]:
                    board_id = int(item["id"])
                    served.add(board_id)
                    if author_of.get(board_id) not in followed.get(reader, {}):
                        served_extras += 1
                if answer["next"] is None or int(answer["next"]) < lowest:
                    break
                before = int(answer["next"])
            lost = want - served
            misses += len(lost)
            missed.extend((reader, board_id) for board_id in sorted(lost))
            bar.update()
    follows_made = Follow.objects.filter(created_at__gte=soak_started).count() if soak_started else None
    return {"soak_boards": len(soak_boards), "pairs": sum(len(w) for w in expected.values()), "readers": len(expected),
            "pages": pages, "misses": misses, "missed": missed,
            "served_extras": served_extras, "stale_in_head": sum(stale_in_head.values()),
            "stale_readers": sum(1 for v in stale_in_head.values() if v), "graph_mismatches": graph_mismatches,
            "edges_now": sum(len(v) for v in followed.values()), "edges_made_in_soak": follows_made,
            "head_mean": sum(head_sizes) / len(head_sizes) if head_sizes else 0}


def diagnose(missed: list[tuple[int, int]], *, writes: Path, world_since: datetime, most: int = 20) -> list[str]:
    """A sentence for each of the first ``most`` misses: who, whose board, how the author's
    followers were walked, since when the reader follows, where the board is (hot head, archive,
    nowhere), and the writes on the author around the post (from locust's log of writes)."""
    if not missed:
        return []
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from feeds import keys
    from feeds.models import Board, TimelineChunk
    from social import keys as social_keys
    from social.models import Follow
    from ugcsite.redis import get_redis

    log = [json.loads(line) for line in writes.read_text().splitlines()] if writes.exists() else []
    name_of = dict(get_user_model().objects.values_list("id", "username"))
    redis, lines = get_redis(), []
    for reader, board_id in missed[:most]:
        board = Board.objects.get(pk=board_id)
        author = name_of[board.author_id]
        followers = Follow.objects.filter(followee_id=board.author_id).count()
        batches = math.ceil(followers / settings.FANOUT_BATCH_SIZE)
        since = Follow.objects.get(follower_id=reader, followee_id=board.author_id).created_at
        posted = board.created_at.timestamp()
        where = ("in the hot head" if redis.zscore(keys.home_timeline(reader), board_id) is not None else
                 "in the archive" if TimelineChunk.objects.filter(owner_id=reader, timeline="p", ids__contains=[board_id]).exists()
                 else "nowhere in the feed")
        unfollows = [w for w in log if w["op"] == "unfollow" and w["target"] == author and 0 <= w["t"] - posted <= 10]
        own = [f"{w['op']} at {w['t'] - posted:+.1f} s" for w in log if w["who"] == name_of[reader] and w["target"] == author]
        lines.append(
            f"{name_of[reader]} lacks board {board_id} by {author} ({followers:,} followers: {batches} fan-out "
            f"batch(es) of {settings.FANOUT_BATCH_SIZE}); follows {author} "
            + ("since the world was built (the score every world edge shares in F)" if since == world_since
               else f"since {posted - since.timestamp():.1f} s before the post")
            + f"; the board is {where}; following set holds {author}: "
            f"{redis.zscore(social_keys.following(reader), board.author_id) is not None}; {len(unfollows)} "
            f"unfollow(s) of {author} in the 10 s after the post; the reader's own writes on {author}: {own or 'none'}")
    if len(missed) > most:
        lines.append(f"... and {len(missed) - most:,} more")
    return lines


# --- report --------------------------------------------------------------------------------

def verdict(f: dict) -> list[str]:
    problems = []
    check, load = f["check"], f["load"]
    if check["misses"]:
        problems.append(f"{check['misses']:,} (reader, board) pairs missed (each is described above)")
    if check["served_extras"] or check["stale_in_head"]:
        problems.append(f"extras: {check['served_extras']:,} served, {check['stale_in_head']:,} left in hot heads")
    if check["graph_mismatches"]:
        problems.append(f"{check['graph_mismatches']:,} follow edges differ between Redis and PostgreSQL")
    if load["failures"]:
        problems.append(f"{load['failures']:,} requests failed: {load['failures_by_status']}")
    if not f["drain"]["drained"]:
        problems.append(f"the backlog did not drain: {f['drain']['left']}")
    return problems


def _ms(value) -> str:
    return "—" if value is None else f"{value:,.0f}"


def report(f: dict) -> str:
    load, drain, check, lag, world, args = f["load"], f["drain"], f["check"], f["lag"], f["world"], f["args"]
    before, after = f["load_avg"]
    failures = ", ".join(f"{n:,} × {s}" for s, n in sorted(load["failures_by_status"].items())) or "none"
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    command = "make soak" + ("" if args["seconds"] == 300 else f" SOAK_SECONDS={args['seconds']}") + "".join(
        f" {name}={args[key]}" for name, key, default in (("SOAK_CLIENTS", "clients", 40), ("SOAK_WAIT", "wait", "0.1-0.5"),
                                                          ("SOAK_PEOPLE", "people", 3000)) if args[key] != default)
    at_end = drain["at_end"]
    lines = [
        "# Soak: a mixed workload on loopback, then nothing lost",
        "",
        f"{when} on {platform.node()}: {os.cpu_count()} cores, {platform.platform()}, Python "
        f"{platform.python_version()}; `{command}`, {f['minutes']:.1f} minutes in all. Everything on this one "
        f"machine: PostgreSQL, Redis, uvicorn (3 processes), a Celery worker (2 processes), beat and "
        f"locust itself. The machine is shared with other engineers' runs: load average "
        f"{before[0]:.2f} before the soak, {after[0]:.2f} after it.",
        "",
        f"World: {world['people']:,} people, {world['edges']:,} follow edges (most followed "
        f"{world['max_followers']:,} followers, median {world['median_followers']}), {world['boards']:,} boards. "
        f"{args['clients']} locust clients for {args['seconds']} s, each waiting {args['wait']} s between requests, "
        f"each request as a random person: ~90% feed reads (a quarter followed by the next page), ~5% posts "
        f"(the poster drawn with the world's Zipf activity weights: popular people post more), ~5% follows/unfollows "
        f"(whom to follow drawn with the graph's popularity weights).",
        "",
        "| figure | value |",
        "|---|---|",
        f"| requests | {load['requests']:,} in {load['seconds']:,.0f} s: {load['rps']:,.1f} requests/s |",
        f"| failures | {load['failures']:,} ({failures}) |",
        f"| latency, all requests (locust) | p50 {_ms(load['p50_ms'])} ms, p99 {_ms(load['p99_ms'])} ms |",
        f"| boards posted | {check['soak_boards']:,} (locust counted {load['posts']:,} answers 201) |",
        f"| follow edges made during the soak | {check['edges_made_in_soak']:,} (edges at the end: {check['edges_now']:,}) |",
        f"| backlog when the load stopped | {at_end['queued']:,} queued tasks, {at_end['unacked']:,} in flight, "
        f"{at_end['outbox']:,} outbox rows |",
        f"| drain time (queue, in-flight tasks and outbox empty) | "
        + (f"{drain['seconds']:.1f} s" if drain["seconds"] is not None else f"did not drain: {drain['left']}") + " |",
        f"| fan-out lag (/metrics: creation to last follower) | "
        + (f"{lag['count']:,} fan-outs, mean {lag['mean']:.2f} s, p50 ≤ {lag['p50_le']} s, p99 ≤ {lag['p99_le']} s "
           f"(histogram buckets) |" if lag.get("count") else f"none recorded {lag.get('error', '')} |"),
        f"| (reader, board) pairs checked | {check['pairs']:,} over {check['readers']:,} readers "
        f"({check['pages']:,} feed pages read) |",
        f"| **misses** | **{check['misses']:,}** |",
        f"| **extras** | **{check['served_extras'] + check['stale_in_head']:,}** ({check['served_extras']:,} served, "
        f"{check['stale_in_head']:,} left in hot heads) |",
        f"| follow edges differing between Redis and PostgreSQL | {check['graph_mismatches']:,} |",
        "",
        "| request | count | failures | p50 ms | p99 ms | mean ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, s in sorted(load["by_name"].items(), key=lambda kv: -kv[1]["requests"]):
        lines.append(f"| {name} | {s['requests']:,} | {s['failures']:,} | {_ms(s['p50_ms'])} | {_ms(s['p99_ms'])} | "
                     f"{_ms(s['mean_ms'])} |")
    if f.get("diagnosis"):
        lines += ["", "Misses, one by one:", ""] + [f"- {line}" for line in f["diagnosis"]]
    lines += [
        "",
        "Latencies are locust's, measured by the client on the same 2 cores as the server (locust rounds times "
        "above 100 ms to two significant figures). A miss is a board posted during the soak that a follower who "
        "followed its author before the post, and still does at the end, cannot page to in their feed "
        "(feeds.selectors.home_feed, hot head and archive); an extra is a board whose author the reader does "
        "not follow at the end, served in their feed or still held in their hot head P.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
