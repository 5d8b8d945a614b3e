"""Discovery queries: Viki's set-index engine, over the shards of feeds.discovery.indexes. In
every shard a query intersects the filter sets (smallest first) with a sort order, caches the
intersection until the shard's indexes change, counts it and reads a window of it
(discover.lua); one call a node holds all of that node's shards, and the nodes answer at once
(ugcsite.platform.redis.run_by_node). The page is merged here from the shards' windows, and a filtered
query's merged page is cached under {d} until any shard's indexes change (_cached_page), so a
repeated query reads one key of one node, not every shard. Storage only: Redis, no tasks.

The windows. A board's shard is a hash of its id, so each shard holds a uniform sample of every
query's matches: of the first r matches, about r / S lie in each of the S shards, give or take
sqrt(r / S). A page at ``offset`` asks each shard for the ranks around offset / S, that margin
wider, instead of its first offset + limit. The shards' windows and each window's neighbours
(its sentinel above, its last rank below) prove which run of the whole order they hold
unbroken, and from which rank it starts (_merge); when the page lies outside that run (a shard
held more than the margin allowed, about one query in a thousand), the shards are asked again
with the wider windows of the next WINDOWS step, the last of which (every shard's first offset +
limit) always holds the page. So a page costs O(S x (limit / S + sqrt(offset / S))) entries read
and merged, not O(S x (offset + limit)).
"""

import hashlib
import heapq
import math
from dataclasses import dataclass

from django.conf import settings

from feeds import keys
from feeds.discovery.indexes import SORTS
from feeds.discovery.scripts import scripts
from feeds.rules import DISCOVERY_SHARDS
from ugcsite.platform.redis import get_redis, run_by_node

__all__ = ["SORTS", "Query", "query", "top"]

# How wide each shard's window is, step by step: (deviations of the margin, entries more). The
# last step is exact: each shard's first offset + limit.
WINDOWS = ((4.0, 3), (8.0, 12), None)


@dataclass(frozen=True)
class Query:
    kind: str | None = None
    tags: tuple[str, ...] = ()
    author: str | None = None
    sort: str = "recent"

    def has_filters(self) -> bool:
        return bool(self.kind or self.tags or self.author is not None)

    def filter_keys(self, shard: int) -> list[str]:
        """The filter sets of the query in one shard, in a fixed order."""
        found = []
        if self.kind:
            found.append(keys.index(shard, "kind", self.kind))
        found.extend(keys.index(shard, "tag", tag) for tag in sorted(set(self.tags)))
        if self.author is not None:
            found.append(keys.index(shard, "author", self.author.lower()))
        return found

    def digest(self) -> str:
        text = "|".join([self.sort, *self.filter_keys(0)])
        return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def _windows(step, offset: int, limit: int) -> tuple[int, int]:
    """(start, count) of every shard's window for a page, at one step of WINDOWS."""
    if step is None:
        return 0, offset + limit
    deviations, more = step
    low, high = offset / DISCOVERY_SHARDS, (offset + limit) / DISCOVERY_SHARDS
    start = max(0, math.floor(low - deviations * math.sqrt(low) - more))
    return start, math.ceil(high + deviations * math.sqrt(high) + more) - start


def _shard_windows(q: Query, start: int, count: int) -> list[tuple[int, list]]:
    """Each shard's (n, lo, entries): entries (score, id text) best first, the sentinel first
    when lo > 0. One script call a node, the nodes at once."""
    digest = q.digest()
    width = 6 + len(q.filter_keys(0))

    def shard_items(shard: int) -> list:
        return [
            start,
            count,
            keys.query_cache(shard, digest),
            keys.query_cache_generation(shard, digest),
            keys.index_generation(shard),
            keys.sort(shard, q.sort),
            *q.filter_keys(shard),
        ]

    answers = run_by_node(
        scripts.discover,
        range(DISCOVERY_SHARDS),
        key=keys.index_generation,
        keys_of=shard_items,  # a shard's window, then its keys
        args=scripts.discover.args(ttl_ms=settings.DISCOVERY_CACHE_MS, width=width),
        per_call=DISCOVERY_SHARDS,
    )
    found = []
    for _, per_shard in answers:
        for n, lo, flat in per_shard:
            found.append((n, lo, [(float(score), member) for member, score in zip(flat[::2], flat[1::2])]))
    return found


