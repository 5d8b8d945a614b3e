"""Whom a person does not see: the people they block, those who block them, and those they
mute, kept for each person as one sorted set in their own slot (``keys.hidden``: the other
person's id scored by a sum of bits). Every list a person reads drops those authors with one
ZMSCORE of its page's authors there, so a block or a mute costs O(1) to write and
O(page) to apply, and unmuting brings everything back at once: nothing was removed.
PostgreSQL (social.models.Block, Mute) is the source of truth; ``hidden_replace`` puts the sets
back after a lost Redis (rebuild). Storage only.
"""

from collections import defaultdict
from collections.abc import Iterable

from social import keys
from social.models import Block, Mute
from social.scripts import scripts
from ugcsite.platform.redis import get_async_batcher, get_redis

BLOCKS = 1  # the owner blocks them
BLOCKED_BY = 2  # they block the owner
MUTES = 4  # the owner mutes them
BLOCKED_EITHER_WAY = BLOCKS | BLOCKED_BY


def _bits(pipe, owner_id: int, other_id: int, bit: int, on: bool) -> None:
    scripts.bits_set(keys=[keys.hidden(owner_id)], member=other_id, bit=bit, on=1 if on else 0, client=pipe)


def block_set(blocker_id: int, blocked_id: int, *, on: bool) -> None:
    """Write (``on``) or clear a block in both people's sets: two script calls, one in each
    owner's slot, one pipeline. O(log n)."""
    pipe = get_redis().pipeline(transaction=False)
    _bits(pipe, blocker_id, blocked_id, BLOCKS, on)
    _bits(pipe, blocked_id, blocker_id, BLOCKED_BY, on)
    pipe.execute()


def mute_set(muter_id: int, muted_id: int, *, on: bool) -> None:
    """Write (``on``) or clear a mute in the muter's set. O(log n)."""
    pipe = get_redis().pipeline(transaction=False)
    _bits(pipe, muter_id, muted_id, MUTES, on)
    pipe.execute()


def hidden_among(user_id: int, other_ids: Iterable[int], *, bits: int = BLOCKED_EITHER_WAY | MUTES) -> set[int]:
    """Which of ``other_ids`` the user does not see for any of ``bits``. One ZMSCORE, O(k)."""
    others = sorted(set(other_ids))
    if not others:
        return set()
    scores = get_redis().zmscore(keys.hidden(user_id), others)
    return {other for other, score in zip(others, scores, strict=True) if score and int(score) & bits}


def hidden_all(user_id: int, *, bits: int = BLOCKED_EITHER_WAY | MUTES) -> list[int]:
    """Everyone the user does not see for any of ``bits``. O(n) for the n people in their set:
    one person's data, read for a notification page."""
    rows = get_redis().zrange(keys.hidden(user_id), 0, -1, withscores=True)
    return [int(member) for member, score in rows if int(score) & bits]


def blocked_by(user_id: int, other_id: int) -> bool:
    """Whether ``other_id`` blocks the user (so the user gets 404 for their profile). O(1)."""
    score = get_redis().zscore(keys.hidden(user_id), other_id)
    return bool(score and int(score) & BLOCKED_BY)


async def blocked_by_async(user_id: int, other_id: int) -> bool:
    """blocked_by from an event loop (a live socket opening a board), batched with the loop's
    other calls (ugcsite.platform.redis.Batcher). O(1)."""
    score = await get_async_batcher().call(lambda pipe: pipe.zscore(keys.hidden(user_id), other_id))
    return bool(score and int(score) & BLOCKED_BY)


def bits_of(user_id: int, other_id: int) -> int:
    """Why the user does not see ``other_id``: a sum of BLOCKS, BLOCKED_BY and MUTES (0: they
    do see them). O(1)."""
    score = get_redis().zscore(keys.hidden(user_id), other_id)
    return int(score) if score else 0


def hidden_stored() -> dict[int, dict[int, int]]:
    """``{owner: {other: bits}}`` from PostgreSQL's blocks and mutes, what the sets must hold
    (rebuild). Two streaming queries, O(blocks + mutes)."""
    entries: dict[int, dict[int, int]] = defaultdict(dict)
    for blocker, blocked in Block.objects.values_list("blocker_id", "blocked_id").iterator(chunk_size=10_000):
        entries[blocker][blocked] = entries[blocker].get(blocked, 0) | BLOCKS
        entries[blocked][blocker] = entries[blocked].get(blocker, 0) | BLOCKED_BY
    for muter, muted in Mute.objects.values_list("muter_id", "muted_id").iterator(chunk_size=10_000):
        entries[muter][muted] = entries[muter].get(muted, 0) | MUTES
    return entries


def hidden_replace(entries: dict[int, dict[int, int]]) -> None:
    """Rewrite the sets of the given owners whole: ``{owner: {other: bits}}`` (rebuild). One
    pipeline; O(entries)."""
    pipe = get_redis().pipeline(transaction=False)
    for owner_id, others in entries.items():
        pipe.delete(keys.hidden(owner_id))
        if others:
            pipe.zadd(keys.hidden(owner_id), dict(others.items()))
    pipe.execute()
