"""The Redis cache of bearer tokens: a token's hash -> its user id and expiry, so an
authenticated request needs no PostgreSQL query (social.tokens fills and reads it).

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
_REVOKED = "-"


def lookup(key_hash: str, *, now: float) -> tuple[bool, int | None]:
    """(True, user id) for a token cached as valid; (True, None) for one cached as revoked or
    past the expiry its entry carries (refused with no query); (False, None) when nothing
    usable is cached. O(1)."""
    value = get_redis().get(keys.token_user(key_hash))
    if value == _REVOKED:
        return True, None
    user_id, _, expires = (value or "").partition(":")
    if not expires:
        return False, None
    return True, (int(user_id) if float(expires) > now else None)


def remember(key_hash: str, *, user_id: int, expires: float, now: float) -> None:
    """Cache a token for CACHE_SECONDS at most and never past ``expires`` (epoch seconds);
    never over an entry already there (a tombstone stays). O(1)."""
    ttl_ms = min(CACHE_SECONDS * 1000, int((expires - now) * 1000))
    if ttl_ms > 0:
        get_redis().set(keys.token_user(key_hash), f"{user_id}:{expires!r}", px=ttl_ms, nx=True)


def revoke(key_hashes: Iterable[str]) -> None:
    """Mark tokens revoked in the cache at once, for longer than any racing fill could live.
    One pipeline, O(k) for k tokens."""
    pipe = get_redis().pipeline(transaction=False)
    for key_hash in key_hashes:
        pipe.set(keys.token_user(key_hash), _REVOKED, ex=CACHE_SECONDS)
    pipe.execute()


def forget(key_hashes: Iterable[str]) -> None:
    """Drop cached entries (a token changed, not revoked): the next request reads its row. O(k)."""
    names = [keys.token_user(key_hash) for key_hash in key_hashes]
    if names:
        get_redis().delete(*names)
