"""Reads from a streaming replica, and reading your own writes (docs/operations.md, "Replica and
failover"). Imports no app.

With a database alias ``replica`` (``DATABASE_REPLICA_URL``), the GET requests of the views named
in ``REPLICA_READ_VIEWS`` (search, profiles and their boards with the archived pages, the
admin's lists) read the replica; everything else, and every write, uses ``default``.

The rule for reading your own writes is the write's LSN: a request of a signed-in person that
wrote to PostgreSQL records ``pg_current_wal_insert_lsn()`` under that person (Django's cache, for
``REPLICA_RYW_SECONDS``); until the replica has replayed that LSN, that person's reads go to the
primary. A replica that does not answer, is not in recovery (a promoted ex-standby), or is more
than ``REPLICA_MAX_LAG_BYTES`` behind the primary is skipped, never waited on: its state is
probed at most every ``REPLICA_CHECK_SECONDS`` a process, on a connection of its own with a
short connect timeout, and a replica found down stays skipped until the next probe. A replica
that dies between two probes is found by the next request that would read it (its pool waits at
most ``REPLICA_CONNECT_TIMEOUT``), which reads the primary instead.
"""

import logging
import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import psycopg
from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, connections
from django.utils.module_loading import import_string
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

REPLICA = "replica"
# The lag-tolerant reads' alias for the request being served (None: the primary).
_read_alias: ContextVar[str | None] = ContextVar("replica_read_alias", default=None)
_bookkeeping: ContextVar[bool] = ContextVar("replica_bookkeeping", default=False)
_WRITE_VERBS = ("insert", "update", "delete", "merge", "with", "copy", "truncate", "create", "alter", "drop")


def configured() -> bool:
    return REPLICA in settings.DATABASES


def read_alias() -> str:
    """Where a raw SQL read (``connections[read_alias()].cursor()``) goes: what the router
    answers for the ORM's reads, the replica in a lag-tolerant view that may read it, else
    ``default``."""
    return _read_alias.get() or "default"


def lsn_int(text: str) -> int:
    """A ``pg_lsn`` as PostgreSQL prints it (``16/B374D848``) as a byte position."""
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


@dataclass(frozen=True)
class ReplicaState:
    usable: bool
    status: str  # "streaming", "behind", "not in recovery", "unreachable: <error>"
    replay_lsn: int | None = None
    lag_bytes: int | None = None
    checked_at: float = 0.0

    def as_json(self) -> dict:
        return {"status": self.status, "lag_bytes": self.lag_bytes, "used": self.usable}


class _Probe:
    """One connection a process to the replica, and its last answer. Thread-safe."""

    def __init__(self):
        self.lock = threading.Lock()
        self.connection: psycopg.Connection | None = None
        self.state = ReplicaState(usable=False, status="not probed yet")

    def _connect(self) -> psycopg.Connection:
        if self.connection is None or self.connection.closed or self.connection.broken:
            db = connections[REPLICA].settings_dict
            self.connection = psycopg.connect(
                host=db["HOST"],
                port=db["PORT"] or None,
                dbname=db["NAME"],
                user=db["USER"] or None,
                password=db["PASSWORD"] or None,
                connect_timeout=settings.REPLICA_CONNECT_TIMEOUT,
                options=f"-c statement_timeout={int(settings.REPLICA_CONNECT_TIMEOUT * 1000)}",
                application_name="ugcsite-replica-probe",
                autocommit=True,
            )
        return self.connection

    def _drop(self) -> None:
        if self.connection is not None:
            self.connection.close()
        self.connection = None

    def state_now(self, max_age: float) -> ReplicaState:
        """The replica's state, probed again when the last probe is older than ``max_age`` s:
        one query on each of the replica and the primary."""
        with self.lock:
            if time.monotonic() - self.state.checked_at < max_age:
                return self.state
            now = time.monotonic()
            try:
                in_recovery, replay = (
                    self._connect().execute("SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text").fetchone()
                )
            except psycopg.Error as error:
                self._drop()
                self.state = ReplicaState(False, f"unreachable: {type(error).__name__}", checked_at=now)
                return self.state
            if not in_recovery or replay is None:
                self.state = ReplicaState(False, "not in recovery", checked_at=now)
                return self.state
            with connections["default"].cursor() as cursor:
                cursor.execute("SELECT pg_current_wal_insert_lsn()::text")
                primary = lsn_int(cursor.fetchone()[0])
            replay_lsn = lsn_int(replay)
            lag = max(0, primary - replay_lsn)
            usable = lag <= settings.REPLICA_MAX_LAG_BYTES
            self.state = ReplicaState(usable, "streaming" if usable else "behind", replay_lsn, lag, now)
            return self.state

    def mark_down(self, error: Exception) -> None:
        """The replica failed a request: skipped until the next probe finds it well."""
        with self.lock:
            self._drop()
            self.state = ReplicaState(False, f"unreachable: {type(error).__name__}", checked_at=time.monotonic())

    def has_replayed(self, lsn: int) -> bool:
        """Whether the replica, asked now, has replayed ``lsn`` (and is still a standby)."""
        with self.lock:
            try:
                return bool(
                    self._connect()
                    .execute(
                        "SELECT pg_is_in_recovery() AND pg_last_wal_replay_lsn() >= %s::pg_lsn",
                        (f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}",),
                    )
                    .fetchone()[0]
                )
            except psycopg.Error:
                self._drop()
                return False


