"""The live channel against a real ASGI server process (uvicorn, two worker processes, the
Channels layer on the plain Redis): the protocol of API.md ("Shared boards, live"), who may
connect and draw (close codes 4401/4403/4404, the Origin check), replay with ?since=, compaction
into the REST doc, and what survives killing the server."""

import json
import socket
import threading
import time

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from feeds import keys, rules
from feeds.live import compaction
from feeds.models import Board, Notification
from feeds.services import boards as board_services, editors as editor_services
from feeds.tests.support import LiveClient as Client
from feeds.validation import turned_box
from social import tokens
from social.models import User
from social.services import user_create
from ugcsite.platform.redis import get_redis
from ugcsite.testing import socket_close_code

pytestmark = pytest.mark.live

DOC = {
    "width": 400,
    "height": 300,
    "background": "#ffffff",
    "elements": [{"type": "rect", "color": "#000000", "width": 2, "x": 10, "y": 10, "w": 50, "h": 40, "id": "r1"}],
}


def stroke(element_id: str, x: float = 10) -> dict:
    return {"type": "path", "color": "#112233", "width": 3, "points": [[x, 10], [x + 5, 20]], "id": element_id}


def closed_with(server, board_id, query="", headers=None) -> int:
    return socket_close_code(f"{server.ws}/ws/boards/{board_id}{query}", headers)


@pytest.fixture
def world(asgi_server, run):
    alice = user_create(username="alice", password="password123")
    bob = user_create(username="bob", password="password123")
    carol = user_create(username="carol", password="password123")
    board = run(
        board_services.board_create, author=alice, title="Ours", kind="sketch", tags=[], doc=json.loads(json.dumps(DOC))
    )
    editor_services.editor_invite(board=board, user=bob)
    return {
        "server": asgi_server,
        "board": board,
        "tokens": {u.username: tokens.token_create(user=u) for u in (alice, bob, carol)},
    }


def test_hello_ops_in_order_to_everyone_and_errors_to_the_sender(world):
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    assert alice.hello["type"] == "hello" and alice.hello["doc"] == DOC
    assert alice.hello["you"] == {"username": "alice", "can_edit": True}
    bob = Client(server, board.pk, token=t["bob"])
    assert alice.recv_type("presence")["peers"] == [
        {"username": "alice", "reconnecting": False},
        {"username": "bob", "reconnecting": False},
    ]
    seq0 = bob.hello["seq"]
    alice.op("a1", {"kind": "add", "element": stroke("s1")})
    bob.op("b1", {"kind": "update", "element": {**DOC["elements"][0], "fill": "#00ff00"}})
    alice.op("a2", {"kind": "remove", "id": "nope"})
    for who in (alice, bob):
        got = [who.recv_type("op"), who.recv_type("op")]
        assert [m["seq"] for m in got] == [seq0 + 1, seq0 + 2]
        assert {m["client_op_id"] for m in got} == {"a1", "b1"}
    error = alice.recv_type("error")
    assert error["client_op_id"] == "a2" and "no element" in error["detail"]
    bob.send({"type": "cursor", "x": 5, "y": 6})
    assert alice.recv_type("cursor") == {"type": "cursor", "by": "bob", "x": 5, "y": 6}
    alice.close()
    bob.close()


def test_bad_frames_get_errors_and_nobody_else_notices(world):
    server, board, t = world["server"], world["board"], world["tokens"]
    bob = Client(server, board.pk, token=t["bob"])
    alice = Client(server, board.pk, token=t["alice"])
    for frame, words in [
        ("not json", "not valid JSON"),
        ("[1]", "JSON object"),
        ('{"type": "dance"}', "Unknown message type"),
        (
            {"type": "op", "client_op_id": "x", "op": {"kind": "add", "element": {**stroke("z"), "color": "red"}}},
            "color",
        ),
        (
            {
                "type": "op",
                "client_op_id": "y",
                "op": {"kind": "add", "element": {**stroke("z"), "points": [[1, 1], [4097, 1]]}},
            },
            "outside the 4096x4096 canvas",
        ),
        (
            {
                "type": "op",
                "client_op_id": "w",
                "op": {"kind": "add", "element": {k: v for k, v in stroke("z").items() if k != "id"}},
            },
            "id",
        ),
        ({"type": "op", "client_op_id": "v", "op": {"kind": "add", "element": stroke("r1")}}, "already"),
        (
            '{"type": "op", "client_op_id": "n", "op": {"kind": "add", "element": {"type": "path", "color": "#000000", "width": NaN}}}',
            "JSON",
        ),
    ]:
        bob.send(frame)
        error = bob.recv_type("error")
        assert words in error["detail"], (frame, error)
    bob.socket.send(b"\x00binary")
    assert "text frames" in bob.recv_type("error")["detail"]
    bob.op("ok", {"kind": "add", "element": stroke("fine")})
    assert alice.recv_type("op")["client_op_id"] == "ok"  # alice saw only the accepted op
    alice.close()
    bob.close()


