"""The one way to reach the data Redis: ``get_redis()``, the Lua script runner, and work over
many owners grouped by node.

A plain server by default (``REDIS_URL``); a Redis Cluster when ``REDIS_CLUSTER`` is set,
with ``REDIS_URL`` naming any one of its nodes. Every key the site writes carries its
owner's hash tag (see ``feeds/keys.py``, ``social/keys.py``), so per-user work stays on one
slot either way. Celery's broker and Django's cache stay on a plain Redis (settings).

Scripts (``Scripts``, one per ``.lua`` file of a folder) run the same on both:
- called directly, with EVALSHA; on NOSCRIPT (a restart, a failover, a new node) the script
  is loaded again, on every primary of a cluster, and the call repeated;
- queued in a pipeline, with EVAL: the source travels with each call, so no NOSCRIPT can break
  a pipeline halfway, and redis-py's cluster pipeline (which refuses EVALSHA) routes it by
  its keys. Redis caches the compiled script by its digest either way.
We chose scripts over Redis 7 functions (FUNCTION LOAD / FCALL): functions survive a restart
and a failover, but a new or emptied node still needs them loaded, so the same recovery would
be needed, and a script's source beside the code that calls it is easier to read and change.

Work over many owners in one script call (a fan-out batch, a reading query) goes
``by_node``: on a cluster, each call holds owners whose keys live on one node, possibly in
many slots. The cluster refuses declared KEYS of several slots (CROSSSLOT), so such a script
takes its keys in ARGV, after its other arguments, and declares
``#!lua flags=allow-cross-slot-keys`` (Redis 7), which lets it touch any slot of the node it
runs on. Each node gets one pipeline: one round trip per node, however many slots it holds.
"""

import asyncio
import hashlib
import os
import weakref
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

import redis
import redis.asyncio
import redis.asyncio.cluster
from django.conf import settings
from redis.cluster import RedisCluster
from redis.crc import key_slot
from redis.exceptions import (
    ClusterDownError,
    ConnectionError,
    NoScriptError,
    RedisClusterException,
    RedisError,
    ResponseError,
    TimeoutError,
)

# How often a batch by node is tried again after the cluster's layout changed under it.
NODE_BATCH_ATTEMPTS = 3

# What a call to the data Redis raises when it gets no answer (a node down, a failover under
# way): redis-py's errors, and the cluster client's own when no node it knows answers.
REDIS_FAILURES = (RedisError, RedisClusterException)
# The ones that may pass by themselves (a restart, a failover, a hung server): a Celery task
# that is idempotent is tried again on these (feeds.tasks), a request answers 503 (middleware).
REDIS_TRANSIENT = (ConnectionError, TimeoutError, ClusterDownError)


@lru_cache(maxsize=1)
def get_redis() -> redis.Redis | RedisCluster:
    """The shared client of this process; redis-py's pool reconnects after a fork, and after a
    restart of the server (the next command opens a new connection). A server that takes no
    connection within REDIS_CONNECT_TIMEOUT, or answers no command within REDIS_SOCKET_TIMEOUT
    (hung, or gone without closing its sockets), raises TimeoutError: a 503, never a hung
    request or worker."""
    timeouts = {
        "socket_timeout": settings.REDIS_SOCKET_TIMEOUT,
        "socket_connect_timeout": settings.REDIS_CONNECT_TIMEOUT,
    }
    if settings.REDIS_CLUSTER:
        return RedisCluster.from_url(settings.REDIS_URL, decode_responses=True, **timeouts)
    return redis.Redis.from_url(settings.REDIS_URL, decode_responses=True, health_check_interval=30, **timeouts)


ASYNC_CONNECTIONS = 256  # at most, an event loop's connections to the data Redis (to each node of a cluster)
_async_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, object]" = weakref.WeakKeyDictionary()
_batchers: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Batcher]" = weakref.WeakKeyDictionary()


def get_async_redis() -> redis.asyncio.Redis | redis.asyncio.cluster.RedisCluster:
    """The data Redis for the running event loop (an ASGI process's live sockets): the same
    server and timeouts as ``get_redis()``, without a thread a call. One client a loop (a client
    belongs to the loop that made it). Busy callers go through ``get_async_batcher()``."""
    loop = asyncio.get_running_loop()
    client = _async_clients.get(loop)
    if client is None:
        options = {
            "decode_responses": True,
            "max_connections": ASYNC_CONNECTIONS,
            "socket_timeout": settings.REDIS_SOCKET_TIMEOUT,
            "socket_connect_timeout": settings.REDIS_CONNECT_TIMEOUT,
        }
        if settings.REDIS_CLUSTER:
            client = redis.asyncio.cluster.RedisCluster.from_url(settings.REDIS_URL, **options)
        else:
            client = redis.asyncio.Redis.from_url(settings.REDIS_URL, health_check_interval=30, **options)
        _async_clients[loop] = client
    return client


