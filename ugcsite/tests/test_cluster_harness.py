"""The Redis Cluster test harness itself (`make test-cluster`): skipped on a plain Redis.

scripts/with-servers.sh with UGC_CLUSTER=1 starts three primaries and exports REDIS_CLUSTER=1,
REDIS_URL (the first node) and REDIS_CLUSTER_PORTS (every node).
"""

import os

import pytest
import redis
from django.conf import settings
from redis.cluster import RedisCluster

from ugcsite.platform.redis import get_redis

pytestmark = pytest.mark.skipif(not settings.REDIS_CLUSTER, reason="needs REDIS_CLUSTER=1 (make test-cluster)")


def primary_sizes(client: RedisCluster) -> dict[str, int]:
    """DBSIZE asked of each primary over its own connection (RedisCluster.dbsize() asks one node)."""
    return {node.name: client.get_redis_connection(node).dbsize() for node in client.get_primaries()}


def test_the_data_redis_is_a_three_primary_cluster_spread_over_nodes_and_empty_at_test_start(redis_data):
    client = get_redis()
    assert isinstance(client, RedisCluster)
    assert client is redis_data

    # The autouse redis_data fixture has flushed: every primary starts empty.
    sizes = primary_sizes(client)
    assert len(sizes) == 3, sizes
    assert set(sizes.values()) == {0}, sizes

    ports = os.environ.get("REDIS_CLUSTER_PORTS", "").split()
    if ports:
        assert sorted(str(node.port) for node in client.get_primaries()) == sorted(ports)

    # Keys of different owners' hash tags are spread over the primaries, each stored once.
    count = 30
    for i in range(1, count + 1):
        client.set(f"harness:{{u:{i}}}", i)
    sizes = primary_sizes(client)
    assert sum(sizes.values()) == count, sizes
    assert sum(1 for size in sizes.values() if size > 0) >= 2, sizes


def test_the_broker_and_the_cache_stay_on_a_plain_redis():
    for url in (settings.CELERY_BROKER_URL, settings.CACHES["default"]["LOCATION"]):
        plain = redis.Redis.from_url(url)
        try:
            assert plain.info("cluster")["cluster_enabled"] == 0, url
        finally:
            plain.close()