def stroke_frame(**changes) -> dict:
    return {"type": "stroke", "id": "s9", "color": "#112233", "width": 3, "at": 0, "points": [[1, 2], [3, 4]]} | changes


def test_a_stroke_being_drawn_reaches_the_others_and_never_the_log(world):
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    bob = Client(server, board.pk, token=t["bob"])
    assert bob.hello["limits"] == {
        "cursors_per_second": rules.LIVE_CURSORS_PER_SECOND,
        "stroke_frames_per_second": rules.LIVE_STROKE_FRAMES_PER_SECOND,
        "stroke_points": rules.LIVE_STROKE_POINTS,
        "stroke_idle": rules.LIVE_STROKE_IDLE,
        "ping_every": rules.LIVE_PING_EVERY,
        "silence": rules.LIVE_SILENCE,
    }
    seq = bob.hello["seq"]
    bob.send(stroke_frame())
    bob.send(stroke_frame(at=2, points=[[5.5, 6]]))
    got = alice.recv_type("stroke")
    assert got == {
        "type": "stroke",
        "by": "bob",
        "id": "s9",
        "color": "#112233",
        "width": 3,
        "at": 0,
        "points": [[1, 2], [3, 4]],
        "done": False,
    }
    assert alice.recv_type("stroke")["points"] == [[5.5, 6]]
    # The final stroke is the one op; the frames before it left nothing in the log.
    bob.op("b1", {"kind": "add", "element": {**stroke("s9"), "points": [[1, 2], [3, 4], [5.5, 6]]}})
    assert alice.recv_type("op")["seq"] == seq + 1
    late = Client(server, board.pk, token=t["alice"], since=seq)
    assert [entry["client_op_id"] for entry in late.hello["replay"]] == ["b1"]
    assert all(m["type"] != "stroke" for m in bob.skipped)  # never sent back to its drawer
    for who in (alice, bob, late):
        who.close()


def test_bad_stroke_frames_get_a_clear_error_and_go_nowhere(world):
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    bob = Client(server, board.pk, token=t["bob"])
    for frame, words in [
        (stroke_frame(color="red"), "color"),
        (stroke_frame(width=0), "width"),
        (stroke_frame(width=65), "width"),
        (stroke_frame(id="no spaces"), "id"),
        (stroke_frame(at=-1), "at"),
        (stroke_frame(at=1.5), "at"),
        (stroke_frame(at=99_999, points=[[1, 1], [2, 2]]), "100,000 points"),
        (stroke_frame(points=[[1, 2, 3]]), "points"),
        (stroke_frame(points=[["1", 2]]), "points"),
        (stroke_frame(points=[[1, 1]] * 1001), "points"),
        (stroke_frame(points=[[1, 1], [4097, 1]]), "outside the 4096x4096 canvas limit"),
        (stroke_frame(points=[[-1, 1]]), "outside"),
        (stroke_frame(done="yes"), "done"),
        (stroke_frame(extra=1), "extra"),
        ({k: v for k, v in stroke_frame().items() if k != "points"}, "points"),
    ]:
        bob.send(frame)
        error = bob.recv_type("error")
        assert words in error["detail"] and error["client_op_id"] is None, (frame, error)
    # A watcher may not draw, not even in passing.
    carol = Client(server, board.pk, token=t["carol"])
    carol.send(stroke_frame())
    assert "watch this board" in carol.recv_type("error")["detail"]
    # A cancelled stroke ends with done; the next good frame is the first alice sees.
    bob.send(stroke_frame(points=[], done=True))
    assert alice.recv_type("stroke")["done"] is True
    assert all(m["type"] != "stroke" for m in alice.skipped)
    for who in (alice, bob, carol):
        who.close()


def test_a_dropped_connection_shows_as_reconnecting_and_one_that_left_does_not(world):
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    bob = Client(server, board.pk, token=t["bob"])
    alice.recv_type("presence")
    bob.socket.socket.shutdown(socket.SHUT_RDWR)  # the connection drops: no closing handshake
    peers = alice.recv_type("presence")["peers"]
    assert peers[0] == {"username": "alice", "reconnecting": False}
    assert peers[1]["username"] == "bob" and peers[1]["reconnecting"] is True
    assert 1 <= peers[1]["forget_after"] <= 30
    bob = Client(server, board.pk, token=t["bob"])  # back: here again
    assert alice.recv_type("presence")["peers"][1] == {"username": "bob", "reconnecting": False}
    bob.socket.close(code=1000)  # left
    assert alice.recv_type("presence")["peers"] == [{"username": "alice", "reconnecting": False}]
    alice.close()


