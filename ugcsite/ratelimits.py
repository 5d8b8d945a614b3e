"""Rate limits (docs/api.md, "Limits"): counts in fixed one-minute windows on the plain Redis of
Django's cache (never the data Redis: a cluster is fine for the data). Imports no app: services
of any app call ``attempt``.

Each limit is a setting, a count per minute; 0 turns it off:
- auth: sign-ups and log-ins per client address, and log-ins per account;
- writes: board creations and edits, follows, invites per user and per client address;
- reads: every GET of the API per signed-in user and per client address.

The limits of one request (a user's and an address's) are counted in one pipeline: INCR and
EXPIRE NX of a key per limit and window, one round trip. (They used to go through the ``limits``
library, a round trip and some forty Python frames a limit: a fifth of a feed request's time.)
"""

import time
from functools import lru_cache
from typing import NamedTuple

import redis
from django.conf import settings

from ugcsite.errors import RateLimited

WINDOW_SECONDS = 60


class Limit(NamedTuple):
    kind: str  # "reads", "writes-address", ...: part of the key
    who: str  # a user id, an address, an account name
    per_minute: int  # 0: off
    what: str  # "reads from your account": the 429's sentence names it


@lru_cache(maxsize=1)
def _counter() -> redis.Redis:
    return redis.Redis.from_url(
        settings.RATE_LIMIT_STORAGE_URL,
        socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT,
        socket_timeout=settings.REDIS_SOCKET_TIMEOUT,
    )


def _key(limit: Limit, window: int) -> str:
    """The counter of ``limit`` in the minute ``window`` (a changed limit counts afresh)."""
    return f"rl:{limit.kind}:{limit.per_minute}:{limit.who}:{window}"


def attempts(*limits: Limit) -> None:
    """Count one attempt against each of ``limits``; past any one's ``per_minute``, raise
    RateLimited, whose message says what was limited and when to come back (the window's end).
    One round trip for all of them, O(1) each."""
    counted = [limit for limit in limits if limit.per_minute > 0]
    if not counted:
        return
    now = time.time()
    window = int(now // WINDOW_SECONDS)
    pipe = _counter().pipeline(transaction=False)
    for limit in counted:
        key = _key(limit, window)
        pipe.incr(key)
        pipe.expire(key, WINDOW_SECONDS + 1, nx=True)
    counts = pipe.execute()[::2]
    for n, (limit, count) in enumerate(zip(counted, counts)):
        if count > limit.per_minute:
            # As if checked one after the other: the limits after the one that refused do not count
            # this attempt (a person past their own limit spends nothing of their address's).
            # A second round trip, on a refusal only.
            undo = _counter().pipeline(transaction=False)
            for later in counted[n + 1 :]:
                undo.decr(_key(later, window))
            undo.execute()
            wait = max(int((window + 1) * WINDOW_SECONDS - now) + 1, 1)
            raise RateLimited(f"Too many {limit.what}; try again in {wait} seconds.", retry_after=wait)


def attempt(kind: str, who: str, *, per_minute: int, what: str) -> None:
    """Count one attempt of ``kind`` by ``who`` (an address, a user id, an account name). One round trip."""
    attempts(Limit(kind, who, per_minute, what))


def write_attempt(*, user_id: int, address: str) -> None:
    """Count one write (a board created or edited, a follow, an invite) by a user from an
    address: RATE_LIMIT_WRITES_PER_MINUTE per user, RATE_LIMIT_WRITES_PER_ADDRESS_PER_MINUTE per
    address. One round trip."""
    attempts(
        Limit("writes", str(user_id), settings.RATE_LIMIT_WRITES_PER_MINUTE, "changes from your account"),
        Limit(
            "writes-address", address, settings.RATE_LIMIT_WRITES_PER_ADDRESS_PER_MINUTE, "changes from this address"
        ),
    )


def read_attempt(*, user_id: int | None, address: str) -> None:
    """Count one read (a GET of the API) by a signed-in user (``user_id``, or None) from an
    address: RATE_LIMIT_READS_PER_MINUTE per user, RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE per
    address. One round trip."""
    per_user = (
        (Limit("reads", str(user_id), settings.RATE_LIMIT_READS_PER_MINUTE, "reads from your account"),)
        if user_id is not None
        else ()
    )
    attempts(
        *per_user,
        Limit("reads-address", address, settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE, "reads from this address"),
    )
