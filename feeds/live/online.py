"""Live updates for one person (``/ws/me``, feeds.live.consumer.PersonConsumer): "N new boards"
in their feed and their unread notification count, pushed through the Channels layer.

Who is online is one sorted set on the plain Redis (keys.live_online: user id -> when the
record expires), refreshed by each open socket every ONLINE_REFRESH seconds and removed when it
closes. A fan-out batch asks it once for the batch's readers (one ZMSCORE) and sends to the
groups of those online only, so a batch of offline readers costs one round trip and nothing
else. Everything here is a notice: the plain Redis or the layer down is logged, never raised
into the fan-out or the notification write that called it.
"""

import asyncio
import logging
import os
import threading
import time
from functools import lru_cache

import redis
from channels.layers import get_channel_layer
from django.conf import settings

from feeds import keys

logger = logging.getLogger(__name__)

ONLINE_REFRESH = 30.0  # a socket renews its record this often...
ONLINE_TTL = 75.0  # ...which lasts this long (a process killed without closing is forgotten then)


@lru_cache(maxsize=1)
def _plain() -> redis.Redis:
    """The plain Redis of the Channels layer (never a cluster: settings refuse one)."""
    return redis.Redis.from_url(settings.CHANNEL_LAYER_URL, socket_timeout=2, socket_connect_timeout=2)


def online_mark(user_id: int, *, now: float | None = None) -> None:
    """Record that ``user_id`` has a socket open for ONLINE_TTL more seconds, and drop records
    that expired. O(log n + expired) for n online."""
    now = time.time() if now is None else now
    pipe = _plain().pipeline(transaction=False)
    pipe.zadd(keys.live_online(), {int(user_id): now + ONLINE_TTL})
    pipe.zremrangebyscore(keys.live_online(), "-inf", now)
    pipe.execute()


def online_clear(user_id: int) -> None:
    """``user_id``'s socket closed. O(log n). (Another tab of theirs puts them back at its next
    refresh, within ONLINE_REFRESH seconds.)"""
    _plain().zrem(keys.live_online(), int(user_id))


def online_of(user_ids: list[int], *, now: float | None = None) -> list[int]:
    """Which of ``user_ids`` have a socket open: one ZMSCORE, O(k log n) for k ids."""
    if not user_ids:
        return []
    now = time.time() if now is None else now
    scores = _plain().zmscore(keys.live_online(), [int(u) for u in user_ids])
    return [int(u) for u, score in zip(user_ids, scores) if score is not None and score > now]


_loop: asyncio.AbstractEventLoop | None = None
_loop_pid = 0
_loop_lock = threading.Lock()
SEND_TIMEOUT = 5.0  # a layer that hangs holds a fan-out batch no longer than this


def _sender_loop() -> asyncio.AbstractEventLoop:
    """One event loop per process, in a thread of its own, for the layer's sends: the layer's
    connections belong to a loop, so a loop kept for the process keeps them (a fresh loop per
    batch would connect again each time). Started after a fork, in the process that sends."""
    global _loop, _loop_pid
    with _loop_lock:
        if _loop is None or _loop_pid != os.getpid():
            _loop, _loop_pid = asyncio.new_event_loop(), os.getpid()
            threading.Thread(target=_loop.run_forever, name="live-notices", daemon=True).start()
        return _loop


def _send_all(messages: list[tuple[str, dict]]) -> None:
    """The messages to their groups, at once (one round trip's wait, not one each)."""
    layer = get_channel_layer()
    if layer is None or not messages:
        return

    async def send():
        await asyncio.gather(*(layer.group_send(group, message) for group, message in messages))

    asyncio.run_coroutine_threadsafe(send(), _sender_loop()).result(timeout=SEND_TIMEOUT)


def feed_delivered(reader_ids: list[int], board_id: int) -> int:
    """Tell the online ones of ``reader_ids`` that ``board_id`` reached their feed. One ZMSCORE,
    then one group_send per online reader: O(k log n + online). Never raises. Returns how many
    were told."""
    try:
        online = online_of(reader_ids)
        _send_all([(keys.live_person_group(u), {"type": "person.feed", "board_id": int(board_id)}) for u in online])
        return len(online)
    except Exception as error:  # a notice, never the reason a fan-out fails
        logger.warning("live feed notice of board %s not sent: %s", board_id, error)
        return 0


def unread_changed(recipient_ids: list[int], count_of) -> None:
    """Send each online recipient their unread count (``count_of(user_id)``, one indexed count
    each, online ones only). One ZMSCORE plus O(online) counts. Never raises."""
    try:
        online = online_of(recipient_ids)
        _send_all([(keys.live_person_group(u), {"type": "person.unread", "count": count_of(u)}) for u in online])
    except Exception as error:  # a notice, never the reason a notification fails
        logger.warning("live unread count not sent: %s", error)
