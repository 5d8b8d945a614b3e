"""Backups and point-in-time restore (issue 36), with real parts only: a PostgreSQL cluster of the
test's own that archives its WAL to a pgBackRest repository in a temp folder (scripts/pg-backup.sh
start, as make run sets it up), the site on it as make run serves it (scripts/serve.sh with its
Celery worker and beat), writes through the API, and scripts/pg-backup.sh backup / restore run as
make backup and make restore run them: the site stopped, PostgreSQL restored, Redis rebuilt.

Slow (marker "slow"): 1.5-2.3 minutes each on 2 shared cores, setup included. They run once, in
the plain pass of make test (the cluster pass would test the same restore again)."""

import shutil
import subprocess
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
import redis
from django.conf import settings as django_settings

from ugcsite.serving import Site
from ugcsite.tests.servers import base_env, call, free_port

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = str(ROOT / "scripts" / "pg-backup.sh")
DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}
# The test Redis's databases for the restored site: its data, Celery's broker, the cache and the
# channel layer (make test's servers use 0 and 13-15).
REDIS_DBS = (9, 10, 11, 12)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(django_settings.REDIS_CLUSTER, reason="runs once, in the plain pass of make test"),
]


class Archived:
    """A cluster with WAL archiving and a pgBackRest repository in a folder of its own (mode 755 under
    /tmp: pgBackRest and PostgreSQL run as the postgres user), and the site on it."""

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="ugcsite-pitr-", dir="/tmp"))
        self.dir.chmod(0o755)
        self.port = free_port()
        redis_base = django_settings.REDIS_URL.rsplit("/", 1)[0]
        data, broker, cache, channels = (f"{redis_base}/{db}" for db in REDIS_DBS)
        self.redis_urls = (data, broker, cache, channels)
        self.env = base_env(
            DATABASE_URL=f"postgres://ugcsite@127.0.0.1:{self.port}/ugcsite",
            PG_DATA=str(self.dir / "pg"),
            PG_PORT=str(self.port),
            PG_BACKUP_DIR=str(self.dir / "pgbackrest"),
            REDIS_URL=data,
            CELERY_BROKER_URL=broker,
            CACHE_URL=cache,
            CHANNEL_LAYER_URL=channels,
            RUN_DIR=str(self.dir / "site"),
            STATIC_ROOT=str(self.dir / "static"),
            DJANGO_DEBUG="0",
            SITE_HTTPS="0",
            DJANGO_SECRET_KEY="backup-restore-test",
            READS_FLUSH_SECONDS="1",  # reads reach PostgreSQL within a second or two
            SERVE_TASKS="1",
        )
        self.site: Site | None = None

    def start(self) -> None:
        self.flush_redis()
        self.script("start")
        subprocess.run(["python", "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=self.env, check=True)
        self.site = Site(self.dir / "site", self.env)
        self.site.collect_static()

    def script(self, *args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
        """scripts/pg-backup.sh ARGS, as make backup and make restore run it; its output is printed."""
        done = subprocess.run([SCRIPT, *args], cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout)
        print(f"$ pg-backup.sh {' '.join(args)}  (exit {done.returncode})\n{done.stdout}{done.stderr}")
        if check:
            assert done.returncode == 0, done.stdout + done.stderr
        return done

    def flush_redis(self) -> None:
        for url in self.redis_urls:
            redis.Redis.from_url(url).flushdb()

    def sql(self, query: str, *params) -> list[tuple]:
        with psycopg.connect(self.env["DATABASE_URL"], autocommit=True) as conn:
            return conn.execute(query, params).fetchall()

    def close(self) -> None:
        if self.site:
            self.site.stop()
        subprocess.run([SCRIPT, "stop"], cwd=ROOT, env=self.env, timeout=120)
        self.flush_redis()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def archived():
    cluster = Archived()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()


class Person:
    def __init__(self, base: str, username: str):
        self.base, self.username = base, username
        call(base, "POST", "/api/v1/users", {"username": username, "password": "password123"})
        status, _, body = call(base, "POST", "/api/v1/tokens", {"username": username, "password": "password123"})
        assert status == 201, body
        self.token = body["token"]

    def __call__(self, method: str, path: str, body=None, want: int | None = None):
        status, _, answer = call(self.base, method, path, body, self.token)
        if want is not None:
            assert status == want, (method, path, status, answer)
        return answer

    def post(self, title: str, tags=()) -> int:
        return self("POST", "/api/v1/boards", {"title": title, "kind": "note", "tags": list(tags), "doc": DOC}, 201)[
            "id"
        ]


def now_utc() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f+00")


def titles(answer) -> list[str]:
    return [item["title"] if "title" in item else item["board"]["title"] for item in answer["items"]]


def wait_until(predicate, what: str, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        time.sleep(0.1)


def everything(alice: Person, bob: Person, carol: Person, ids: list[int]) -> dict:
    """Every answer the restore must bring back: profiles, each one's feed, discovery, popular,
    likes, social reading, the follow lists."""
    id_list = ",".join(map(str, ids))
    return {
        "alice's profile": titles(alice("GET", "/api/v1/users/alice/boards", want=200)),
        "carol's profile": titles(alice("GET", "/api/v1/users/carol/boards", want=200)),
        "alice's feed": titles(alice("GET", "/api/v1/feed", want=200)),
        "bob's feed": titles(bob("GET", "/api/v1/feed", want=200)),
        "carol's feed": titles(carol("GET", "/api/v1/feed", want=200)),
        "bob's feed tagged pitr": titles(bob("GET", "/api/v1/feed?tag=pitr", want=200)),
        "discover": titles(bob("GET", "/api/v1/discover", want=200)),
        "discover tagged pitr": titles(bob("GET", "/api/v1/discover?tag=pitr", want=200)),
        "popular by likes": titles(bob("GET", "/api/v1/popular?sort=likes", want=200)),
        "carol's popular among followees": titles(carol("GET", "/api/v1/popular?scope=following", want=200)),
        "likes seen by carol": carol("GET", f"/api/v1/likes?board_ids={id_list}", want=200),
        "reading seen by carol": {
            k: sorted(v) for k, v in carol("GET", f"/api/v1/reading?ids={id_list}", want=200).items()
        },
        "bob follows": sorted(u["username"] for u in bob("GET", "/api/v1/users/bob/following", want=200)["items"]),
        "alice's followers": sorted(
            u["username"] for u in bob("GET", "/api/v1/users/alice/followers", want=200)["items"]
        ),
    }


def test_a_restore_to_a_moment_brings_back_exactly_what_was_committed_before_it(archived):
    archived.site.start()
    base = archived.site.url
    alice, bob, carol = Person(base, "alice"), Person(base, "bob"), Person(base, "carol")
    # Before the moment: follows, boards (one deleted only after it), a like, a read.
    bob("PUT", "/api/v1/users/alice/follow", want=204)
    carol("PUT", "/api/v1/users/bob/follow", want=204)
    bob("PATCH", "/api/v1/me", {"share_reading": True}, want=200)
    kept = alice.post("alice before", tags=["pitr"])
    deleted_later = alice.post("alice before, deleted after")
    carol_board = carol.post("carol before")
    bob("PUT", f"/api/v1/boards/{kept}/like", want=204)
    bob("GET", f"/api/v1/boards/{kept}", want=200)
    wait_until(lambda: archived.sql("SELECT 1 FROM social_read WHERE board_id = %s", kept), "bob's read in PostgreSQL")
    wait_until(lambda: len(titles(bob("GET", "/api/v1/feed"))) == 2, "alice's boards in bob's feed")
    ids = [kept, deleted_later, carol_board]
    before = everything(alice, bob, carol, ids)
    assert before["bob's feed"] == ["alice before, deleted after", "alice before"]
    assert before["reading seen by carol"][str(kept)] == ["bob"]

    time.sleep(1.5)
    moment = now_utc()
    time.sleep(1.5)

    # After it: a board, a deletion, a follow and an unfollow, an unlike, a like, a read.
    later = alice.post("alice after", tags=["pitr"])
    ids.append(later)
    alice("DELETE", f"/api/v1/boards/{deleted_later}", want=204)
    bob("PUT", "/api/v1/users/carol/follow", want=204)
    carol("PUT", "/api/v1/users/alice/follow", want=204)
    bob("DELETE", f"/api/v1/boards/{kept}/like", want=204)
    bob("PUT", f"/api/v1/boards/{carol_board}/like", want=204)
    bob("GET", f"/api/v1/boards/{carol_board}", want=200)
    wait_until(lambda: archived.sql("SELECT 1 FROM social_read WHERE board_id = %s", carol_board), "bob's second read")
    wait_until(lambda: "alice after" in titles(bob("GET", "/api/v1/feed")), "the later board in bob's feed")
    after = everything(alice, bob, carol, ids)
    changed = [name for name in before if before[name] != after[name]]
    assert set(changed) == set(before) - {"carol's profile", "alice's feed"}, f"the later writes changed only {changed}"

    # What cannot be restored is refused with a sentence, and nothing stops.
    too_early = archived.script("restore", "2001-01-01 00:00:00+00", check=False)
    assert too_early.returncode == 1 and "before the oldest backup" in too_early.stderr
    too_late = archived.script("restore", "2999-01-01 00:00:00+00", check=False)
    assert too_late.returncode == 1 and "in the future" in too_late.stderr
    assert titles(bob("GET", "/api/v1/feed", want=200)) == after["bob's feed"]

    # make restore: the site stopped, PostgreSQL restored to the moment, Redis rebuilt.
    started = time.monotonic()
    restored = archived.script("restore", moment)
    print(f"restore: {time.monotonic() - started:.1f} s")
    assert "Stopping the site" in restored.stdout
    assert archived.site.process.poll() is not None, "make restore stopped the site"
    archived.script("start")  # as make run starts it again
    archived.site.start()
    assert everything(alice, bob, carol, ids) == before
    assert archived.sql("SELECT count(*) FROM feeds_board WHERE id = %s", later) == [(0,)]


class Writer(threading.Thread):
    """alice posting boards one after the other through the API until stopped: (id, sent, answered)
    of each one answered 201, times in epoch seconds."""

    def __init__(self, alice: Person):
        super().__init__(daemon=True)
        self.alice, self.posted, self.stopping = alice, [], threading.Event()

    def run(self):
        n = 0
        while not self.stopping.is_set():
            n += 1
            sent = time.time()
            board = self.alice.post(f"w{n}")
            self.posted.append((board, sent, time.time()))


def test_a_backup_taken_while_writes_continue_restores_consistently(archived):
    archived.site.start()
    base = archived.site.url
    alice, bob = Person(base, "alice"), Person(base, "bob")
    bob("PUT", "/api/v1/users/alice/follow", want=204)
    writer = Writer(alice)
    writer.start()
    try:
        wait_until(lambda: len(writer.posted) >= 20, "alice's first boards")
        backup = archived.script("backup", "full")
        label = backup.stdout.split("Took in ")[-1].split(": ", 1)[1].split()[0]
        during = [board for board, sent, answered in writer.posted]
        time.sleep(1.5)
        moment, moment_epoch = now_utc(), time.time()
        time.sleep(1.5)
    finally:
        writer.stopping.set()
        writer.join(timeout=30)
    assert len(writer.posted) > len(during) + 5, "writes went on during and after the backup"

    restored = archived.script("restore", moment)
    assert f"restore backup set {label}" in restored.stdout, "the restore started from the backup taken during writes"
    archived.script("start")
    archived.site.start()
    in_order = [board for board, _, _ in writer.posted]
    present = {
        board
        for (board,) in archived.sql(
            "SELECT id FROM feeds_board WHERE author_id = (SELECT id FROM social_user WHERE username = 'alice')"
        )
    }
    # Consistent: what came back is a prefix of alice's boards, in the order she posted them...
    assert present == set(in_order[: len(present)])
    # ...every one answered before the moment, none sent after it.
    assert {board for board, _, answered in writer.posted if answered < moment_epoch} <= present
    assert not {board for board, sent, _ in writer.posted if sent > moment_epoch} & present
    # The API and bob's feed (rebuilt from PostgreSQL) hold exactly those.
    expected = [board for board in reversed(in_order) if board in present]
    assert all_ids(alice, "/api/v1/users/alice/boards") == expected
    assert all_ids(bob, "/api/v1/feed") == expected


def all_ids(person: Person, path: str) -> list[int]:
    """Every id of a list, page after page (``next`` passed as ``before``)."""
    ids, before = [], None
    while True:
        page = person("GET", f"{path}?limit=50" + (f"&before={before}" if before else ""), want=200)
        ids += [item["id"] for item in page["items"]]
        before = page["next"]
        if not before:
            return ids
