"""A Redis Cluster primary dies under traffic (`make test-cluster`, marker ``failover``).

The test starts a cluster of its own: 3 primaries with one replica each, and a node timeout
of 1 s so that the failover takes seconds. The site's data Redis points at it for the test.
While users sign up and post boards through the API, one primary is killed with SIGKILL:
the one holding discovery's facet counts (``{d}``) and a third of its shards, an author's
timeline and the follower's feed, so every kind of write, a direct script call (the feed's
timeline_page.lua, EVALSHA) and a query by node (discover.lua, each node's pipeline) meet the failover.
Requests may fail while its replica takes over; afterwards the site must answer again with
the client it had before, no board answered 201 may be lost, a request that failed must not
have left a board half-made, and the promoted replica (which has no script cache) must get
its scripts reloaded: no NOSCRIPT reaches anyone.
"""

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.test import override_settings
from redis.crc import key_slot
from redis.exceptions import NoScriptError

from feeds import keys
from feeds.discovery.scripts import scripts
from feeds.models import Board
from ugcsite.platform.redis import REDIS_FAILURES, get_redis
from ugcsite.testing import ApiClient

pytestmark = [
    pytest.mark.failover,
    pytest.mark.skipif(not settings.REDIS_CLUSTER, reason="needs REDIS_CLUSTER=1 (make test-cluster)"),
]

ROOT = Path(__file__).resolve().parents[2]
NODE_TIMEOUT_MS = 1000  # cluster-node-timeout of this cluster: a failover takes about 2-3 times this
FAILOVER_WAIT = 30.0  # seconds the replica has to take over before the test fails
PASSWORD = "password123"
TAG = "failover"
DOC = {
    "width": 100,
    "height": 100,
    "background": "#ffffff",
    "elements": [{"type": "path", "color": "#000000", "width": 2, "points": [[1, 1], [99, 99]]}],
}


