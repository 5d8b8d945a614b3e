"""How a frame reaches every live socket of a board: one Redis pub/sub subscriber a process.

A board's frames (ops, cursors, strokes, presence, and notices such as "the board was deleted")
go through one channel of the plain Redis (``keys.live_channel``), the one of the Channels layer.
The process that takes a frame encodes it once, as every receiver gets it, and publishes it once
(one PUBLISH, however many receivers). Each ASGI process subscribes once to the channel of every
board it has a socket on, however many sockets that is, and hands the text to each local socket's
outbox (``Outbox``): nothing is decoded on the way but a short header, ``<kind> <seq> <from> ``:
- ``o``  an op; ``seq`` its board's sequence number (a socket passes them on in seq order and
  reads any it missed back from the op log, feeds.live.consumer);
- ``c``  a cursor, ``s`` a stroke being drawn, ``p`` presence: not to the socket ``from`` (the
  sender); cursors and presence are coalesced in each outbox (only the latest of a sender waits);
- ``x``  a notice (``access``, ``gone``, ``reset``), published by any process, web or worker
  (``notify``), to every socket of the board;
- ``m``  a comment posted, edited or removed (``publish_comment``): its message goes as it is to
  every socket of the board (it names the comment; each page reads it through the API, which
  applies the viewer's blocks and mutes).

Pub/sub keeps nothing: a frame published while a process's subscription is down is lost to it,
and its sockets read the ops back from the board's log when they see the gap, or at once when
the subscription comes back (``Hub._reconnected``). Why not the Channels layer: it queues each
message once per receiving socket (a list per socket in Redis, a round trip per group send) and
the consumer encodes it once per socket; that capped one process near 2,200 deliveries a second
(bench/results/live.md, before issue 23).
"""

import asyncio
import itertools
import logging
import secrets
import weakref

import redis
import redis.asyncio
from channels.db import DatabaseSyncToAsync
from django.conf import settings

from feeds import keys
from feeds.live import oplog
from feeds.live.oplog import PRESENCE_TTL, published_among
from feeds.rules import LIVE_PING_EVERY, LIVE_SEND_BUFFER
from ugcsite.platform.redis import Batcher, get_async_redis, plain_redis

logger = logging.getLogger(__name__)

OP, CURSOR, STROKE, PRESENCE, NOTICE, COMMENT = "o", "c", "s", "p", "x", "m"
NOTICES = ("access", "gone", "reset")
SUBSCRIBE_TIMEOUT = 5.0
PRESENCE_EVERY = 0.1  # a board's presence frame goes from a process at most this often (the latest state)
TICK = 5.0  # how often the hub looks for stuck writers (and refreshes presence every few ticks)


def envelope(kind: str, text: str, *, seq: int = 0, sender: str = "-") -> str:
    return f"{kind} {seq} {sender} {text}"


def _plain() -> redis.Redis:
    return plain_redis(settings.CHANNEL_LAYER_URL)


def notify(board_id: int, notice: str) -> None:
    """Tell every live socket of a board, in any process, of ``notice`` (one of NOTICES), from
    synchronous code (a request, a task). Raises the plain Redis's errors. O(1) here; O(sockets
    of the board) in the processes that hold them."""
    assert notice in NOTICES
    _plain().publish(keys.live_channel(board_id), envelope(NOTICE, notice))


def publish_op(board_id: int, seq: int, text: str) -> None:
    """Hand an op already in the board's log (``text``, its message as every receiver gets it)
    to every live socket of the board, from synchronous code (an API edit of the title). Raises
    the plain Redis's errors. O(1) here, as ``notify``."""
    _plain().publish(keys.live_channel(board_id), envelope(OP, text, seq=seq))


def publish_comment(board_id: int, text: str) -> None:
    """Hand a comment message (``text``, as every receiver gets it) to every live socket of the
    board, from synchronous code (a request, a task). Raises the plain Redis's errors. O(1)
    here, as ``notify``."""
    _plain().publish(keys.live_channel(board_id), envelope(COMMENT, text))


