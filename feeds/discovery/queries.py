"""Discovery queries: Viki's set-index engine. A query intersects the filter sets (smallest
first) with a sort order, pages and counts it in one Lua call (discover.lua), and caches the
intersection until an index changes. Storage only: Redis, no tasks.
"""

import hashlib
from dataclasses import dataclass

from django.conf import settings

from feeds import keys
from feeds.discovery.indexes import SORTS
from feeds.discovery.scripts import scripts
from ugcsite.redis import get_redis

__all__ = ["SORTS", "Query", "query", "top"]


@dataclass(frozen=True)
class Query:
    kind: str | None = None
    tags: tuple[str, ...] = ()
    author: str | None = None
    sort: str = "recent"

    def filter_keys(self) -> list[str]:
        found = []
        if self.kind:
            found.append(keys.index("kind", self.kind))
        found.extend(keys.index("tag", tag) for tag in sorted(set(self.tags)))
        if self.author is not None:
            found.append(keys.index("author", self.author.lower()))
        return found

    def digest(self) -> str:
        text = "|".join([self.sort, *self.filter_keys()])
        return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def query(q: Query, *, offset: int, limit: int) -> tuple[int, list[int]]:
    """(exact total, ids of the page), best first, in one round trip. Cost grows with the
    smallest filter set (ZINTERSTORE), and a repeated query within the cache TTL and the same
    index generation reads the cached intersection: O(log n + limit)."""
    digest = q.digest()
    total, ids = scripts.discover(
        keys=[
            keys.query_cache(digest),
            keys.query_cache_generation(digest),
            keys.index_generation(),
            keys.sort(q.sort),
            *q.filter_keys(),
        ],
        offset=offset,
        limit=limit,
        ttl_ms=settings.DISCOVERY_CACHE_MS,
        g_before=None,
        g_after=None,
    )
    return int(total), [int(i) for i in ids]


def query_hydrated(q: Query, *, offset: int, limit: int) -> tuple[int, list[int], dict[int, dict]]:
    """query() with the page's G hashes read in the same call on a plain Redis (one round trip
    for a discovery page; misses, and every id on a cluster where G lies in other slots, are
    left to the caller): (total, ids, {id: G fields of the hits}). Same cost as query() plus
    O(limit) hash reads."""
    if settings.REDIS_CLUSTER:
        total, ids = query(q, offset=offset, limit=limit)
        return total, ids, {}
    digest = q.digest()
    total, ids, hashes = scripts.discover(
        keys=[
            keys.query_cache(digest),
            keys.query_cache_generation(digest),
            keys.index_generation(),
            keys.sort(q.sort),
            *q.filter_keys(),
        ],
        offset=offset,
        limit=limit,
        ttl_ms=settings.DISCOVERY_CACHE_MS,
        **keys.spelling("g", keys.board),
    )
    ids = [int(i) for i in ids]
    return int(total), ids, {i: dict(zip(flat[::2], flat[1::2])) for i, flat in zip(ids, hashes) if flat}


def top(order: str, *, offset: int, limit: int) -> list[tuple[str, float]]:
    """One page of a sort order (SORTS) with the scores (popular: views; trending: views in 24
    hours; likes; likes-trending: likes in 24 hours), best first, ties newest first.
    O(log n + limit), however deep the page."""
    return get_redis().zrevrange(keys.sort(order), offset, offset + limit - 1, withscores=True)
