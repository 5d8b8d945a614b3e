"""The Redis cache of bearer tokens: a token's hash -> its user id and expiry, so an
authenticated request needs no PostgreSQL query (social.tokens fills and reads it).

A token that names its owner (``owner``: the user id it begins with, social.tokens) is cached in
the owner's slot (keys.token_user), where a feed read's one script call checks it
(feeds.timelines.scripts/timeline_page.lua, which reads the entry this module writes: the
tombstone ``-`` or ``<user id>:<expiry>``); an older token in a slot of its own. Revoking and
forgetting take both spellings when the owner is known, so the caller need not know the form.

It imports no model, so that social.models can revoke entries from ``User.save`` and from the
signals of ``ApiToken`` however a token goes: a revocation writes a tombstone rather than
deleting the entry, and fills never overwrite (SET NX), so a request that read the token's row
just before the revocation committed cannot cache it again afterwards. Storage only.
"""

from collections.abc import Iterable

from social import keys
from ugcsite.platform.redis import get_redis

# How long a cached entry lives at most (never past its token's expiry), and so how long a
# tombstone must outlive any fill that raced its revocation.
CACHE_SECONDS = 300
REVOKED = "-"  # the tombstone (timeline_page.lua reads it too)


def lookup(key_hash: str, *, now: float, owner: int | None = None) -> tuple[bool, int | None]:
    """(True, user id) for a token cached as valid; (True, None) for one cached as revoked or
    past the expiry its entry carries (refused with no query); (False, None) when nothing
    usable is cached. O(1)."""
    value = get_redis().get(keys.token_user(key_hash, owner))
    if value == REVOKED:
        return True, None
    user_id, _, expires = (value or "").partition(":")
    if not expires:
        return False, None
    return True, (int(user_id) if float(expires) > now else None)


def remember(key_hash: str, *, user_id: int, expires: float, now: float, owner: int | None = None) -> None:
    """Cache a token for CACHE_SECONDS at most and never past ``expires`` (epoch seconds);
    never over an entry already there (a tombstone stays). O(1)."""
    ttl_ms = min(CACHE_SECONDS * 1000, int((expires - now) * 1000))
    if ttl_ms > 0:
        get_redis().set(keys.token_user(key_hash, owner), f"{user_id}:{expires!r}", px=ttl_ms, nx=True)


def _spellings(key_hash: str, owner: int | None) -> list[str]:
    """Where a token may be cached: in its own slot, and in its owner's when the owner is known."""
    return [keys.token_user(key_hash), *([keys.token_user(key_hash, owner)] if owner is not None else [])]


def revoke(key_hashes: Iterable[str], *, owner: int | None = None) -> None:
    """Mark tokens revoked in the cache at once, for longer than any racing fill could live:
    under both spellings when their ``owner`` is known (a token of either form). One
    pipeline, O(k) for k tokens (on a cluster one round trip a node)."""
    pipe = get_redis().pipeline(transaction=False)
    for key_hash in key_hashes:
        for name in _spellings(key_hash, owner):
            pipe.set(name, REVOKED, ex=CACHE_SECONDS)
    pipe.execute()


def forget(key_hashes: Iterable[str], *, owner: int | None = None) -> None:
    """Drop cached entries (a token changed, not revoked): the next request reads its row. O(k)."""
    names = [name for key_hash in key_hashes for name in _spellings(key_hash, owner)]
    if not names:
        return
    if len(names) == 1:
        get_redis().delete(names[0])
        return
    pipe = get_redis().pipeline(transaction=False)  # several slots: one DEL each
    for name in names:
        pipe.delete(name)
    pipe.execute()
