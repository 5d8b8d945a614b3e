"""Rate limits (docs/api.md, "Limits"): counts over a sliding window of one minute. Imports no
app: services of any app call ``attempt``. The auth and write limits count on the plain Redis
of Django's cache; the read limits on the data Redis, in the reader's slot and the address's
(social.limits builds their keys), so that a signed-in read counts its person's limit in the
same script call that checks its token, and a feed read in the one that reads the page.

Each limit is a setting, a count per minute; 0 turns it off:
- auth: sign-ups and log-ins per client address, and log-ins per account;
- writes: board creations and edits, follows, invites per user and per client address;
- reads: every GET of the API per signed-in user and per client address.

A limit holds over any 60 seconds, not per clock minute (counts in fixed minutes let a burst
across a minute's end through twice over). Each limit keeps its attempts per second in a hash
(``rate_limit.lua``); an attempt counts when the last 60 to 61 seconds hold fewer than the limit.
The limits of one request (a user's and an address's) are counted by one script call, one
round trip. (They used to go through the ``limits`` library, a round trip and some forty Python
frames a limit: a fifth of a feed request's time.)
"""

import math
import time
from pathlib import Path
from typing import NamedTuple

from django.conf import settings

from ugcsite.platform.errors import RateLimited
from ugcsite.platform.redis import Scripts, plain_redis

WINDOW_SECONDS = 60
SLICE_SECONDS = 1  # the window's step: a limit counts the last 60 to 61 seconds, a hash of at most 61 fields
SLICES = WINDOW_SECONDS // SLICE_SECONDS
# The scripts here, and the window's library (_window.lua) that other apps' scripts use too
# (``Scripts(..., libraries=[SCRIPTS])`` and ``--- USES: window``).
SCRIPTS = Path(__file__).with_name("scripts")
scripts = Scripts(SCRIPTS)


class Limit(NamedTuple):
    kind: str  # "reads", "writes-address", ...: part of the key
    who: str  # a user id, an address, an account name
    per_minute: int  # 0: off
    what: str  # "reads from your account": the 429's sentence names it


def _key(limit: Limit) -> str:
    """The hash of ``limit``'s attempts a second (a changed limit counts afresh)."""
    return f"rl:{limit.kind}:{limit.per_minute}:{limit.who}"


def attempts(*limits: Limit) -> None:
    """Count one attempt against each of ``limits``, in order; past any one's ``per_minute`` in
    the last minute, raise RateLimited, whose message says what was limited and when to come
    back (when the window has room again). As if checked one after the other: the limits after
    the one that refused do not count this attempt (a person past their own limit spends
    nothing of their address's). One round trip for all of them on the plain Redis, O(61) each."""
    counted = [limit for limit in limits if limit.per_minute > 0]
    attempts_at(plain_redis(settings.RATE_LIMIT_STORAGE_URL), [(_key(limit), limit) for limit in counted])


def now() -> float:
    """The limits' clock (the tests set it)."""
    return time.time()


def attempts_at(server, keyed: list[tuple[str, Limit]]) -> None:
    """``attempts`` of limits the caller keyed, on ``server``: every key in one call, so on a
    cluster they must share a slot (social.limits calls once a slot). O(61) a limit."""
    counted = [(key, limit) for key, limit in keyed if limit.per_minute > 0]
    if not counted:
        return
    refused = scripts.rate_limit(
        keys=[key for key, _ in counted],
        server=server,
        now=repr(now()),
        slice=SLICE_SECONDS,
        slices=SLICES,
        allowed=[limit.per_minute for _, limit in counted],
    )
    if refused:
        place, seconds = refused
        refuse(counted[int(place) - 1][1], seconds)


def refuse(limit: Limit, seconds) -> None:
    """Raise the RateLimited of ``limit``, whose window has room again in ``seconds`` (a float,
    or its text as a script answers it)."""
    wait = max(math.ceil(float(seconds)), 1)
    raise RateLimited(f"Too many {limit.what}; try again in {wait} seconds.", retry_after=wait)


def read_limits(*, user_id: int | None, address: str) -> tuple[Limit | None, Limit]:
    """The limits a read (a GET of the API) counts: RATE_LIMIT_READS_PER_MINUTE for a signed-in
    user (None when signed out), RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE for the address, in
    the order they count (social.limits keys and counts them)."""
    per_user = (
        Limit("reads", str(user_id), settings.RATE_LIMIT_READS_PER_MINUTE, "reads from your account")
        if user_id is not None
        else None
    )
    return per_user, Limit(
        "reads-address", address, settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE, "reads from this address"
    )


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
