"""Hybrid fan-out: an author with more than FANOUT_PUSH_MAX_FOLLOWERS followers is *big*: a new
board of theirs is not pushed into every follower's P; each reader's feed page merges the big
authors' M at read time instead (feeds.timelines.pages.home_page).

The state, each fact in its owner's slot:
- the author's mode, two fields of their timeline facts (``tm:{u:a}``), flipped by one script
  (fanout_mode.lua) after every change of F[a], so it crosses when the count does:
  ``pull_below`` is absent for an author who was always pushed, ID_LIMIT (above every board id)
  while they are big, and, once they fall back to the threshold, the id X from which they are
  pushed again; ``pull_since`` is the id from which a big author's boards were not pushed.
- each reader's big-following set fb[r] (``fb:{u:r}``, feeds.keys.big_following): the followees
  whose M the reader's page merges, strictly below their ``pull_below``. An author enters it when
  the reader follows them while they are big, and for every follower by a walk of F (a Celery
  task, in batches like a fan-out) when they become big. Only an unfollow takes it out: when an
  author falls back the entry stays and is read below X (their boards from X on are pushed
  again), because the alternative, copying a whole pulled history into each follower's P and
  its archive, is unbounded, and dropping it would leave a hole. An entry too many costs one
  read, never a wrong page: the page merges P with M and shows each id once.

A page of a reader following k big authors costs O(k log |M|) more: on a plain Redis inside the
page's one script call (feeds.timelines.pages.page_warm), on a cluster (or a deep page) one more
pipelined round trip; the set of big followees is found in the reader's own slot, O(|fb|).

Storage only: Redis in, Redis out; no tasks are enqueued here.
"""

import time
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone

from feeds import keys
from feeds.timelines.ids import min_board_id_at
from feeds.timelines.scripts import scripts
from social import keys as social_keys
from ugcsite.platform.http import ID_LIMIT
from ugcsite.platform.redis import get_redis, run_by_node

PULL_BELOW = "pull_below"  # fields of keys.timeline_meta, see above
PULL_SINCE = "pull_since"
# On a plain Redis a warm page merges the big followees' M inside its one script call
# (timeline_page.lua) when the ids it reads, (offset + limit + 1) x (big followees + 1), are at
# most this; past it (or on a cluster) the merge is home_page's, in Python, two trips more. The
# bound keeps one script's time in Redis short (about a millisecond at this size).
SCRIPT_MERGE_MAX_IDS = 2_000


@dataclass(frozen=True)
class Mode:
    big: bool  # not pushed now: merged at read time
    changed: bool  # flipped by this call
    since: int | None  # pull_since: identifies the walk that marks the followers of this big spell


def author_recount(author_id: int) -> Mode:
    """Compare the author's follower count (ZCARD F) with FANOUT_PUSH_MAX_FOLLOWERS and flip their
    mode if it crossed; the boundary id of a flip lies FANOUT_PULL_MARGIN ahead, so every board
    made before the flip is on the side it was treated as. Call after every change of F.
    One script call in the author's slot, O(1)."""
    boundary = min_board_id_at(timezone.now() + settings.FANOUT_PULL_MARGIN)
    big, changed, since = scripts.fanout_mode(
        keys=[social_keys.followers(author_id), keys.timeline_meta(author_id)],
        threshold=settings.FANOUT_PUSH_MAX_FOLLOWERS,
        pull_below_field=PULL_BELOW,
        pull_since_field=PULL_SINCE,
        big_value=ID_LIMIT,
        boundary=boundary,
    )
    return Mode(big=bool(big), changed=bool(changed), since=int(since) if since is not None else None)


def author_is_big(author_id: int) -> bool:
    """Whether the author's new boards are merged at read time rather than pushed. O(1)."""
    return get_redis().hget(keys.timeline_meta(author_id), PULL_BELOW) == str(ID_LIMIT)


def pull_since(author_id: int) -> int | None:
    """The id from which the author's boards stopped being pushed when they last became big. O(1)."""
    value = get_redis().hget(keys.timeline_meta(author_id), PULL_SINCE)
    return int(value) if value is not None else None


def board_never_pushed(author_id: int, board_id: int) -> bool:
    """Whether no follower's P can hold this board: the author is big and made it after they
    became big (a retraction then needs no walk of their followers). O(1)."""
    below, since = get_redis().hmget(keys.timeline_meta(author_id), [PULL_BELOW, PULL_SINCE])
    return below == str(ID_LIMIT) and since is not None and board_id >= int(since)


def followers_mark(author_id: int, reader_ids: Iterable[int]) -> int:
    """Add the author to each reader's big-following set, where the reader still follows them
    (big_following_add.lua). O(k log |fb|) for k readers, one round trip per node. Returns how
    many entries are new."""
    answers = run_by_node(
        scripts.big_following_add,
        reader_ids,
        key=keys.big_following,
        per_call=settings.FANOUT_SCRIPT_CHUNK,
        keys_of=lambda r: [keys.big_following(r), social_keys.following(r)],
        args=scripts.big_following_add.args(author=author_id, score=time.time()),
    )
    return sum(int(added) for _, added in answers)


def reader_unmark(reader_id: int, author_id: int) -> None:
    """Take an author out of a reader's big-following set (an unfollow). O(log |fb|)."""
    get_redis().zrem(keys.big_following(reader_id), author_id)


def readers_unmark(reader_ids: list[int], author_id: int) -> None:
    """Take an author out of many readers' big-following sets (a deleted account): one
    pipeline, O(k log |fb|)."""
    pipe = get_redis().pipeline(transaction=False)
    for reader_id in reader_ids:
        pipe.zrem(keys.big_following(reader_id), author_id)
    pipe.execute()


def big_followees(reader_id: int) -> list[int]:
    """The followees whose M the reader's feed merges. O(|fb|), in the reader's slot."""
    return [int(a) for a in get_redis().zrange(keys.big_following(reader_id), 0, -1)]


def merged_whole(reader_id: int) -> set[int]:
    """The reader's big followees that are big now: the merge gives every board of theirs, so
    the reader's P needs none (regeneration leaves them out). O(|fb|), two round trips."""
    return merged_whole_many([reader_id])[reader_id]


def merged_whole_many(reader_ids: list[int]) -> dict[int, set[int]]:
    """merged_whole for many readers (rebuild_redis, a batch at a time): their big-following
    sets in one pipeline, then those authors' modes in another. O(sum of |fb|), two round
    trips a node."""
    pipe = get_redis().pipeline(transaction=False)
    for reader_id in reader_ids:
        pipe.zrange(keys.big_following(reader_id), 0, -1)
    followed = {reader_id: [int(a) for a in authors] for reader_id, authors in zip(reader_ids, pipe.execute())}
    authors = sorted({a for each in followed.values() for a in each})
    if not authors:
        return {reader_id: set() for reader_id in reader_ids}
    pipe = get_redis().pipeline(transaction=False)
    for author_id in authors:
        pipe.hget(keys.timeline_meta(author_id), PULL_BELOW)
    whole = {a for a, below in zip(authors, pipe.execute()) if below == str(ID_LIMIT)}
    return {reader_id: set(each) & whole for reader_id, each in followed.items()}