def test_a_client_in_the_heartbeat_is_pinged_and_closed_as_dropped_once_silent(world):
    """Issue 40: a connection the network lost is noticed in seconds. bob joins the heartbeat
    (a ping, answered pong), is pinged every LIVE_PING_EVERY and answers once; then he goes
    silent, and within LIVE_SILENCE (plus a ping's period) the server closes him with 4000 and
    alice sees him reconnecting. alice, who never joined, is never pinged nor closed."""
    server, board, t = world["server"], world["board"], world["tokens"]
    carol = Client(server, board.pk, token=t["carol"])
    assert {"ping_every", "silence"} <= set(carol.hello["limits"])
    carol.close()
    alice = Client(server, board.pk, token=t["alice"])
    bob = Client(server, board.pk, token=t["bob"])
    alice.recv_type("presence")
    bob.send({"type": "ping"})
    assert bob.recv_type("pong") == {"type": "pong"}
    assert bob.recv_type("ping", timeout=rules.LIVE_PING_EVERY + 2) == {"type": "ping"}
    bob.send({"type": "pong"})
    quiet_since = time.monotonic()
    peers = alice.recv_type("presence", timeout=rules.LIVE_SILENCE + rules.LIVE_PING_EVERY + 3)["peers"]
    assert time.monotonic() - quiet_since <= rules.LIVE_SILENCE + rules.LIVE_PING_EVERY + 1
    assert peers[1]["username"] == "bob" and peers[1]["reconnecting"] is True
    assert 1 <= peers[1]["forget_after"] <= rules.LIVE_RECONNECT_GRACE
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            bob.recv(timeout=5)
    assert closed.value.rcvd.code == 4000
    alice.send({"type": "cursor", "x": 1, "y": 1})  # alice, silent as long, is still here
    assert all(message["type"] != "ping" for message in alice.skipped)
    alice.close()


def test_who_may_connect_and_draw(world, client):
    server, board, t = world["server"], world["board"], world["tokens"]
    assert closed_with(server, board.pk, headers={"Authorization": "Bearer not-a-token"}) == 4401
    assert closed_with(server, board.pk + 1) == 4404
    assert closed_with(server, 99) == 4404
    watcher = Client(server, board.pk)  # anonymous, a public board
    assert watcher.hello["you"] == {"username": None, "can_edit": False}
    carol = Client(server, board.pk, token=t["carol"])
    assert carol.hello["you"]["can_edit"] is False
    carol.op("c1", {"kind": "add", "element": stroke("c")})
    assert "watch" in carol.recv_type("error")["detail"]
    # A session cookie counts only from the site's own origin.
    client.login(username="alice", password="password123")
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    host = server.url.removeprefix("http://")
    assert closed_with(server, board.pk, headers={"Cookie": cookie, "Origin": "http://evil.example"}) == 4403
    assert closed_with(server, board.pk, headers={"Cookie": cookie}) == 4403
    own = Client(server, board.pk, headers={"Cookie": cookie, "Origin": f"http://{host}"})
    assert own.hello["you"] == {"username": "alice", "can_edit": True}
    with connect(f"{server.ws}/ws/elsewhere", open_timeout=10) as socket:
        with pytest.raises(ConnectionClosed):
            socket.recv(timeout=10)
        assert socket.close_code == 4404
    for c in (watcher, carol, own):
        c.close()


def test_a_removed_editor_can_no_longer_draw_and_a_deleted_board_closes(world, run):
    server, board, t = world["server"], world["board"], world["tokens"]
    bob = Client(server, board.pk, token=t["bob"])
    run(editor_services.editor_remove, board=board, user=board.editor_rows.get().user)
    for attempt in range(50):  # the notice reaches bob's connection through the Channels layer
        cid = f"b{attempt}"
        bob.op(cid, {"kind": "add", "element": stroke(cid)})
        answer = next(m for m in iter(bob.recv, None) if m["type"] in ("op", "error") and m["client_op_id"] == cid)
        if answer["type"] == "error":
            break
        time.sleep(0.2)
    assert answer["type"] == "error" and "watch" in answer["detail"]
    run(board_services.board_delete, board=Board.objects.get(pk=board.pk))
    with pytest.raises(ConnectionClosed):
        while True:
            bob.recv(timeout=10)
    assert bob.socket.close_code == 4404


def test_replay_since_gives_exactly_the_missed_ops(world):
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    start = alice.hello["seq"]
    for i in range(5):
        alice.op(f"a{i}", {"kind": "add", "element": stroke(f"s{i}", x=10 + i)})
    last = [alice.recv_type("op") for _ in range(5)][-1]["seq"]
    bob = Client(server, board.pk, token=t["bob"], since=start + 2)
    assert "doc" not in bob.hello and bob.hello["seq"] == last
    assert [m["client_op_id"] for m in bob.hello["replay"]] == ["a2", "a3", "a4"]
    fresh = Client(server, board.pk, token=t["bob"], since=last)
    assert fresh.hello["replay"] == [] and fresh.hello["seq"] == last
    for c in (alice, bob, fresh):
        c.close()