_probe = _Probe()


def replica_state(max_age: float | None = None) -> ReplicaState:
    """The replica's last known state (probed again when older than ``max_age``, default
    ``REPLICA_CHECK_SECONDS``)."""
    return _probe.state_now(settings.REPLICA_CHECK_SECONDS if max_age is None else max_age)


def _ryw_key(user_id: int) -> str:
    return f"ryw:{user_id}"


def _reader_id(request) -> int | None:
    """Who reads: the bearer token's user, else the session's; None for an anonymous reader."""
    scheme, _, key = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and key.strip():
        return import_string(settings.API_TOKEN_USER)(key.strip())
    user = getattr(request, "user", None)
    return user.pk if user is not None and user.is_authenticated else None


def _writer_id(request) -> int | None:
    """Who wrote: the API's caller (its id, without loading the user), else the session's user."""
    user = getattr(request, "api_user", None)
    if user is None:
        user = getattr(request, "user", None)
    return user.pk if user is not None and user.is_authenticated else None


def read_alias_for(request) -> str:
    """``replica`` when the replica may serve this reader now, else ``default``. Costs a cache
    read for a signed-in reader, and a query on the replica when their last write is newer than
    what the last probe saw replayed."""
    try:
        state = replica_state()
        if not state.usable:
            return "default"
        reader = _reader_id(request)
        written = cache.get(_ryw_key(reader)) if reader is not None else None
    except (DatabaseError, RedisError):  # the primary or the cache is down: the view meets it and answers 503
        return "default"
    if written is None or state.replay_lsn >= written or _probe.has_replayed(written):
        return REPLICA if _replica_connects() else "default"
    return "default"


def _replica_connects() -> bool:
    """Whether the request holds a connection to the replica (a pooled one, checked as it leaves
    the pool; the pool waits at most ``REPLICA_CONNECT_TIMEOUT``). A replica that died since the
    last probe is marked down here, so the process's next requests skip it at once."""
    try:
        connections[REPLICA].ensure_connection()
        return True
    except DatabaseError as error:
        _probe.mark_down(error)
        return False


def _lag_tolerant(request) -> bool:
    match = request.resolver_match
    if request.method not in ("GET", "HEAD") or match is None:
        return False
    if match.app_name == "admin" and (match.url_name or "").endswith("_changelist"):
        return True
    return match.view_name in settings.REPLICA_READ_VIEWS


@contextmanager
def bookkeeping():
    """Writes that no reader reads back on the replica's views (a token's or a session's last
    use): they make the request no writer, so its person keeps reading the replica."""
    token = _bookkeeping.set(True)
    try:
        yield
    finally:
        _bookkeeping.reset(token)


class _WriteSeen:
    """An execute wrapper that notes whether the request sent a statement that writes."""

    def __init__(self):
        self.seen = False

    def __call__(self, execute, sql, params, many, context):
        if not self.seen and not _bookkeeping.get() and sql.lstrip().lower().startswith(_WRITE_VERBS):
            self.seen = True
        return execute(sql, params, many, context)


class ReplicaReadsMiddleware:
    """Sends the lag-tolerant views' reads to the replica (the router below reads the choice),
    and records the LSN of a signed-in person's writes. Nothing at all without a replica."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not configured():
            return self.get_response(request)
        writes = _WriteSeen()
        token = _read_alias.set(None)
        try:
            with connections["default"].execute_wrapper(writes):
                response = self.get_response(request)
        finally:
            _read_alias.reset(token)
        if writes.seen:
            self._remember(request)
        return response

    def process_view(self, request, view, args, kwargs):
        if configured() and _lag_tolerant(request):
            _read_alias.set(read_alias_for(request))

    @staticmethod
    def _remember(request) -> None:
        try:
            writer = _writer_id(request)
            if writer is None:
                return
            # The insert position, not pg_current_wal_lsn() (what is written out): with
            # synchronous_commit off, a commit's record may not be written yet when it returns.
            with connections["default"].cursor() as cursor:
                cursor.execute("SELECT pg_current_wal_insert_lsn()::text")
                lsn = lsn_int(cursor.fetchone()[0])
            cache.set(_ryw_key(writer), lsn, timeout=settings.REPLICA_RYW_SECONDS)
        except (DatabaseError, RedisError) as error:  # the answer is made; a write that failed with it left no LSN
            logger.warning("the LSN of a write was not recorded (%s): its writer may read the replica early", error)


class ReplicaRouter:
    """Reads go where ReplicaReadsMiddleware chose for the request (the primary outside its
    lag-tolerant views); writes and migrations only to the primary."""

    def db_for_read(self, model, **hints):
        return _read_alias.get()

    def db_for_write(self, model, **hints):
        return "default"  # never an instance's own alias: one read from the replica is saved here

    def allow_relation(self, obj1, obj2, **hints):
        return True

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == "default"
