"""uvicorn's WebSocket protocol (websockets' sans-I/O one) with a lingering close, for the live
server (scripts/serve.sh passes ``--ws ugcsite.platform.livesocket:LingeringProtocol``).

A frame past ``--ws-max-size`` fails the connection with close 1009 before its payload is read.
uvicorn then closes the TCP connection at once, while the client is still sending the rest of
the frame: the server's kernel answers those bytes with a reset, and the reset throws away the
close frame the client has not read yet, so the client sees 1006 and no reason (RFC 6455 7.1.1
asks the server to let the client read the close first). Here the close frame is sent, what the
client goes on sending is read and dropped (websockets' parser discards it after a failure, so
nothing is buffered), and the connection is closed once the client has been silent for
``QUIET`` seconds, its EOF comes, or ``LINGER_MAX`` seconds have passed, whichever is first."""

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

QUIET = 0.5  # seconds without a byte from the client after the close frame
LINGER_MAX = 10.0  # seconds at most between the close frame and the TCP close


class LingeringProtocol(WebSocketsSansIOProtocol):
    _lingering = False
    _quiet_timer = None
    _linger_timer = None

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