def test_compaction_puts_the_ops_in_the_rest_doc_and_g(world, api):
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    alice.op("a", {"kind": "add", "element": stroke("s")})
    seq = alice.recv_type("op")["seq"]
    assert compaction.board_compact(board.pk) == seq
    doc = api.get(f"/api/v1/boards/{board.pk}").json()["doc"]
    assert doc == {**DOC, "elements": DOC["elements"] + [stroke("s")]}
    assert Board.objects.get(pk=board.pk).live_seq == seq
    assert compaction.board_compact(board.pk) is None  # nothing new
    alice.close()


def test_a_compaction_run_spends_its_budget_on_the_longest_waiting_and_leaves_the_rest_queued(world, run):
    """Beat's run (compact_due) stops starting boards once its budget is spent, so a hundred
    big boards drawn at once take a bounded share of a worker: the longest waiting goes first,
    the others keep their place and the next runs write them."""
    server, t = world["server"], world["tokens"]
    alice_user = User.objects.get(username="alice")
    boards = [world["board"]] + [
        run(board_services.board_create, author=alice_user, title=f"B{n}", kind="sketch", tags=[], doc=DOC)
        for n in range(2)
    ]
    seqs, open_ = [], []  # kept open: a last editor leaving would have a worker compact the board
    for n, board in enumerate(boards):
        alice = Client(server, board.pk, token=t["alice"])
        alice.op(f"s{n}", {"kind": "add", "element": stroke(f"s{n}")})
        seqs.append(alice.recv_type("op")["seq"])
        open_.append(alice)
    # The queue's order, oldest first: the last board, then the first, then the second.
    dirty = {keys.live_dirty_member(alice_user.pk, board.pk): when for board, when in zip(boards, (20, 30, 10))}
    get_redis().zadd(keys.live_dirty(), dirty)
    assert compaction.compact_due(older_than=40, budget=0) == 1  # the first board is always started
    assert [Board.objects.get(pk=board.pk).live_seq for board in boards] == [0, 0, seqs[2]]
    assert compaction.compact_due(older_than=40, budget=0) == 1
    assert [Board.objects.get(pk=board.pk).live_seq for board in boards] == [seqs[0], 0, seqs[2]]
    assert compaction.compact_due(older_than=40, budget=60) == 1
    assert [Board.objects.get(pk=board.pk).live_seq for board in boards] == seqs
    assert get_redis().zcard(keys.live_dirty()) == 0
    for alice in open_:
        alice.close()


def test_an_element_past_the_edge_grows_the_board_for_everyone_and_in_the_rest_doc(world, api):
    """The canvas grows with its content (docs/api.md): an op may place an element up to
    MAX_CANVAS; the live head grows to hold it, never shrinks, and compaction writes the size."""
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    far = {"type": "arrow", "color": "#000000", "width": 2, "points": [[10, 10], [900.5, 700]], "id": "far"}
    note = {"type": "sticky", "color": "#000000", "fill": "#fff3bf", "size": 16, "x": 1000, "y": 20}
    note = {**note, "w": 200, "h": 100, "text": "past the edge", "rotation": 10, "id": "n"}
    alice.op("a", {"kind": "add", "element": far})
    alice.op("b", {"kind": "add", "element": note})
    alice.op("c", {"kind": "remove", "id": "far"})
    seq = [alice.recv_type("op")["seq"] for _ in range(3)][-1]

    # The note, turned 10 degrees, reaches past its unturned box (x + w = 1200): the board holds
    # its turned corners (issue 40), so an export at its size holds it whole.
    right = turned_box(note)[2]
    assert 1200 < right < 1210
    bob = Client(server, board.pk, token=t["bob"])
    assert (bob.hello["doc"]["width"], bob.hello["doc"]["height"]) == (right, 700)
    assert compaction.board_compact(board.pk) == seq
    doc = api.get(f"/api/v1/boards/{board.pk}").json()["doc"]
    assert (doc["width"], doc["height"]) == (right, 700)
    assert doc["elements"] == DOC["elements"] + [note]
    found = api.get("/api/v1/search", q="edge", type="boards").json()["items"]  # the note's text, compacted
    assert [item["id"] for item in found] == [board.pk]
    alice.close()
    bob.close()


