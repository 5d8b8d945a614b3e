"""Reading a page of a timeline: by offset or by cursor, across the hot head in Redis and the
archive in PostgreSQL, with the big authors' M merged in for a reader who follows them (hybrid
fan-out), and on a plain Redis in one script call with the G hashes and visibility.

Storage only: Redis and the archive in, ids and hashes out.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from itertools import islice

from django.conf import settings

from feeds import keys
from feeds.rules import Timeline
from feeds.timelines import archive, hybrid
from feeds.timelines.merge import merge_desc, newest_of, with_archive
from feeds.timelines.scripts import scripts
from social import keys as social_keys
from ugcsite.redis import get_redis


@dataclass(frozen=True)
class IdPage:
    ids: list[int]
    has_more: bool  # an older id exists after the last one


def page(
    user_id: int,
    kind: str,
    *,
    offset: int | None = None,
    before: int | None = None,
    limit: int,
    archived: int | None = None,
) -> IdPage:
    """One page of a timeline, newest first, by ``offset`` or strictly older than ``before``,
    across the hot head (Redis) and the archive (PostgreSQL) with no gap and no duplicate.

    A = the archived max (feeds.timelines.archive; ``archived`` when the caller read it already): head ids
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
        ids = list(islice(merge_desc(*with_archive(user_id, kind, head, archived, below=before, want=want)), want))
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
    ids = top + newest_of(
        [low, archive.archived_newest(user_id, kind, below=archived + 1, count=count)], skip=skip, count=count
    )
    return IdPage(ids=ids[:limit], has_more=len(ids) > limit)


class PageStatus(StrEnum):
    """What timeline_page.lua answers (its first word)."""

    PAGE = "page"  # the page, whole
    REGENERATE = "regenerate"  # the reader was idle: regenerate P, then read
    BIG = "big"  # the reader follows big authors whose M the caller merges (home_page)
    DEEP = "deep"  # the page reaches below A: the archive is needed


def _spellings() -> dict[str, str | None]:
    """The key spellings timeline_page.lua reads G, M and tm by on a plain Redis; None on a
    cluster, where they lie in other slots (the caller reads them by node)."""
    found = {
        **keys.spelling("g", keys.board),
        **keys.spelling("m", keys.profile_timeline),
        **keys.spelling("tm", keys.timeline_meta),
    }
    return dict.fromkeys(found) if settings.REDIS_CLUSTER else found


@dataclass(frozen=True)
class WarmPage:
    """What timeline_page.lua answered (see page_warm)."""

    status: PageStatus
    stored_mark: str | None  # A as tm[u] holds it (None: not in Redis)
    ids: list[int]  # "page": the ids to show, newest first (hits and misses of G)
    hashes: dict[int, dict]  # "page" on a plain Redis: G of the hits; misses are absent
    last: int | None  # "page": the page's last id, shown or not (the cursor)
    has_more: bool
    big: list[int]  # "big": the reader's big followees


