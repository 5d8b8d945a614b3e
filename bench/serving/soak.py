"""`make soak`: the shipped stack under a bounded mixed load on loopback, watched for growth,
then a check that nothing was lost.

    make soak                      # 5 minutes of load (SOAK_SECONDS=300); 30 minutes: SOAK_SECONDS=1800
    make soak SOAK_SECONDS=60      # a quick run (written to soak-short.md and soak-short.png)
    make soak SOAK_CLIENTS=60 SOAK_WAIT=0-0.1   # harder (SOAK_PEOPLE sets the world's size)
    make soak SOAK_LIVE_BOARDS=20 SOAK_LIVE_CLIENTS=5 SOAK_LISTENERS=40 SOAK_OP_EVERY=0.5-1

Runs inside scripts/with-servers.sh (its own throwaway PostgreSQL and Redis). Steps:
1. a world: SOAK_PEOPLE people (3,000) following ~30 each, popular people chosen more often
   (Zipf), 30,000 boards loaded in bulk, every Redis structure built by the site's own rebuild
   and archival code, and a bearer token each (ApiToken rows in bulk); every MEMBER_EVERY-th
   person holds a real password (one Argon2 hash of PASSWORD, made once and shared) so the page
   clients can log in; SOAK_LIVE_BOARDS (10) shared boards, each made by the board services with
   its author and SOAK_LIVE_CLIENTS - 1 (3) invited editors, people of their own;
2. the site exactly as `make run` serves it: scripts/serve.sh (nginx on a free port in front of
   the WSGI server and uvicorn for /ws/, the Celery worker and beat, under supervisord from
   scripts/supervisord.conf) with make run's settings (DJANGO_DEBUG=0, SITE_HTTPS=0, a secret
   key, STATIC_ROOT filled by collectstatic, RUN_DIR, PORT); only the rate limits are raised;
3. the load, for SOAK_SECONDS: locust, headless, SOAK_CLIENTS (40) HTTP clients
   (bench/serving/locustfile.py: the API as random people, ~90% feed reads, ~5% posts, ~5% follows
   and unfollows; the HTML pages signed out; the pages signed in, logged in through the login
   form), and beside it bench/live/soak.py: every member of every shared board drawing on it over
   its WebSocket (an op every SOAK_OP_EVERY seconds, 1-2), and SOAK_LISTENERS (20) people on
   /ws/me; every SAMPLE_EVERY (10) seconds bench/harness/sampler.py samples the PostgreSQL connections,
   each process's RSS and open files, Redis's memory and the queue, and a progress line is
   printed;
4. the drain: how long until the broker's queue is empty, no task is in flight and no outbox row
   is left; then the shared boards' docs (PostgreSQL, after compaction) are compared with the ops,
   and the /ws/me listeners are closed;
5. the checks: against PostgreSQL's follow edges at the end, every board posted during the soak
   must be in the feed of every follower who followed its author before it was posted and still
   does (paging feeds.selectors.home_feed, hot head and archive); no feed may serve, and no hot
   head P may hold, a board of someone its reader does not follow; the follow sets in Redis must
   equal PostgreSQL's edges; every op acknowledged on a shared board reached every other member
   of the board, and its doc holds what the ops left; every board that reached a listener's feed
   (by an author they follow, posted while they listened) was announced on their /ws/me;
6. growth, over the last two thirds of the load (bench/harness/sampler.py says exactly how): the site's
   PostgreSQL connections never more than its pools allow (ugcsite.serving.site_connections_max),
   the database's never above the budget (connection_budget), and those held throughout no more
   at the end than at the start of the last two thirds; each process's RSS within 10% and its
   open files steady; no process restarted.

Prints the figures and writes them to bench/results/soak.md, the samples drawn over time to
bench/results/soak.png (soak-short.md and soak-short.png for runs under 300 s, so a quick run
never overwrites the full one's figures); the samples themselves stay in the run directory
(samples.json). Exits 1 when a board was missed, a feed holds an extra, the graph differs, a
request or a socket failed, a delivery is missing, or something grew. No timing is asserted.
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
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import django

from bench.harness.report import ROOT
from bench.harness.sampler import SAMPLE_EVERY, Sampler, judge, plot, problems as growth_problems

RESULTS = ROOT / "bench" / "results"
FULL_SECONDS = 300  # runs this long or longer write soak.md; shorter ones soak-short.md
PASSWORD = "soak-password-13"  # the password of every person who holds one (the page clients log in with it)
MEMBER_EVERY = 15  # every 15th person of the world holds PASSWORD: 200 of 3,000
BOARD_SAMPLE = 1000  # published boards the page clients pick from
LISTEN_MARGIN = 1.0  # seconds: a board posted within this of a listener's hello is not owed to it
DOC_WAIT = 60  # seconds the shared boards' docs may take to hold their last ops after the drain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--seconds",
        type=int,
        default=int(os.environ.get("SOAK_SECONDS", "300")),
        help="how long the load runs (SOAK_SECONDS, default 300)",
    )
    parser.add_argument("--people", type=int, default=int(os.environ.get("SOAK_PEOPLE", "3000")))
    parser.add_argument(
        "--clients",
        type=int,
        default=int(os.environ.get("SOAK_CLIENTS", "40")),
        help="locust users (simulated HTTP clients: API, pages signed out, pages signed in, 3:1:1)",
    )
    parser.add_argument(
        "--wait",
        default=os.environ.get("SOAK_WAIT", "0.1-0.5"),
        help="seconds each client waits between requests, MIN-MAX (SOAK_WAIT, default 0.1-0.5)",
    )
    parser.add_argument(
        "--live-boards",
        type=int,
        default=int(os.environ.get("SOAK_LIVE_BOARDS", "10")),
        help="shared boards drawn on over WebSockets (SOAK_LIVE_BOARDS, default 10)",
    )
    parser.add_argument(
        "--live-clients",
        type=int,
        default=int(os.environ.get("SOAK_LIVE_CLIENTS", "4")),
        help="people drawing on each shared board: its author and editors (SOAK_LIVE_CLIENTS, default 4)",
    )
    parser.add_argument(
        "--listeners",
        type=int,
        default=int(os.environ.get("SOAK_LISTENERS", "20")),
        help="people listening on /ws/me (SOAK_LISTENERS, default 20)",
    )
    parser.add_argument(
        "--op-every",
        default=os.environ.get("SOAK_OP_EVERY", "1-2"),
        help="seconds between one drawer's ops, MIN-MAX (SOAK_OP_EVERY, default 1-2)",
    )
    parser.add_argument("--following", type=int, default=30, help="how many people each person follows, about")
    parser.add_argument("--boards", type=int, default=30_000, help="boards in the world before the soak")
    parser.add_argument("--drain-timeout", type=int, default=int(os.environ.get("SOAK_DRAIN_TIMEOUT", "900")))
    args = parser.parse_args()
    try:
        args.wait_min, args.wait_max = (float(x) for x in args.wait.split("-"))
        args.op_min, args.op_max = (float(x) for x in args.op_every.split("-"))
    except ValueError:
        sys.exit(
            f"error: SOAK_WAIT and SOAK_OP_EVERY must be MIN-MAX in seconds, like 0.1-0.5; they were "
            f"{args.wait!r} and {args.op_every!r}"
        )
    if args.seconds < 5 or args.people < 50 or args.clients < 1:
        sys.exit("error: SOAK_SECONDS must be at least 5, --people at least 50 and --clients at least 1")
    if args.live_clients < 2 or args.listeners > args.people // MEMBER_EVERY:
        sys.exit(
            f"error: SOAK_LIVE_CLIENTS must be at least 2 (someone must receive the ops) and SOAK_LISTENERS "
            f"at most {args.people // MEMBER_EVERY} (the people holding a password)"
        )
    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from ugcsite.serving import connection_budget, site_connections_max

    started = time.monotonic()
    print("Migrating", flush=True)
    call_command("migrate", verbosity=0)
    run_dir = Path(tempfile.mkdtemp(prefix="ugcsite-soak."))
    keep_run_dir = True
    short = args.seconds < FULL_SECONDS
    plot_path = RESULTS / ("soak-short.png" if short else "soak.png")
    try:
        world = build_world(
            people=args.people, following=args.following, boards=args.boards, seed=13, listeners=args.listeners
        )
        site = Site(run_dir)
        budget, pools = connection_budget(), site_connections_max()
        load_before = os.getloadavg()
        site.start()
        live = locust = None
        try:
            print(
                f"Site up on {site.url} through scripts/serve.sh ({site.describe()}); PostgreSQL connections: "
                f"{pools} with every pool full, budget {budget}; load average before the soak {load_before[0]:.2f}",
                flush=True,
            )
            add_shared_boards(world, count=args.live_boards, members=args.live_clients)
            (run_dir / "world.json").write_text(json.dumps(world["clients"]))
            live = LiveClients(run_dir, site, world, args)
            live.start()
            sampler = make_sampler(site, run_dir, pools=pools)
            locust = Locust(site.url, run_dir, seconds=args.seconds, clients=args.clients, wait=args.wait)
            sampler.start()
            locust.start()
            load = locust.wait()
            load_seconds = time.monotonic() - sampler.t0
            sampler.phase = "drain"
            live.wait_settled()
            drain = wait_drain(timeout=args.drain_timeout)
            lag = fanout_lag(site.url)
            docs = check_live_docs(live.settled_boards())
            time.sleep(2)  # the last notices of the drain's fan-outs reach the listeners
            live_results = live.stop()
            sampler.stop()
            load_after = os.getloadavg()
        finally:
            for clients in (locust, live):
                if clients is not None:
                    clients.kill()  # only if still running: a failure above left it behind
            site.stop()
        print("Checking every feed against PostgreSQL's follow edges", flush=True)
        check = check_feeds(world_max_id=world["max_board_id"], soak_started=world["soak_started"])
        notices = check_listeners(live_results["listeners"], load_end=sampler.samples[0]["at"] + load_seconds)
        growth = judge(
            sampler.samples,
            sampler.names.events,
            load_seconds=load_seconds,
            pools=pools,
            budget=budget,
            pool_size=settings.DATABASE_POOL_SIZE,
        )
        dropped = channel_drops(site.server.log_path)
        logged = site_log_problems(site.server.log_path, stopping_at=site.stopping_at)
        plot(
            sampler.samples,
            load_seconds=load_seconds,
            pools=pools,
            budget=budget,
            path=plot_path,
            title=f"make soak, {args.seconds} s of load: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        )
        figures = {
            "args": vars(args),
            "world": world["summary"],
            "load": load,
            "drain": drain,
            "lag": lag,
            "check": check,
            "load_avg": (load_before, load_after),
            "minutes": (time.monotonic() - started) / 60,
            "live": live_figures(live_results, docs),
            "notices": notices,
            "growth": growth,
            "samples": sampler.samples,
            "sampler_errors": sampler.errors,
            "site": site.describe(),
            "plot": plot_path.relative_to(ROOT),
            "load_seconds": load_seconds,
            "dropped": dropped,
            "logged": logged,
        }
        figures["diagnosis"] = diagnose(
            check["missed"], writes=run_dir / "writes.jsonl", world_since=world["follow_since"]
        )
        text = report(figures)
        print("\n" + text)
        name = "soak-short.md" if short else "soak.md"
        (RESULTS / name).write_text(text + "\n")
        print(f"\nwritten to bench/results/{name} and {figures['plot']}")
        found = verdict(figures)
        if found:
            print("\nSOAK FAILED:\n  " + "\n  ".join(found))
            print(
                f"The site's log (every process) is kept in {run_dir}/site.log (and supervisord's, nginx's beside it); "
                f"the locust figures in {run_dir}/locust.json, the WebSocket clients' in {run_dir}/live.json, "
                f"the samples in {run_dir}/samples.json."
            )
            sys.exit(1)
        keep_run_dir = False
        print(
            "Nothing lost and nothing grew: every board reached every follower it should, no feed holds an extra, "
            "every op reached every member of its board, every listener heard of every board, and the connections "
            "and memory held level."
        )
    finally:
        if not keep_run_dir:
            shutil.rmtree(run_dir, ignore_errors=True)


# --- the world -------------------------------------------------------------------------------


def build_world(*, people: int, following: int, boards: int, seed: int, listeners: int) -> dict:
    """People, a heavy-tailed follow graph, boards, Redis built by the site's own code, tokens and
    passwords for every MEMBER_EVERY-th person (add_shared_boards adds the shared boards once the
    site runs). Returns what the clients need (names, tokens, whom each follows, ...) and the
    world's figures."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.db import connection
    from django.utils import timezone
    from tqdm import tqdm

    from bench.harness.world import World, _accumulate, _copy, activate, build_redis, copy_users, grow_boards
    from feeds.models import Board
    from social.models import ApiToken, Follow

    User = get_user_model()
    rng = random.Random(seed)
    names = [f"soak{i:05d}" for i in range(people)]
    now = timezone.now()
    password = make_password(PASSWORD)  # one Argon2 hash, shared: hashing 200 alike would take a minute
    print(f"Building the world: {people:,} people following ~{following} each, {boards:,} boards", flush=True)
    copy_users(names, now=now, password_of=lambda i: password if i % MEMBER_EVERY == 0 else "!")
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

    keys_ = [f"{user_id}.{ApiToken.new_key()}" for user_id in ids]  # as social.tokens.token_create makes them
    expires = now + settings.API_TOKEN_LIFETIME
    ApiToken.objects.bulk_create(
        [
            ApiToken(user_id=user_id, key_hash=ApiToken.hash_key(key), expires_at=expires)
            for user_id, key in zip(ids, keys_)
        ],
        batch_size=2000,
    )
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {User._meta.db_table}, {Follow._meta.db_table}, {ApiToken._meta.db_table}")
    name_of = dict(zip(ids, names))
    followers = Counter(b for _, b in edges)
    members = names[::MEMBER_EVERY]
    token_of = dict(zip(names, keys_))
    published = Board.objects.filter(state=Board.State.PUBLISHED).values_list("id", flat=True)
    sample = rng.sample(list(published), min(BOARD_SAMPLE, len(published)))
    clients = {
        "people": [
            {"name": name_of[u], "token": k, "following": [name_of[f] for f in follows_of[u]]}
            for u, k in zip(ids, keys_)
        ],
        "ranked": names,
        "members": members,
        "password": PASSWORD,
        "listeners": members[:listeners],
        "board_sample": sample,
    }
    live = {"boards": [], "listeners": [{"name": n, "token": token_of[n]} for n in members[:listeners]]}
    summary = {
        "people": people,
        "edges": len(edges),
        "boards": world.boards,
        "members": len(members),
        "max_followers": max(followers.values()),
        "median_followers": sorted(followers[u] for u in ids)[people // 2],
    }
    print(
        f"World: {people:,} people ({len(members):,} with a password), {len(edges):,} follow edges (most followed: "
        f"{summary['max_followers']:,} followers, median {summary['median_followers']}), {world.boards:,} boards",
        flush=True,
    )
    return {
        "clients": clients,
        "live": live,
        "summary": summary,
        "password_hash": password,
        "soak_started": datetime.now(UTC),
        "follow_since": since,
    }


def add_shared_boards(world: dict, *, count: int, members: int) -> None:
    """``count`` boards, each made by board_create for its author and shared with ``members`` - 1
    editors through editor_invite, with the site running (their fan-out runs at once, so the
    fan-out lag of /metrics is the load's alone): people of their own (live{board}m{n}, holding
    the world's password and a token), who follow no one and whom no one follows, so their boards
    and ops stay out of the feed check. Adds them to the world's clients and, with them, fixes the
    world's last board id (boards above it are the soak's)."""
    from django.contrib.auth import get_user_model

    from feeds.models import Board
    from feeds.services.boards import board_create
    from feeds.services.editors import editor_invite
    from social import tokens

    User = get_user_model()
    people = User.objects.bulk_create(
        [
            User(username=f"live{b:03d}m{n}", password=world["password_hash"])
            for b in range(count)
            for n in range(members)
        ]
    )
    shared = []
    for b in range(count):
        group = people[b * members : (b + 1) * members]
        board = board_create(
            author=group[0],
            title=f"soak shared board {b}",
            kind="sketch",
            tags=["soak-live"],
            doc={"width": 1000, "height": 1000, "background": "#ffffff", "elements": []},
        )
        for editor in group[1:]:
            editor_invite(board=board, user=editor, invited_by=group[0])
        shared.append(
            {"id": board.pk, "members": [{"name": p.username, "token": tokens.token_create(user=p)} for p in group]}
        )
    world["live"]["boards"] = shared
    world["clients"]["board_sample"] += [b["id"] for b in shared]
    world["max_board_id"] = Board.objects.order_by("-id").values_list("id", flat=True).first() or 0
    print(f"{count} shared boards, each with its author and {members - 1} editors", flush=True)


# --- the site, as make run serves it ---------------------------------------------------------


class Site:
    """scripts/serve.sh's processes (nginx, the WSGI server, uvicorn for /ws/, Celery's worker and
    beat under supervisord) with make run's settings, through ugcsite.serving.Site: a free port,
    RUN_DIR in the soak's run directory, the output of every process in RUN_DIR/site.log. Only
    the rate limits differ from `make run`: one address and thousands of people would meet them."""

    LIMITS = {
        "RATE_LIMIT_WRITES_PER_MINUTE": "100000",
        "RATE_LIMIT_WRITES_PER_ADDRESS_PER_MINUTE": "1000000",
        "RATE_LIMIT_AUTH_PER_MINUTE": "100000",
        "RATE_LIMIT_READS_PER_MINUTE": "100000",
        "RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE": "10000000",
    }  # raised, still counted

    def __init__(self, run_dir: Path):
        from ugcsite import serving

        self.run_dir = run_dir / "site"
        env = {
            **os.environ,
            "DJANGO_DEBUG": "0",
            "SITE_HTTPS": "0",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            "STATIC_ROOT": str(run_dir / "static"),
            **self.LIMITS,
        }
        self.server = serving.Site(self.run_dir, env)
        self.url, self.ws, self.port = self.server.url, self.server.ws, self.server.port
        self.stopping_at: float | None = None

    def describe(self) -> str:
        env = self.server.env
        return (
            f"nginx -> {env.get('WSGI_SERVER', 'gunicorn')} x {env.get('WEB_WORKERS', '3')} for HTTP and uvicorn x "
            f"{env.get('LIVE_WORKERS', '1')} for /ws/, Celery worker --concurrency={env.get('CELERY_CONCURRENCY', '2')}, "
            f"beat"
        )

    @property
    def supervisord_pid(self) -> int:
        return int((self.run_dir / "supervisord.pid").read_text())

    def start(self, timeout: float = 90) -> None:
        from ugcsite.celery import app

        print("Collecting static files and starting the site through scripts/serve.sh", flush=True)
        self.server.collect_static()
        try:
            self.server.start(timeout=timeout)
        except RuntimeError as error:
            sys.exit(f"error: {error}\nFix what the log names and run `make soak` again.")
        deadline = time.monotonic() + timeout
        while not self._ready():
            if time.monotonic() > deadline:
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
        tail = self.server.log_path.read_text(errors="replace").splitlines()[-30:]
        print("\n".join(tail))
        self.stop()
        sys.exit(
            f"error: {what} within 90 s. The last lines of its log are above (all of it in "
            f"{self.server.log_path}); fix what they name and run `make soak` again."
        )

    def stop(self) -> None:
        self.stopping_at = time.time()
        self.server.stop()


# --- the clients -----------------------------------------------------------------------------


class Locust:
    """locust, headless, in a process of its own (bench/serving/locustfile.py)."""

    def __init__(self, url: str, run_dir: Path, *, seconds: int, clients: int, wait: str):
        self.stats = run_dir / "locust.json"
        self.process: subprocess.Popen | None = None
        low, high = wait.split("-")
        self.env = dict(
            os.environ,
            SOAK_WORLD=str(run_dir / "world.json"),
            SOAK_STATS=str(self.stats),
            SOAK_WRITES=str(run_dir / "writes.jsonl"),
            SOAK_PROGRESS=str(run_dir / "locust-progress.json"),
            SOAK_WAIT_MIN=low,
            SOAK_WAIT_MAX=high,
        )
        self.command = [
            sys.executable,
            "-m",
            "locust",
            "-f",
            str(ROOT / "bench" / "serving" / "locustfile.py"),
            "--headless",
            "--users",
            str(clients),
            "--spawn-rate",
            str(clients),
            "--run-time",
            f"{seconds}s",
            "--host",
            url,
            "--only-summary",
            "--exit-code-on-error",
            "0",
            "--loglevel",
            "WARNING",
            "--stop-timeout",
            "5",
        ]
        print(
            f"Soaking for {seconds} s with {clients} locust clients waiting {wait} s between requests "
            f"(a progress line every 10 s)",
            flush=True,
        )

    def start(self) -> None:
        self.process = subprocess.Popen(self.command, cwd=ROOT, env=self.env)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def wait(self) -> dict:
        code = self.process.wait()
        if code != 0 or not self.stats.exists():
            sys.exit(
                f"error: locust stopped with status {code} before writing its figures; its own message is "
                f"above (`{' '.join(self.command[2:4])}` with SOAK_WORLD={self.env['SOAK_WORLD']})."
            )
        return json.loads(self.stats.read_text())


class LiveClients:
    """bench/live/soak.py in a process of its own: the shared boards' members and the /ws/me
    listeners. Started before the load (every socket open first), stopped after the drain."""

    def __init__(self, run_dir: Path, site: Site, world: dict, args):
        self.config, self.results = run_dir / "live-config.json", run_dir / "live.json"
        self.progress = run_dir / "live-progress.json"
        self.process: subprocess.Popen | None = None
        self.config.write_text(
            json.dumps(
                {
                    "url": site.url,
                    "ws": site.ws,
                    "seconds": args.seconds,
                    "op_every": [args.op_min, args.op_max],
                    "password": PASSWORD,
                    **world["live"],
                }
            )
        )
        self.boards = len(world["live"]["boards"])
        self.sockets = sum(len(b["members"]) for b in world["live"]["boards"]) + len(world["live"]["listeners"])

    def start(self, timeout: float = 120) -> None:
        print(f"Opening {self.sockets} WebSockets (the shared boards' members, the /ws/me listeners)", flush=True)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.live.soak", str(self.config), str(self.results), str(self.progress)], cwd=ROOT
        )
        self._wait_phase({"drawing"}, timeout, "open its sockets")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def phase(self) -> dict:
        try:
            return json.loads(self.progress.read_text())
        except (OSError, ValueError):
            return {}

    def _wait_phase(self, phases: set[str], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while self.phase().get("phase") not in phases:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                sys.exit(
                    f"error: bench/live/soak.py did not {what} within {timeout:.0f} s "
                    f"(exit status {self.process.poll()}); its message is above."
                )
            time.sleep(0.2)

    def wait_settled(self) -> None:
        self._wait_phase({"settled"}, 90, "finish drawing")

    def settled_boards(self) -> list[dict]:
        """Each shared board's figures, written when the drawing settled (bench/live/soak.py)."""
        return json.loads(self.results.with_name(self.results.stem + "-boards.json").read_text())

    def stop(self) -> dict:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            sys.exit("error: bench/live/soak.py did not stop within 60 s of SIGTERM")
        if not self.results.exists():
            sys.exit(
                f"error: bench/live/soak.py stopped with status {self.process.returncode} before writing "
                f"{self.results}; its message is above."
            )
        return json.loads(self.results.read_text())


# --- watching: samples and the progress line ------------------------------------------------


class Progress:
    """The line printed with every sample: locust's figures, the WebSocket clients', the sample's."""

    def __init__(self, run_dir: Path, pools: int):
        self.locust, self.live, self.pools = run_dir / "locust-progress.json", run_dir / "live-progress.json", pools

    @staticmethod
    def _read(path: Path) -> dict:
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            return {}

    def __call__(self, sample: dict) -> None:
        http, ws = self._read(self.locust), self._read(self.live)
        rss = sum(p["rss_kib"] for p in sample["processes"].values()) / 1024
        queue = sample.get("queue", {})
        print(
            f"  soak {sample['t']:5.0f} s{' (drain)' if sample['phase'] == 'drain' else ''}: "
            f"{http.get('requests', 0):,} requests, {http.get('failures', 0):,} failed, "
            f"{http.get('rps_now', 0):,.0f} req/s now, p50 {http.get('p50_ms', 0):.0f} ms, "
            f"p99 {http.get('p99_ms', 0):.0f} ms, {http.get('posts', 0):,} boards posted | WebSockets: "
            f"{ws.get('acked', 0):,} ops, {ws.get('deliveries', 0):,} deliveries, {ws.get('feed_notices', 0):,} "
            f"feed notices, {ws.get('errors', 0):,} errors | PostgreSQL {sample['pg_median']:g} connections "
            f"(highest {sample['pg_max']}, pools {self.pools}), RSS {rss:,.0f} MiB in {len(sample['processes'])} processes, "
            f"{queue.get('queued', 0):,} tasks queued",
            flush=True,
        )


def make_sampler(site: Site, run_dir: Path, *, pools: int) -> Sampler:
    """bench/harness/sampler.py's Sampler on the site's processes (supervisord's tree), this database,
    the data Redis, the plain Redis when it is another server, and the queue (backlog())."""
    import redis
    from django.conf import settings
    from psycopg.conninfo import make_conninfo

    from ugcsite.platform.redis import get_redis

    db = settings.DATABASES["default"]
    conninfo = make_conninfo(
        host=db["HOST"] or None,
        port=db["PORT"] or None,
        dbname=db["NAME"],
        user=db["USER"] or None,
        password=db.get("PASSWORD") or None,
    )
    pg_port = int(db["PORT"] or 5432) if db["HOST"] and not db["HOST"].startswith("/") else None
    if settings.REDIS_CLUSTER or urlsplit(settings.REDIS_URL).netloc != urlsplit(settings.CELERY_BROKER_URL).netloc:
        servers = {"data": get_redis(), "plain": redis.Redis.from_url(settings.CELERY_BROKER_URL)}
    else:  # scripts/with-servers.sh: one server, the data in db 0, the broker, cache and Channels in 13-15
        servers = {"data and plain (one server)": get_redis()}
    return Sampler(
        root_pid=site.supervisord_pid,
        pg_port=pg_port,
        pg_conninfo=conninfo,
        redis_servers=servers,
        queue_depth=backlog,
        path=run_dir / "samples.json",
        on_sample=Progress(run_dir, pools),
    )


# --- load, drain ------------------------------------------------------------------------------


def backlog() -> dict:
    """Tasks waiting in the broker's queue (every priority list kombu uses), tasks delivered to
    a worker and not yet acknowledged (acks_late: running or reserved), and outbox rows."""
    import redis
    from django.conf import settings

    from feeds.models import Outbox

    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    names = [queue] + [f"{queue}\x06\x16{p}" for p in (3, 6, 9)]
    return {
        "queued": sum(broker.llen(name) for name in names),
        "unacked": broker.hlen("unacked"),
        "outbox": Outbox.objects.count(),
    }


def wait_drain(*, timeout: int, steady: float = 1.0) -> dict:
    """Poll until nothing is queued, in flight or in the outbox, and that holds for ``steady``
    seconds (a task popped from the queue is in no list for an instant before kombu records it
    unacknowledged); returns the backlog when the load stopped, whether it drained, and how long
    after the load stopped it was first empty for good."""
    at_end = backlog()
    print(
        f"Load stopped; backlog: {at_end['queued']:,} queued tasks, {at_end['unacked']:,} in flight, "
        f"{at_end['outbox']:,} outbox rows. Waiting for it to drain.",
        flush=True,
    )
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
            print(
                f"error: the backlog did not drain within {timeout} s (now {now}); raise SOAK_DRAIN_TIMEOUT "
                f"if the machine is busy, or read the worker's log.",
                flush=True,
            )
            return {"at_end": at_end, "drained": False, "left": now, "seconds": None}
        if time.monotonic() - last_print >= 5:
            last_print = time.monotonic()
            print(
                f"  draining {last_print - started:4.0f} s: {now['queued']:,} queued, {now['unacked']:,} in flight, "
                f"{now['outbox']:,} outbox rows",
                flush=True,
            )
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
    from ugcsite.platform.redis import get_redis

    redis = get_redis()
    user_ids = list(get_user_model().objects.order_by("id").values_list("id", flat=True))
    author_of = dict(Board.objects.filter(state=Board.State.PUBLISHED).values_list("id", "author_id"))
    followed: dict[int, dict[int, datetime]] = defaultdict(dict)  # reader -> {author: followed since}
    followers: dict[int, set[int]] = defaultdict(set)
    for reader, author, since in Follow.objects.values_list("follower_id", "followee_id", "created_at").iterator(
        chunk_size=20_000
    ):
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
            chunk = user_ids[start : start + batch]
            pipe = redis.pipeline(transaction=False)
            for user_id in chunk:
                pipe.zrange(keys.home_timeline(user_id), 0, -1)
                pipe.zrange(social_keys.following(user_id), 0, -1)
                pipe.zrange(social_keys.followers(user_id), 0, -1)
            answers = pipe.execute()
            for n, user_id in enumerate(chunk):
                head, following_set, follower_set = answers[3 * n : 3 * n + 3]
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
    return {
        "soak_boards": len(soak_boards),
        "pairs": sum(len(w) for w in expected.values()),
        "readers": len(expected),
        "pages": pages,
        "misses": misses,
        "missed": missed,
        "served_extras": served_extras,
        "stale_in_head": sum(stale_in_head.values()),
        "stale_readers": sum(1 for v in stale_in_head.values() if v),
        "graph_mismatches": graph_mismatches,
        "edges_now": sum(len(v) for v in followed.values()),
        "edges_made_in_soak": follows_made,
        "head_mean": sum(head_sizes) / len(head_sizes) if head_sizes else 0,
    }


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
    from ugcsite.platform.redis import get_redis

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
        where = (
            "in the hot head"
            if redis.zscore(keys.home_timeline(reader), board_id) is not None
            else "in the archive"
            if TimelineChunk.objects.filter(owner_id=reader, timeline="p", ids__contains=[board_id]).exists()
            else "nowhere in the feed"
        )
        unfollows = [w for w in log if w["op"] == "unfollow" and w["target"] == author and 0 <= w["t"] - posted <= 10]
        own = [
            f"{w['op']} at {w['t'] - posted:+.1f} s"
            for w in log
            if w["who"] == name_of[reader] and w["target"] == author
        ]
        lines.append(
            f"{name_of[reader]} lacks board {board_id} by {author} ({followers:,} followers: {batches} fan-out "
            f"batch(es) of {settings.FANOUT_BATCH_SIZE}); follows {author} "
            + (
                "since the world was built (the score every world edge shares in F)"
                if since == world_since
                else f"since {posted - since.timestamp():.1f} s before the post"
            )
            + f"; the board is {where}; following set holds {author}: "
            f"{redis.zscore(social_keys.following(reader), board.author_id) is not None}; {len(unfollows)} "
            f"unfollow(s) of {author} in the 10 s after the post; the reader's own writes on {author}: {own or 'none'}"
        )
    if len(missed) > most:
        lines.append(f"... and {len(missed) - most:,} more")
    return lines


# --- the WebSocket checks --------------------------------------------------------------------


def check_live_docs(boards: list[dict]) -> dict:
    """Each shared board's doc in PostgreSQL (what GET /api/v1/boards/{id} serves, once compacted)
    must hold exactly the elements its ops left (bench/live/soak.py replays them in seq order);
    compaction runs when the last editor leaves and on beat's schedule, so this waits up to
    DOC_WAIT seconds for it."""
    from feeds.models import Board

    deadline = time.monotonic() + DOC_WAIT
    left = {b["id"]: set(b["elements"]) for b in boards}
    differences: dict[int, str] = {}
    while True:
        for board_id, want in list(left.items()):
            have = {e.get("id") for e in Board.objects.get(pk=board_id).doc.get("elements", [])}
            if have == want:
                del left[board_id]
                differences.pop(board_id, None)
            else:
                differences[board_id] = (
                    f"board {board_id}: the doc lacks {len(want - have)} element(s) the ops left "
                    f"and holds {len(have - want)} they removed or never added"
                )
        if not left or time.monotonic() > deadline:
            return {
                "boards": len(boards),
                "matching": len(boards) - len(left),
                "differences": list(differences.values()),
            }
        time.sleep(1)


def check_listeners(listeners: list[dict], *, load_end: float) -> dict:
    """Every board that reached a listener's feed while they listened must have been announced on
    their /ws/me ("feed"): the boards posted from LISTEN_MARGIN after their hello to the end of the
    load by people they follow (the load never changes whom a listener follows), less those of
    authors too big to push to (hybrid fan-out merges them at read time, with no notice). A notice
    of a board by someone they do not follow is counted as unexpected."""
    from django.contrib.auth import get_user_model

    from feeds.models import Board
    from feeds.timelines import hybrid
    from social.models import Follow

    User = get_user_model()
    figures = {
        "listeners": len(listeners),
        "expected": 0,
        "received": 0,
        "missing": 0,
        "unexpected": 0,
        "unread_messages": sum(x["unread"] for x in listeners),
        "examples": [],
        "by_session": sum(1 for x in listeners if x["by_session"]),
    }
    end = datetime.fromtimestamp(load_end, UTC)
    for x in listeners:
        figures["received"] += len(x["feed"])
        if x["connected_at"] is None:
            continue  # never opened: reported with the connection errors
        user_id = User.objects.get(username=x["name"]).pk
        followed = set(Follow.objects.filter(follower_id=user_id).values_list("followee_id", flat=True))
        start = datetime.fromtimestamp(x["connected_at"] + LISTEN_MARGIN, UTC)
        owed = {
            board_id
            for board_id, author_id in Board.objects.filter(
                author_id__in=followed, state=Board.State.PUBLISHED, created_at__gte=start, created_at__lte=end
            ).values_list("id", "author_id")
            if not hybrid.board_never_pushed(author_id, board_id)
        }
        heard = set(x["feed"])
        missing = owed - heard
        author_of = dict(Board.objects.filter(id__in=heard).values_list("id", "author_id"))
        unexpected = {b for b in heard if author_of.get(b) not in followed}
        figures["expected"] += len(owed)
        figures["missing"] += len(missing)
        figures["unexpected"] += len(unexpected)
        for board_id in sorted(missing)[:3]:
            if len(figures["examples"]) < 20:
                figures["examples"].append(f"{x['name']} never heard of board {board_id} on /ws/me")
    return figures


def channel_drops(log: Path) -> dict:
    """Messages the Channels layer dropped, from the site's log: channels_redis logs "N of M
    channels over capacity in group G" (INFO) for each group_send that found a receiving
    process's inbox full, and drops the message. By kind of group: "board" (a shared board's
    ops, presence, cursors: a member's socket reads missed ops back from the op log) and "me"
    (/ws/me notices: nothing reads them back)."""
    dropped: Counter = Counter()
    with open(log, errors="replace") as lines:
        for line in lines:
            if "over capacity in group" in line:
                group = line.split("over capacity in group ", 1)[1].split('"', 1)[0].strip()
                dropped[group.split(".", 1)[0]] += 1
    return dict(dropped)


def site_log_problems(log: Path, *, stopping_at: float | None, most: int = 8) -> dict:
    """The warnings and errors in the site's log (every process writes JSON lines there), by
    logger, and the first ``most`` of them; Celery's warning about running as root is left out,
    and those logged once the site was told to stop (``stopping_at``, epoch seconds) are marked."""
    counts: Counter = Counter()
    first: list[str] = []
    with open(log, errors="replace") as lines:
        for line in lines:
            if not line.startswith("{") or '"level": "INFO"' in line or "superuser privileges" in line:
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("level") not in ("WARNING", "ERROR", "CRITICAL"):
                continue
            stopping = stopping_at is not None and datetime.fromisoformat(entry["time"]).timestamp() >= stopping_at
            counts[f"{entry['level']} {entry.get('logger', '?')}{' (while stopping)' if stopping else ''}"] += 1
            if len(first) < most:
                first.append(
                    f"{entry['time'][11:23]} {entry['level']} {entry.get('logger')}"
                    f"{' (while the site stopped)' if stopping else ''}: "
                    + " ".join(entry.get("message", "").split())[:300]
                )
    return {"counts": dict(counts), "first": first}


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(int(len(ordered) * q), len(ordered) - 1)]