_last_batcher: tuple = (None, None)  # (loop, its batcher): a process runs one loop, asked for it per op


def get_async_batcher() -> "Batcher":
    """The data Redis's Batcher for the running event loop."""
    global _last_batcher
    loop = asyncio.get_running_loop()
    if _last_batcher[0] is loop:
        return _last_batcher[1]
    batcher = _batchers.get(loop)
    if batcher is None:
        batcher = _batchers[loop] = Batcher(get_async_redis())
    _last_batcher = (loop, batcher)
    return batcher


class Batcher:
    """Commands that many tasks of one event loop send at once go to Redis together: every command
    queued during one turn of the loop (and while the previous batch was under way) is one
    pipeline, one write and one round trip, with one batch in flight at a time. A busy process
    (hundreds of sockets sending ops) then costs Redis a few pipelines a millisecond instead of a
    command, a connection and a wake-up each. ``call(queue)``: ``queue(pipe)`` queues one command;
    the answer is that command's (its error raised)."""

    def __init__(self, client):
        self.client = client
        self.waiting: list[tuple[Callable, asyncio.Future]] = []
        self.running = False

    def call(self, queue: Callable) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        self.waiting.append((queue, done))
        if not self.running:
            self.running = True
            loop.create_task(self._run())
        return done

    async def _run(self) -> None:
        try:
            while self.waiting:
                await asyncio.sleep(0)  # the rest of this turn's callers join the batch
                batch, self.waiting = self.waiting, []
                try:
                    pipe = self.client.pipeline(transaction=False)
                    for queue, _ in batch:
                        queue(pipe)
                    answers = await pipe.execute(raise_on_error=False)
                except Exception as error:
                    answers = [error] * len(batch)
                for (_, done), answer in zip(batch, answers):
                    if done.done():
                        continue
                    if isinstance(answer, Exception):
                        done.set_exception(answer)
                    else:
                        done.set_result(answer)
        finally:
            self.running = False


@lru_cache(maxsize=8)
def plain_redis(url: str) -> redis.Redis:
    """A client of a plain Redis other than the data one (the live channels', the rate limits'),
    one a URL and process, with the data Redis's timeouts."""
    return redis.Redis.from_url(
        url, socket_timeout=settings.REDIS_SOCKET_TIMEOUT, socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT
    )


def key_count() -> int:
    """How many keys the data Redis holds, on every primary of a cluster (rebuild checks). O(nodes)."""
    client = get_redis()
    if not settings.REDIS_CLUSTER:
        return client.dbsize()
    return sum(node.redis_connection.dbsize() for node in client.get_primaries())


def used_memory() -> int:
    """Bytes the data Redis uses, on every primary of a cluster (metrics). O(nodes)."""
    client = get_redis()
    if not settings.REDIS_CLUSTER:
        return int(client.info("memory")["used_memory"])
    return sum(int(node.redis_connection.info("memory")["used_memory"]) for node in client.get_primaries())


