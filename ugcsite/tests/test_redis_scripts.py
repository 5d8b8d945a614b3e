"""The script runner (ugcsite.redis.Script) survives NOSCRIPT: a restarted, failed-over or new
node has an empty script cache, and the site's scripts must run there all the same. Runs on a
plain Redis (make test) and on the cluster (make test-cluster)."""

import redis
from django.conf import settings

from feeds import keys
from feeds.scripts import scripts
from feeds.timelines import store
from feeds.timelines.scripts import scripts as timeline_scripts
from ugcsite.redis import get_redis

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
