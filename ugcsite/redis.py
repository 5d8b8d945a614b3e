"""The one way to reach the data Redis: ``get_redis()``.

A plain server by default (``REDIS_URL``); a Redis Cluster when ``REDIS_CLUSTER`` is set,
with ``REDIS_URL`` naming any one of its nodes. Every key the site writes carries its
owner's hash tag (see ``feeds/keys.py``, ``social/keys.py``), so per-user work stays on one
slot either way. Celery's broker and Django's cache stay on a plain Redis (settings).
"""

from functools import lru_cache

import redis
from django.conf import settings
from redis.cluster import RedisCluster


@lru_cache(maxsize=1)
def get_redis() -> redis.Redis | RedisCluster:
    """The shared client of this process; redis-py's pool reconnects after a fork."""
    if settings.REDIS_CLUSTER:
        return RedisCluster.from_url(settings.REDIS_URL, decode_responses=True)
    return redis.Redis.from_url(settings.REDIS_URL, decode_responses=True, health_check_interval=30)