class Script:
    """One Lua script, called by name. Its file declares its arguments on one line,
    ``--- ARGV: offset limit ttl`` (a last name ending in ``...``, as ``ids...``, takes a list:
    the rest of ARGV), and the runner puts ``local ARG = {offset = ARGV[1], ...}`` before the
    body (after a ``#!lua`` line), so the Lua reads ``ARG.offset`` and ``ARG.ids_at``, the index
    of the list's first item. ``script(keys=[...], offset=0, limit=20, ttl=60)`` runs it at once
    (EVALSHA, reloaded on NOSCRIPT) on the data Redis, or on ``server`` (another Redis, such as
    the plain one of the rate limits); with ``client=pipe`` it is queued in a pipeline (EVAL).
    None is sent as "", the scripts' word for "not given". ``args=`` (a list, positional) is for
    run_by_node, which adds its own tail after the named arguments (``script.args(...)``)."""

    def __init__(self, name: str, source: str, *, common: str = "", libraries: dict[str, str] | None = None):
        self.name = name
        self.names, self.rest = _declared_arguments(name, source)
        shebang, body = source.split("\n", 1) if source.startswith("#!") else ("", source)
        used = [(libraries or {})[library] for library in _used_libraries(name, source, libraries or {})]
        parts = [shebang, _argument_table(self.names, self.rest), common, *used, body]
        self.source = "\n".join(part for part in parts if part)
        self.sha = hashlib.sha1(self.source.encode()).hexdigest()

    def args(self, **named) -> list:
        """ARGV in the declared order; a TypeError names what is missing or unknown. The list may be
        left out: run_by_node puts the owners' keys there."""
        declared = [*self.names, *([self.rest] if self.rest else [])]
        unknown, missing = named.keys() - set(declared), set(self.names) - named.keys()
        if unknown or missing:
            raise TypeError(
                f"{self.name}.lua takes {', '.join(declared) or 'no arguments'}; "
                f"unknown: {', '.join(sorted(unknown)) or 'none'}, missing: {', '.join(sorted(missing)) or 'none'}"
            )
        values = ["" if named[name] is None else named[name] for name in self.names]
        return [*values, *named.get(self.rest, ())] if self.rest else values

    def __call__(self, *, keys: Iterable[str] = (), client=None, server=None, args: Iterable | None = None, **named):
        keys = list(keys)
        args = list(args) if args is not None else self.args(**named)
        if client is not None:
            return client.execute_command("EVAL", self.source, len(keys), *keys, *args)
        connection = server if server is not None else get_redis()
        try:
            return connection.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            connection.script_load(self.source)  # a cluster loads it on every primary
            return connection.evalsha(self.sha, len(keys), *keys, *args)

    async def run_async(self, *, keys: Iterable[str] = (), args: Iterable | None = None, **named):
        """The same call from an event loop, batched with the loop's other calls
        (``get_async_batcher()``): EVALSHA on a plain server, reloaded on NOSCRIPT; EVAL on a
        cluster, whose pipeline refuses EVALSHA."""
        keys = list(keys)
        args = list(args) if args is not None else self.args(**named)
        batcher = get_async_batcher()
        if settings.REDIS_CLUSTER:
            return await batcher.call(lambda pipe: pipe.execute_command("EVAL", self.source, len(keys), *keys, *args))
        try:
            return await batcher.call(lambda pipe: pipe.evalsha(self.sha, len(keys), *keys, *args))
        except NoScriptError:
            await get_async_redis().script_load(self.source)
            return await batcher.call(lambda pipe: pipe.evalsha(self.sha, len(keys), *keys, *args))


_RESERVED = {"keys", "client", "server", "args"}


def _declared_arguments(name: str, source: str) -> tuple[list[str], str | None]:
    """The names of a script's ``--- ARGV:`` line: (fixed names, the list's name or None)."""
    lines = [line for line in source.splitlines() if line.startswith("--- ARGV:")]
    if len(lines) != 1:
        raise ValueError(f"{name}.lua must declare its arguments on one '--- ARGV:' line")
    names = lines[0].removeprefix("--- ARGV:").split()
    rest = names.pop()[:-3] if names and names[-1].endswith("...") else None
    wrong = [n for n in [*names, rest or "x"] if not n.isidentifier() or n in _RESERVED or n.endswith("...")]
    if wrong:
        raise ValueError(f"{name}.lua declares bad argument names: {wrong}")
    return names, rest


def _used_libraries(name: str, source: str, libraries: dict[str, str]) -> list[str]:
    """The libraries a script names on its ``--- USES:`` line (none without one)."""
    lines = [line for line in source.splitlines() if line.startswith("--- USES:")]
    used = lines[0].removeprefix("--- USES:").split() if lines else []
    unknown = [library for library in used if library not in libraries]
    if len(lines) > 1 or unknown:
        raise ValueError(f"{name}.lua must name known libraries on one '--- USES:' line; unknown: {unknown}")
    return used


def _argument_table(names: list[str], rest: str | None) -> str:
    """The Lua line that names ARGV (see Script)."""
    fields = [f"{n} = ARGV[{i}]" for i, n in enumerate(names, 1)]
    if rest:
        fields.append(f"{rest}_at = {len(names) + 1}")
    return "local ARG = {" + ", ".join(fields) + "}" if fields else ""


class Scripts:
    """The Lua scripts of one folder, one per ``.lua`` file: ``scripts.<name>`` is its Script.
    A ``_common.lua`` in the folder (functions several scripts share) is put before each body.
    A library, ``_<name>.lua`` in the folder or in one of ``libraries`` (folders of other
    apps' scripts, such as ratelimits.SCRIPTS' window), is put before the body of the scripts
    that name it on a ``--- USES: <name>`` line, and only theirs (a cluster's pipelines send a
    script's source with every call)."""

    def __init__(self, folder: Path, *, libraries: Iterable[Path] = ()):
        self._folder = folder
        common = folder / "_common.lua"
        self._common = common.read_text() if common.exists() else ""
        self._libraries = {
            path.stem[1:]: path.read_text()
            for place in (*libraries, folder)
            for path in sorted(place.glob("_*.lua"))
            if path.name != "_common.lua"
        }

    def __getattr__(self, name: str) -> Script:
        path = self._folder / f"{name}.lua"
        if name.startswith("_") or not path.exists():
            raise AttributeError(name)
        script = Script(name, path.read_text(), common=self._common, libraries=self._libraries)
        setattr(self, name, script)
        return script


