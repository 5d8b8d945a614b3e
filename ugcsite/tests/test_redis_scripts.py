"""The script runner (ugcsite.platform.redis.Script) survives NOSCRIPT: a restarted, failed-over or new
node has an empty script cache, and the site's scripts must run there all the same. Runs on a
plain Redis (make test) and on the cluster (make test-cluster)."""

import json
import os
import select
import signal

import redis
from django.conf import settings

from feeds import keys
from feeds.discovery import indexes
from feeds.discovery.queries import Query, query
from feeds.scripts import scripts
from feeds.timelines import store
from feeds.timelines.scripts import scripts as timeline_scripts
from ugcsite.platform.redis import _node_threads, get_redis

USER_ID = 42


def primaries() -> list[redis.Redis]:
    """A client of each primary of the data Redis (on a plain server, the one client)."""
    client = get_redis()
    if settings.REDIS_CLUSTER:
        return [client.get_redis_connection(node) for node in client.get_primaries()]
    return [client]


def holder(key: str) -> redis.Redis:
    """A client of the primary holding ``key``."""
    client = get_redis()
    if settings.REDIS_CLUSTER:
        return client.get_redis_connection(client.get_node_from_key(key))
    return client


def noscript_answers(node: redis.Redis) -> int:
    """How many NOSCRIPT errors the node has answered since it started (INFO errorstats)."""
    return node.info("errorstats").get("errorstat_NOSCRIPT", {}).get("count", 0)


def test_direct_and_pipelined_scripts_run_after_every_primary_flushed_its_script_cache(redis_data):
    meta = keys.timeline_meta(USER_ID)
    scripts.hset_max(keys=[meta], field="m_archived_max", value=5)  # both scripts cached, as on a live site
    store.home_touch(USER_ID)
    redis_data.delete(meta, keys.active(USER_ID))

    for node in primaries():
        node.script_flush()
        assert node.script_exists(scripts.hset_max.sha, timeline_scripts.touch.sha) == [False, False]
    noscript_before = noscript_answers(holder(meta))

    # A direct call (EVALSHA): the node answers NOSCRIPT, the runner loads the script and calls again.
    assert scripts.hset_max(keys=[meta], field="m_archived_max", value=7) == "7"
    assert scripts.hset_max(keys=[meta], field="m_archived_max", value=3) == "7"  # never lowered
    assert redis_data.hget(meta, "m_archived_max") == "7"
    assert noscript_answers(holder(meta)) > noscript_before, "the direct call never met NOSCRIPT"
    # Loaded again on every primary (a cluster loads it everywhere), not only where it ran.
    assert [node.script_exists(scripts.hset_max.sha) for node in primaries()] == [[True]] * len(primaries())

    # A call queued in a pipeline (EVAL, with plain commands around it) works on the empty cache too.
    assert store.home_touch(USER_ID) is True  # was idle: flagged for regeneration
    assert redis_data.hget(meta, "regenerate") == "1"
    assert store.home_touch(USER_ID) is False  # active now
    assert holder(keys.active(USER_ID)).script_exists(timeline_scripts.touch.sha) == [True]


def test_a_forked_child_answers_a_query_by_node_after_its_parent_did(redis_data):
    """Work by node waits on several nodes at once from a pool of threads; a child forked after
    the parent used it (a load generator, a pre-forking server) gets a pool of its own, not the
    parent's, whose threads it does not have: its discovery query answers as the parent's did."""
    board_ids = [10**14 + n for n in range(50)]
    indexes.index_bulk((board_id, "map", ["fork"], "alice", 0, 0) for board_id in board_ids)
    asked = Query(kind="map", tags=("fork",))
    answer = query(asked, offset=0, limit=10)
    assert answer == (50, sorted(board_ids, reverse=True)[:10])
    # the parent's pool has idle threads, whatever the Redis (a busy site's has many)
    list(_node_threads().map(abs, range(64)))
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # the child: answer through the pipe, then leave without running the parent's cleanup
        try:
            os.write(writer, json.dumps(query(asked, offset=0, limit=10)).encode())
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as pipe:
        ready, _, _ = select.select([pipe], [], [], 60)  # a guard against a hang, not a timed assertion
        if not ready:
            os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        assert ready, "the forked child never answered: it waited on its parent's threads"
        got = json.loads(pipe.read())
    assert (got[0], got[1]) == answer