def test_a_board_op_reaches_everyone_next_in_seq_is_replayed_and_compacted(world, api):
    """Background and size are ops like any other: the next seq, to everyone, in a ?since=
    replay and a fresh hello, and in the REST doc after compaction (the elements untouched)."""
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    bob = Client(server, board.pk, token=t["bob"])
    seq0 = bob.hello["seq"]
    change = {"kind": "board", "background": "#1A2b3c", "width": 1000, "height": 250.5}
    bob.op("b1", change)
    for who in (alice, bob):
        got = who.recv_type("op")
        assert got == {"type": "op", "seq": seq0 + 1, "by": "bob", "client_op_id": "b1", "op": change}
    bob.op("b2", {"kind": "board", "width": 640})  # one field alone leaves the others as they are
    assert alice.recv_type("op")["seq"] == seq0 + 2
    late = Client(server, board.pk, token=t["carol"], since=seq0)
    assert [m["op"] for m in late.hello["replay"]] == [change, {"kind": "board", "width": 640}]
    fresh = Client(server, board.pk, token=t["carol"])
    head = {"width": 640, "height": 250.5, "background": "#1A2b3c"}
    assert fresh.hello["doc"] == {**DOC, **head} and fresh.hello["seq"] == seq0 + 2
    assert compaction.board_compact(board.pk) == seq0 + 2
    assert api.get(f"/api/v1/boards/{board.pk}").json()["doc"] == {**DOC, **head}
    for who in (alice, bob, late, fresh):
        who.close()


def test_the_board_shrinks_to_what_is_drawn_and_no_further(world, api):
    """An explicit size may shrink the board, down to the right and bottom end of its elements
    (the REST doc's rule: every element lies on the canvas), whoever drew them and whenever;
    below that the op is refused with the size the drawing needs, and nothing changes."""
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    bob = Client(server, board.pk, token=t["bob"])
    far = {"type": "arrow", "color": "#000000", "width": 2, "points": [[10, 10], [900.5, 700]], "id": "far"}
    alice.op("a1", {"kind": "add", "element": far})
    seq = bob.recv_type("op")["seq"]
    alice.recv_type("op")
    bob.op("b1", {"kind": "board", "width": 900, "background": "#000000"})
    error = bob.recv_type("error")
    assert error["client_op_id"] == "b1" and "reaches 900.5 x 700" in error["detail"], error
    bob.op("b2", {"kind": "board", "height": 699.9})
    assert "cannot be smaller" in bob.recv_type("error")["detail"]
    bob.op("b3", {"kind": "board", "width": 900.5, "height": 700})  # exactly what it needs
    assert alice.recv_type("op")["seq"] == seq + 1  # the refused ones were never seen
    alice.op("a2", {"kind": "remove", "id": "far"})
    assert bob.recv_type("op")["client_op_id"] == "b3" and bob.recv_type("op")["client_op_id"] == "a2"
    bob.op("b4", {"kind": "board", "width": 60, "height": 50})  # the rectangle reaches (60, 50)
    assert [alice.recv_type("op")["client_op_id"] for _ in range(2)] == ["a2", "b4"]
    bob.op("b5", {"kind": "board", "width": 59})
    assert "reaches 60 x 50" in bob.recv_type("error")["detail"]
    alice.op("a3", {"kind": "update", "element": {**DOC["elements"][0], "x": 5}})  # now it reaches 55
    assert [bob.recv_type("op")["client_op_id"] for _ in range(2)] == ["b4", "a3"]
    bob.op("b6", {"kind": "board", "width": 55})
    assert [alice.recv_type("op")["client_op_id"] for _ in range(2)] == ["a3", "b6"]
    compaction.board_compact(board.pk)
    doc = api.get(f"/api/v1/boards/{board.pk}").json()["doc"]
    assert (doc["width"], doc["height"], doc["background"]) == (55, 50, "#ffffff")
    alice.close()
    bob.close()


def test_a_board_live_before_extents_were_kept_gets_them_on_its_first_resize(world):
    """COMPAT: a live state loaded by the release before 2026-11-26 keeps no element ends
    (lx:, ly:); the first resize reads them from its doc, and the rule holds as for any board."""
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    alice.op("a1", {"kind": "add", "element": stroke("s1", x=300)})  # reaches (305, 20)
    alice.recv_type("op")
    args = (board.author_id, board.pk)
    get_redis().delete(keys.live_right(*args), keys.live_bottom(*args))
    alice.op("a2", {"kind": "board", "width": 200})
    assert "reaches 305 x 50" in alice.recv_type("error")["detail"]
    alice.op("a3", {"kind": "board", "width": 305, "height": 50})
    assert alice.recv_type("op")["client_op_id"] == "a3"
    assert get_redis().zrange(keys.live_right(*args), 0, -1, withscores=True) == [("r1", 60), ("s1", 305)]
    alice.close()


