"""Activity: who is active (fan-out skips idle readers), and a returning idle user's feed made
whole before it is read."""

import time

from feeds import selectors, tasks
from feeds.timelines import regeneration, store
from feeds.timelines.rebuild import refuse_regeneration_while_rebuilding
from social.limits import ReadGate

_SEEN_EVERY = 60.0  # seconds: activity is recorded at most this often per user and process
_seen: dict[int, float] = {}


def user_seen(*, user_id: int) -> None:
    """Record activity (any authenticated call), at most once a minute per user in a process:
    idleness is measured in days. A user back from being idle is flagged, and
    home_feed_ready refills their P before the first page. O(1). (``API_CALLER_SEEN``.)"""
    now = time.monotonic()
    if now - _seen.get(user_id, -_SEEN_EVERY) < _SEEN_EVERY:
        return
    if len(_seen) > 100_000:
        _seen.clear()
    _seen[user_id] = now
    store.home_touch(user_id)


def home_feed_ready(*, user_id: int) -> None:
    """Make sure a returning idle user's P is whole before it is read: their followees' newest
    boards join it at once (O(followees) pipelined), and a task archives the stretch between
    those and the older history (while rebuild_redis runs: a 503 instead). A no-op (one HGET)
    for everyone else."""
    if not store.home_needs_regeneration(user_id):
        return
    refuse_regeneration_while_rebuilding()
    gap = regeneration.home_regenerate(user_id)
    if gap is not None:
        tasks.home_gap_fill.delay(user_id, *gap)


def home_feed_read(
    *, user_id: int, offset: int | None, before: int | None, limit: int, gate: ReadGate | None = None
) -> dict:
    """A page of the caller's home feed, their activity recorded with it: one round trip when
    warm (selectors.home_feed with the touch in its script call), the check of the caller's
    token and their read limits included with a ``gate`` (social.limits.read_gate; it raises
    what it refuses). A returning idle user's P is regenerated first (home_feed_ready), then
    read the ordinary way."""
    answer = selectors.home_feed(
        user_id, offset=offset, before=before, limit=limit, touch=True, stop_if_regenerate=True, gate=gate
    )
    if answer is None:
        home_feed_ready(user_id=user_id)
        answer = selectors.home_feed(user_id, offset=offset, before=before, limit=limit)
    return answer
