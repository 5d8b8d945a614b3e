"""The timelines: M[u] (a user's own boards) and P[u] (home: boards of the people u follows),
sorted sets of board ids scored by the id itself (ids are time-ordered, below 2^53).

Storage only: Redis in, Redis out; no tasks are enqueued here.
"""

import heapq
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain, islice

from django.conf import settings

from feeds import archive, hybrid, keys
from feeds.rules import Timeline
from feeds.scripts import scripts
from social import keys as social_keys
from ugcsite.redis import get_redis, run_by_node


def profile_remove(author_id: int, board_id: int, *, pipe=None) -> None:
    """Take a board out of its author's M. O(log |M|)."""
    (pipe if pipe is not None else get_redis()).zrem(keys.profile_timeline(author_id), board_id)


def home_deliver(follower_ids: Iterable[int], author_id: int, board_ids: list[int]) -> list[int]:
    """Add ``board_ids`` by ``author_id`` to each follower's P where the follow still holds and
    the follower is active (home_deliver.lua); P is capped at hot size + slack. Followers go
    FANOUT_SCRIPT_CHUNK to a script call, one pipeline per Redis node: O(k log |P|) for k
    followers, one round trip a node. Returns the followers whose P now waits for the archiver."""
    if not board_ids:
        return []
    hot = settings.HOME_TIMELINE_HOT
    answers = run_by_node(
        scripts.home_deliver, follower_ids, key=keys.home_timeline, per_call=settings.FANOUT_SCRIPT_CHUNK,
        keys_of=lambda f: [keys.home_timeline(f), social_keys.following(f), keys.active(f)],
        args=[author_id, hot + settings.HOME_TIMELINE_SLACK, hot + settings.TIMELINE_CHUNK, len(board_ids), *board_ids],
    )
    return [call[i - 1] for call, flagged in answers for i in flagged]


def home_touch(user_id: int, *, now: float | None = None) -> bool:
    """Mark a user active for IDLE_AFTER, and note when (for the idle sweeper); True if they
    were idle, in which case their P is flagged for regeneration before its next read.
    One round trip, O(log n)."""
    ttl = int(settings.IDLE_AFTER.total_seconds())
    pipe = get_redis().pipeline(transaction=False)
    scripts.touch(keys=[keys.active(user_id), keys.timeline_meta(user_id)], args=[ttl], client=pipe)
    pipe.zadd(keys.last_seen(user_id), {user_id: time.time() if now is None else now})
    return bool(pipe.execute()[0])


def home_needs_regeneration(user_id: int) -> bool:
    """Whether a returning user's P waits to be refilled. O(1)."""
    return get_redis().hget(keys.timeline_meta(user_id), "regenerate") is not None


def home_regenerated(user_id: int) -> None:
    get_redis().hdel(keys.timeline_meta(user_id), "regenerate")


def profile_add_and_size(author_id: int, board_id: int, *, pipe) -> None:
    """Queue ZADD + ZCARD of M on ``pipe`` (the caller reads the size). O(log |M|)."""
    key = keys.profile_timeline(author_id)
    pipe.zadd(key, {board_id: board_id})
    pipe.zcard(key)


def home_remove(follower_ids: Iterable[int], board_ids: list[int], *, pipe=None) -> None:
    """Take boards out of each follower's P. O(k log |P|), one pipeline."""
    if not board_ids:
        return
    client = pipe if pipe is not None else get_redis().pipeline(transaction=False)
    for follower_id in follower_ids:
        client.zrem(keys.home_timeline(follower_id), *board_ids)
    if pipe is None:
        client.execute()


def home_ids(user_id: int) -> list[int]:
    """Every id in a user's P, newest first. O(|P|), bounded by the hot size: for offline work."""
    return [int(i) for i in get_redis().zrevrange(keys.home_timeline(user_id), 0, -1)]


def profile_recent_ids(user_id: int, count: int) -> list[int]:
    """The newest ``count`` ids of M. O(log |M| + count)."""
    return [int(i) for i in get_redis().zrevrange(keys.profile_timeline(user_id), 0, count - 1)]


def timeline_replace(key: str, board_ids: Iterable[int]) -> None:
    """Rewrite one timeline whole (rebuild). O(n log n)."""
    pipe = get_redis().pipeline(transaction=True)  # one key: one slot, so MULTI is cluster-safe
    pipe.delete(key)
    mapping = {board_id: board_id for board_id in board_ids}
    if mapping:
        pipe.zadd(key, mapping)
    pipe.execute()