def test_bad_board_ops_get_errors_and_change_nothing(world):
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    bob = Client(server, board.pk, token=t["bob"])
    for change, words in [
        ({}, "at least one of background, width, height and title"),
        ({"width": 0}, "width should be greater than or equal to 1"),
        ({"height": rules.MAX_CANVAS + 1}, f"less than or equal to {rules.MAX_CANVAS}"),
        ({"width": "800"}, "width must be a number"),
        ({"width": True}, "width must be a number"),
        ({"width": None}, "width must be a number"),
        ({"background": "red"}, "background must be a color like #1a2b3c"),
        ({"background": "#12345"}, "background must be a color"),
        ({"title": "   "}, "a title needs 1 to 120 characters"),
        ({"title": "x" * (rules.MAX_TITLE + 1)}, "a title needs 1 to 120 characters"),
        ({"title": "a\x00b"}, "NUL"),
        ({"title": 5}, "title must be a string"),
        ({"zoom": 2}, "zoom is not a field this accepts"),
        ({"background": "#000000", "elements": []}, "elements is not a field"),
    ]:
        alice.op("bad", {"kind": "board", **change})
        error = alice.recv_type("error")
        assert error["client_op_id"] == "bad" and words in error["detail"], (change, error)
    alice.op("ok", {"kind": "board", "background": "#eeeeee"})
    assert bob.recv_type("op")["client_op_id"] == "ok"  # bob saw only the accepted op
    carol = Client(server, board.pk, token=t["carol"])  # a watcher changes nothing either
    carol.op("c", {"kind": "board", "background": "#000000"})
    assert "watch" in carol.recv_type("error")["detail"]
    for who in (alice, bob, carol):
        who.close()


def test_a_title_op_from_the_author_is_the_boards_title_everywhere(world, api):
    """The author's title op goes through the board service (PostgreSQL, G, search) and reaches
    everyone as the next op, trimmed as stored; a hello says the title as of its seq."""
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    bob = Client(server, board.pk, token=t["bob"])
    assert bob.hello["title"] == "Ours"
    seq0 = bob.hello["seq"]
    alice.op("t1", {"kind": "board", "title": "  Harbour at dawn ", "background": "#dde7f0"})
    op = {"kind": "board", "title": "Harbour at dawn", "background": "#dde7f0"}
    for who in (alice, bob):
        assert who.recv_type("op") == {"type": "op", "seq": seq0 + 1, "by": "alice", "client_op_id": "t1", "op": op}
    assert api.get(f"/api/v1/boards/{board.pk}").json()["title"] == "Harbour at dawn"
    assert Board.objects.get(pk=board.pk).title == "Harbour at dawn"
    [summary] = api.get("/api/v1/users/alice/boards").json()["items"]  # hydrated from G
    assert summary["title"] == "Harbour at dawn"
    found = api.get("/api/v1/search", q="harbour", type="boards").json()["items"]
    assert [item["id"] for item in found] == [board.pk]
    fresh = Client(server, board.pk, token=t["carol"])
    assert fresh.hello["title"] == "Harbour at dawn" and fresh.hello["doc"]["background"] == "#dde7f0"
    for who in (alice, bob, fresh):
        who.close()


def test_a_title_op_from_an_editor_is_refused_whole_and_changes_nothing(world, api):
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    bob = Client(server, board.pk, token=t["bob"])
    seq0 = alice.hello["seq"]
    bob.op("t", {"kind": "board", "title": "Mine now", "background": "#000000"})
    error = bob.recv_type("error")
    assert error["client_op_id"] == "t" and "Only the board's author may change its title" in error["detail"]
    bob.op("after", {"kind": "add", "element": stroke("after")})
    got = alice.recv_type("op")
    assert (got["seq"], got["client_op_id"]) == (seq0 + 1, "after")  # the refused op took no seq
    body = api.get(f"/api/v1/boards/{board.pk}").json()
    assert body["title"] == "Ours"
    compaction.board_compact(board.pk)
    assert api.get(f"/api/v1/boards/{board.pk}").json()["doc"]["background"] == "#ffffff"
    alice.close()
    bob.close()


def test_a_title_changed_through_the_api_reaches_everyone_drawing(world, api):
    server, board, t = world["server"], world["board"], world["tokens"]
    bob = Client(server, board.pk, token=t["bob"])
    alice_api = api.__class__(api.client.__class__(), t["alice"])
    assert alice_api.patch(f"/api/v1/boards/{board.pk}", {"title": "Renamed", "tags": ["x"]}).status_code == 200
    got = bob.recv_type("op")
    assert got == {
        "type": "op",
        "seq": bob.hello["seq"] + 1,
        "by": "alice",
        "client_op_id": "",
        "op": {"kind": "board", "title": "Renamed"},
    }
    # Saving the same title again tells no one anything.
    assert alice_api.patch(f"/api/v1/boards/{board.pk}", {"title": "Renamed", "tags": ["y"]}).status_code == 200
    bob.op("b", {"kind": "add", "element": stroke("b")})
    assert bob.recv_type("op")["seq"] == got["seq"] + 1
    bob.close()


def test_a_rest_edit_of_the_doc_reaches_everyone_drawing(world, api):
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    new_doc = {**DOC, "width": 200, "elements": [stroke("only")]}
    bob_api = api.__class__(api.client.__class__(), t["bob"])
    assert bob_api.patch(f"/api/v1/boards/{board.pk}", {"doc": new_doc}).status_code == 200
    hello = alice.recv_type("hello")
    assert hello["doc"] == new_doc
    alice.op("after", {"kind": "add", "element": stroke("x", x=150)})
    assert alice.recv_type("op")["seq"] == hello["seq"] + 1
    alice.close()