class Outbox:
    """What waits to be written to one socket. Ops and strokes wait in order; cursors (one a
    sender) and presence wait beside them, only the latest kept, written after the ops, so a
    storm of cursor moves never delays an op. Past LIVE_SEND_BUFFER characters waiting the
    socket is too slow: ``too_slow`` is called and everything waiting dropped.

    With the live server's ``frames`` (ugcsite.platform.livesocket.FRAMES: write several text
    frames at once, and the transport's ``writable`` event), what a socket was handed in one
    turn of the event loop goes out at the end of that turn in one write: no task, no await, a
    syscall a socket a turn however many frames (issue 42: a write a frame a socket was 41% of a
    delivery). While the transport's buffer is full, one task waits for it to drain, then
    writes what gathered meanwhile. Without them (another ASGI server), one task writes each
    frame through ``send`` while there is something to write.

    An outbox made ``held`` writes nothing until ``release(first)``: a board socket's frames
    from its room (presence, cursors, strokes) wait there, under the same rules, until its
    ``hello`` goes first, however busy the room is while the hello is being read."""

    __slots__ = (
        "send",
        "too_slow",
        "frames",
        "queue",
        "latest",
        "queued",
        "writer",
        "since",
        "closed",
        "held",
        "scheduled",
    )

    def __init__(self, send, too_slow, *, held: bool = False, frames: dict | None = None):
        self.send, self.too_slow, self.frames = send, too_slow, frames
        self.queue: list[str] = []  # a list, not a deque: an empty deque holds a 0.5 KiB block, and most sockets idle
        self.latest: dict[str, str] = {}
        self.queued = 0
        self.writer: asyncio.Task | None = None
        self.since: float | None = None  # when the write under way (or the wait to write) began
        self.closed = False
        self.held = held
        self.scheduled = False  # a write at the end of this loop turn is due

    def put(self, text: str, *, coalesce: str | None = None) -> None:
        if self.closed:
            return
        if coalesce is not None:
            self.latest[coalesce] = text
        else:
            self.queue.append(text)
            self.queued += len(text)
            if self.queued > LIVE_SEND_BUFFER and len(self.queue) > 1:
                self.drop()
                self.too_slow()
                return
        if not self.held:
            self._kick()

    def release(self, first: str) -> None:
        """Write ``first`` before anything that waited while held, then write as usual."""
        if self.closed:
            return
        self.held = False
        self.queue.insert(0, first)
        self.queued += len(first)
        self._kick()

    def _kick(self) -> None:
        if self.writer is not None or self.scheduled:
            return
        loop = asyncio.get_running_loop()
        if self.frames is None:
            self.writer = loop.create_task(self._write())
        else:
            self.scheduled = True
            loop.call_soon(self._flush)

    def _take(self) -> list[str]:
        texts, self.queue = self.queue, []
        if self.latest:
            texts += self.latest.values()
        self.latest.clear()
        self.queued = 0
        return texts

    def _flush(self) -> None:
        """Write everything waiting in one go (frames), or wait for the transport to drain."""
        self.scheduled = False
        if self.closed or self.writer is not None or not (self.queue or self.latest):
            return
        if not self.frames["writable"].is_set():
            self.since = asyncio.get_running_loop().time()
            self.writer = asyncio.get_running_loop().create_task(self._write_drained())
            return
        try:
            self.frames["send"](self._take())
        except Exception as error:  # the connection is closing or went: nothing more to write
            logger.debug("live outbox: a write failed: %s", error)
            self.drop()

    async def _write_drained(self) -> None:
        try:
            await self.frames["writable"].wait()
        finally:
            self.writer, self.since = None, None
        self._flush()

    async def _write(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while not self.closed:
                if self.queue:  # what waits now, in order; what comes meanwhile waits after it
                    batch, self.queue = self.queue, []
                    for text in batch:
                        if self.closed:
                            return
                        self.queued -= len(text)
                        self.since = loop.time()
                        await self.send(text)
                    continue
                if not self.latest:
                    return
                self.since = loop.time()
                await self.send(self.latest.pop(next(iter(self.latest))))
        except Exception as error:  # the connection went meanwhile: nothing more to write
            logger.debug("live outbox: a write failed: %s", error)
            self.drop()
        finally:
            self.writer, self.since = None, None

    async def drain(self, timeout: float) -> None:
        """Write what waits (waiting up to ``timeout`` for a full transport): a last error
        before a close."""
        if self.closed:
            return
        if self.frames is not None and self.writer is None:
            self._flush()
        if self.writer is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self.writer), timeout)
            except Exception:  # too slow or gone: the close goes anyway
                pass

    def stuck(self, now: float, limit: float) -> bool:
        return self.since is not None and now - self.since > limit

    def drop(self) -> None:
        self.closed = True
        self.queue.clear()
        self.latest.clear()
        self.queued = 0
        if self.writer is not None and self.writer is not asyncio.current_task():
            self.writer.cancel()


