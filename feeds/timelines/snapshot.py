"""Feed snapshots: a precomputed merge of a reader's home feed for deep pages.

A page by offset of a merged feed (P with the big followees' M, feeds.timelines.hybrid) must merge
every stream down to the offset: a merge cannot skip by rank, so a page at offset 2,000 reads
2,021 ids of each stream. The first such page keeps what it merged, and FEED_SNAPSHOT_AHEAD ids
past its end, as one string in the reader's slot (keys.feed_snapshot); the next deep pages, by
offset or by ``before``, read a range of it in the page's one script call (timeline_page.lua), at
the cost of a shallow page. A page by ``before`` below P's archive mark (the site's own pages
scroll so) keeps the FEED_SNAPSHOT_AHEAD ids below it the same way: a snapshot that starts below
an id, for the next pages by ``before`` (it knows no ranks).

A snapshot is read only while everything it was merged from still holds, each fact read before
(or, for a big followee's M, with) the ids it covers, so a change made while it was merged shows
too (keys.feed_snapshot_facts):
- P's size, oldest id and revision (feeds.timelines.store): a delivery by fan-out only adds ids
  and trims the oldest, which changes the size or the oldest id; every other change of P, head or
  archive, bumps the revision;
- P's archived max, the set of big followees, and each one's M revision and pull_below.
Any change of the feed, a new board at its top included, so makes the next deep page merge again.
Moving ids to the archive changes no fact that matters but P's oldest id (a new snapshot then).
Blocks and mutes move nothing: the ids of authors the reader does not see keep their ranks and
are left out as each page is hydrated, as on every page; an unfollowed author's ids leave P at
the clean-up or there (its revision bumped). So a snapshot gives the pages a merge made now would.

Storage only: Redis in, Redis out.
"""

import struct
from dataclasses import dataclass, field

from django.conf import settings

from feeds import keys
from feeds.rules import Timeline
from feeds.timelines import archive, hybrid, store
from ugcsite.platform.redis import get_redis

# A snapshot is one string of ids, each an unsigned big-endian integer of WIDTH bytes (Lua's
# struct reads it as ">I8", exact below 2^53), so the n-th id is a GETRANGE away and a whole merge
# is one SET, packed in C: sending 2,500 ids as RPUSH arguments, or formatting them as text, cost
# more than the merge itself.
WIDTH = 8
_PACKED = ">{}Q"  # struct's format for n such ids


@dataclass
class Facts:
    """What a merge of a reader's feed was made from (see the module's docstring), as Redis
    holds each value (None: absent)."""

    p_size: int
    p_oldest: str | None
    p_revision: str | None
    archived: str | None  # P's archived max A as stored
    big: list[str]  # the big followees, as ZRANGE of fb gives them
    authors: dict[str, str] = field(default_factory=dict)  # big followee -> "M revision:pull_below"


def author_fact(revision: str | None, pull_below: str | None) -> str:
    """A big followee's fact as timeline_page.lua spells it: "M revision:pull_below"."""
    return f"{revision or ''}:{pull_below or ''}"


def reader_facts(user_id: int) -> Facts:
    """The facts of the reader's own slot in one MULTI (one slot: atomic, cluster-safe): P's
    size, oldest id, revision and A, and the big followees (page_warm reads the same in its
    script call). O(|fb| + log |P|)."""
    key = keys.home_timeline(user_id)
    pipe = get_redis().pipeline(transaction=True)
    pipe.zcard(key)
    pipe.zrange(key, 0, 0)
    pipe.hmget(keys.timeline_meta(user_id), [store.revision_field(Timeline.HOME), archive.mark_field(Timeline.HOME)])
    pipe.zrange(keys.big_following(user_id), 0, -1)
    size, oldest, (revision, archived), big = pipe.execute()
    return Facts(p_size=size, p_oldest=oldest[0] if oldest else None, p_revision=revision, archived=archived, big=big)


def snapshot_put(user_id: int, ids: list[int], *, whole: bool, top: int | None, facts: Facts) -> None:
    """Keep the newest ``ids`` of the reader's merged feed strictly below ``top`` (None: from its
    newest; ``whole``: the feed ends with them) with the facts they were merged from, for
    FEED_SNAPSHOT_SECONDS. One MULTI in the reader's slot: O(ids)."""
    facts_key = keys.feed_snapshot_facts(user_id)
    stored = {
        "size": len(ids),
        "whole": 1 if whole else 0,
        "top": "" if top is None else top,
        "p_size": facts.p_size,
        "p_oldest": facts.p_oldest or "",
        "p_revision": facts.p_revision or "",
        "archived": facts.archived or "",
        "big": ",".join(facts.big),
        **{f"m:{author}": fact for author, fact in facts.authors.items()},
    }
    pipe = get_redis().pipeline(transaction=True)
    pipe.set(keys.feed_snapshot(user_id), struct.pack(_PACKED.format(len(ids)), *ids))
    pipe.expire(keys.feed_snapshot(user_id), settings.FEED_SNAPSHOT_SECONDS)
    pipe.delete(facts_key)
    pipe.hset(facts_key, mapping=stored)
    pipe.expire(facts_key, settings.FEED_SNAPSHOT_SECONDS)
    pipe.execute()


def authors_hold(unchecked: list[str]) -> bool:
    """Whether each big followee's M revision and pull_below are still what a snapshot was made
    at (``unchecked``: author, fact, author, fact, ... as timeline_page.lua returns them on a
    cluster, where they lie in other slots). One pipeline, one round trip per node: O(k)."""
    authors = unchecked[::2]
    pipe = get_redis().pipeline(transaction=False)
    for author in authors:
        pipe.hmget(keys.timeline_meta(int(author)), [store.revision_field(Timeline.PROFILE), hybrid.PULL_BELOW])
    return all(
        author_fact(revision, pull_below) == fact
        for (revision, pull_below), fact in zip(pipe.execute(), unchecked[1::2], strict=True)
    )


def depth_for(offset: int, want: int) -> int | None:
    """How many ids a snapshot made for a page at ``offset`` (``want`` ids read) holds: the page
    and FEED_SNAPSHOT_AHEAD more; None when the page starts above FEED_SNAPSHOT_FROM (a shallow
    page is cheap without one) or ends past FEED_SNAPSHOT_MAX_IDS (no snapshot that long)."""
    if offset < settings.FEED_SNAPSHOT_FROM or offset + want > settings.FEED_SNAPSHOT_MAX_IDS:
        return None
    return min(offset + want + settings.FEED_SNAPSHOT_AHEAD, settings.FEED_SNAPSHOT_MAX_IDS)
