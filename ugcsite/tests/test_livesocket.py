"""The live server's protocol (ugcsite.platform.livesocket) in a real uvicorn on a real TCP
socket: the frames a socket's outbox (feeds.live.hub.Outbox) is handed in one loop turn go out
in one write, in order, as the frames websockets itself would build; a socket that stops
reading holds its frames in the outbox (the transport's buffer full) and writes them all once
it reads again."""

import asyncio
import base64
import os
import socket
import threading
import time

import pytest
import uvicorn
from websockets.frames import Frame, Opcode

from feeds.live.hub import Outbox
from ugcsite.platform.livesocket import FRAMES, LingeringProtocol, text_frame
from ugcsite.serving import free_port


def test_a_text_frame_is_what_websockets_builds_at_every_length_boundary():
    for n in (0, 1, 125, 126, 127, 65535, 65536, 70000):
        text = "é" * (n // 2) + "x" * (n % 2)  # UTF-8: two bytes each, so n bytes
        expected = Frame(Opcode.TEXT, text.encode()).serialize(mask=False, extensions=[])
        assert text_frame(text) == expected, n


class Server:
    """uvicorn with the live protocol, serving an app that hands each socket's outbox the
    texts it is told to, in one loop turn; on a thread and an event loop of its own."""

    def __init__(self):
        self.port = free_port()
        self.outboxes: list[Outbox] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self.failures: list[BaseException] = []
        config = uvicorn.Config(
            self.app,
            host="127.0.0.1",
            port=self.port,
            ws=LingeringProtocol,
            lifespan="off",
            log_level="warning",
            interface="asgi3",
            ws_ping_interval=None,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._run, daemon=True)

    async def app(self, scope, receive, send):
        assert scope["type"] == "websocket"
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})

        async def one_by_one(text):
            await send({"type": "websocket.send", "text": text})

        self.outboxes.append(Outbox(one_by_one, lambda: None, frames=scope["extensions"][FRAMES]))
        while (await receive())["type"] != "websocket.disconnect":
            pass

    def _run(self):
        async def serve():
            self.loop = asyncio.get_running_loop()
            await self.server.serve()

        try:
            asyncio.run(serve())
        except BaseException as error:  # raised to the test in stop()
            self.failures.append(error)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "the server did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)
        if self.failures:
            raise self.failures[0]

    def put_in_one_turn(self, outbox: Outbox, texts: list[str]) -> None:
        def put_all():
            for text in texts:
                outbox.put(text)

        self.loop.call_soon_threadsafe(put_all)


def connect(port: int) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    client.sendall(
        (
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += client.recv(4096)
    assert answer.startswith(b"HTTP/1.1 101"), answer
    assert answer.endswith(b"\r\n\r\n"), "nothing may follow the handshake before the frames are put"
    return client


def read_frames(data: bytes) -> list[str]:
    texts, at = [], 0
    while at < len(data):
        assert data[at] == 0x81
        n, at = data[at + 1], at + 2
        if n == 126:
            n, at = int.from_bytes(data[at : at + 2]), at + 2
        elif n == 127:
            n, at = int.from_bytes(data[at : at + 8]), at + 8
        texts.append(data[at : at + n].decode())
        at += n
    return texts


def wait_for(condition, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.01)


def test_the_frames_of_one_turn_go_out_in_one_write_in_order():
    with Server() as server:
        client = connect(server.port)
        wait_for(lambda: len(server.outboxes) == 1)
        texts = [f'{{"type":"op","seq":{n}}}' for n in range(50)] + ["y" * 300]
        server.put_in_one_turn(server.outboxes[0], texts)
        # One write of ~1.5 KiB on loopback arrives whole in one read: frames written one a
        # write would mostly come apart, the first read holding the first frame alone.
        first = client.recv(1 << 20)
        assert read_frames(first) == texts
        client.close()


def test_a_socket_that_stops_reading_gets_everything_once_it_reads_again():
    with Server() as server:
        client = connect(server.port)
        wait_for(lambda: len(server.outboxes) == 1)
        outbox = server.outboxes[0]
        texts: list[str] = []
        for batch in range(400):  # 100 KiB a turn until the kernel's and the transport's buffers are full
            more = [f"{batch:04d}{n:02d}" + "z" * 2000 for n in range(50)]
            texts += more
            server.put_in_one_turn(outbox, more)
            time.sleep(0.02)
            if outbox.writer is not None:  # the transport is full: a task waits for it to drain
                break
        else:
            pytest.fail("the transport never filled")
        more = [f"last{n:02d}" + "z" * 2000 for n in range(50)]
        texts += more
        server.put_in_one_turn(outbox, more)
        wait_for(lambda: len(outbox.queue) == 50)
        assert outbox.queue and not outbox.closed
        expected = sum(len(text_frame(text)) for text in texts)
        data = bytearray()
        while len(data) < expected:
            data += client.recv(1 << 20)
        assert read_frames(data) == texts
        client.close()


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