def _merge(shards: list, offset: int, limit: int) -> list[tuple[float, str]] | None:
    """The page [offset, offset + limit) of the whole order from the shards' windows, best first;
    None when the windows do not prove it. The run they hold unbroken: every entry below each
    window's sentinel (the shard's rank lo - 1: everything above it lies above the window) and
    at or above each unfinished window's last entry (everything below it lies below). Its first
    entry's rank is, over the shards, lo plus the window's entries above it. O(E log S) for E
    entries."""
    ceiling = floor = None  # the lowest sentinel, the highest last entry of an unfinished window
    runs = []
    for n, lo, entries in shards:
        if lo > 0:
            sentinel, entries = entries[0], entries[1:]
            ceiling = sentinel if ceiling is None else min(ceiling, sentinel)
        if lo + len(entries) < n:
            floor = entries[-1] if floor is None else max(floor, entries[-1])
        runs.append(entries)
    merged = heapq.merge(*runs, reverse=True)
    run = [e for e in merged if (ceiling is None or e < ceiling) and (floor is None or e >= floor)]
    if not run:
        return None
    first = run[0]
    rank = sum(lo + sum(1 for e in entries if e > first) for (_, lo, _), entries in zip(shards, runs))
    if rank > offset or (floor is not None and rank + len(run) < offset + limit):
        return None
    return run[offset - rank : offset - rank + limit]


def _page(q: Query, offset: int, limit: int) -> tuple[int, list[tuple[float, str]]]:
    """(exact total, the page's (score, id text) best first), from the shards' windows."""
    for step in WINDOWS:
        shards = _shard_windows(q, *_windows(step, offset, limit))
        total = sum(n for n, _, _ in shards)
        if offset >= total:
            return total, []
        page = _merge(shards, offset, limit)
        if page is not None:
            return total, page
    raise AssertionError("the last step of WINDOWS holds every page")


def _page_text(generation: str, total: int, page: list[tuple[float, str]]) -> str:
    """A cached page's value (keys.query_page): the generation, the total, then the entries."""
    return " ".join([generation, str(total), *(f"{member}:{score!r}" for score, member in page)])


def _cached_page(q: Query, offset: int, limit: int) -> tuple[int, list[tuple[float, str]]]:
    """_page() through a cache of the merged page (keys.query_page, under {d} beside the
    generation every change of a shard's indexes bumps): one MGET of one slot when the page was
    merged at the current generation within the TTL, else _page() and a SET. The generation is
    read before the shards, so a page merged while a board came or went is cached under the
    generation it makes stale. Its scores are as old as the shards' cached intersections it was
    merged from, so at most twice the TTL (views and likes move no generation)."""
    client = get_redis()
    page_key = keys.query_page(q.digest(), offset, limit)
    generation, cached = client.mget(keys.query_pages_generation(), page_key)
    generation = generation or "0"
    if cached:
        at, total, *entries = cached.split(" ")
        if at == generation:
            page = [(float(score), member) for member, _, score in (e.partition(":") for e in entries)]
            return int(total), page
    total, page = _page(q, offset, limit)
    client.set(page_key, _page_text(generation, total, page), px=settings.DISCOVERY_CACHE_MS)
    return total, page


def query(q: Query, *, offset: int, limit: int) -> tuple[int, list[int]]:
    """(exact total, ids of the page), best first (ties: the newer board first). A page merged at
    the current generation within the TTL is one read of {d} (_cached_page); else one script
    call a node, the nodes at once, then the merge; rarely (a shard past its margin) a second.
    A shard's cost grows with its smallest filter set (ZINTERSTORE: about 1/S of the query's
    work on one node), and a repeated query within the cache TTL and the shard's index
    generation reads the cached intersection: O(S log n + S x (limit / S + sqrt(offset / S)))
    over the cluster, however deep the page. A query without filters reads the sort order
    itself, never cached."""
    total, page = _cached_page(q, offset, limit) if q.has_filters() else _page(q, offset, limit)
    return total, [int(member) for _, member in page]


def top(order: str, *, offset: int, limit: int) -> list[tuple[str, float]]:
    """One page of a sort order (SORTS) with the scores (popular: views; trending: views in 24
    hours; likes; likes-trending: likes in 24 hours), best first, ties newest first. The
    shards' orders merged as query() merges them: O(S log n + S x (limit / S + sqrt(offset / S)))."""
    _, page = _page(Query(sort=order), offset, limit)
    return [(member, score) for score, member in page]
