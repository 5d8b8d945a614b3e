"""Comments live (docs/api.md, "Comments"): a comment posted, edited or removed reaches every
socket open on its board within a second, after the socket's hello, watchers included; the
sockets of other boards hear nothing."""

import json
import threading
import time

import pytest
from django.db import connections
from websockets.exceptions import ConnectionClosed

from feeds.services import boards as board_services, comments as comment_services
from feeds.tests.support import LiveClient as Client
from social import tokens
from social.services import user_create

pytestmark = pytest.mark.live

DOC = {"width": 400, "height": 300, "background": "#ffffff", "elements": []}


@pytest.fixture
def world(asgi_server, run):
    alice = user_create(username="alice", password="password123")
    bob = user_create(username="bob", password="password123")
    boards = [
        run(board_services.board_create, author=alice, title=t, kind="sketch", tags=[], doc=json.loads(json.dumps(DOC)))
        for t in ("Ours", "Other")
    ]
    return {"server": asgi_server, "alice": alice, "bob": bob, "boards": boards, "token": tokens.token_create(user=bob)}


def test_posted_edited_and_deleted_comments_reach_every_open_socket_of_the_board_within_a_second(world):
    server, (board, other) = world["server"], world["boards"]
    watcher = Client(server, board.pk)  # signed out: watching a public board
    member = Client(server, board.pk, token=world["token"])
    elsewhere = Client(server, other.pk)
    for socket in (watcher, member, elsewhere):
        assert socket.hello["type"] == "hello"
    started = time.monotonic()
    comment = comment_services.comment_create(author=world["bob"], board=board, text="hello @alice")
    for socket in (watcher, member):
        assert socket.recv_type("comment", timeout=1) == {"type": "comment", "action": "posted", "id": comment.pk}
    assert time.monotonic() - started < 1
    comment_services.comment_edit(comment=comment, user=world["bob"], text="hello again")
    assert watcher.recv_type("comment", timeout=1)["action"] == "edited"
    comment.board = board
    comment_services.comment_delete(comment=comment, user=world["alice"])
    assert watcher.recv_type("comment", timeout=1) == {"type": "comment", "action": "deleted", "id": comment.pk}
    with pytest.raises((TimeoutError, ConnectionClosed)):
        elsewhere.recv_type("comment", timeout=0.5)
    for socket in (watcher, member, elsewhere):
        socket.close()


def test_a_socket_opened_while_comments_pour_in_still_says_hello_first(world, settings):
    """Comments posted without pause while sockets open: each socket's first frame is its hello
    (the comment frames that reach the room meanwhile wait behind it), and comments flow."""
    settings.RATE_LIMIT_COMMENTS_PER_MINUTE = 0
    server, board = world["server"], world["boards"][0]
    stop = threading.Event()

    def pour():
        n = 0
        while not stop.is_set():
            comment_services.comment_create(author=world["bob"], board=board, text=f"c{n}")
            n += 1
        connections.close_all()

    pourer = threading.Thread(target=pour)
    pourer.start()
    try:
        sockets = [Client(server, board.pk) for _ in range(10)]  # Client reads the first frame as hello
    finally:
        stop.set()
        pourer.join()
    assert [socket.hello["type"] for socket in sockets] == ["hello"] * 10
    assert sockets[0].recv_type("comment", timeout=2)["action"] == "posted"  # frames flowed meanwhile
    for socket in sockets:
        socket.close()
