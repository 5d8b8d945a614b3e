"""Convergence of the live channel (a property test against a real ASGI server): random
concurrent op streams from several clients, with reconnects (?since=) in the middle, and
conflicting ops (two people removing or updating the same element, one shrinking the board
while another draws past its edge, two choosing a background). Every client applies what
the server sends as the browser does (hello doc or replay, then ops in seq order); at the end
every client's doc, the server's live doc and the REST doc after compaction are the same."""

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings as hypothesis_settings, strategies as st
from websockets.sync.client import connect

from feeds import keys
from feeds.live import compaction, oplog
from feeds.live.oplog import BoardRef
from feeds.models import Board
from feeds.services import boards as board_services, editors as editor_services
from feeds.validation import element_extent
from social import tokens
from social.services import user_create

pytestmark = pytest.mark.live

IDS = [f"e{i}" for i in range(8)]  # a small pool, so that clients collide on the same elements
DOC = {
    "width": 500,
    "height": 500,
    "background": "#ffffff",
    "elements": [{"type": "rect", "color": "#000000", "width": 1, "x": 1, "y": 1, "w": 10, "h": 10, "id": "e0"}],
}


def element(element_id: str, x: int) -> dict:
    return {"type": "path", "color": "#123456", "width": 2, "points": [[x, x], [x + 3, x + 7]], "id": element_id}


def apply(doc: dict, op: dict) -> dict:
    """The client's rule (static/js/live.js applyOp): a board op sets the head's fields it names;
    an element op grows the board to hold its element, then adds, replaces or removes it."""
    if op["kind"] == "board":
        return {**doc, **{field: op[field] for field in ("background", "width", "height") if field in op}}
    if "element" in op:
        right, bottom = element_extent(op["element"])
        doc = {**doc, "width": max(doc["width"], right), "height": max(doc["height"], bottom)}
    elements = doc["elements"]
    if op["kind"] == "add":
        if not any(e["id"] == op["element"]["id"] for e in elements):
            elements = elements + [op["element"]]
    elif op["kind"] == "update":
        elements = [op["element"] if e["id"] == op["element"]["id"] else e for e in elements]
    else:
        elements = [e for e in elements if e["id"] != op["id"]]
    return {**doc, "elements": elements}


class Replica:
    """One client's copy of the board, kept as the browser keeps it."""

    def __init__(self, server, board_id, token):
        self.server, self.board_id, self.token = server, board_id, token
        self.doc, self.seq, self.socket = None, None, None
        self.open()

    def open(self):
        since = f"?since={self.seq}" if self.seq is not None else ""
        self.socket = connect(
            f"{self.server.ws}/ws/boards/{self.board_id}{since}",
            open_timeout=10,
            additional_headers={"Authorization": f"Bearer {self.token}"},
        ).__enter__()
        self.take(json.loads(self.socket.recv(timeout=10)))

    def take(self, message):
        if message["type"] == "hello":
            if "doc" in message:
                self.doc = message["doc"]
            else:
                for op in message["replay"]:
                    self.take(op)
            self.seq = message["seq"]
        elif message["type"] == "op":
            assert message["seq"] == self.seq + 1, (message["seq"], self.seq)  # in order, none missed
            self.doc = apply(self.doc, message["op"])
            self.seq = message["seq"]

    def send(self, op):
        self.socket.send(json.dumps({"type": "op", "client_op_id": "x", "op": op}))

    def reconnect(self):
        self.socket.close()
        self.open()

    def drain(self, until_seq):
        deadline = time.monotonic() + 20
        while self.seq < until_seq:
            self.take(json.loads(self.socket.recv(timeout=max(deadline - time.monotonic(), 0.1))))


actions = st.lists(
    st.tuples(
        st.integers(0, 2),
        st.sampled_from(["add", "add", "update", "remove", "reconnect", "size", "background"]),
        st.sampled_from(IDS),
        st.integers(0, 600),
    ),
    min_size=1,
    max_size=40,
)


@pytest.fixture
def live_world(asgi_server):
    alice = user_create(username="alice", password="password123")
    bob = user_create(username="bob", password="password123")
    return {
        "server": asgi_server,
        "alice": alice,
        "bob": bob,
        "tokens": [tokens.token_create(user=alice), tokens.token_create(user=bob), tokens.token_create(user=alice)],
    }


@hypothesis_settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=actions)
def test_every_client_and_the_server_end_with_the_same_doc(live_world, script):
    board = board_services.board_create(
        author=live_world["alice"], title="Race", kind="sketch", tags=[], doc=json.loads(json.dumps(DOC))
    )
    editor_services.editor_invite(board=board, user=live_world["bob"])
    replicas = [Replica(live_world["server"], board.pk, token) for token in live_world["tokens"]]
    for who, action, element_id, x in script:
        replica = replicas[who]
        if action == "reconnect":
            replica.reconnect()  # whatever it had not read yet comes back as a replay
        elif action == "remove":
            replica.send({"kind": "remove", "id": element_id})
        elif action == "size":  # refused when it would cut what is drawn: nothing to apply then
            replica.send({"kind": "board", "width": 100 + x, "height": 50 + x})
        elif action == "background":
            replica.send({"kind": "board", "background": f"#{x:06x}"})
        else:
            replica.send({"kind": action, "element": element(element_id, x)})
    ref = BoardRef.of(board)
    settled = -1
    while True:  # until every op sent was taken and every replica has read up to it
        time.sleep(0.3)
        seq = int(oplog.get_redis().hget(keys.live_meta(*ref.key_args), "seq"))
        if seq == settled:
            break
        settled = seq
        for replica in replicas:
            replica.drain(seq)
    server_doc = oplog.live_snapshot(ref).doc()
    for replica in replicas:
        assert replica.doc == server_doc
        replica.socket.close()
    compaction.board_compact(board.pk)
    assert Board.objects.get(pk=board.pk).doc == server_doc
