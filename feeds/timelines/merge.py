"""Merging timelines: streams of board ids, each newest first, into one, newest first, each id
once; a stream that costs a PostgreSQL read (archived chunks) is opened only when the merge
reaches it. Pure Python over what feeds.timelines.pages and the archive read.
"""

import heapq
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain

from feeds.timelines import archive


@dataclass(frozen=True)
class Deferred:
    """Ids newest first, each strictly below ``below``, that cost a PostgreSQL read (a timeline's
    archived chunks): ``open()`` gives them lazily, and merge_desc calls it only once nothing in
    hand is newer than ``below``; ``newest(n)`` gives the first n as a list, read at once
    (newest_of)."""

    below: int
    open: Callable[[], Iterable[int]]
    newest: Callable[[int], list[int]]


def merge_desc(*streams: Iterable[int] | Deferred) -> Iterator[int]:
    """Merge streams of ids, each newest first, into one, newest first, each id once. A Deferred
    stream is opened only when the merge reaches its bound, so a page that the Redis heads fill
    never touches the archive."""
    heap: list[tuple[int, int, Iterator[int] | Deferred]] = []  # (-id or -bound, tie-break, source)
    for order, stream in enumerate(streams):
        if isinstance(stream, Deferred):
            heap.append((1 - stream.below, order, stream))
            continue
        source = iter(stream)
        first = next(source, None)
        if first is not None:
            heap.append((-first, order, source))
    heapq.heapify(heap)
    last = None
    while heap:
        key, order, source = heap[0]
        if isinstance(source, Deferred):
            opened = iter(source.open())
            first = next(opened, None)
            if first is None:
                heapq.heappop(heap)
            else:
                heapq.heapreplace(heap, (-first, order, opened))
            continue
        if -key != last:
            last = -key
            yield last
        following = next(source, None)
        if following is None:
            heapq.heappop(heap)
        else:
            heapq.heapreplace(heap, (-following, order, source))


def newest_of(streams: list[list[int] | Deferred], *, skip: int, count: int) -> list[int]:
    """``list(islice(merge_desc(*streams), skip, count))`` read in bulk, for a page that skips many
    ids (an offset): every list (newest first) is cut to ``count``; one set and one sort in C
    merge the sorted runs, each id once; a Deferred is read only when the ``count``-th id in hand
    lies below its bound, so that its ids could be on the page, the newest bound first, and then
    the merge is made again. It is read for the places the ids in hand from its bound up leave:
    those stay above all of its ids.
    O(n log n) for the n ids read, no per-id Python loop."""
    lists = [stream[:count] for stream in streams if not isinstance(stream, Deferred)]
    closed = [stream for stream in streams if isinstance(stream, Deferred)]
    while True:
        ranked = sorted(set(chain.from_iterable(lists)), reverse=True)[:count]
        due = [stream for stream in closed if len(ranked) < count or ranked[-1] < stream.below]
        if not due:
            return ranked[skip:]
        # One at a time, the newest first, as merge_desc opens them: what it brings may make the
        # older ones needless (each is a PostgreSQL query).
        stream = max(due, key=lambda s: s.below)
        lists.append(stream.newest(count - bisect_right(ranked, -stream.below, key=lambda i: -i)))
        closed.remove(stream)


def desc_unique(*streams: Iterable[int]) -> Iterator[int]:
    """Merge streams of ids, each newest first, into one, newest first, each id once."""
    return merge_desc(*streams)


def with_archive(
    owner_id: int, kind: str, head: list[int], archived: int, *, below: int | None, want: int | None
) -> list:
    """The streams holding a timeline's newest ids strictly below ``below``, given ``head``, its
    newest ``want`` such ids in Redis (every one when ``want`` is None), and A = ``archived``:
    the head alone when it is whole above A, else the head and the archive below A (deferred).
    Taking the newest ``want`` of their merge is exact: a head id left unread is older than all
    ``want`` read."""
    if not archived or (want is not None and len(head) == want and head[-1] > archived):
        return [head]
    bound = archived + 1 if below is None else min(below, archived + 1)
    return [
        head,
        Deferred(
            bound,
            lambda: archive.archived_ids_desc(owner_id, kind, below=below),
            lambda count: archive.archived_newest(owner_id, kind, below=below, count=count),
        ),
    ]