def rename_aside(client, source: str, target: str, *, target_exists: bool | None = None) -> bool:
    """Move ``source`` to ``target`` for a flush to write it (one slot: both keys share a hash
    tag), unless ``target`` is there already: a flush that died before deleting it left it,
    and it is written first. ``target_exists``: the caller asked already (many at once, in a
    pipeline). False when neither exists (nothing to flush). O(1)."""
    if target_exists if target_exists is not None else client.exists(target):
        return True
    try:
        client.rename(source, target)
    except ResponseError as error:  # no such key: nothing since the last flush
        if "no such key" not in str(error).lower():
            raise
        return False
    return True


def by_node(owners: Iterable[int], *, key: Callable[[int], str]) -> list[tuple[redis.Redis, list[int]]]:
    """Owners grouped by the node that holds ``key(owner)``, each group with a plain client of
    its node (a cluster primary; on a plain server, the one client and every owner). O(n)."""
    owners = list(owners)
    client = get_redis()
    if not settings.REDIS_CLUSTER:
        return [(client, owners)] if owners else []
    manager = client.nodes_manager
    slots = manager.slots_cache  # slot -> [primary, replicas...]; read directly: get_node_from_slot
    nodes: dict[str, tuple] = {}  # costs more than the rest of a fan-out batch's Python together
    for owner in owners:
        slot = key_slot(key(owner).encode())
        serving = slots.get(slot)
        node = serving[0] if serving else manager.get_node_from_slot(slot)  # raises: slot not covered
        nodes.setdefault(node.name, (node, []))[1].append(owner)
    return [(node.redis_connection, group) for node, group in nodes.values()]


@lru_cache(maxsize=1)
def _node_threads() -> ThreadPoolExecutor:
    """Threads that wait on several nodes' pipelines at once (the waits release the GIL)."""
    return ThreadPoolExecutor(max_workers=16, thread_name_prefix="redis-node")


# A forked child has the parent's pool but none of its threads: work handed to it would wait forever.
os.register_at_fork(after_in_child=_node_threads.cache_clear)


def _layout_changed(error: Exception) -> bool:
    if isinstance(error, (ConnectionError, TimeoutError)):
        return True
    return isinstance(error, ResponseError) and str(error).split(" ", 1)[0] in (
        "MOVED",
        "ASK",
        "TRYAGAIN",
        "CLUSTERDOWN",
    )


def run_by_node(
    script: Script,
    owners: Iterable[int],
    *,
    key: Callable[[int], str],
    keys_of: Callable[[int], list[str]],
    args: list,
    per_call: int,
    scratch: Callable[[int], str] | None = None,
) -> list[tuple[list[int], object]]:
    """Run ``script`` over many owners: ``per_call`` owners a call (ARGV: ``args``, then
    ``scratch`` of the call's first owner when given, a key of the script's own on the node the
    call runs on, then each owner's ``keys_of``; no declared KEYS), all calls of one node in one
    pipeline, so one round trip per node.
    Returns (owners of a call, its answer) for every call. On a cluster whose layout changed
    (failover, moved slots) the layout is read again and the whole batch repeated: the script
    must be idempotent. O(total keys)."""
    owners = list(owners)
    for attempt in range(NODE_BATCH_ATTEMPTS):
        try:
            batches = []
            for node, group in by_node(owners, key=key):
                calls = [group[i : i + per_call] for i in range(0, len(group), per_call)]
                pipe = node.pipeline(transaction=False)
                for call in calls:
                    head = [*args, scratch(call[0])] if scratch is not None else args
                    script(args=[*head, *(k for owner in call for k in keys_of(owner))], client=pipe)
                batches.append((calls, pipe))
            if len(batches) == 1:
                results = [batches[0][1].execute()]
            else:  # the nodes work at the same time: the batch costs the slowest node's round trip
                results = list(_node_threads().map(lambda batch: batch[1].execute(), batches))
            return [answer for (calls, _), result in zip(batches, results) for answer in zip(calls, result)]
        except (ConnectionError, TimeoutError, ResponseError) as error:
            if not settings.REDIS_CLUSTER or not _layout_changed(error) or attempt + 1 == NODE_BATCH_ATTEMPTS:
                raise
            get_redis().nodes_manager.initialize()
    raise AssertionError("unreachable")