def live_figures(results: dict, docs: dict) -> dict:
    """The shared boards' figures added up (bench/live/soak.py's, one dict a board)."""
    boards = results["boards"]
    total = {
        key: sum(b[key] for b in boards)
        for key in (
            "sent",
            "acked",
            "refused",
            "unacked",
            "expected",
            "delivered",
            "missing",
            "mismatched",
            "gap_count",
            "rehellos",
        )
    }
    latencies = [t for b in boards for t in b["latencies"]]
    return {
        **total,
        "boards": len(boards),
        "members": boards[0]["members"] if boards else 0,
        "errors": [e for b in boards for e in b["errors"]]
        + [f"/ws/me {x['name']}: {e}" for x in results["listeners"] for e in x["errors"]],
        "connect_errors": results["connect_errors"],
        "session_sockets": results["session_sockets"],
        "disagree": [b["id"] for b in boards if not b["members_agree"]],
        "missing_examples": [m for b in boards for m in b["missing_examples"]][:20],
        "gaps": [g for b in boards for g in b["gaps"]][:20],
        "p50_ms": None if not latencies else _percentile(latencies, 0.5) * 1000,
        "p99_ms": None if not latencies else _percentile(latencies, 0.99) * 1000,
        "docs": docs,
    }


# --- report --------------------------------------------------------------------------------


