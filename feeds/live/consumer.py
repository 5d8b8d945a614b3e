"""The live channel of a board, ``/ws/boards/{id}`` (docs/api.md, "Shared boards, live").

One consumer per connection. It authenticates (a bearer token on the upgrade, or the session
cookie from the site's own origin), says hello with the doc (or, with ``?since=``, the ops
missed), and then:
- an op from an editor is checked with the REST doc's rules (feeds.live.protocol), applied and
  appended to the board's log in Redis in one script (feeds.live.oplog, on the async client: no
  thread an op), and only then published, encoded once, to the board's channel (feeds.live.hub),
  the sender included;
- ops from the channel reach the client in seq order: a connection that misses some (a
  subscription lost a moment) reads them back from the log;
- cursors (coalesced: at most LIVE_CURSORS_PER_SECOND a sender), strokes and presence go to the
  others; errors to the sender only.
Nothing a client sends raises out of here: a bad frame gets an error message, a flood or an
oversized frame a close. What goes to a client waits in its outbox (feeds.live.hub.Outbox): a
client that does not read is closed (4408) past LIVE_SEND_BUFFER or LIVE_SEND_TIMEOUT, and no
one else waits for it.
"""

import asyncio
import logging
import time
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from asgiref.sync import sync_to_async
from channels.consumer import get_handler_name
from channels.db import DatabaseSyncToAsync
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils.module_loading import import_string

from feeds import images, keys, selectors
from feeds.live import hub as hubs, online, oplog
from feeds.live.hub import CURSOR, OP, PRESENCE, STROKE, Outbox
from feeds.live.oplog import BoardRef, OpRefused
from feeds.live.protocol import BadMessage, cursor_check, op_check, parse_frame, stroke_check
from feeds.live.tasks import live_compact
from feeds.notifications import notifications_unread
from feeds.rules import (
    LIVE_CURSORS_PER_SECOND,
    LIVE_FLOOD_CLOSE_AFTER,
    LIVE_MAX_FRAME,
    LIVE_OPS_BURST,
    LIVE_OPS_PER_SECOND,
    LIVE_PING_EVERY,
    LIVE_RECONNECT_GRACE,
    LIVE_SEND_TIMEOUT,
    LIVE_SILENCE,
    LIVE_STROKE_FRAMES_PER_SECOND,
    LIVE_STROKE_IDLE,
    LIVE_STROKE_POINTS,
    MAX_ELEMENTS,
    MAX_POINTS,
)
from feeds.services.boards import BoardGone, board_change_live
from social import hiding
from ugcsite.platform.errors import Invalid
from ugcsite.platform.http import whole_number
from ugcsite.platform.livesocket import FRAMES
from ugcsite.platform.redis import REDIS_FAILURES, get_async_batcher

logger = logging.getLogger(__name__)
User = get_user_model()

CLOSE_UNAUTHENTICATED, CLOSE_FORBIDDEN, CLOSE_NOT_FOUND = 4401, 4403, 4404
CLOSE_FLOOD = 4429  # too many messages refused for the rate limit
CLOSE_TOO_BIG = 1009  # RFC 6455: message too big
CLOSE_TRY_AGAIN = 1013  # RFC 6455: try again later (storage unreachable)
CLOSE_SERVER_ERROR = 1011  # RFC 6455: a fault of ours (logged)
CLOSE_TOO_SLOW = 4408  # the client did not read what the board sent (LIVE_SEND_BUFFER)
CLOSE_SILENT = 4000  # a client that pinged went silent (LIVE_SILENCE): a drop, not a goodbye
GAP_WAIT = 0.2  # an op that arrives ahead of one missing waits this long before the log is read
CLOSE_DRAIN = 2.0  # seconds a closing socket has to write what waits (its last error)
NO_LAYER = "no-channel-layer"  # a Channels layer alias that names none: the board sockets use the hub
GOODBYE_CODES = {1000, 1001}  # a client that closes with these left; any other end is a drop
# What a client needs to know of the stroke frames (sent in hello: defined once, in feeds.rules).
STROKE_LIMITS = {
    "cursors_per_second": LIVE_CURSORS_PER_SECOND,
    "stroke_frames_per_second": LIVE_STROKE_FRAMES_PER_SECOND,
    "stroke_points": LIVE_STROKE_POINTS,
    "stroke_idle": LIVE_STROKE_IDLE,
    "ping_every": LIVE_PING_EVERY,
    "silence": LIVE_SILENCE,
}

