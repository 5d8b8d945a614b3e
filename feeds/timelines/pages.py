"""Reading a page of a timeline: by offset or by cursor, across the hot head in Redis and the
archive in PostgreSQL, with the big authors' M merged in for a reader who follows them (hybrid
fan-out), and on a plain Redis in one script call with the G hashes and visibility. A deep page
of a home feed keeps its merge as the reader's feed snapshot (feeds.timelines.snapshot), from
which the next deep pages are read in that one call.

Storage only: Redis and the archive in, ids and hashes out.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import islice

from django.conf import settings

from feeds import keys
from feeds.rules import Timeline
from feeds.timelines import archive, hybrid, snapshot, store
from feeds.timelines.merge import merge_desc, newest_of, with_archive
from feeds.timelines.scripts import scripts
from social import keys as social_keys
from social.limits import ReadGate
from ugcsite.platform.redis import get_redis


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
    SNAPSHOT = "snapshot"  # (cluster) the feed snapshot holds the page if the big followees' facts hold


def _spellings() -> dict[str, str | None]:
    """The key spellings timeline_page.lua reads G, M and tm by on a plain Redis; None on a
    cluster, where they lie in other slots (the caller reads them by node)."""
    found = {
        **keys.spelling("g", keys.board),
        **keys.spelling("m", keys.profile_timeline),
        **keys.spelling("tm", keys.timeline_meta),
    }
    return dict.fromkeys(found) if settings.REDIS_CLUSTER else found


_NO_GATE = {"gate_owner": None, "gate_now": None, "gate_slice": None, "gate_slices": None, "gate_allowed": []}


@dataclass(frozen=True)
class WarmPage:
    """What timeline_page.lua answered (see page_warm)."""

    status: PageStatus
    stored_mark: str | None  # A as tm[u] holds it (None: not in Redis)
    ids: list[int]  # "page": the ids to show, newest first (hits and misses of G)
    hashes: dict[int, dict]  # "page" on a plain Redis: G of the hits; misses are absent
    last: int | None  # "page": the page's last id, shown or not (the cursor)
    has_more: bool
    big: list[int]  # "big", "snapshot": the reader's big followees
    unchecked: list[str] = field(default_factory=list)  # "snapshot": author, fact, ... (snapshot.authors_hold)
    facts: snapshot.Facts | None = None  # a home page not made: the reader's facts, to keep a snapshot by


def page_warm(
    user_id: int,
    kind: str,
    *,
    offset: int | None,
    before: int | None,
    limit: int,
    touch: bool = False,
    stop_if_regenerate: bool = False,
    gate: ReadGate | None = None,
) -> WarmPage:
    """A warm page of a timeline in one script call (timeline_page.lua), one round trip: the
    ids when the page lies above A, and on a plain Redis their G hashes too, with a home page's
    visibility (authors no longer followed are left out, and taken out of P) and, with
    ``touch``, the reader's active mark (feeds.timelines.activity's last-seen index is user_seen's).
    With a ``gate`` (a home page read by bearer token, social.limits.read_gate), the same call
    first checks the token's cache entry and counts the read limits, all in the reader's slot,
    and raises what it refuses (``ReadGate.settle``): the token, the limits and the page in one
    round trip.
    On a plain Redis a reader's big followees' M are merged in the same call while the merge
    stays small (hybrid.SCRIPT_MERGE_MAX_IDS) and above every A.
    On a cluster G and M live in other slots: ``hashes`` is empty and the caller reads G by node.
    A home page that cannot be made so comes from the reader's feed snapshot while it holds
    (feeds.timelines.snapshot; on a cluster as "snapshot", for the caller to check the big
    followees' facts by node). Anything else comes back as a status for the longer way:
    "regenerate" (with ``stop_if_regenerate``), "big" (hybrid fan-out: use home_page with
    ``prefetched``) or "deep" (the archive). O(log |T| + limit) in the owner's slot, plus
    O(limit) hash reads; with k big followees merged, O(k log |M| + n log n) for the n ids read;
    from a snapshot O(k + limit)."""
    home = kind == Timeline.HOME
    if gate is not None and (not home or gate.owner != user_id):
        raise ValueError("a gate guards a home page of the token's owner")
    key_list = [keys.timeline_key(kind, user_id), keys.timeline_meta(user_id)]
    if home:
        key_list += [
            keys.big_following(user_id),
            social_keys.following(user_id),
            keys.active(user_id),
            social_keys.hidden(user_id),
            keys.feed_snapshot(user_id),
            keys.feed_snapshot_facts(user_id),
        ]
    if gate is not None:
        key_list += gate.keys
    status, mark, payload, *reader = scripts.timeline_page(
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
        p_revision_field=store.revision_field(Timeline.HOME),
        m_revision_field=store.revision_field(Timeline.PROFILE),
        snapshot_width=snapshot.WIDTH,
        **(gate.args() if gate is not None else _NO_GATE),
    )
    if gate is not None:
        gate.settle(status, payload)
    status = PageStatus(status)
    facts = None
    if reader and reader[0]:
        p_size, p_oldest, p_revision = reader[0]
        facts = snapshot.Facts(
            p_size=p_size,
            p_oldest=p_oldest,
            p_revision=p_revision,
            archived=mark,
            big=payload[0] if status == PageStatus.SNAPSHOT else (payload if status == PageStatus.BIG else []),
        )
    if status == PageStatus.SNAPSHOT:
        big, ids, unchecked = payload
        ids = [int(i) for i in ids]
        return WarmPage(
            status=status,
            stored_mark=mark,
            ids=ids[:limit],
            hashes={},
            last=ids[limit - 1] if len(ids) > limit else None,
            has_more=len(ids) > limit,
            big=[int(a) for a in big],
            unchecked=unchecked,
            facts=facts,
        )
    if status != PageStatus.PAGE:
        big = [int(a) for a in payload] if status == PageStatus.BIG else []
        return WarmPage(
            status=status, stored_mark=mark, ids=[], hashes={}, last=None, has_more=False, big=big, facts=facts
        )
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
        key_list += [social_keys.following(user_id), social_keys.hidden(user_id), keys.timeline_meta(user_id)]
    g_before, g_after = keys.parts(keys.board)
    answers = scripts.page_visible(
        keys=key_list,
        g_before=g_before,
        g_after=g_after,
        revision_field=store.revision_field(Timeline.HOME),
        board_ids=board_ids,
    )
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


def _big_and_mark(user_id: int, prefetched: tuple[list[int], str | None] | None) -> tuple[list[int], int]:
    """The reader's big followees and A of their P: ``prefetched`` when page_warm read them,
    else one round trip in the reader's slot."""
    if prefetched is not None:
        big, stored = prefetched
    else:
        pipe = get_redis().pipeline(transaction=False)
        pipe.zrange(keys.big_following(user_id), 0, -1)
        pipe.hget(keys.timeline_meta(user_id), archive.mark_field(Timeline.HOME))
        big, stored = pipe.execute()
    return [int(a) for a in big], archive.archived_max(user_id, Timeline.HOME, stored=stored)


def _home_streams(user_id: int, *, before: int | None, want: int | None, big: list[int], archived: int) -> list:
    """The streams of a reader's feed below ``before``: P's head and archive (A = ``archived``),
    and each big followee's M below its pull_below (feeds.timelines.hybrid), head and archive;
    ``want`` ids at most from each head (None: whole heads, bounded by their caps). One
    pipeline of P's head and one pulled_head.lua call per big followee (on a cluster, redis-py
    sends each node its share of it)."""
    high = f"({before}" if before is not None else "+inf"
    pipe = get_redis().pipeline(transaction=False)
    if want is None:
        pipe.zrevrangebyscore(keys.home_timeline(user_id), high, "-inf")
    else:
        pipe.zrevrangebyscore(keys.home_timeline(user_id), high, "-inf", start=0, num=want)
    _pulled_heads(pipe, big, before=before, low=None, want=want)
    home, *heads = pipe.execute()
    streams = with_archive(user_id, Timeline.HOME, list(map(int, home)), archived, below=before, want=want)
    return streams + _pulled_streams(big, heads, before=before, low=None, want=want)


def _pulled_heads(pipe, big: list[int], *, before: int | None, low: int | None, want: int | None) -> None:
    """Queue one pulled_head.lua call per big followee on ``pipe``: their M's newest ``want`` ids
    (None: every one) below ``before`` and their pull_below, down to ``low`` (None: no floor)."""
    for author_id in big:
        scripts.pulled_head(
            keys=[keys.profile_timeline(author_id), keys.timeline_meta(author_id)],
            client=pipe,
            before=before,
            low=low,
            count=-1 if want is None else want,
            mark_field=archive.mark_field(Timeline.PROFILE),
            pull_below_field=hybrid.PULL_BELOW,
            revision_field=store.revision_field(Timeline.PROFILE),
        )


def _pulled_streams(
    big: list[int],
    heads: list,
    *,
    before: int | None,
    low: int | None,
    want: int | None,
    authors: dict[str, str] | None = None,
) -> list:
    """The streams of the big followees' M from what _pulled_heads read: each head, and its
    archive where the head may not reach far enough (not below ``low``: none when the archive
    holds nothing from ``low`` up). ``authors``, when given, gets each one's fact as a feed
    snapshot checks it (snapshot.author_fact), read with its head."""
    streams = []
    for author_id, (m_stored, pull_below, revision, *ids) in zip(big, heads):
        if authors is not None:
            authors[str(author_id)] = snapshot.author_fact(revision, pull_below)
        below = before
        if pull_below is not None and (below is None or int(pull_below) < below):
            below = int(pull_below)
        archived_m = archive.archived_max(author_id, Timeline.PROFILE, stored=m_stored)
        ids = list(map(int, ids))
        if low is not None and archived_m < low:
            streams.append(ids)  # every id of M from `low` up is in the head
        else:
            streams += with_archive(author_id, Timeline.PROFILE, ids, archived_m, below=below, want=want)
    return streams


def home_page(
    user_id: int,
    *,
    offset: int | None = None,
    before: int | None = None,
    limit: int,
    prefetched: tuple[list[int], str | None] | None = None,
    facts: snapshot.Facts | None = None,
) -> IdPage:
    """One page of a reader's home feed (hybrid fan-out, feeds.timelines.hybrid): P merged with the M of
    each big author they follow, newest first, each id once, by ``offset`` or strictly older
    than ``before``, across every Redis head and archive, exactly what pushing every board into
    P would give.

    A deep page is merged deeper and kept as the reader's feed snapshot (home_snapshot_page): by
    offset from FEED_SNAPSHOT_FROM down (as deep as snapshot.depth_for says), by ``before`` below
    P's archive mark (the page and FEED_SNAPSHOT_AHEAD ids more). Otherwise a reader following no
    big author gets page() of P (the set is read in the round trip that reads A), and one who
    does two round trips for the ids (see _home_streams); by ``before`` each head gives
    limit + 1 ids, O(k log |M|) for k big followees; by ``offset`` each gives offset + limit + 1
    (a merge cannot skip by rank), O(k (log |M| + offset)). Archives are read only where a head
    runs out above the page's end. ``prefetched``: the big followees and the stored A, and
    ``facts``, the reader's facts a snapshot is kept by, when page_warm read them already (a
    round trip fewer).
    """
    if before is None:
        depth = snapshot.depth_for(offset or 0, limit + 1)
        if depth is not None:
            return home_snapshot_page(user_id, offset=offset or 0, before=None, limit=limit, depth=depth, facts=facts)
    big, archived = _big_and_mark(user_id, prefetched)
    if before is not None and before <= archived:
        depth = min(limit + 1 + settings.FEED_SNAPSHOT_AHEAD, settings.FEED_SNAPSHOT_MAX_IDS)
        return home_snapshot_page(user_id, offset=0, before=before, limit=limit, depth=depth, facts=facts)
    if not big:
        return page(user_id, Timeline.HOME, offset=offset, before=before, limit=limit, archived=archived)
    want = limit + 1 if before is not None else (offset or 0) + limit + 1
    streams = _home_streams(user_id, before=before, want=want, big=big, archived=archived)
    skip = 0 if before is not None else offset or 0
    ids = newest_of(streams, skip=skip, count=want)
    return IdPage(ids=ids[:limit], has_more=len(ids) > limit)


def home_snapshot_page(
    user_id: int, *, offset: int, before: int | None, limit: int, depth: int, facts: snapshot.Facts | None = None
) -> IdPage:
    """A page of a reader's home feed, by offset or strictly older than ``before``, from a merge
    of its newest ``depth`` ids (below ``before``: at least offset + limit + 1), kept as the
    reader's feed snapshot (feeds.timelines.snapshot) for the next deep pages; one that starts
    below ``before`` serves pages by ``before`` only (it knows no ranks).

    P is merged first: its ``depth``-th id is a floor the merge's last id cannot fall below
    (every id of P is in the feed), so each big followee's M is read only down to it (an M
    mostly older than the page gives few ids, and its archive is not read). Below P's archive
    mark the floor is its archive's (read first: the head holds next to nothing there), so P's
    head goes in the big followees' pipeline. The reader's ``facts`` (read in one MULTI when not
    given) come before anything they cover, each big followee's with its M's head, so whatever
    changes while the rest is read makes the snapshot stale. O(depth) for P, O(k log |M| + m)
    for the m ids of k big followees above the floor, O(depth) to keep it: three round trips
    and a query (four with the facts), the archive's query at the top only where P's head runs out."""
    if facts is None:
        facts = snapshot.reader_facts(user_id)
    archived = archive.archived_max(user_id, Timeline.HOME, stored=facts.archived)
    big = [int(a) for a in facts.big]
    high = "+inf" if before is None else f"({before}"
    pipe = get_redis().pipeline(transaction=False)
    if before is not None and before <= archived:
        chunked = archive.archived_newest(user_id, Timeline.HOME, below=before, count=depth)
        low = chunked[-1] if len(chunked) == depth else None
        pipe.zrevrangebyscore(keys.home_timeline(user_id), high, "-inf", start=0, num=depth)
        _pulled_heads(pipe, big, before=before, low=low, want=depth)
        head, *heads = pipe.execute()
        mine = newest_of([list(map(int, head)), chunked], skip=0, count=depth)
    else:
        head = [int(i) for i in get_redis().zrevrangebyscore(keys.home_timeline(user_id), high, "-inf", 0, depth)]
        streams = with_archive(user_id, Timeline.HOME, head, archived, below=before, want=depth)
        mine = newest_of(streams, skip=0, count=depth)
        low = mine[-1] if len(mine) == depth else None
        _pulled_heads(pipe, big, before=before, low=low, want=depth)
        heads = pipe.execute() if big else []
    streams = [mine, *_pulled_streams(big, heads, before=before, low=low, want=depth, authors=facts.authors)]
    ids = newest_of(streams, skip=0, count=depth)
    snapshot.snapshot_put(user_id, ids, whole=len(ids) < depth, top=before, facts=facts)
    found = ids[offset : offset + limit + 1]
    return IdPage(ids=found[:limit], has_more=len(found) > limit)


def home_iter_desc(user_id: int, *, below: int | None = None, batch: int = 200) -> Iterator[list[int]]:
    """A reader's whole home feed newest first (P merged with their big followees' M, each id
    once), strictly below ``below``, in lists of up to ``batch`` ids: for reads that filter as
    they go (the filtered feed). Heads are read once (bounded by their caps); archives lazily."""
    big, archived = _big_and_mark(user_id, None)
    streams = _home_streams(user_id, before=below, want=None, big=big, archived=archived)
    stream = merge_desc(*streams)
    while part := list(islice(stream, batch)):
        yield part
