"""Pictures placed on a live board (docs/api.md, "Pictures"), against the real ASGI server: an
`add` or `update` op with an image element is refused unless the picture is its board's author's
or an editor's (an unknown, hidden or someone else's one is an `error` with the op's id), and
once placed it moves like any box."""

import json

import pytest

from feeds.models import Image as Picture
from feeds.services import boards as board_services, editors as editor_services
from feeds.tests.support import LiveClient as Client
from social import tokens
from social.services import user_create

pytestmark = pytest.mark.live

DOC = {"width": 400, "height": 300, "background": "#ffffff", "elements": []}


def picture_of(user, image_id: str, state=Picture.State.PUBLISHED) -> str:
    """A picture's row (its file plays no part in the rule)."""
    Picture.objects.create(
        id=image_id,
        owner=user,
        file=f"images/{image_id}.png",
        content_type="image/png",
        width=10,
        height=10,
        size=1,
        state=state,
    )
    return image_id


def image(element_id: str, image_id: str, x: float = 10) -> dict:
    return {"type": "image", "id": element_id, "x": x, "y": 10, "w": 40, "h": 30, "image": image_id}


def test_a_live_board_takes_only_its_drawers_pictures(asgi_server, run):
    alice, bob, carol = (user_create(username=name, password="password123") for name in ("alice", "bob", "carol"))
    board = run(
        board_services.board_create, author=alice, title="Ours", kind="sketch", tags=[], doc=json.loads(json.dumps(DOC))
    )
    editor_services.editor_invite(board=board, user=bob)
    alices, bobs, carols = (picture_of(u, (u.username * 16)[:16]) for u in (alice, bob, carol))
    hidden = picture_of(alice, "H" * 16, state=Picture.State.HIDDEN)
    t = {u.username: tokens.token_create(user=u) for u in (alice, bob)}
    a = Client(asgi_server, board.pk, token=t["alice"])
    b = Client(asgi_server, board.pk, token=t["bob"])

    a.op("a1", {"kind": "add", "element": image("e1", alices)})
    b.op("b1", {"kind": "add", "element": image("e2", bobs, x=100)})
    assert {a.recv_type("op")["client_op_id"], a.recv_type("op")["client_op_id"]} == {"a1", "b1"}

    for cid, element, words in [
        ("a2", image("e3", carols), "may not draw on this board"),
        ("a3", image("e4", "Z" * 16), "There is no picture"),
        ("a4", image("e5", hidden), "There is no picture"),
    ]:
        a.op(cid, {"kind": "add", "element": element})
        error = a.recv_type("error")
        assert error["client_op_id"] == cid and words in error["detail"], error
    b.op("b2", {"kind": "update", "element": image("e2", carols, x=100)})  # no swapping in another's either
    error = b.recv_type("error")
    assert error["client_op_id"] == "b2" and "may not draw" in error["detail"]

    b.op("b3", {"kind": "update", "element": {**image("e1", alices), "x": 200, "w": 80, "h": 60, "rotation": 15}})
    moved = a.recv_type("op")
    assert moved["client_op_id"] == "b3" and moved["op"]["element"]["x"] == 200
    a.close()
    b.close()
