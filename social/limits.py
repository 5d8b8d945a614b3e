"""The read limits of the API (docs/api.md, "Limits"), kept on the data Redis: a person's in
their slot, beside their token's cache entry and their feed, and an address's in a slot of its
own (social.keys). ugcsite.platform.ratelimits counts them (the sliding window, _window.lua).

``read_attempt`` is ``API_READ_LIMIT``: what every GET of the API counts. ``read_gate`` is a
feed read's way to spend no round trip of its own on the token and the limits: the page's script
call (feeds.timelines.pages.page_warm) checks the token's cache entry and counts the limits
first, in the reader's slot (social/scripts/_gate.lua). ``signed_read`` (``API_SIGNED_READ``)
is the same gate alone, one call, for every other GET by a token that names its owner. Storage
only.
"""

from dataclasses import dataclass

from django.conf import settings

from social import keys
from social.models import ApiToken
from social.scripts import scripts
from social.tokens import token_owner
from ugcsite.platform import ratelimits
from ugcsite.platform.redis import get_redis


class TokenNotCached(Exception):
    """The gate found no cache entry for the token: check it the longer way (which fills it)."""


class TokenRefused(Exception):
    """The gate found the token revoked, expired or another person's: a 401."""


def person_limits_forget(user_id: int) -> None:
    """Delete a person's read-limit count (a deleted account keeps no key). O(1)."""
    per_user, _ = ratelimits.read_limits(user_id=user_id, address="")
    get_redis().delete(keys.read_limit(user_id, per_user.per_minute))


def _keyed(*, user_id: int | None, address: str) -> list[tuple[str, ratelimits.Limit]]:
    """The read limits that count, each with its hash, the person's first."""
    per_user, per_address = ratelimits.read_limits(user_id=user_id, address=address)
    keyed = [(keys.read_limit(user_id, per_user.per_minute), per_user)] if per_user is not None else []
    keyed.append((keys.address_read_limit(address, per_address.per_minute), per_address))
    return [(key, limit) for key, limit in keyed if limit.per_minute > 0]


def read_attempt(*, user_id: int | None, address: str) -> None:
    """Count one read (a GET of the API) by a signed-in user (``user_id``, or None) from an
    address: RATE_LIMIT_READS_PER_MINUTE per user, RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE per
    address, the person's first (past it, the address's is not spent); RateLimited past either.
    One round trip on a plain Redis; on a cluster one a slot counted (two signed in: the
    person's and the address's slots differ). O(61) a limit. (``API_READ_LIMIT``.)"""
    keyed = _keyed(user_id=user_id, address=address)
    if not settings.REDIS_CLUSTER:
        ratelimits.attempts_at(get_redis(), keyed)
        return
    for pair in keyed:
        ratelimits.attempts_at(get_redis(), [pair])


@dataclass(frozen=True)
class ReadGate:
    """What a signed-in read's script call checks before it reads (timeline_page.lua's gate):
    the token's cache entry and the limits, all in the reader's slot (``keys``: the entry, then
    each limit's hash); ``apart``: a limit in another slot (the address's, on a cluster),
    counted by ``settle`` after the call, in its order."""

    owner: int
    keys: list[str]
    limits: list[ratelimits.Limit]
    apart: list[tuple[str, ratelimits.Limit]]
    now: float

    def args(self) -> dict:
        """The script's gate arguments (timeline_page.lua: gate_owner ... gate_allowed)."""
        return {
            "gate_owner": str(self.owner),
            "gate_now": repr(self.now),
            "gate_slice": ratelimits.SLICE_SECONDS,
            "gate_slices": ratelimits.SLICES,
            "gate_allowed": [limit.per_minute for limit in self.limits],
        }

    def settle(self, status: str, payload) -> None:
        """After the script call: raise what its gate refused (TokenNotCached, TokenRefused,
        RateLimited), else count the limits kept apart (one more round trip on a cluster with
        the address's limit on). O(1), or O(61) a limit apart."""
        if status == "token-unknown":
            raise TokenNotCached
        if status == "token-refused":
            raise TokenRefused
        if status == "limited":
            place, seconds = payload
            ratelimits.refuse(self.limits[int(place) - 1], seconds)
        if self.apart:
            ratelimits.attempts_at(get_redis(), self.apart)


def read_gate(key: str, *, address: str) -> ReadGate | None:
    """The gate of a read by bearer token ``key`` from ``address``, or None for a token that
    names no owner (the older form: its entry lies in no reader's slot). O(1), no round trip."""
    owner = token_owner(key)
    if owner is None:
        return None
    keyed = _keyed(user_id=owner, address=address)
    inside = keyed if not settings.REDIS_CLUSTER else keyed[:1] if keyed and keyed[0][1].kind == "reads" else []
    return ReadGate(
        owner=owner,
        keys=[keys.token_user(ApiToken.hash_key(key), owner), *(name for name, _ in inside)],
        limits=[limit for _, limit in inside],
        apart=keyed[len(inside) :],
        now=ratelimits.now(),
    )


def signed_read(key: str, *, address: str) -> int | None:
    """The user a GET by bearer token ``key`` from ``address`` is made by, its token checked and
    its read limits counted in one call in the reader's slot (read_gate.lua; on a cluster the
    address's limit one more call, ReadGate.apart); RateLimited past a limit. None to go the
    usual way (API_TOKEN_USER, then API_READ_LIMIT): a token of the older form, one not cached
    yet, or one the gate refuses (the usual way reads the same tombstone and answers the 401).
    O(1) plus O(61) a limit. (``API_SIGNED_READ``.)"""
    gate = read_gate(key, address=address)
    if gate is None:
        return None
    status, *payload = scripts.read_gate(keys=gate.keys, **gate.args())
    try:
        gate.settle(status, payload[0] if payload else None)
    except (TokenNotCached, TokenRefused):
        return None
    return gate.owner