PONG = {"type": "pong"}
PING_TEXT = '{"type":"ping"}'

REFUSED = {
    "exists": "An element with this id is on the board already; give the new one another id, or send an update.",
    "missing": "There is no element with this id on the board (someone may have removed it).",
    "elements": f"The board holds {MAX_ELEMENTS:,} elements already; remove some before adding more.",
    "points": f"The board's paths would hold more than {MAX_POINTS:,} points in all; simplify the drawing.",
    "smaller": "What is drawn reaches {} x {}: the board cannot be smaller than that; move or remove it first.",
}


def _thread(fn):
    """Run a storage call in a worker thread of this process (never the one shared thread)."""
    return sync_to_async(fn, thread_sensitive=False)


def _db(fn):
    return DatabaseSyncToAsync(fn, thread_sensitive=False)


def _token_user_id(key: str):
    return import_string(settings.API_TOKEN_USER)(key)


def _user_by_id(user_id: int):
    return User.objects.filter(pk=user_id, is_active=True).first()


async def _none() -> None:
    return None


def _enqueue_compaction(board_id: int) -> None:
    try:
        live_compact.delay(board_id)
    except Exception as error:  # the broker down: beat's run compacts it within seconds
        logger.warning("compaction of board %s not enqueued: %s", board_id, error)


def _credentials(scope) -> tuple[str | None, object | None, int | None]:
    """What a socket's upgrade says of who opens it: (bearer token, None, None) with an
    Authorization header ("" when it names no bearer token), (None, session user, None) for a
    session cookie, which counts only from the site's own origin (cross-site WebSocket hijacking:
    (None, None, 4403) from another), (None, None, None) for anonymous."""
    headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
    authorization = headers.get("authorization")
    if authorization is not None:
        scheme, _, key = authorization.partition(" ")
        return (key.strip() if scheme.lower() == "bearer" else ""), None, None
    session_user = scope.get("user")
    if session_user is not None and session_user.is_authenticated:
        origin = headers.get("origin")
        if origin is None or urlsplit(origin).netloc.lower() != headers.get("host", "").lower():
            return None, None, CLOSE_FORBIDDEN
        return None, session_user, None
    return None, None, None


def _bearer_user(key: str):
    """The active user of a bearer token, or None. Storage: a cached token is O(1) in Redis, and
    its user one indexed read."""
    user_id = _token_user_id(key) if key else None
    return _user_by_id(user_id) if user_id is not None else None


async def socket_user(scope) -> tuple[object | None, int | None]:
    """Who opens a socket: (user, None), (None, None) for anonymous, or (None, close code)."""
    bearer, user, code = _credentials(scope)
    if bearer is not None:
        user = await _db(_bearer_user)(bearer)
        return (user, None) if user is not None else (None, CLOSE_UNAUTHENTICATED)
    return user, code


@dataclass(slots=True)
class Opening:
    """What a board socket learns before it joins its room (``board_opening``)."""

    user: object | None
    author_id: int
    can_edit: bool


def board_opening(board_id: int, bearer: str | None, user) -> Opening | int:
    """Who opens board ``board_id`` and what they may do, in one thread hop (issue 42: a connect
    made five, each holding a database connection over Redis calls): the bearer token's user
    (``bearer``; else ``user``, the session's or None), the board's author and the right to draw,
    in one query (selectors.board_access). An Opening, or the close code: 4401 for a token (or
    session) that names no active person, 4404 for a board that is not published. Storage: one
    O(1) Redis read for a cached token, one indexed query."""
    if bearer is not None:
        user_id = _token_user_id(bearer) if bearer else None
        if user_id is None:
            return CLOSE_UNAUTHENTICATED
    else:
        user_id = user.pk if user is not None else None
    user, author_id, can_edit = selectors.board_access(board_id, user_id)
    if user_id is not None and user is None:
        return CLOSE_UNAUTHENTICATED
    if author_id is None:
        return CLOSE_NOT_FOUND
    return Opening(user=user, author_id=author_id, can_edit=can_edit)


