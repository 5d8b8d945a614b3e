"""uvicorn's WebSocket protocol (websockets' sans-I/O one) with a lingering close, for the live
server (scripts/serve.sh passes ``--ws ugcsite.platform.livesocket:LingeringProtocol``).

A frame past ``--ws-max-size`` fails the connection with close 1009 before its payload is read.
uvicorn then closes the TCP connection at once, while the client is still sending the rest of
the frame: the server's kernel answers those bytes with a reset, and the reset throws away the
close frame the client has not read yet, so the client sees 1006 and no reason (RFC 6455 7.1.1
asks the server to let the client read the close first). Here the close frame is sent, what the
client goes on sending is read and dropped (websockets' parser discards it after a failure, so
nothing is buffered), and the connection is closed once the client has been silent for
``QUIET`` seconds, its EOF comes, or ``LINGER_MAX`` seconds have passed, whichever is first.

It also offers the app a way to write several text frames at once (issue 42): the scope's
extension ``FRAMES`` (``"ugcsite.frames"``) is ``{"send": send_texts, "writable": event}``.
``send_texts(texts)`` frames every text and hands them to the transport in one write (one
syscall, where the ASGI ``websocket.send`` costs a coroutine chain, a frame object and a write
each); it is synchronous, so an app can write what it queued for a socket in one loop turn
without a task a frame. ``writable`` is clear while the transport's buffer is over its high
water mark: wait for it before writing more. A frame's bytes are built once for every receiver
of the same text (``text_frame``): a board's frame goes to each of its sockets as one string.
The ASGI path stays for everything else (accept, close, one-off sends)."""

import struct

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState

QUIET = 2.0  # seconds without a byte from the client after the close frame (a loaded host pauses a sender)
LINGER_MAX = 10.0  # seconds at most between the close frame and the TCP close
FRAMES = "ugcsite.frames"  # the scope extension of send_texts (above)
FRAME_CACHE = 512  # texts whose frame bytes are kept: those of this moment's broadcasts
FRAME_CACHE_TEXT = 4096  # longer texts (a hello with its doc, one a socket) are framed, not kept

_frames: dict[str, bytes] = {}


def text_frame(text: str) -> bytes:
    """An unmasked, unfragmented text frame of ``text`` (RFC 6455 5.2, a server's), built once
    for all the sockets it goes to in this moment (a small cache of short texts, emptied when
    full: at most FRAME_CACHE x FRAME_CACHE_TEXT characters)."""
    frame = _frames.get(text)
    if frame is None:
        payload = text.encode()
        n = len(payload)
        if n < 126:
            head = bytes((0x81, n))
        elif n < 65536:
            head = struct.pack("!BBH", 0x81, 126, n)
        else:
            head = struct.pack("!BBQ", 0x81, 127, n)
        frame = head + payload
        if n <= FRAME_CACHE_TEXT:
            if len(_frames) >= FRAME_CACHE:
                _frames.clear()
            _frames[text] = frame
    return frame


class LingeringProtocol(WebSocketsSansIOProtocol):
    _lingering = False
    _quiet_timer = None
    _linger_timer = None

    def handle_connect(self, event) -> None:
        super().handle_connect(event)
        scope = self.__dict__.get("scope")  # set only for an upgrade the handshake accepted
        if scope is not None:
            scope["extensions"][FRAMES] = {"send": self.send_texts, "writable": self.writable}

    def send_texts(self, texts) -> None:
        """Write ``texts`` as text frames in one transport write. Raises ClientDisconnected when
        the connection is closing or gone (nothing is written then). The caller waits for
        ``writable`` first; a write past the high water mark is buffered by the transport."""
        if not self.handshake_complete or self.close_sent or self.disconnected or self.transport.is_closing():
            raise ClientDisconnected()
        if self.conn.extensions:  # a negotiated extension (permessage-deflate) frames them itself
            try:
                for text in texts:
                    self.conn.send_text(text.encode())
            except InvalidState:
                raise ClientDisconnected() from None
            self.transport.write(b"".join(self.conn.data_to_send()))
            return
        self.transport.write(b"".join([text_frame(text) for text in texts]))

    def handle_parser_exception(self) -> None:
        if self._lingering:  # the rest of a refused frame: dropped by the parser
            self._quiet_timer.cancel()
            self._quiet_timer = self.loop.call_later(QUIET, self.transport.close)
            return
        self._lingering = True
        close = self.conn.close_sent
        self.queue.put_nowait({"type": "websocket.disconnect", "code": close.code, "reason": close.reason})
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.close_sent = True
        self._quiet_timer = self.loop.call_later(QUIET, self.transport.close)
        self._linger_timer = self.loop.call_later(LINGER_MAX, self.transport.close)

    def connection_lost(self, exc: Exception | None) -> None:
        for timer in (self._quiet_timer, self._linger_timer):
            if timer is not None:
                timer.cancel()
        super().connection_lost(exc)