def page_warm(
    user_id: int,
    kind: str,
    *,
    offset: int | None,
    before: int | None,
    limit: int,
    touch: bool = False,
    stop_if_regenerate: bool = False,
) -> WarmPage:
    """A warm page of a timeline in one script call (timeline_page.lua), one round trip: the
    ids when the page lies above A, and on a plain Redis their G hashes too, with a home page's
    visibility (authors no longer followed are left out, and taken out of P) and, with
    ``touch``, the reader's active mark (feeds.timelines.activity's last-seen index is user_seen's).
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
        key_list += [
            keys.big_following(user_id),
            social_keys.following(user_id),
            keys.active(user_id),
            social_keys.hidden(user_id),
        ]
    status, mark, payload = scripts.timeline_page(
        keys=key_list,
        want=limit + 1,
        offset=None if before is not None else (offset or 0),
        before=before,
        mark_field=archive.mark_field(kind),
        touch_ttl=int(settings.IDLE_AFTER.total_seconds()) if touch else 0,
        stop_if_regenerate=1 if stop_if_regenerate else 0,
        **_spellings(),
        m_mark_field=archive.mark_field(Timeline.PROFILE),
        pull_below_field=hybrid.PULL_BELOW,
        merge_max=hybrid.SCRIPT_MERGE_MAX_IDS,
    )
    status = PageStatus(status)
    if status != PageStatus.PAGE:
        big = [int(a) for a in payload] if status == PageStatus.BIG else []
        return WarmPage(status=status, stored_mark=mark, ids=[], hashes={}, last=None, has_more=False, big=big)
    has_more, last, *pairs = payload
    ids, hashes = [], {}
    for i in range(0, len(pairs), 2):
        board_id, flat = int(pairs[i]), pairs[i + 1]
        ids.append(board_id)
        if flat:
            hashes[board_id] = dict(zip(flat[::2], flat[1::2]))
    return WarmPage(
        status=status,
        stored_mark=mark,
        ids=ids,
        hashes=hashes,
        last=int(last) if last is not None else None,
        has_more=bool(has_more),
        big=[],
    )


def visible_hashes(user_id: int, kind: str, board_ids: list[int]) -> tuple[dict[int, dict], list[int], list[int]]:
    """On a plain Redis, one script call (page_visible.lua): the G hashes of ``board_ids`` and,
    for a home timeline, which authors the reader still follows (the others' ids are taken out
    of P). Returns (G of the visible hits, misses, dropped ids). O(ids) hash reads and probes,
    one round trip. Not for a cluster (G lies in other slots)."""
    key_list = [keys.timeline_key(kind, user_id)]
    if kind == Timeline.HOME:
        key_list += [social_keys.following(user_id), social_keys.hidden(user_id)]
    g_before, g_after = keys.parts(keys.board)
    answers = scripts.page_visible(keys=key_list, g_before=g_before, g_after=g_after, board_ids=board_ids)
    found, misses, dropped = {}, [], []
    for board_id, flat in zip(board_ids, answers):
        if flat == 0:
            dropped.append(board_id)
        elif flat == -1:
            continue  # the reader does not see its author (blocked or muted)
        elif flat:
            found[board_id] = dict(zip(flat[::2], flat[1::2]))
        else:
            misses.append(board_id)
    return found, misses, dropped


def _home_streams(
    user_id: int, *, before: int | None, want: int | None, prefetched: tuple[list[int], str | None] | None = None
) -> tuple[list | None, int]:
    """The streams of a reader's feed below ``before`` when they follow big authors (None when
    they follow none), and A of their P. The streams: P's head and archive, and each big
    followee's M below its pull_below (feeds.timelines.hybrid), head and archive; ``want`` ids at most
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
            keys=[keys.profile_timeline(author_id), keys.timeline_meta(author_id)],
            client=pipe,
            before=before,
            count=-1 if want is None else want,
            mark_field=archive.mark_field(Timeline.PROFILE),
            pull_below_field=hybrid.PULL_BELOW,
        )
    home, *heads = pipe.execute()
    streams = with_archive(user_id, Timeline.HOME, list(map(int, home)), archived, below=before, want=want)
    for author_id, (m_stored, pull_below, *ids) in zip((int(a) for a in big), heads):
        below = before
        if pull_below is not None and (below is None or int(pull_below) < below):
            below = int(pull_below)
        archived_m = archive.archived_max(author_id, Timeline.PROFILE, stored=m_stored)
        streams += with_archive(author_id, Timeline.PROFILE, list(map(int, ids)), archived_m, below=below, want=want)
    return streams, archived


def home_page(
    user_id: int,
    *,
    offset: int | None = None,
    before: int | None = None,
    limit: int,
    prefetched: tuple[list[int], str | None] | None = None,
) -> IdPage:
    """One page of a reader's home feed (hybrid fan-out, feeds.timelines.hybrid): P merged with the M of
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
        streams = with_archive(user_id, Timeline.HOME, head, archived, below=below, want=None)
    stream = merge_desc(*streams)
    while part := list(islice(stream, batch)):
        yield part