class TokenBucket:
    __slots__ = ("rate", "burst", "tokens", "at")

    def __init__(self, rate: float, burst: float):
        self.rate, self.burst, self.tokens, self.at = rate, burst, burst, time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class LiveSocket(AsyncWebsocketConsumer):
    """What both sockets share: JSON frames through an outbox (a client that does not read is
    closed with 4408, without slowing anyone), and nothing sent once closing."""

    closing = False
    outbox: Outbox | None = None
    heard_at: float | None = None  # when the client last sent a frame, once it has pinged (LIVE_SILENCE)
    silent = False  # closed for its silence: a drop, not a goodbye
    held_until_hello = False  # a board socket's first frame is its hello (API.md), whatever comes first

    async def __call__(self, scope, receive, send):
        """Channels' loop without its Channels layer (a board socket's frames come through the
        hub): each message dispatched as it comes, with no task a message nor a second task an
        idle socket waiting beside the one of its connection (Channels' await_many_dispatch makes
        both, and an asyncio.wait each time)."""
        if get_channel_layer(self.channel_layer_alias) is not None:
            return await super().__call__(scope, receive, send)
        self.scope, self.channel_layer, self.base_send = scope, None, send
        try:
            while True:
                await self.dispatch(await receive())
        except StopConsumer:
            pass

    async def websocket_disconnect(self, message):
        """Channels' without its close_old_connections on the one shared sync thread (a thread
        hop a close): nothing here holds a database connection on this thread."""
        await self.disconnect(message["code"])
        raise StopConsumer()

    async def dispatch(self, message):
        """Channels' dispatch without its thread hop a message (close_old_connections, run on the
        one sync thread for every frame: the live socket's bottleneck). Nothing here touches
        the database on this thread; DatabaseSyncToAsync closes old connections itself."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def accept(self, subprotocol=None, headers=None):
        frames = self.scope.get("extensions", {}).get(FRAMES)  # the live server's: frames written at once
        self.outbox = Outbox(self._write, self._too_slow, held=self.held_until_hello, frames=frames)
        await super().accept(subprotocol, headers)

    async def close(self, code=None, reason=None):
        if not self.closing:  # what waits is written (briefly); nothing queued after a close is sent
            self.closing = True
            if self.outbox is not None:
                await self.outbox.drain(CLOSE_DRAIN)
                self.outbox.drop()
            await super().close(code)

    async def _write(self, text: str) -> None:
        await super().send(text_data=text)

    def _too_slow(self) -> None:
        logger.warning("live %s: a client that does not read was closed", self.scope.get("path"))
        asyncio.ensure_future(self._close_quietly(CLOSE_TOO_SLOW))

    async def _close_quietly(self, code: int) -> None:
        """Close a client that does not read: the close frame waits behind what it did not read,
        so the connection ends when the proxy cuts it (nginx's send_timeout, LIVE_SEND_TIMEOUT)."""
        try:
            await self.close(code)
        except Exception as error:  # gone meanwhile
            logger.debug("live %s: closing: %s", self.scope.get("path"), error)

    def check_stuck(self) -> None:
        if self.outbox is not None and self.outbox.stuck(asyncio.get_running_loop().time(), LIVE_SEND_TIMEOUT):
            self.outbox.drop()
            self._too_slow()

    def heartbeat(self) -> None:
        """A client in the heartbeat gets a ping; one that sent nothing for LIVE_SILENCE seconds
        (its network went) is closed as a drop, so the others see its person reconnecting."""
        if self.heard_at is None or self.closing or self.silent:
            return
        if asyncio.get_running_loop().time() - self.heard_at > LIVE_SILENCE:
            self.silent = True
            logger.info("live %s: a client went silent; closed as dropped", self.scope.get("path"))
            asyncio.ensure_future(self._close_quietly(CLOSE_SILENT))
            return
        self.put(PING_TEXT)

    def put(self, text: str, *, coalesce: str | None = None) -> None:
        if not self.closing and self.outbox is not None:
            self.outbox.put(text, coalesce=coalesce)

    async def _send(self, message: dict) -> None:
        self.put(oplog._json(message))

    send_json = _send  # Channels' name for it (the person socket's hello)


class BoardConsumer(LiveSocket):
    channel_layer_alias = NO_LAYER
    held_until_hello = True
    user_id: int | None = None  # the person's id and name, not their row: 5,000 sockets kept 5,000 rows
    username: str | None = None
    ref: BoardRef | None = None
    joined = False
    # What a socket starts with, kept on the class until it changes (an idle socket's own
    # dictionary holds only what it set: 5,000 of them, issue 42).
    seq = 0
    greeted = False  # ops wait in pending until hello has gone
    gap_task = None
    cursor_at = 0.0  # when this sender's last cursor went out
    cursor_next: str | None = None  # a cursor waiting for its turn (coalesced)
    refused = 0
    dirty_marked = 0.0
    images_placeable: frozenset[str] | set[str] = frozenset()  # pictures this socket may place (checked once each)

    # --- opening -----------------------------------------------------------------------------

    async def connect(self):
        await self.accept()
        self.board_id = int(self.scope["url_route"]["kwargs"]["board_id"])
        self.hub = hubs.hub()
        self.sid = self.hub.socket_id()
        self.pending: dict[int, str] = {}  # ops ahead of the next one this socket owes its client
        self.ops = TokenBucket(LIVE_OPS_PER_SECOND, LIVE_OPS_BURST)
        self.strokes = TokenBucket(LIVE_STROKE_FRAMES_PER_SECOND, LIVE_STROKE_FRAMES_PER_SECOND)
        try:
            code = await self._open()
        except REDIS_FAILURES as error:
            logger.warning("live board %s: storage unreachable at connect: %s", self.board_id, error)
            code = CLOSE_TRY_AGAIN
        except Exception:
            logger.exception("live board %s: opening failed", self.board_id)
            code = CLOSE_SERVER_ERROR
        if code is not None:
            await self.close(code)

    async def _open(self) -> int | None:
        """One thread hop for who and what (``board_opening``), then the loop's Redis client,
        batched with the other sockets' calls: whether the board is live (else one hop to load
        it) and whether its author blocks them; the room; the presence entry written and read with
        the doc (or the ops since ``?since=``); the hello, and the presence frame to the others
        (coalesced, feeds.live.hub)."""
        bearer, user, code = _credentials(self.scope)
        if code is not None:
            return code
        opening = await _db(board_opening)(self.board_id, bearer, user)
        if isinstance(opening, int):
            return opening
        ref = BoardRef(opening.author_id, self.board_id)
        blocks = opening.user is not None and opening.user.pk != ref.author_id
        live, blocked = await asyncio.gather(
            oplog.live_titled_async(ref),
            hiding.blocked_by_async(opening.user.pk, ref.author_id) if blocks else _none(),
        )
        if blocked:
            return CLOSE_NOT_FOUND  # its author blocks them: no board to them, as over HTTP
        if not live and not await self._load():
            return CLOSE_NOT_FOUND  # unpublished meanwhile
        if opening.user is not None:
            self.user_id, self.username = opening.user.pk, opening.user.username
        self.can_edit, self.ref = opening.can_edit, ref
        await self.hub.join(self)  # subscribed before the state is read: no op falls between
        self.joined = True
        since = self._since()
        entries, snapshot = await asyncio.gather(
            oplog.presence_join_async(self.ref, self.sid, username=self.username, can_edit=self.can_edit),
            oplog.live_snapshot_async(self.ref) if since is None else _none(),
        )
        await self._hello(since=since, entries=entries, snapshot=snapshot)
        self.hub.presence_changed(self.ref, self.sid)
        return None

    async def _load(self) -> bool:
        """Make the board live (``oplog.live_load``), once for all the sockets of this process
        that open it meanwhile: each loading it took the board's row lock in turn, and a database
        connection of the pool while it waited (issue 42: 50 sockets opening a board not yet
        live held up every other opening). Whether it is published."""
        loading = self.hub.loading.get(self.board_id)
        if loading is None:
            loading = self.hub.loading[self.board_id] = asyncio.ensure_future(_db(oplog.live_load)(self.board_id))
            loading.add_done_callback(lambda _: self.hub.loading.pop(self.board_id, None))
        return await asyncio.shield(loading) is not None  # a socket that goes leaves the load to the others

    def _since(self) -> int | None:
        return whole_number(parse_qs(self.scope.get("query_string", b"").decode("latin-1")).get("since", [""])[0])

    async def _hello(self, *, since: int | None = None, entries: list | None = None, snapshot=None) -> None:
        """Say hello: the doc and its seq, or (``since``) the ops after it when the log has them.
        ``entries`` (the board's presence) and ``snapshot`` (its doc) when already read."""
        if entries is None:
            entries = await oplog.presence_list_async(self.ref)
        peers = oplog.peers_of(entries)
        you = {"username": self.username, "can_edit": self.can_edit}
        if since is not None:
            entries, head = await asyncio.gather(
                oplog.live_replay_async(self.ref, since), oplog.live_head_async(self.ref)
            )
            if entries is not None and head is not None and all(entry.op is not None for entry in entries):
                self.gen, self.head = head
                self.seq = entries[-1].seq if entries else since
                self._drop_pending()
                self._say_hello(
                    {
                        "type": "hello",
                        "seq": self.seq,
                        "replay": [e.message() for e in entries],
                        "you": you,
                        "peers": peers,
                        "limits": STROKE_LIMITS,
                    }
                )
                self._flush()
                return
        if snapshot is None:
            snapshot = await oplog.live_snapshot_async(self.ref)
        if snapshot is None:  # the live state expired or was lost meanwhile: load it again
            snapshot = await oplog.live_snapshot_async(self.ref) if await self._load() else None
            if snapshot is None:
                await self.close(CLOSE_NOT_FOUND)
                return
        self.gen, self.head, self.seq = snapshot.gen, snapshot.head, snapshot.seq
        self._drop_pending()
        # The doc goes as the live state's text (each element as it was sent), never parsed
        # and encoded again: a board's hello is O(its text), not a JSON round trip of it.
        head = {"type": "hello", "seq": self.seq}
        rest = {"title": snapshot.title, "you": you, "peers": peers, "limits": STROKE_LIMITS}
        self._say_hello(f'{oplog._json(head)[:-1]},"doc":{snapshot.doc_text()},{oplog._json(rest)[1:]}')
        self._flush()

    def _say_hello(self, message: dict | str) -> None:
        """The first hello goes before whatever the room sent meanwhile (held in the outbox);
        a later one (a reset, a gap too wide) in its turn. ``message`` as a dict or its JSON."""
        text = message if isinstance(message, str) else oplog._json(message)
        if self.outbox is not None and self.outbox.held:
            if not self.closing:
                self.outbox.release(text)
        else:
            self.put(text)

    def _drop_pending(self) -> None:
        self.greeted = True
        self.pending = {seq: text for seq, text in self.pending.items() if seq > self.seq}

    def refresh(self, pipe) -> None:
        """Queue this socket's presence refresh in the hub's pipeline (every few seconds)."""
        if self.joined:
            oplog.presence_set(self.ref, self.sid, username=self.username, can_edit=self.can_edit, client=pipe)

    # --- closing -----------------------------------------------------------------------------

    async def disconnect(self, code):
        if self.gap_task is not None:
            self.gap_task.cancel()
        if self.outbox is not None:
            self.outbox.drop()
        if not self.joined:
            return
        self.joined = False
        try:
            await self.hub.leave(self)
            left = (self.closing and not self.silent) or code in GOODBYE_CODES or self.username is None
            entries = await oplog.presence_leave_async(  # dropped: the others see "reconnecting" a while
                self.ref,
                self.sid,
                username=self.username,
                can_edit=self.can_edit,
                grace=None if left else LIVE_RECONNECT_GRACE,
            )
            self.hub.presence_changed(self.ref, self.sid)
            if self.can_edit and not any(entry["e"] and not entry.get("r") for entry in entries):
                await _thread(_enqueue_compaction)(self.board_id)  # the last editor left
        except Exception as error:  # leaving never fails loudly: presence entries expire anyway
            logger.warning("live board %s: leaving was not recorded: %s", self.board_id, error)

    # --- from the client ---------------------------------------------------------------------

    async def receive(self, text_data=None, bytes_data=None):
        if self.ref is None or self.closing:
            return
        if self.heard_at is not None:
            self.heard_at = asyncio.get_running_loop().time()
        try:
            await self._receive(text_data, bytes_data)
        except REDIS_FAILURES as error:
            logger.warning("live board %s: storage unreachable: %s", self.board_id, error)
            await self._error(
                None, "The board's storage is unreachable; reconnect in a moment (nothing you sent was applied)."
            )
            await self.close(CLOSE_TRY_AGAIN)
        except Exception:
            logger.exception("live board %s: a message failed", self.board_id)
            await self._error(None, "Something went wrong on our side with this message; it was not applied.")

    async def _receive(self, text_data, bytes_data):
        if text_data is None:
            await self._error(None, "Send JSON text frames, not binary ones.")
            return
        if len(text_data) > LIVE_MAX_FRAME:
            await self._error(None, f"A message may hold at most {LIVE_MAX_FRAME:,} characters.")
            await self.close(CLOSE_TOO_BIG)
            return
        try:
            data = parse_frame(text_data)
        except BadMessage as error:
            if await self._counted():
                await self._error(None, str(error))
            return
        if data["type"] == "cursor":
            await self._cursor(data)
            return
        if data["type"] == "pong":  # an answer to the heartbeat's ping: heard (above), and counted
            await self._counted()
            return
        if data["type"] == "ping":  # joins the heartbeat (feeds.rules.LIVE_PING_EVERY); counted like an op
            if await self._counted():
                self.heard_at = asyncio.get_running_loop().time()
                await self._send(PONG)
            return
        if data["type"] == "stroke":
            if self.strokes.take():
                await self._stroke(data)
            return
        if not await self._counted():
            return
        if data["type"] == "op":
            await self._op(data)
        else:
            await self._error(
                None, f'Unknown message type {data["type"][:40]!r}; send "op", "cursor", "stroke", "ping" or "pong".'
            )

    async def _counted(self) -> bool:
        """Count a message against the connection's rate: past it, an error; past it for long, a close."""
        if self.ops.take():
            return True
        self.refused += 1
        if self.refused >= LIVE_FLOOD_CLOSE_AFTER:
            await self._error(None, "Too many messages; the connection is closed. Reconnect and send more slowly.")
            await self.close(CLOSE_FLOOD)
        elif self.refused == 1 or self.refused % 10 == 0:
            await self._error(
                None,
                f"Too many messages: at most {LIVE_OPS_PER_SECOND} a second; the ones over the limit were not applied.",
            )
        return False

    async def _cursor(self, data: dict) -> None:
        """A cursor move goes to the others at most LIVE_CURSORS_PER_SECOND times a second: one
        sooner than its turn waits, replaced by any later one, and goes when its turn comes."""
        try:
            cursor = cursor_check(data)
        except BadMessage as error:
            await self._error(None, str(error))
            return
        if self.username is None:
            return
        text = oplog._json({"type": "cursor", "by": self.username, "x": cursor.x, "y": cursor.y})
        loop = asyncio.get_running_loop()
        wait = self.cursor_at + 1 / LIVE_CURSORS_PER_SECOND - loop.time()
        if wait <= 0 and self.cursor_next is None:
            self.cursor_at = loop.time()
            await self._publish_text(CURSOR, text)
            return
        if self.cursor_next is None:
            loop.call_later(max(wait, 0), lambda: asyncio.ensure_future(self._cursor_turn()))
        self.cursor_next = text

    async def _cursor_turn(self) -> None:
        text, self.cursor_next = self.cursor_next, None
        if text is not None and not self.closing:
            self.cursor_at = asyncio.get_running_loop().time()
            await self._publish_text(CURSOR, text)

    async def _stroke(self, data: dict) -> None:
        """Part of a stroke being drawn, to the others as it is: never applied, never logged."""
        if not self.can_edit:
            await self._error(None, "You may watch this board but not draw on it; its author can invite you.")
            return
        try:
            stroke = stroke_check(data)
        except BadMessage as error:
            await self._error(None, str(error))
            return
        await self._publish(
            STROKE,
            {
                "type": "stroke",
                "by": self.username,
                "id": stroke.id,
                "color": stroke.color,
                "width": stroke.width,
                "at": stroke.at,
                "points": stroke.points,
                "done": stroke.done,
            },
        )

    async def _op(self, data: dict) -> None:
        cid = data.get("client_op_id") if isinstance(data.get("client_op_id"), str) else None
        if not self.can_edit:
            await self._error(cid, "You may watch this board but not draw on it; its author can invite you.")
            return
        try:
            message, op = op_check(data, head=self.head)
            await self._image_check(op, message.client_op_id)
            for _attempt in range(3):
                try:
                    op_json, element_json = oplog.op_json(op)
                    seq, compacted = await self._apply(message, op, op_json, element_json)
                    break
                except OpRefused as refused:
                    if refused.reason in REFUSED:
                        raise BadMessage(
                            REFUSED[refused.reason].format(*refused.details), message.client_op_id
                        ) from None
                    if refused.reason == "extents":
                        await _thread(oplog.live_extents_fill)(self.ref)
                    if refused.reason == "unloaded" and await _db(oplog.live_load)(self.board_id) is None:
                        await self._error(cid, "This board was deleted; nothing more can be drawn on it.")
                        await self.close(CLOSE_NOT_FOUND)
                        return
                    head = await oplog.live_head_async(self.ref)  # the doc was replaced: check again
                    if head is not None:
                        self.gen, self.head = head
                    message, op = op_check(data, head=self.head)
            else:
                raise BadMessage("The board changed under this op too often; send it again.", cid)
        except BadMessage as error:
            await self._error(error.client_op_id, str(error))
            return
        text = oplog.op_frame(seq, self.username, message.client_op_id, op_json)
        try:
            await self.hub.publish(self.board_id, OP, text, seq=seq)
        except Exception as error:  # the op is in the log: the others read it back when they notice
            logger.warning("live board %s: broadcast failed: %s", self.board_id, error)
            self.on_op(seq, text)  # the sender learns it was applied all the same
        now = time.monotonic()
        if seq - compacted == 1 or now - self.dirty_marked > 5:
            self.dirty_marked = now
            await get_async_batcher().call(lambda pipe: oplog.dirty_mark(self.ref, client=pipe))

    async def _image_check(self, op: dict, cid: str | None) -> None:
        """A picture placed live is one its board may show (feeds.images.images_check_placeable),
        checked once a socket and picture: moving it again asks nothing."""
        element = op.get("element") or {}
        if element.get("type") != "image" or element["image"] in self.images_placeable:
            return
        try:
            await _db(images.images_check_placeable)(
                {element["image"]}, author_id=self.ref.author_id, board_id=self.board_id
            )
        except Invalid as error:
            raise BadMessage(str(error), cid) from None
        self.images_placeable = {*self.images_placeable, element["image"]}

    def _apply(self, message, op: dict, op_json: str, element_json: str | None):
        if op["kind"] == "board":
            return self._apply_board(message, op)
        element = op.get("element")
        return oplog.live_apply_async(
            self.ref,
            gen=self.gen,
            kind=op["kind"],
            element_id=element["id"] if element is not None else op["id"],
            element=element,
            element_json=element_json,
            by=self.username,
            client_op_id=message.client_op_id,
            op_json=op_json,
        )

    async def _apply_board(self, message, op: dict) -> tuple[int, int]:
        """A board op: its title (the author's alone) through the board service with the log in
        one transaction, anything else straight to the log."""
        cid = message.client_op_id
        if "title" not in op:
            return await oplog.live_board_op_async(self.ref, op, by=self.username, client_op_id=cid)
        if self.user_id != self.ref.author_id:
            raise BadMessage("Only the board's author may change its title; you may change its drawing.", cid)
        try:
            return await _db(board_change_live)(board_id=self.board_id, op=op, by=self.username, client_op_id=cid)
        except BoardGone:
            raise BadMessage("This board was deleted; nothing more can be changed on it.", cid) from None

    # --- from the board's channel (feeds.live.hub: called in the hub's task, never awaited) ---

    def on_op(self, seq: int, text: str) -> None:
        if seq <= self.seq or self.ref is None:
            return
        self.pending[seq] = text
        self._flush()

    def _flush(self) -> None:
        if not self.greeted:
            return
        while self.seq + 1 in self.pending:
            self.seq += 1
            self.put(self.pending.pop(self.seq))
        if self.pending and self.gap_task is None:
            self.gap_task = asyncio.ensure_future(self._fill_gap(GAP_WAIT))

    def catch_up(self) -> None:
        """Frames may have been lost (the subscription came back): read what the log has past ours."""
        if self.ref is not None and self.gap_task is None and not self.closing:
            self.gap_task = asyncio.ensure_future(self._fill_gap(0, to_head=True))

    async def _fill_gap(self, wait: float, *, to_head: bool = False) -> None:
        """Ops arrived ahead of one that did not: wait a moment, then read the missing from the log."""
        try:
            await asyncio.sleep(wait)
            upto = None if to_head else (max(self.pending) if self.pending else None)
            if upto is None and not to_head:
                return
            entries = await oplog.live_replay_async(self.ref, self.seq, upto)
            if entries is None or any(entry.op is None for entry in entries):
                self.gap_task = None
                await self._hello()  # too far behind, or the doc was replaced: the whole doc
                return
            for entry in entries:
                self.pending.setdefault(entry.seq, oplog._json(entry.message()))
        except asyncio.CancelledError:
            raise
        except Exception as error:
            logger.warning("live board %s: filling a gap failed: %s", self.board_id, error)
        finally:
            self.gap_task = None
        self._flush()

    def on_frame(self, kind: str, sender: str, text: str) -> None:
        if kind == CURSOR:
            self.put(text, coalesce=sender)
        elif kind == PRESENCE:
            self.put(text, coalesce=PRESENCE)
        else:
            self.put(text)

    def on_notice(self, notice: str) -> None:
        if self.closing:
            return
        handler = {"access": self._access_changed, "gone": self._gone, "reset": self._hello}[notice]
        asyncio.ensure_future(self._notice(handler))

    async def _notice(self, handler) -> None:
        try:
            await handler()
        except Exception as error:  # the next op or reconnect checks again
            # A socket already closing (its client gone meanwhile) has nothing left to tell: no warning.
            log = logger.debug if self.closing else logger.warning
            log("live board %s: a notice failed: %r", self.board_id, error)

    async def _access_changed(self) -> None:
        self.can_edit = (await _db(selectors.board_access)(self.board_id, self.user_id))[2]

    async def _gone(self) -> None:
        await self._error(None, "This board was deleted.")
        await self.close(CLOSE_NOT_FOUND)

    # --- sending -----------------------------------------------------------------------------

    async def _publish(self, kind: str, message: dict) -> None:
        await self._publish_text(kind, oplog._json(message))

    async def _publish_text(self, kind: str, text: str) -> None:
        try:
            await self.hub.publish(self.board_id, kind, text, sender=self.sid)
        except Exception as error:  # cursors, strokes and presence are ephemeral: the next one goes
            logger.warning("live board %s: broadcast failed: %s", self.board_id, error)

    async def _error(self, client_op_id: str | None, detail: str) -> None:
        await self._send({"type": "error", "client_op_id": client_op_id, "detail": detail})


class NoSuchSocket(AsyncWebsocketConsumer):
    """Any other WebSocket path: accepted to say 4404, not a server error."""

    async def connect(self):
        await self.accept()
        await self.close(CLOSE_NOT_FOUND)


class PersonConsumer(LiveSocket):
    """``/ws/me``: one person's live updates (feeds.live.online). Says ``hello`` with the unread
    count, then ``feed`` (a board reached their feed: ``board_id``) and ``unread`` (``count``).
    Anonymous: 4401; a session from another origin: 4403. What the client sends is ignored."""

    user = None
    joined = False
    refresh_task = None

    async def connect(self):
        await self.accept()
        try:
            self.user, code = await socket_user(self.scope)
            if code is None and self.user is None:
                code = CLOSE_UNAUTHENTICATED
            if code is None:
                self.group = keys.live_person_group(self.user.pk)
                await self.channel_layer.group_add(self.group, self.channel_name)
                self.joined = True
                await _thread(online.online_mark)(self.user.pk)
                unread = await _db(notifications_unread)(self.user.pk)
                await self.send_json({"type": "hello", "username": self.user.username, "unread": unread})
                self.refresh_task = asyncio.ensure_future(self._refresh())
        except REDIS_FAILURES as error:
            logger.warning("live person socket: storage unreachable at connect: %s", error)
            code = CLOSE_TRY_AGAIN
        except Exception:
            logger.exception("live person socket: opening failed")
            code = CLOSE_SERVER_ERROR
        if code is not None:
            await self.close(code)

    async def _refresh(self) -> None:
        while True:
            await asyncio.sleep(online.ONLINE_REFRESH)
            try:
                await _thread(online.online_mark)(self.user.pk)
            except REDIS_FAILURES as error:
                logger.warning("live person socket: online record not refreshed: %s", error)

    async def disconnect(self, code):
        if self.refresh_task is not None:
            self.refresh_task.cancel()
        if not self.joined:
            return
        self.joined = False
        try:
            await _thread(online.online_clear)(self.user.pk)
            await self.channel_layer.group_discard(self.group, self.channel_name)
        except Exception as error:  # the record expires anyway
            logger.warning("live person socket: leaving was not recorded: %s", error)

    async def receive(self, text_data=None, bytes_data=None):
        pass  # nothing to say to the server (yet); never an error

    async def person_feed(self, event):
        await self._send({"type": "feed", "board_id": event["board_id"]})

    async def person_unread(self, event):
        await self._send({"type": "unread", "unread": event["count"]})