def test_killing_the_server_loses_no_acknowledged_op(world, api):
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    added = []
    for i in range(10):
        alice.op(f"k{i}", {"kind": "add", "element": stroke(f"k{i}", x=i)})
        added.append(stroke(f"k{i}", x=i))
    acked = [alice.recv_type("op")["seq"] for _ in range(10)]
    server.restart()  # SIGKILL of every server process, then a new one
    with pytest.raises(ConnectionClosed):
        alice.recv(timeout=10)
    again = Client(server, board.pk, token=t["alice"], since=acked[0] - 1)
    assert [m["client_op_id"] for m in again.hello["replay"]] == [f"k{i}" for i in range(10)]
    compaction.board_compact(board.pk)
    doc = api.get(f"/api/v1/boards/{board.pk}").json()["doc"]
    assert doc["elements"] == DOC["elements"] + added
    again.close()


def test_a_flood_gets_an_error_then_a_close_and_others_carry_on(world):
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    bob = Client(server, board.pk, token=t["bob"])
    try:
        for i in range(400):
            bob.send({"type": "dance", "n": i})
    except ConnectionClosed:  # on a busy machine the close can come before the last is sent
        pass
    errors = []
    with pytest.raises(ConnectionClosed):
        while True:
            message = bob.recv(timeout=10)
            errors.append(message["detail"])
    assert bob.socket.close_code == 4429
    assert any("Too many" in e for e in errors)
    alice.op("still", {"kind": "add", "element": stroke("still")})
    assert alice.recv_type("op")["client_op_id"] == "still"
    alice.close()


@pytest.mark.parametrize("size", [rules.LIVE_MAX_FRAME + 1, 4 * 1024 * 1024 + 1])
def test_an_oversized_frame_closes_with_1009(world, size):
    """A text frame past rules.LIVE_MAX_FRAME gets close 1009, whatever its size: past the live server's
    own frame limit too, where the server must read and drop the rest of the frame before it
    closes, or the client's unread close frame is lost to a TCP reset."""
    server, board, t = world["server"], world["board"], world["tokens"]
    bob = Client(server, board.pk, token=t["bob"])
    try:
        bob.send("x" * size)
    except ConnectionClosed:  # the server may close before the client has sent it all
        pass
    with pytest.raises(ConnectionClosed):
        while True:
            bob.recv(timeout=10)
    assert bob.socket.close_code == 1009


def test_an_invite_and_a_change_while_away_are_notified(world, run):
    """Inviting someone tells them; a compaction of ops drawn by bob tells the board's people
    who neither drew nor were connected (alice, the author), and not bob."""
    server, board, t = world["server"], world["board"], world["tokens"]
    invite = Notification.objects.get(recipient__username="bob", kind=Notification.Kind.INVITE)
    assert invite.board_id == board.pk and invite.actor_count == 1
    bob = Client(server, board.pk, token=t["bob"])
    bob.op("b", {"kind": "add", "element": stroke("from-bob")})
    bob.recv_type("op")
    bob.close()
    compaction.board_compact(board.pk)  # no on-commit work run, no task: the notice is written with the doc
    changed = Notification.objects.filter(kind=Notification.Kind.BOARD_CHANGED)
    assert [(n.recipient.username, n.board_id) for n in changed] == [("alice", board.pk)]


def big_path(element_id: str, variant: int, points: int = 6_000) -> dict:
    """A path of ``points`` points, about 100 KB of JSON: a few of these fill any buffer."""
    return {
        "type": "path",
        "color": "#112233",
        "width": 3,
        "id": element_id,
        "points": [[1000.5 + (i % 97) + variant / 10, 1000.25 + i % 89] for i in range(points)],
    }