def services(function: str, *args: str, env: dict | None = None) -> str:
    """Run a function of scripts/services.sh; its output, or the test fails with its error."""
    result = subprocess.run(
        ["bash", "-c", f'source scripts/services.sh; {function} "$@"', "services.sh", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode != 0:
        pytest.fail(f"scripts/services.sh {function} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result.stdout


class LocalCluster:
    """A throwaway Redis Cluster under ``folder``, one node per port, each asked directly."""

    def __init__(self, folder: Path, ports: list[int]):
        self.folder = folder
        self.ports = ports
        self._clients: dict[int, redis.Redis] = {}

    def node(self, port: int) -> redis.Redis:
        if port not in self._clients:
            self._clients[port] = redis.Redis(port=port, decode_responses=True, socket_timeout=2)
        return self._clients[port]

    def node_id(self, port: int) -> str:
        return self.node(port).execute_command("CLUSTER", "MYID")

    def primary_of(self, key: str) -> int:
        """The port of the primary holding ``key``'s slot, asked of the cluster (not the site's client)."""
        slot = key_slot(key.encode())
        for start, end, primary, *_ in self.node(self.ports[0]).execute_command("CLUSTER", "SLOTS"):
            if start <= slot <= end:
                return int(primary[1])
        raise AssertionError(f"no node of the cluster serves slot {slot} of {key}")

    def replica_of(self, port: int) -> int:
        info = self.node(port).info("replication")
        replicas = [info[name] for name in info if name.startswith("slave") and isinstance(info[name], dict)]
        assert len(replicas) == 1, f"the primary on port {port} should have one replica: {info}"
        return int(replicas[0]["port"])

    def kill(self, port: int) -> int:
        """SIGKILL the redis-server answering on ``port`` (its pid asked of itself); the pid."""
        pid = int(self.node(port).info("server")["process_id"])
        with open(self.folder / str(port) / "redis.pid") as pidfile:
            assert int(pidfile.read()) == pid, f"port {port} is served by pid {pid}, not by this cluster's node"
        os.kill(pid, signal.SIGKILL)
        self._clients.pop(port).close()
        return pid

    def taken_over(self, dead: int, replica: int) -> bool:
        """The replica is a primary with slots in every survivor's view, and every survivor says
        cluster_state:ok."""
        replica_id = self.node_id(replica)
        for port in self.ports:
            if port == dead:
                continue
            client = self.node(port)
            if "cluster_state:ok" not in client.execute_command("CLUSTER", "INFO"):
                return False
            line = next(
                line for line in client.execute_command("CLUSTER", "NODES").splitlines() if line.startswith(replica_id)
            )
            fields = line.split()
            if "master" not in fields[2].split(",") or len(fields) < 9:
                return False
        return True

    def close(self):
        for client in self._clients.values():
            client.close()
        self._clients.clear()


@pytest.fixture
def own_cluster():
    """A 6-node cluster (3 primaries, 1 replica each) for this test alone, the site's data
    Redis while the test runs, REDIS_URL naming the primary the test kills (the one holding
    discovery's facet counts); stopped and deleted afterwards, whatever happened."""
    folder = Path(tempfile.mkdtemp(prefix="ugcsite-failover."))
    ports: list[int] = []
    cluster = LocalCluster(folder, ports)
    try:
        ports += [int(port) for port in services("free_ports", "6").split()]
        services(
            "redis_cluster_start",
            str(folder),
            "1",
            *map(str, ports),
            env={"REDIS_CLUSTER_NODE_TIMEOUT": str(NODE_TIMEOUT_MS)},
        )
        victim = cluster.primary_of(keys.tag_counts())
        get_redis.cache_clear()
        # Sign-ups and log-ins from the test client all come from one address.
        with override_settings(REDIS_URL=f"redis://127.0.0.1:{victim}/0", RATE_LIMIT_AUTH_PER_MINUTE=100_000):
            try:
                yield cluster
            finally:
                if get_redis.cache_info().currsize:
                    get_redis().close()
                get_redis.cache_clear()
    finally:
        get_redis.cache_clear()
        cluster.close()
        if ports:
            services("redis_cluster_stop", str(folder), *map(str, ports))
        shutil.rmtree(folder, ignore_errors=True)


class Traffic:
    """The requests and what they met. A request's phase: "before" the kill, "during" (ended
    after the kill, started before the replica had taken over), "after" (started after)."""

    def __init__(self):
        self.killed, self.taken_over = threading.Event(), threading.Event()
        self.requests = {"before": 0, "during": 0, "after": 0}
        self.failures: list[tuple[str, str, str]] = []  # (phase, request, error)
        self.posted: dict[str, list[int]] = {}  # author -> ids of the boards answered 201
        self.failed_posts: list[tuple[str, str]] = []  # (author, title)
        self.noscript: list[str] = []

    def call(self, what: str, send, expect: int):
        """Send one request; its response if it answered ``expect``, else None (a failure)."""
        started_after = self.taken_over.is_set()
        try:
            response, error = send(), None
        except REDIS_FAILURES as raised:
            response, error = None, f"{type(raised).__name__}: {raised}"
            if isinstance(raised, NoScriptError):  # redis-py drops the NOSCRIPT prefix from the text
                error = f"NOSCRIPT {error}"
        phase = "after" if started_after else ("during" if self.killed.is_set() else "before")
        self.requests[phase] += 1
        if response is not None and b"NOSCRIPT" in response.content:
            self.noscript.append(f"{what}: {response.content[:300]!r}")
        if response is not None and response.status_code != expect:
            error = f"{response.status_code}: {response.content[:300]!r}"
        if error is None:
            return response
        self.failures.append((phase, what, error))
        if "NOSCRIPT" in error:
            self.noscript.append(f"{what}: {error}")
        return None

    def failed(self, phase: str) -> list[tuple[str, str, str]]:
        return [failure for failure in self.failures if failure[0] == phase]

    def sign_up(self, api: ApiClient, username: str) -> ApiClient | None:
        body = {"username": username, "password": PASSWORD}
        if self.call(f"sign up {username}", lambda: api.post("/api/v1/users", body), 201) is None:
            return None
        response = self.call(f"token {username}", lambda: api.post("/api/v1/tokens", body), 201)
        return None if response is None else ApiClient(api.client.__class__(), response.json()["token"])

    def post_board(self, client: ApiClient, author: str, title: str) -> int | None:
        body = {"title": title, "kind": "sketch", "tags": [TAG], "doc": DOC}
        response = self.call(f"post {title!r}", lambda: client.post("/api/v1/boards", body), 201)
        if response is None:
            self.failed_posts.append((author, title))
            return None
        board_id = response.json()["id"]
        self.posted.setdefault(author, []).append(board_id)
        return board_id


def every_id(api: ApiClient, path: str, **query) -> set[int]:
    """Every id a list endpoint holds: timelines walked by ``next``, discover by offset."""
    ids: list[int] = []
    cursor: dict = {}
    while True:
        if path.endswith("/discover"):
            cursor = {"offset": len(ids)}
        response = api.get(path, limit=100, **query, **cursor)
        assert response.status_code == 200, (path, response.content[:500])
        body = response.json()
        ids += [item["id"] for item in body["items"]]
        if path.endswith("/discover"):
            if len(ids) >= body["total"] or not body["items"]:
                return set(ids)
        elif body["next"] is None:
            return set(ids)
        else:
            cursor = {"before": body["next"]}


def noscript_count(node: redis.Redis) -> int:
    """How many NOSCRIPT errors a node has answered since it started (INFO errorstats)."""
    return node.info("errorstats").get("errorstat_NOSCRIPT", {}).get("count", 0)


def test_a_primary_killed_under_traffic_fails_over_and_loses_no_board(own_cluster, api, transactional_db, eager_tasks):
    cluster = own_cluster
    client = get_redis()  # the site's client: it must find the new primary by itself
    victim = cluster.primary_of(keys.tag_counts())
    assert f"redis://127.0.0.1:{victim}/0" == settings.REDIS_URL  # the node the site was told of dies
    replica = cluster.replica_of(victim)
    traffic = Traffic()

    # People, through the API: an author whose timelines live on the victim, one elsewhere, and
    # a reader whose feed lives on the victim, following both.
    author_here = author_elsewhere = reader = None
    people: dict[str, ApiClient] = {}
    for n in range(60):
        username = f"person{n}"
        signed_in = api.as_user(username, PASSWORD)
        here = cluster.primary_of(keys.profile_timeline(api.get(f"/api/v1/users/{username}").json()["id"])) == victim
        if here and author_here is None:
            author_here, people[username] = username, signed_in
        elif here and reader is None:
            reader = signed_in
        elif not here and author_elsewhere is None:
            author_elsewhere, people[username] = username, signed_in
        if author_here and author_elsewhere and reader:
            break
    assert author_here and author_elsewhere and reader, f"60 people and none of the roles filled on :{victim}"
    for username in people:
        assert reader.put(f"/api/v1/users/{username}/follow").status_code == 204

    # Redis does not replicate SCRIPT LOAD; the replica's cache is emptied all the same, so that
    # it surely starts as a new primary without scripts. The old primary has discover.lua cached.
    cluster.node(replica).script_flush()
    assert api.get("/api/v1/discover", tag=TAG).status_code == 200
    assert cluster.node(victim).script_exists(scripts.discover.sha) == [True]
    assert cluster.node(replica).script_exists(scripts.discover.sha) == [False]
    noscript_before = noscript_count(cluster.node(replica))

    warm, abandon = threading.Event(), threading.Event()
    kill: dict = {}

    def fail_over():
        try:
            warm.wait()
            if abandon.is_set():
                return
            traffic.killed.set()
            kill["pid"] = cluster.kill(victim)
            kill["at"] = time.monotonic()
            while time.monotonic() < kill["at"] + FAILOVER_WAIT:
                try:
                    if cluster.taken_over(victim, replica):
                        kill["ok_at"] = time.monotonic()
                        return
                except redis.RedisError:
                    pass  # a survivor busy with the failover: ask again
                time.sleep(0.05)
        except BaseException as error:  # reported by the main thread
            kill["error"] = error
        finally:
            traffic.taken_over.set()

    killer = threading.Thread(target=fail_over, name="kill-a-primary", daemon=True)
    killer.start()
    try:
        # Each round a newcomer signs up and posts, both authors post, discovery is asked (the
        # direct script call) and the reader reads. The primary dies after the third round; the
        # rounds go on until the replica has taken over, then three more.
        round_no = rounds_after = 0
        while rounds_after < 3:
            after = traffic.taken_over.is_set()
            newcomer = f"new{round_no}"
            signed_in = traffic.sign_up(api, newcomer)
            if signed_in is not None:
                traffic.post_board(signed_in, newcomer, f"{newcomer} first board")
            for username, author in people.items():
                traffic.post_board(author, username, f"{username} board {round_no}")
            traffic.call("discover", lambda: api.get("/api/v1/discover", tag=TAG), 200)
            traffic.call("feed", lambda: reader.get("/api/v1/feed"), 200)
            round_no += 1
            rounds_after += after
            if round_no == 3:
                warm.set()
    finally:
        abandon.set()
        warm.set()
        killer.join(FAILOVER_WAIT + 5)
    assert "error" not in kill, f"killing the primary on :{victim} failed: {kill.get('error')!r}"
    assert "ok_at" in kill, (
        f"the replica on :{replica} did not take over within {FAILOVER_WAIT}s of the "
        f"kill of :{victim}; see {cluster.folder}/*/redis.log"
    )
    failed = {phase: len(traffic.failed(phase)) for phase in traffic.requests}
    print(
        f"\nfailover: primary :{victim} (pid {kill['pid']}) killed, replica :{replica} primary and "
        f"cluster_state:ok {kill['ok_at'] - kill['at']:.2f}s later; requests {traffic.requests}; "
        f"failed {failed}; NOSCRIPT seen {len(traffic.noscript)}"
    )

    assert traffic.requests["during"] > 0, "no request ran while the failover did: the test tested nothing"
    assert traffic.failed("before") == []
    assert traffic.failed("after") == [], "the site did not answer again once the replica had taken over"
    # While it fails over the site says so: 503 with Retry-After (ugcsite.middleware), never a 500.
    assert {error.split(":")[0] for _, _, error in traffic.failed("during")} <= {"503"}, traffic.failed("during")[:5]
    assert traffic.noscript == []
    assert get_redis() is client

    # The site answers: a newcomer signs up, posts, and reads the board back.
    fresh = traffic.sign_up(api, "newcomer")
    assert fresh is not None, traffic.failures[-2:]
    board_id = traffic.post_board(fresh, "newcomer", "after the failover")
    assert board_id is not None, traffic.failures[-1:]
    response = api.get(f"/api/v1/boards/{board_id}")
    assert response.status_code == 200 and response.json()["title"] == "after the failover", response.content

    # No board lost, none half-made: each author's boards in PostgreSQL (every 201, and any
    # board a failed request committed) are exactly their list and their discovery results,
    # and the followed authors' are exactly the reader's feed.
    feed = every_id(reader, "/api/v1/feed")
    followed: set[int] = set()
    for author in sorted({*traffic.posted, *(author for author, _ in traffic.failed_posts)}):
        stored = set(
            Board.objects.filter(author__username=author, state=Board.State.PUBLISHED).values_list("id", flat=True)
        )
        answered = set(traffic.posted.get(author, []))
        listed = every_id(api, f"/api/v1/users/{author}/boards")
        discovered = every_id(api, "/api/v1/discover", author=author)
        assert answered <= stored, f"{author}: answered 201 yet not in PostgreSQL: {answered - stored}"
        assert answered <= listed, f"{author}: answered 201 yet lost from their list: {answered - listed}"
        assert answered <= discovered, f"{author}: answered 201 yet lost from discover: {answered - discovered}"
        assert listed == stored, (
            f"{author}: a failed post left a board half-made (in PostgreSQL, not listed): {stored ^ listed}"
        )
        assert discovered == stored, f"{author}: a failed post left a board half-made (discover): {stored ^ discovered}"
        if author in people:
            followed |= stored
    assert feed == followed, f"the reader's feed lost or gained boards: {feed ^ followed}"

    # The promoted replica answered NOSCRIPT for discover.lua (it had no scripts) and the site
    # loaded the script there: nobody saw the error.
    promoted = cluster.node(replica)
    assert cluster.primary_of(keys.tag_counts()) == replica
    assert promoted.script_exists(scripts.discover.sha) == [True]
    absorbed = noscript_count(promoted) - noscript_before
    assert absorbed > 0, "the promoted replica never answered NOSCRIPT: the reload was not exercised"
    kept = sum(1 for _, title in traffic.failed_posts if Board.objects.filter(title=title).exists())
    print(
        f"failover: posts answered 201: {sum(map(len, traffic.posted.values()))}; posts failed: "
        f"{len(traffic.failed_posts)} (left in PostgreSQL: {kept}); NOSCRIPT answered by "
        f"the promoted replica and absorbed by the site: {absorbed}"
    )