@dataclass(frozen=True)
class IdPage:
    ids: list[int]
    has_more: bool  # an older id exists after the last one


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
    ids (an offset): every list (newest first) is cut to ``count``; one sort in C merges the sorted
    runs; a Deferred is read (``count`` of its ids at once) only when the ``count``-th id in hand
    lies below its bound, so that its ids could be on the page, the newest bound first, and then
    the merge is made again.
    O(n log k) for n ids in k streams, no per-id Python heap."""
    lists = [stream[:count] for stream in streams if not isinstance(stream, Deferred)]
    closed = [stream for stream in streams if isinstance(stream, Deferred)]
    while True:
        ranked, last = [], None
        for board_id in sorted(chain.from_iterable(lists), reverse=True):
            if board_id != last:
                ranked.append(board_id)
                last = board_id
                if len(ranked) == count:
                    break
        due = [stream for stream in closed if len(ranked) < count or ranked[-1] < stream.below]
        if not due:
            return ranked[skip:]
        # One at a time, the newest first, as merge_desc opens them: what it brings may make the
        # older ones needless (each is a PostgreSQL query).
        stream = max(due, key=lambda s: s.below)
        lists.append(stream.newest(count))
        closed.remove(stream)


def desc_unique(*streams: Iterable[int]) -> Iterator[int]:
    """Merge streams of ids, each newest first, into one, newest first, each id once."""
    return merge_desc(*streams)


def _with_archive(owner_id: int, kind: str, head: list[int], archived: int, *, below: int | None,
                  want: int | None) -> list:
    """The streams holding a timeline's newest ids strictly below ``below``, given ``head``, its
    newest ``want`` such ids in Redis (every one when ``want`` is None), and A = ``archived``:
    the head alone when it is whole above A, else the head and the archive below A (deferred).
    Taking the newest ``want`` of their merge is exact: a head id left unread is older than all
    ``want`` read."""
    if not archived or (want is not None and len(head) == want and head[-1] > archived):
        return [head]
    bound = archived + 1 if below is None else min(below, archived + 1)
    return [head, Deferred(bound, lambda: archive.archived_ids_desc(owner_id, kind, below=below),
                           lambda count: archive.archived_newest(owner_id, kind, below=below, count=count))]


def page(user_id: int, kind: str, *, offset: int | None = None, before: int | None = None, limit: int,
         archived: int | None = None) -> IdPage:
    """One page of a timeline, newest first, by ``offset`` or strictly older than ``before``,
    across the hot head (Redis) and the archive (PostgreSQL) with no gap and no duplicate.

    A = the archived max (feeds.archive; ``archived`` when the caller read it already): head ids
    above A come first and alone, so pages there are pure Redis, O(log n + limit). Below A,
    head ids (bounded by the hot size) and archived chunks are merged lazily: a page reads one
    or two chunk rows. One id more than asked is read to tell whether an older one exists.
    """
    client = get_redis()
    key = keys.timeline_key(kind, user_id)
    if archived is None:
        archived = archive.archived_max(user_id, kind)
    want = limit + 1
    if before is not None:
        head = [int(i) for i in client.zrevrangebyscore(key, f"({before}", "-inf", start=0, num=want)]
        ids = list(islice(merge_desc(*_with_archive(user_id, kind, head, archived, below=before, want=want)), want))
        return IdPage(ids=ids[:limit], has_more=len(ids) > limit)

    offset = offset or 0
    above = client.zcount(key, f"({archived}", "+inf") if archived else None
    if above is None or offset + want <= above:
        ids = [int(i) for i in client.zrevrange(key, offset, offset + limit)]
        return IdPage(ids=ids[:limit], has_more=len(ids) > limit)
    top = [int(i) for i in client.zrevrange(key, offset, above - 1)] if offset < above else []
    low = [int(i) for i in client.zrevrangebyscore(key, archived, "-inf")]  # at most the hot size
    skip = max(offset - above, 0)
    count = skip + want - len(top)
    ids = top + newest_of([low, archive.archived_newest(user_id, kind, below=archived + 1, count=count)],
                          skip=skip, count=count)
    return IdPage(ids=ids[:limit], has_more=len(ids) > limit)


@dataclass(frozen=True)
class WarmPage:
    """What timeline_page.lua answered (see page_warm)."""
    status: str  # "page", "regenerate", "big" or "deep"
    stored_mark: str | None  # A as tm[u] holds it (None: not in Redis)
    ids: list[int]  # "page": the ids to show, newest first (hits and misses of G)
    hashes: dict[int, dict]  # "page" on a plain Redis: G of the hits; misses are absent
    last: int | None  # "page": the page's last id, shown or not (the cursor)
    has_more: bool
    big: list[int]  # "big": the reader's big followees


def page_warm(user_id: int, kind: str, *, offset: int | None, before: int | None, limit: int,
              touch: bool = False, stop_if_regenerate: bool = False) -> WarmPage:
    """A warm page of a timeline in one script call (timeline_page.lua), one round trip: the
    ids when the page lies above A, and on a plain Redis their G hashes too, with a home page's
    visibility (authors no longer followed are left out, and taken out of P) and, with
    ``touch``, the reader's active mark (feeds.presence's last-seen index is user_seen's).
    On a plain Redis a reader's big followees' M are merged in the same call while the merge
    stays small (hybrid.SCRIPT_MERGE_MAX_IDS) and above every A.
    On a cluster G and M live in other slots: ``hashes`` is empty and the caller reads G by node.
    Anything else comes back as a status for the longer way: "regenerate" (with
    ``stop_if_regenerate``), "big" (hybrid fan-out: use home_page with ``prefetched``) or
    "deep" (the archive). O(log |T| + limit) in the owner's slot, plus O(limit) hash reads;
    with k big followees merged, O(k log |M| + n log n) for the n ids read."""
    home = kind == Timeline.HOME
    key_list = [keys.timeline_key(kind, user_id), keys.timeline_meta(user_id)]
    if home:
        key_list += [keys.big_following(user_id), social_keys.following(user_id), keys.active(user_id)]
    others = [""] * 6 if settings.REDIS_CLUSTER else [
        *keys.parts(keys.board), *keys.parts(keys.profile_timeline), *keys.parts(keys.timeline_meta)]
    status, mark, payload = scripts.timeline_page(keys=key_list, args=[
        limit + 1, "" if before is not None else (offset or 0), "" if before is None else before,
        archive.mark_field(kind), int(settings.IDLE_AFTER.total_seconds()) if touch else 0,
        1 if stop_if_regenerate else 0, *others,
        archive.mark_field(Timeline.PROFILE), hybrid.PULL_BELOW, hybrid.SCRIPT_MERGE_MAX_IDS,
    ])
    if status != "page":
        big = [int(a) for a in payload] if status == "big" else []
        return WarmPage(status, mark, [], {}, None, False, big)
    has_more, last, *pairs = payload
    ids, hashes = [], {}
    for i in range(0, len(pairs), 2):
        board_id, flat = int(pairs[i]), pairs[i + 1]
        ids.append(board_id)
        if flat:
            hashes[board_id] = dict(zip(flat[::2], flat[1::2]))
    return WarmPage(status, mark, ids, hashes, int(last) if last is not None else None, bool(has_more), [])


def visible_hashes(user_id: int, kind: str, board_ids: list[int]) -> tuple[dict[int, dict], list[int], list[int]]:
    """On a plain Redis, one script call (page_visible.lua): the G hashes of ``board_ids`` and,
    for a home timeline, which authors the reader still follows (the others' ids are taken out
    of P). Returns (G of the visible hits, misses, dropped ids). O(ids) hash reads and probes,
    one round trip. Not for a cluster (G lies in other slots)."""
    key_list = [keys.timeline_key(kind, user_id)]
    if kind == Timeline.HOME:
        key_list.append(social_keys.following(user_id))
    answers = scripts.page_visible(keys=key_list, args=[*keys.parts(keys.board), *board_ids])
    found, misses, dropped = {}, [], []
    for board_id, flat in zip(board_ids, answers):
        if flat == 0:
            dropped.append(board_id)
        elif flat:
            found[board_id] = dict(zip(flat[::2], flat[1::2]))
        else:
            misses.append(board_id)
    return found, misses, dropped


def _home_streams(user_id: int, *, before: int | None, want: int | None,
                  prefetched: tuple[list[int], str | None] | None = None) -> tuple[list | None, int]:
    """The streams of a reader's feed below ``before`` when they follow big authors (None when
    they follow none), and A of their P. The streams: P's head and archive, and each big
    followee's M below its pull_below (feeds.hybrid), head and archive; ``want`` ids at most
    from each head (None: whole heads, bounded by their caps). Two round trips: the reader's
    slot (fb, A of P), then one pipeline of P's head and one pulled_head.lua call per big
    followee (on a cluster, redis-py sends each node its share of the pipeline)."""
    client = get_redis()
    if prefetched is not None:  # page_warm read them
        big, stored = prefetched
    else:
        pipe = client.pipeline(transaction=False)
        pipe.zrange(keys.big_following(user_id), 0, -1)
        pipe.hget(keys.timeline_meta(user_id), archive.mark_field(Timeline.HOME))
        big, stored = pipe.execute()
    archived = archive.archived_max(user_id, Timeline.HOME, stored=stored)
    if not big:
        return None, archived
    high = f"({before}" if before is not None else "+inf"
    pipe = client.pipeline(transaction=False)
    if want is None:
        pipe.zrevrangebyscore(keys.home_timeline(user_id), high, "-inf")
    else:
        pipe.zrevrangebyscore(keys.home_timeline(user_id), high, "-inf", start=0, num=want)
    for author_id in big:
        scripts.pulled_head(
            keys=[keys.profile_timeline(author_id), keys.timeline_meta(author_id)], client=pipe,
            args=["" if before is None else before, -1 if want is None else want,
                  archive.mark_field(Timeline.PROFILE), hybrid.PULL_BELOW],
        )
    home, *heads = pipe.execute()
    streams = _with_archive(user_id, Timeline.HOME, list(map(int, home)), archived, below=before, want=want)
    for author_id, (m_stored, pull_below, *ids) in zip((int(a) for a in big), heads):
        below = before
        if pull_below is not None and (below is None or int(pull_below) < below):
            below = int(pull_below)
        archived_m = archive.archived_max(author_id, Timeline.PROFILE, stored=m_stored)
        streams += _with_archive(author_id, Timeline.PROFILE, list(map(int, ids)), archived_m, below=below, want=want)
    return streams, archived


def home_page(user_id: int, *, offset: int | None = None, before: int | None = None, limit: int,
              prefetched: tuple[list[int], str | None] | None = None) -> IdPage:
    """One page of a reader's home feed (hybrid fan-out, feeds.hybrid): P merged with the M of
    each big author they follow, newest first, each id once, by ``offset`` or strictly older
    than ``before``, across every Redis head and archive, exactly what pushing every board into
    P would give.

    A reader following no big author gets page() of P (the set is read in the round trip that
    reads A). Otherwise two round trips for the ids (see _home_streams); by ``before`` each head
    gives limit + 1 ids, O(k log |M|) for k big followees; by ``offset`` each gives
    offset + limit + 1 (a merge cannot skip by rank), O(k (log |M| + offset)). Archives are read
    only where a head runs out above the page's end. ``prefetched``: the big followees and the
    stored A, when page_warm read them already (one round trip fewer).
    """
    want = limit + 1 if before is not None else (offset or 0) + limit + 1
    streams, archived = _home_streams(user_id, before=before, want=want, prefetched=prefetched)
    if streams is None:
        return page(user_id, Timeline.HOME, offset=offset, before=before, limit=limit, archived=archived)
    skip = 0 if before is not None else offset or 0
    ids = newest_of(streams, skip=skip, count=want)
    return IdPage(ids=ids[:limit], has_more=len(ids) > limit)


def home_iter_desc(user_id: int, *, below: int | None = None, batch: int = 200) -> Iterator[list[int]]:
    """A reader's whole home feed newest first (P merged with their big followees' M, each id
    once), strictly below ``below``, in lists of up to ``batch`` ids: for reads that filter as
    they go (the filtered feed). Heads are read once (bounded by their caps); archives lazily."""
    streams, archived = _home_streams(user_id, before=below, want=None)
    if streams is None:
        high = f"({below}" if below is not None else "+inf"
        head = [int(i) for i in get_redis().zrevrangebyscore(keys.home_timeline(user_id), high, "-inf")]
        streams = _with_archive(user_id, Timeline.HOME, head, archived, below=below, want=None)
    stream = merge_desc(*streams)
    while part := list(islice(stream, batch)):
        yield part