class Hub:
    """This process's subscriber (one an event loop: ``hub()``). ``join`` a socket to its board's
    channel before reading the board's state, ``leave`` it when it closes, ``publish`` frames.
    A socket given to ``join`` has ``board_id``, ``sid``, and the methods ``on_op(seq, text)``,
    ``on_frame(kind, sender, text)``, ``on_notice(word)``, ``catch_up()`` and ``refresh(pipe)``."""

    def __init__(self):
        self.prefix = secrets.token_hex(4)  # socket ids unique across processes: "<prefix>.<n>"
        self.counter = itertools.count(1)
        self.client = redis.asyncio.Redis.from_url(
            settings.CHANNEL_LAYER_URL,
            decode_responses=True,
            socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT,
            socket_timeout=settings.REDIS_SOCKET_TIMEOUT,
        )
        self.pubsub = self.client.pubsub()
        self.wake = asyncio.Event()  # something was subscribed: the reader reads
        self.connecting = asyncio.Lock()
        self.publisher = Batcher(self.client)
        self.rooms: dict[str, set] = {}
        self.ready: dict[str, asyncio.Future] = {}
        self.sockets: weakref.WeakSet = weakref.WeakSet()
        self.reader: asyncio.Task | None = None
        self.ticker: asyncio.Task | None = None
        self.pinger: asyncio.Task | None = None
        self.connects = 0
        self.announcing: dict[int, asyncio.Task] = {}  # boards whose presence frame is under way
        self.presence_due: dict[int, tuple] = {}  # board -> (its BoardRef, who changed it): to announce
        self.loading: dict[int, asyncio.Future] = {}  # boards being made live by a socket of this process

    def socket_id(self) -> str:
        return f"{self.prefix}.{next(self.counter)}"

    async def join(self, socket) -> None:
        """Subscribe (once a process) to the socket's board; returns once Redis confirmed, so
        every op published from then on reaches the socket. A join that fails (Redis did not
        confirm within SUBSCRIBE_TIMEOUT, or the connect was cancelled) leaves the room as if the
        socket had closed: the board's next join subscribes afresh."""
        channel = keys.live_channel(socket.board_id)
        self.sockets.add(socket)
        room = self.rooms.get(channel)
        first = room is None
        if first:
            room = self.rooms[channel] = set()
            self.ready[channel] = asyncio.get_running_loop().create_future()
        room.add(socket)  # at once: a join still waiting keeps the room (and its future) alive
        ready = self.ready[channel]
        try:
            if first:
                await self._connected()
                await self.pubsub.subscribe(channel)
                self.wake.set()
                self._start()
            if not ready.done():
                await asyncio.wait_for(asyncio.shield(ready), SUBSCRIBE_TIMEOUT)
        except BaseException:
            try:
                await self.leave(socket)
            except Exception as error:  # the room is left all the same; Redis forgets the rest
                logger.warning("live hub: a failed join left its room with an error: %s", error)
            raise

    async def leave(self, socket) -> None:
        channel = keys.live_channel(socket.board_id)
        room = self.rooms.get(channel)
        if room is None:
            return
        room.discard(socket)
        if not room:
            del self.rooms[channel]
            self.ready.pop(channel, None)
            await self.pubsub.unsubscribe(channel)

    def publish(self, board_id: int, kind: str, text: str, *, seq: int = 0, sender: str = "-") -> asyncio.Future:
        """Publish a frame; await the answer to learn that Redis took it. The frames published
        while the last batch was under way go together, in one pipeline (ugcsite.platform.redis.Batcher)."""
        channel, payload = keys.live_channel(board_id), envelope(kind, text, seq=seq, sender=sender)
        return self.publisher.call(lambda pipe: pipe.publish(channel, payload))

    def presence_changed(self, ref, sender: str = "-") -> None:
        """Someone joined, left or dropped (``sender``: their socket id): the board's sockets get
        a presence frame with the peers as they stand. Coalesced: the first goes at once (read
        as it stands then), and while one is under way or PRESENCE_EVERY has not passed since,
        the changes wait and go together in the next, read afresh. One frame then answers many
        joins (a board filling up cost a frame to every socket a join: O(n^2) deliveries). The
        frame skips its one sender (who learnt the peers in its hello); several changes in one
        frame reach everyone. O(connections of the board) a frame."""
        due = self.presence_due.get(ref.board_id)
        if due is None:
            due = self.presence_due[ref.board_id] = (ref, set())
        due[1].add(sender)
        if ref.board_id not in self.announcing:
            self.announcing[ref.board_id] = asyncio.get_running_loop().create_task(self._announce(ref.board_id))

    async def _announce(self, board_id: int) -> None:
        try:
            while board_id in self.presence_due:
                ref, senders = self.presence_due.pop(board_id)
                try:
                    peers = oplog.peers_of(await oplog.presence_list_async(ref))
                    text = oplog._json({"type": "presence", "peers": peers})
                    await self.publish(
                        board_id, PRESENCE, text, sender=next(iter(senders)) if len(senders) == 1 else "-"
                    )
                except Exception as error:  # presence is ephemeral: the next change sends it
                    logger.warning("live board %s: presence not sent: %s", board_id, error)
                await asyncio.sleep(PRESENCE_EVERY)
        finally:
            self.announcing.pop(board_id, None)

    # --- inside ------------------------------------------------------------------------------

    async def _connected(self) -> None:
        """The subscription's one connection, made by the first join: the joins that come while
        it is being made wait for it (each making its own, the subscriptions sent on all but the
        last would never be confirmed)."""
        async with self.connecting:
            if self.pubsub.connection is None:
                await self.pubsub.connect()
                self.pubsub.connection.register_connect_callback(self._reconnected)
                self.connects = 1

    async def _reconnected(self, connection) -> None:
        """The subscription's connection came back (redis-py subscribes again): frames may have
        been lost meanwhile, so every socket reads what it missed from the logs."""
        self.connects += 1
        if self.connects > 1:
            for socket in list(self.sockets):
                socket.catch_up()

    def _start(self) -> None:
        if self.reader is None or self.reader.done():
            self.reader = asyncio.get_running_loop().create_task(self._read())
        if self.ticker is None or self.ticker.done():
            self.ticker = asyncio.get_running_loop().create_task(self._tick())
        if self.pinger is None or self.pinger.done():
            self.pinger = asyncio.get_running_loop().create_task(self._heartbeat())

    async def _read(self) -> None:
        """The process's one reader of its subscription, for the process's life: it waits while
        nothing is subscribed (a join wakes it) rather than end, so no join finds it ending."""
        while True:
            if not self.pubsub.subscribed:
                self.wake.clear()
                await self.wake.wait()
                continue
            try:
                async for message in self.pubsub.listen():
                    self._dispatch(message)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the plain Redis went: try again, then catch up
                logger.warning("live hub: the subscription failed (%s); trying again", error)
                await asyncio.sleep(0.5)
                try:
                    await self.pubsub.connect()
                except Exception:
                    continue

    def _dispatch(self, message: dict) -> None:
        kind = message["type"]
        channel = message["channel"]
        if kind == "subscribe":
            ready = self.ready.get(channel)
            if ready is not None and not ready.done():
                ready.set_result(None)
            return
        if kind != "message":
            return
        room = self.rooms.get(channel)
        if not room:
            return
        frame, seq, sender, text = message["data"].split(" ", 3)
        if frame == OP:
            seq = int(seq)
            for socket in list(room):
                socket.on_op(seq, text)
        elif frame == NOTICE:
            for socket in list(room):
                socket.on_notice(text)
        else:
            for socket in list(room):
                if socket.sid != sender:
                    socket.on_frame(frame, sender, text)

    async def _tick(self) -> None:
        """Every TICK: drop sockets whose write is stuck, and close those of boards deleted or
        hidden meanwhile (one query for all: the notice that says so may have been lost); every
        few ticks, refresh every local socket's presence entry in one pipeline."""
        every = max(int(PRESENCE_TTL / 3 / TICK), 1)
        for beat in itertools.count(1):
            await asyncio.sleep(TICK)
            await self._beat(refresh=beat % every == 0)  # its locals (every socket) go when it returns

    async def _heartbeat(self) -> None:
        """Every LIVE_PING_EVERY: a ping to each local socket in the heartbeat, and a close for
        those silent too long (feeds.rules.LIVE_SILENCE). O(sockets), no storage."""
        while True:
            await asyncio.sleep(LIVE_PING_EVERY)
            for socket in list(self.sockets):
                socket.heartbeat()

    async def _beat(self, *, refresh: bool) -> None:
        sockets = list(self.sockets)
        for socket in sockets:
            socket.check_stuck()
        try:
            boards = {socket.board_id for socket in sockets}
            published = await DatabaseSyncToAsync(published_among, thread_sensitive=False)(boards)
            for socket in sockets:
                if socket.board_id not in published:
                    socket.on_notice("gone")
        except Exception as error:  # the next tick asks again
            logger.warning("live hub: boards not checked: %s", error)
        if refresh and sockets:
            try:
                pipe = get_async_redis().pipeline(transaction=False)
                for socket in sockets:
                    socket.refresh(pipe)
                await pipe.execute()
            except Exception as error:  # entries expire later; the next beat tries again
                logger.warning("live hub: presence not refreshed: %s", error)


_hubs: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Hub]" = weakref.WeakKeyDictionary()


def hub() -> Hub:
    """The hub of the running event loop (one a process: uvicorn runs one loop)."""
    loop = asyncio.get_running_loop()
    found = _hubs.get(loop)
    if found is None:
        found = _hubs[loop] = Hub()
    return found