def verdict(f: dict) -> list[str]:
    found = []
    check, load, live, notices = f["check"], f["load"], f["live"], f["notices"]
    if check["misses"]:
        found.append(f"{check['misses']:,} (reader, board) pairs missed (each is described above)")
    if check["served_extras"] or check["stale_in_head"]:
        found.append(f"extras: {check['served_extras']:,} served, {check['stale_in_head']:,} left in hot heads")
    if check["graph_mismatches"]:
        found.append(f"{check['graph_mismatches']:,} follow edges differ between Redis and PostgreSQL")
    if load["failures"]:
        where = ", ".join(f"{n}: {e['failures']}" for n, e in load["by_name"].items() if e["failures"])
        found.append(
            f"{load['failures']:,} requests failed: {load['failures_by_status']} ({where}; the site's "
            f"warnings and errors are listed above)"
        )
    if not f["drain"]["drained"]:
        found.append(f"the backlog did not drain: {f['drain']['left']}")
    if live["connect_errors"]:
        found.append(
            f"{len(live['connect_errors'])} WebSockets were not opened: " + "; ".join(live["connect_errors"][:5])
        )
    if live["errors"]:
        found.append(f"{len(live['errors'])} WebSocket errors: " + "; ".join(live["errors"][:5]))
    if live["unacked"] or live["refused"]:
        found.append(f"ops never acknowledged: {live['unacked']:,} unanswered, {live['refused']:,} refused")
    if live["missing"]:
        found.append(
            f"{live['missing']:,} of {live['expected']:,} op deliveries missing: "
            + "; ".join(live["missing_examples"][:5])
        )
    if live["mismatched"] or live["disagree"]:
        found.append(
            f"members saw different ops under one seq ({live['mismatched']:,}) or end with different "
            f"drawings (boards {live['disagree']})"
        )
    if live["gap_count"]:
        found.append(f"{live['gap_count']:,} gaps in the seqs a member received: " + "; ".join(live["gaps"][:5]))
    if live["docs"]["differences"]:
        found.append("shared boards' docs differ from their ops: " + "; ".join(live["docs"]["differences"][:5]))
    if notices["missing"] or notices["unexpected"]:
        cause = (
            f" (the Channels layer dropped {f['dropped']['me']:,} messages to /ws/me groups: the live process's "
            f'inbox was full, channels_redis "over capacity" in the site\'s log)'
            if f["dropped"].get("me")
            else ""
        )
        found.append(
            f"/ws/me: {notices['missing']:,} of {notices['expected']:,} feed notices missing, "
            f"{notices['unexpected']:,} unexpected{cause}: " + "; ".join(notices["examples"][:5])
        )
    return found + growth_problems(f["growth"])


