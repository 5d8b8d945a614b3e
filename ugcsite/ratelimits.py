"""Rate limits (API.md, "Limits"), counted with the ``limits`` library in fixed one-minute windows
on the plain Redis of Django's cache (never the data Redis: a cluster is fine for the data).
Imports no app: services of any app call ``attempt``.

Each limit is a setting, a count per minute; 0 turns it off:
- auth: sign-ups and log-ins per client address, and log-ins per account;
- writes: board creations and edits, follows, invites per user and per client address;
- reads: every GET of the API per signed-in user and per client address.
"""

import time
from functools import lru_cache

from django.conf import settings
from limits import RateLimitItemPerMinute, storage, strategies

from ugcsite.errors import RateLimited


@lru_cache(maxsize=1)
def _limiter() -> strategies.FixedWindowRateLimiter:
    return strategies.FixedWindowRateLimiter(storage.storage_from_string(settings.RATE_LIMIT_STORAGE_URL))


def attempt(kind: str, who: str, *, per_minute: int, what: str) -> None:
    """Count one attempt of ``kind`` by ``who`` (an address, a user id, an account name); past
    ``per_minute`` raise RateLimited, whose message says what was limited and when to come back.
    One round trip, O(1)."""
    if per_minute <= 0:
        return
    item = RateLimitItemPerMinute(per_minute)
    limiter = _limiter()
    if limiter.hit(item, kind, who):
        return
    reset_at, _ = limiter.get_window_stats(item, kind, who)
    wait = max(int(reset_at - time.time()) + 1, 1)
    raise RateLimited(f"Too many {what}; try again in {wait} seconds.", retry_after=wait)


def write_attempt(*, user_id: int, address: str) -> None:
    """Count one write (a board created or edited, a follow, an invite) by a user from an
    address: RATE_LIMIT_WRITES_PER_MINUTE per user, RATE_LIMIT_WRITES_PER_ADDRESS_PER_MINUTE per
    address. Two round trips at most."""
    attempt("writes", str(user_id), per_minute=settings.RATE_LIMIT_WRITES_PER_MINUTE, what="changes from your account")
    attempt("writes-address", address, per_minute=settings.RATE_LIMIT_WRITES_PER_ADDRESS_PER_MINUTE,
            what="changes from this address")


def read_attempt(*, user_id: int | None, address: str) -> None:
    """Count one read (a GET of the API) by a signed-in user (``user_id``, or None) from an
    address: RATE_LIMIT_READS_PER_MINUTE per user, RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE per
    address. Two round trips at most."""
    if user_id is not None:
        attempt("reads", str(user_id), per_minute=settings.RATE_LIMIT_READS_PER_MINUTE, what="reads from your account")
    attempt("reads-address", address, per_minute=settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE,
            what="reads from this address")