def test_a_client_that_does_not_read_is_closed_and_nobody_waits_for_it(world):
    """bob opens the board and then reads nothing (a raw socket with a tiny receive buffer)
    while alice sends ~25 MB of updates: bob is closed once his outbox is full and his connection
    cut, alice's acks and carol's ops all arrive in order, and bob, back with ?since=, reads
    what he missed from the log."""
    server, board, t = world["server"], world["board"], world["tokens"]
    editor_services.editor_invite(board=board, user=User.objects.get(username="carol"))
    host, port = server.url.split("//")[1].split(":")
    bob = socket.socket()
    bob.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window
    bob.connect((host, int(port)))
    bob.sendall(
        (
            f"GET /ws/boards/{board.pk} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            f"Authorization: Bearer {t['bob']}\r\n\r\n"
        ).encode()
    )
    assert bob.recv(12) == b"HTTP/1.1 101"  # upgraded; from here on bob reads nothing
    alice = Client(server, board.pk, token=t["alice"])
    carol = Client(server, board.pk, token=t["carol"])
    start = carol.hello["seq"]
    updates = 240
    got: dict[str, list] = {"alice": [], "carol": [], "carol-peers": []}

    def read(who, name):
        try:
            while len(got[name]) < updates + 1:
                message = who.recv(timeout=60)
                if message["type"] == "op":
                    got[name].append((message["seq"], message["client_op_id"]))
                elif message["type"] == "presence" and name == "carol":
                    got["carol-peers"].append([p["username"] for p in message["peers"]])
        except (TimeoutError, ConnectionClosed):
            pass

    readers = [threading.Thread(target=read, args=(who, name)) for who, name in ((alice, "alice"), (carol, "carol"))]
    for reader in readers:
        reader.start()
    alice.op("big", {"kind": "add", "element": big_path("big", 0)})
    for i in range(1, updates + 1):
        alice.op(f"u{i}", {"kind": "update", "element": big_path("big", i)})
        time.sleep(1 / (rules.LIVE_OPS_PER_SECOND * 0.8))  # within the sender's own rate
    for reader in readers:
        reader.join(timeout=120)
    expected = [(start + 1 + i, cid) for i, cid in enumerate(["big", *(f"u{i}" for i in range(1, updates + 1))])]
    assert got["alice"] == expected  # every ack, in order: the slow reader held up no one
    assert got["carol"] == expected
    peers = got["carol-peers"][-1] if got["carol-peers"] else ["bob"]
    while "bob" in peers:  # bob is cut (by nginx's send_timeout, once his outbox was dropped)
        peers = [p["username"] for p in carol.recv_type("presence", timeout=4 * rules.LIVE_SEND_TIMEOUT)["peers"]]
    bob.settimeout(30)
    received = 0
    try:
        while chunk := bob.recv(1 << 20):  # what was under way to him, then the end
            received += len(chunk)
    except ConnectionResetError:
        pass
    assert received < 20 * 2**20  # far less than the 25 MB sent: the rest never queued for him
    bob.close()
    since = expected[-21][0]  # as if his last op were 20 from the end: the log has the rest
    back = Client(server, board.pk, token=t["bob"], since=since, max_size=None)
    assert [(m["seq"], m["client_op_id"]) for m in back.hello["replay"]] == expected[-20:]
    for who in (alice, carol, back):
        who.close()


def test_cursor_moves_are_coalesced_to_the_latest_at_the_rules_rate(world):
    """alice moves her cursor 300 times as fast as she can: bob gets at most
    LIVE_CURSORS_PER_SECOND a second (and one more), the last one is her last position, and an
    op sent in the middle of the storm reaches him."""
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    bob = Client(server, board.pk, token=t["bob"])
    began = time.monotonic()
    for i in range(300):
        alice.send({"type": "cursor", "x": i, "y": 7})
        if i == 150:
            alice.op("mid", {"kind": "add", "element": stroke("mid")})
    cursors, ops = [], []
    while not cursors or cursors[-1] != (299, 7):
        message = bob.recv(timeout=10)
        if message["type"] == "cursor":
            cursors.append((message["x"], message["y"]))
        elif message["type"] == "op":
            ops.append(message["client_op_id"])
    elapsed = time.monotonic() - began
    assert len(cursors) <= rules.LIVE_CURSORS_PER_SECOND * elapsed + 2, (len(cursors), elapsed)
    assert len(cursors) < 300 and [x for x, _ in cursors] == sorted(x for x, _ in cursors)
    if not ops:
        ops.append(bob.recv_type("op")["client_op_id"])
    assert ops == ["mid"]
    alice.close()
    bob.close()


def test_hello_is_the_first_frame_of_every_socket_however_busy_the_board(world):
    """Sixty sockets open one board at once while alice moves her cursor and draws a stroke
    without pause: each joiner's presence and alice's frames reach the room while the others'
    hellos are still being read, and yet every socket's first frame is its hello (API.md)."""
    server, board, t = world["server"], world["board"], world["tokens"]
    alice = Client(server, board.pk, token=t["alice"])
    busy = threading.Event()

    def draw():
        n = 0
        while not busy.is_set():
            n += 1
            alice.send({"type": "cursor", "x": n % 300, "y": 7})
            alice.send({"type": "stroke", "id": "live", "color": "#112233", "width": 3, "points": [[n % 300, 9]]})
            time.sleep(0.002)

    firsts: list[str] = []
    opened: list = []

    def join():
        with connect(f"{server.ws}/ws/boards/{board.pk}", open_timeout=30) as joiner:
            firsts.append(json.loads(joiner.recv(timeout=30))["type"])
            opened.append(joiner)
            time.sleep(1)  # stay while the others join: their presence comes to this one

    drawer = threading.Thread(target=draw)
    drawer.start()
    joiners = [threading.Thread(target=join) for _ in range(60)]
    for joiner in joiners:
        joiner.start()
    for joiner in joiners:
        joiner.join(timeout=60)
    busy.set()
    drawer.join()
    alice.close()
    assert len(firsts) == 60
    assert firsts == ["hello"] * 60