def _ms(value) -> str:
    return "—" if value is None else f"{value:,.0f}"


def _g(value) -> str:
    return "—" if value is None else f"{value:g}"


def _mib(kib) -> str:
    return "—" if kib is None else f"{kib / 1024:,.1f}"


def report(f: dict) -> str:
    load, drain, check, lag, world, args = f["load"], f["drain"], f["check"], f["lag"], f["world"], f["args"]
    live, notices, growth = f["live"], f["notices"], f["growth"]
    before, after = f["load_avg"]
    failures = ", ".join(f"{n:,} × {s}" for s, n in sorted(load["failures_by_status"].items())) or "none"
    ws_errors = (
        len(live["connect_errors"])
        + len(live["errors"])
        + live["unacked"]
        + live["refused"]
        + live["missing"]
        + live["gap_count"]
        + notices["missing"]
    )
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    defaults = (
        ("SOAK_CLIENTS", "clients", 40),
        ("SOAK_WAIT", "wait", "0.1-0.5"),
        ("SOAK_PEOPLE", "people", 3000),
        ("SOAK_LIVE_BOARDS", "live_boards", 10),
        ("SOAK_LIVE_CLIENTS", "live_clients", 4),
        ("SOAK_LISTENERS", "listeners", 20),
        ("SOAK_OP_EVERY", "op_every", "1-2"),
    )
    command = (
        "make soak"
        + ("" if args["seconds"] == 300 else f" SOAK_SECONDS={args['seconds']}")
        + "".join(f" {name}={args[key]}" for name, key, default in defaults if args[key] != default)
    )
    at_end = drain["at_end"]
    first = f["samples"][0]
    end = [s for s in f["samples"] if s["phase"] == "load"][-1]
    redis_end = ", ".join(
        f"{k.removeprefix('redis_')} {end[k] / 2**20:,.0f} MiB (at the start {first[k] / 2**20:,.0f})"
        for k in sorted(end)
        if k.startswith("redis_")
    )
    lines = [
        "# Soak: the shipped stack under a mixed load, watched for growth, then nothing lost",
        "",
        f"{when} on {platform.node()}: {os.cpu_count()} cores, {platform.platform()}, Python "
        f"{platform.python_version()}; `{command}`, {f['minutes']:.1f} minutes in all. The site as `make run` serves "
        f"it, started through scripts/serve.sh under supervisord: {f['site']}. Everything on this one machine: "
        f"PostgreSQL, Redis, the site, locust and the WebSocket clients. Load average {before[0]:.2f} before the soak, "
        f"{after[0]:.2f} after it.",
        "",
        f"World: {world['people']:,} people ({world['members']:,} of them with a password), {world['edges']:,} follow "
        f"edges (most followed {world['max_followers']:,} followers, median {world['median_followers']}), "
        f"{world['boards']:,} boards. For {args['seconds']} s: {args['clients']} locust clients, each waiting "
        f"{args['wait']} s between requests, three in five on the API as a random person (~90% feed reads, a quarter "
        f"followed by the next page; ~5% posts, the poster drawn with the world's Zipf weights; ~5% follows and "
        f"unfollows), one in five on the pages signed out, one in five on the pages signed in (logged in through the "
        f"login form, now and then out and in again as someone else); beside them {live['boards']} shared boards with "
        f"{live['members']} members each, every member drawing an op every {args['op_every']} s over its WebSocket "
        f"(one member a board by session cookie, the others by bearer token), and {notices['listeners']} people on "
        f"/ws/me ({notices['by_session']} by session).",
        "",
        "| figure | value |",
        "|---|---|",
        f"| HTTP requests/s | **{load['rps']:,.1f}** ({load['requests']:,} requests in {load['seconds']:,.0f} s) |",
        f"| HTTP latency p50 / p99 (locust) | **{_ms(load['p50_ms'])} ms / {_ms(load['p99_ms'])} ms** |",
        f"| errors | **{load['failures']:,} HTTP** ({failures}); **{ws_errors:,} WebSocket** (sockets refused or "
        f"closed, error messages, ops unanswered or refused, deliveries and feed notices missing, seq gaps) |",
        f"| PostgreSQL connections, the site's processes | **max {growth['pg_max']}, at the end of the load "
        f"{growth['pg_end']:g}** (every pool full: {growth['pools']}; read every second from /proc, the end the median "
        f"of the last 10 s; held throughout: {_g(growth['pg_held_start'])} at the start of the last two thirds, "
        f"{_g(growth['pg_held_end'])} at the end; PostgreSQL's own count of them, application_name ugcsite-*: "
        f"max {growth['pg_named_max']}) |",
        f"| PostgreSQL client backends, all (pg_stat_activity) | max {growth['pg_all_max']}, at the end of the load "
        f"{growth['pg_all_end']} (budget {growth['budget']}; the soak's own connections included) |",
        f"| Redis used_memory | {redis_end} |",
        f"| plot | `{f['plot']}` ({growth['samples']} samples, one every {SAMPLE_EVERY:.0f} s) |",
        "",
        "RSS and open files of each process of the site (start: the load's first sample; window: the median of the "
        "first samples of the last two thirds of the load; end: the median of its last samples):",
        "",
        "| process | pid | RSS at the start MiB | RSS window start MiB | RSS end MiB | growth | open files window start → end | PostgreSQL connections max / end |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in sorted(growth["processes"].items()):
        grown = f"{row['rss_growth']:+.1%}" if "rss_growth" in row else "—"
        lines.append(
            f"| {name} | {row['pid']} | {_mib(row['rss_first'])} | {_mib(row.get('rss_start'))} | "
            f"{_mib(row.get('rss_end'))} | {grown}{'' if row['rss_ok'] else ' ✗'} | "
            f"{row.get('files_start', 0):.0f} → {row.get('files_end', 0):.0f}{'' if row['files_ok'] else ' ✗'} | "
            f"{row['pg_max']} / {row['pg_end']} |"
        )
    restarts = "; ".join(f"{e['name']} (pid {e['pid']}) {e['what']} at {e['t']:.0f} s" for e in growth["restarts"])
    lines += [
        "",
        f"Processes restarted: {restarts or 'none'}.",
        "",
        "| delivery | value |",
        "|---|---|",
        f"| boards posted over the API | {check['soak_boards']:,} (locust counted {load['posts']:,} answers 201) |",
        f"| follow edges made during the soak | {check['edges_made_in_soak']:,} (edges at the end: {check['edges_now']:,}) |",
        f"| backlog when the load stopped | {at_end['queued']:,} queued tasks, {at_end['unacked']:,} in flight, "
        f"{at_end['outbox']:,} outbox rows |",
        "| drain time (queue, in-flight tasks and outbox empty) | "
        + (f"{drain['seconds']:.1f} s" if drain["seconds"] is not None else f"did not drain: {drain['left']}")
        + " |",
        "| fan-out lag (/metrics: creation to last follower) | "
        + (
            f"{lag['count']:,} fan-outs, mean {lag['mean']:.2f} s, p50 ≤ {lag['p50_le']} s, p99 ≤ {lag['p99_le']} s "
            f"(histogram buckets) |"
            if lag.get("count")
            else f"none recorded {lag.get('error', '')} |"
        ),
        f"| (reader, board) pairs checked | {check['pairs']:,} over {check['readers']:,} readers "
        f"({check['pages']:,} feed pages read) |",
        f"| **misses** | **{check['misses']:,}** |",
        f"| **extras** | **{check['served_extras'] + check['stale_in_head']:,}** ({check['served_extras']:,} served, "
        f"{check['stale_in_head']:,} left in hot heads) |",
        f"| follow edges differing between Redis and PostgreSQL | {check['graph_mismatches']:,} |",
        f"| shared-board ops sent / acknowledged | {live['sent']:,} / {live['acked']:,} ({live['refused']:,} refused, "
        f"{live['unacked']:,} unanswered) |",
        f"| **op deliveries to the other members** | **{live['delivered']:,} of {live['expected']:,}: {live['missing']:,} "
        f"missing**, {live['mismatched']:,} under another seq, {live['gap_count']:,} seq gaps, {live['rehellos']:,} "
        f"hellos again |",
        f"| op broadcast latency, send to the last member (p50 / p99) | {_ms(live['p50_ms'])} ms / {_ms(live['p99_ms'])} ms |",
        f"| shared boards' docs holding what their ops left | {live['docs']['matching']} of {live['docs']['boards']} |",
        '| messages the Channels layer dropped (channels_redis "over capacity" in the site\'s log) | '
        + (", ".join(f"{n:,} to {kind} groups" for kind, n in sorted(f["dropped"].items())) or "none")
        + " |",
        f"| **/ws/me feed notices** | **{notices['expected']:,} owed, {notices['missing']:,} missing**, "
        f"{notices['unexpected']:,} unexpected ({notices['received']:,} received in all, "
        f"{notices['unread_messages']:,} unread-count messages) |",
        "",
        "| request | count | failures | p50 ms | p99 ms | mean ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, s in sorted(load["by_name"].items(), key=lambda kv: -kv[1]["requests"]):
        lines.append(
            f"| {name} | {s['requests']:,} | {s['failures']:,} | {_ms(s['p50_ms'])} | {_ms(s['p99_ms'])} | "
            f"{_ms(s['mean_ms'])} |"
        )
    if f.get("diagnosis"):
        lines += ["", "Misses, one by one:", ""] + [f"- {line}" for line in f["diagnosis"]]
    if f["logged"]["counts"]:
        counts = ", ".join(f"{n:,} × {kind}" for kind, n in sorted(f["logged"]["counts"].items()))
        lines += ["", f"Warnings and errors in the site's log: {counts}. The first of them:", ""]
        lines += [f"- `{line}`" for line in f["logged"]["first"]]
    if f.get("sampler_errors"):
        lines += ["", "Figures the sampler could not read: " + "; ".join(f["sampler_errors"])]
    lines += [
        "",
        "Latencies are locust's, measured by the client on the same 2 cores as the server (locust rounds times "
        "above 100 ms to two significant figures). A miss is a board posted during the soak that a follower who "
        "followed its author before the post, and still does at the end, cannot page to in their feed "
        "(feeds.selectors.home_feed, hot head and archive); an extra is a board whose author the reader does "
        "not follow at the end, served in their feed or still held in their hot head P. An op delivery is an op "
        "the server acknowledged (sent back to its sender with a seq) reaching another member of the board; a "
        "feed notice is owed to a listener for each board posted, while they listened, by someone they follow.",
        "",
        "Growth is judged over the last two thirds of the load (bench/harness/sampler.py): the site's PostgreSQL connections "
        "are the TCP connections to PostgreSQL's port held by the processes below supervisord (from /proc, every "
        "second), never more than every pool full nor any process above its pool, all client backends never above "
        "the budget (`python -m ugcsite.serving budget`), and "
        "those held throughout each 10 s (the fewest of its readings) no more at the end of the load than at the "
        "start of its last two thirds; each process's RSS may grow at most 10% from the window's start to its end (medians of up to 3 "
        "samples each), its open files at most 10% + 5; and no process may restart. Redis memory grows with the "
        "posts, as it should: drawn, not judged.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
