"""The one way to reach the data Redis: ``get_redis()``, its Lua scripts and grouping by slot.

A plain server by default (``REDIS_URL``); a Redis Cluster when ``REDIS_CLUSTER`` is set,
with ``REDIS_URL`` naming any one of its nodes. Every key the site writes carries its
owner's hash tag (see ``feeds/keys.py``, ``social/keys.py``), so per-user work stays on one
slot either way. Celery's broker and Django's cache stay on a plain Redis (settings).
"""

from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path

import redis
from django.conf import settings
from redis.cluster import RedisCluster
from redis.crc import key_slot


@lru_cache(maxsize=1)
def get_redis() -> redis.Redis | RedisCluster:
    """The shared client of this process; redis-py's pool reconnects after a fork."""
    if settings.REDIS_CLUSTER:
        return RedisCluster.from_url(settings.REDIS_URL, decode_responses=True)
    return redis.Redis.from_url(settings.REDIS_URL, decode_responses=True, health_check_interval=30)


class Scripts:
    """The Lua scripts of one folder, one per ``.lua`` file, each registered once per process.

    ``scripts.<name>(keys=[...], args=[...], client=pipe)`` runs ``<name>.lua`` (EVALSHA,
    loading it on first use); pass ``client=`` to run it inside a pipeline.
    """

    def __init__(self, folder: Path):
        self._folder = folder

    def __getattr__(self, name: str):
        path = self._folder / f"{name}.lua"
        if name.startswith("_") or not path.exists():
            raise AttributeError(name)
        script = get_redis().register_script(path.read_text())
        setattr(self, name, script)
        return script


def group_by_slot(owners: Iterable[int], chunk: int, *, key: Callable[[int], str]) -> list[list[int]]:
    """Owners whose keys may share one script call: chunks of ``chunk`` on a plain Redis; on a
    cluster, owners of one hash slot (``key(owner)``'s hash tag decides it), so no call spans
    two slots. O(n)."""
    owners = list(owners)
    if not settings.REDIS_CLUSTER:
        return [owners[i:i + chunk] for i in range(0, len(owners), chunk)]
    groups: dict[int, list[int]] = {}
    for owner in owners:
        groups.setdefault(key_slot(key(owner).encode()), []).append(owner)
    return [ids[i:i + chunk] for ids in groups.values() for i in range(0, len(ids), chunk)]
