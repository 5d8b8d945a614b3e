"""Shared boards, live, in real browsers (Playwright, Chromium) against a real ASGI server
process (uvicorn, as `make run` serves the site): two people draw on one board at once and each
sees the other's strokes; a connection cut and restored loses nothing drawn meanwhile; undo is
each person's own; someone who may only watch sees the strokes on the board's page."""

import json

import pytest
from django.db import transaction

from feeds.live import compaction
from feeds.models import Board
from feeds.services import boards as board_services, editors as editor_services
from social import services as people_services
from ugcsite.testing import wait_for
from ugcsite.tests.support import (
    PASSWORD,
    PHONE,
    Person,
    canvas_point,
    drag,
    element_count,
    live_ready,
    log_in,
    open_editor,
    touch,
)

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.usefixtures("passwords_the_server_reads")]

DOC = {
    "width": 800,
    "height": 600,
    "background": "#ffffff",
    "elements": [
        {"type": "rect", "color": "#1d2330", "width": 3, "x": 100, "y": 100, "w": 200, "h": 120, "fill": None}
    ],
}


@pytest.fixture
def people(live_people):
    return live_people


def elements_seen(person: Person) -> int:
    return element_count(person.page)


@pytest.fixture
def board(asgi_server):
    alice = people_services.user_create(username="alice", password=PASSWORD)
    bob = people_services.user_create(username="bob", password=PASSWORD)
    people_services.user_create(username="carol", password=PASSWORD)
    with transaction.atomic():
        made = board_services.board_create(
            author=alice, title="Together", kind="sketch", tags=[], doc=json.loads(json.dumps(DOC))
        )
    editor_services.editor_invite(board=made, user=bob)
    return made


def rest_doc(board_id: int) -> dict:
    return Board.objects.get(pk=board_id).doc


def test_two_people_draw_at_once_and_each_sees_the_other(people, board, asgi_server):
    alice, bob = people("alice"), people("bob")
    log_in(alice, "alice", f"/b/{board.pk}/edit")
    log_in(bob, "bob", f"/b/{board.pk}/edit")
    for person in (alice, bob):
        live_ready(person)
    alice.page.wait_for_function("() => document.getElementById('live-peers').textContent.includes('bob')")
    assert "alice" in bob.page.inner_text("#live-peers")

    drag(alice.page, [(0.1, 0.8), (0.3, 0.85), (0.5, 0.8)])
    drag(bob.page, [(0.6, 0.1), (0.8, 0.2)])
    for person in (alice, bob):
        wait_for(lambda person=person: elements_seen(person) == 3, what=f"{person.name} to see both strokes")
    alice.shot("both-strokes")
    bob.shot("both-strokes")

    # Undo is each person's own: bob's undo takes his stroke, never alice's.
    bob.page.keyboard.press("Control+z")
    for person in (alice, bob):
        wait_for(lambda person=person: elements_seen(person) == 2, what=f"{person.name} to see bob's undo")
    assert bob.page.locator("[data-action=undo]").is_disabled()

    # The socket is cut; bob keeps drawing; on reconnect nothing is lost.
    bob.page.evaluate("() => window.ugcsiteLive.boards[0].hold()")
    bob.page.wait_for_selector("#live-status[data-state=reconnecting]")
    drag(bob.page, [(0.2, 0.2), (0.4, 0.3)])
    drag(bob.page, [(0.2, 0.4), (0.4, 0.5)])
    drag(alice.page, [(0.7, 0.7), (0.9, 0.9)])
    assert elements_seen(bob) == 4  # his own two, offline, on top of what he had
    bob.shot("offline")
    bob.page.evaluate("() => window.ugcsiteLive.boards[0].resume()")
    for person in (alice, bob):
        wait_for(
            lambda person=person: elements_seen(person) == 5,
            what=f"{person.name} to see everything after the reconnect",
        )
    alice.shot("after-reconnect")

    # Every accepted op reaches the REST doc (compaction), and both pages agree with it.
    compaction.board_compact(board.pk)
    ids = [e["id"] for e in rest_doc(board.pk)["elements"]]
    for person in (alice, bob):
        shown = person.page.evaluate("() => window.ugcsiteLive.boards[0].view().elements.map(e => e.id)")
        assert shown == ids
        person.check_clean()


def test_a_watcher_sees_strokes_on_the_board_page_but_cannot_draw(people, board):
    alice, carol = people("alice"), people("carol")
    log_in(alice, "alice", f"/b/{board.pk}/edit")
    live_ready(alice)
    log_in(carol, "carol", f"/b/{board.pk}")
    carol.page.wait_for_selector("#live-view:not([hidden])")
    assert carol.page.evaluate("() => window.ugcsiteLive.boards[0].you.can_edit") is False
    assert carol.page.goto(f"/b/{board.pk}/edit").status == 403
    carol.page.go_back()
    carol.page.wait_for_selector("#live-view:not([hidden])")
    drag(alice.page, [(0.1, 0.1), (0.5, 0.5)])
    carol.page.wait_for_selector("#live-view[data-elements='2']")
    carol.shot("watching")
    # Even a hand-made op from the watcher's page is refused, and nothing changes.
    carol.page.evaluate("""() => window.ugcsiteLive.boards[0].send({kind: "remove", id: "anything"})""")
    carol.page.wait_for_function("() => window.ugcsiteLive.boards[0].pending.length === 0")
    assert elements_seen(alice) == 2
    alice.check_clean()


def ink_at(page, fx: float, fy: float) -> bool:
    """Whether the editor's canvas shows something dark at the fractions (fx, fy) of its box (a
    3x3 pixel patch, read back from the canvas itself)."""
    return page.evaluate(
        """([fx, fy]) => {
        const canvas = document.getElementById("board-canvas");
        const x = Math.round(fx * canvas.width), y = Math.round(fy * canvas.height);
        const data = canvas.getContext("2d").getImageData(x - 1, y - 1, 3, 3).data;
        for (let i = 0; i < data.length; i += 4) if (data[i] + data[i + 1] + data[i + 2] < 200) return true;
        return false;
    }""",
        [fx, fy],
    )


def strokes_under_way(page) -> list[dict]:
    return page.evaluate("() => Object.values(window.ugcsiteLive.boards[0].strokes)")


def test_a_stroke_is_seen_by_the_other_before_the_pen_lifts_and_presence_says_who_is_reconnecting(people, board):
    alice, bob = people("alice"), people("bob")
    log_in(alice, "alice", f"/b/{board.pk}/edit")
    log_in(bob, "bob", f"/b/{board.pk}/edit")
    for person in (alice, bob):
        live_ready(person)
    alice.page.wait_for_function("() => document.getElementById('live-peers').textContent.includes('bob')")
    assert not ink_at(alice.page, 0.5, 0.85)

    # Bob presses and moves, and holds the mouse down: alice sees the stroke as it is.
    page = bob.page
    page.mouse.move(*canvas_point(page, 0.1, 0.85))
    page.mouse.down()
    page.mouse.move(*canvas_point(page, 0.5, 0.85), steps=8)
    alice.page.wait_for_function(
        "() => Object.values(window.ugcsiteLive.boards[0].strokes).some(s => s.points.length >= 2)"
    )
    [under_way] = strokes_under_way(alice.page)
    assert under_way["by"] == "bob"
    wait_for(lambda: ink_at(alice.page, 0.3, 0.85), what="alice's canvas to show bob's stroke under way")
    assert elements_seen(alice) == 1  # not an op yet: nothing is on the board
    page.mouse.move(*canvas_point(page, 0.9, 0.85), steps=8)
    wait_for(lambda: ink_at(alice.page, 0.7, 0.85), what="alice to see the stroke grow")
    alice.shot("stroke-under-way")
    page.mouse.up()
    # The pen lifts: the op arrives and takes the place of the stroke under way.
    wait_for(lambda: elements_seen(alice) == 2, what="alice to get bob's stroke as an op")
    alice.page.wait_for_function("() => Object.keys(window.ugcsiteLive.boards[0].strokes).length === 0")
    [path] = [e for e in alice.page.evaluate("() => window.ugcsiteEditor.doc().elements") if e["type"] == "path"]
    assert path["id"] == under_way["id"]
    assert ink_at(alice.page, 0.7, 0.85)

    # Bob's connection drops: alice sees him reconnecting; bob's page says it is reconnecting
    # and no longer shows alice as here.
    bob.page.evaluate("() => window.ugcsiteLive.boards[0].hold()")
    alice.page.wait_for_function(
        "() => document.getElementById('live-peers').textContent.includes('bob (reconnecting…)')"
    )
    bob.page.wait_for_selector("#live-status[data-state=reconnecting]")
    assert "alice" not in bob.page.inner_text("#live-peers")
    assert "Reconnecting" in bob.page.inner_text("#live-status")
    alice.shot("bob-reconnecting")
    bob.page.evaluate("() => window.ugcsiteLive.boards[0].resume()")
    live_ready(bob)
    alice.page.wait_for_function(
        "() => { const t = document.getElementById('live-peers').textContent;"
        " return t.includes('bob') && !t.includes('reconnecting'); }"
    )
    bob.page.wait_for_function("() => document.getElementById('live-peers').textContent.includes('alice')")
    for person in (alice, bob):
        person.check_clean()


def test_a_finger_on_a_phone_is_seen_on_a_desktop_before_it_lifts(people, board):
    alice, bob = people("alice"), people("bob", **PHONE)
    log_in(alice, "alice", f"/b/{board.pk}/edit")
    log_in(bob, "bob", f"/b/{board.pk}/edit")
    for person in (alice, bob):
        live_ready(person)
    alice.page.wait_for_function("() => document.getElementById('live-peers').textContent.includes('bob')")
    page = bob.page
    cdp = page.context.new_cdp_session(page)
    start, end = canvas_point(page, 0.1, 0.85), canvas_point(page, 0.9, 0.85)
    touch(cdp, "touchStart", [start])
    for i in range(1, 11):
        touch(cdp, "touchMove", [(start[0] + (end[0] - start[0]) * i / 10, start[1])])
    # The finger is still down: alice sees the stroke, and the board holds nothing new.
    wait_for(lambda: ink_at(alice.page, 0.5, 0.85), what="alice to see bob's finger stroke under way")
    assert strokes_under_way(alice.page)[0]["by"] == "bob"
    assert elements_seen(alice) == 1
    bob.shot("finger-down")
    touch(cdp, "touchEnd", [])
    wait_for(lambda: elements_seen(alice) == 2, what="alice to get the stroke as an op")
    alice.page.wait_for_function("() => Object.keys(window.ugcsiteLive.boards[0].strokes).length === 0")
    for person in (alice, bob):
        person.check_clean()


def test_a_stroke_drawn_offline_is_sent_after_the_tab_closes_and_opens_again(people, board):
    bob = people("bob")
    log_in(bob, "bob", f"/b/{board.pk}/edit")
    live_ready(bob)
    bob.page.evaluate("() => window.ugcsiteLive.boards[0].hold()")
    bob.page.wait_for_selector("#live-status[data-state=reconnecting]")
    drag(bob.page, [(0.2, 0.8), (0.6, 0.9)])
    assert elements_seen(bob) == 2
    drawn = bob.page.evaluate("() => window.ugcsiteEditor.doc().elements.find(e => e.type === 'path')")
    bob.check_clean()
    bob.page.close()  # the tab closes with the stroke unsent
    compaction.board_compact(board.pk)
    assert [e["type"] for e in bob.context.request.get(f"/api/v1/boards/{board.pk}").json()["doc"]["elements"]] == [
        "rect"
    ]

    bob.page = bob.context.new_page()
    bob.page.goto(f"/b/{board.pk}/edit")
    live_ready(bob)
    assert elements_seen(bob) == 2  # shown at once, from the browser's keeping
    bob.page.wait_for_function("() => window.ugcsiteLive.boards[0].pending.length === 0")
    bob.shot("restored")
    compaction.board_compact(board.pk)
    elements = bob.context.request.get(f"/api/v1/boards/{board.pk}").json()["doc"]["elements"]
    assert [e["type"] for e in elements] == ["rect", "path"]
    assert elements[1]["id"] == drawn["id"] and elements[1]["points"] == drawn["points"]
    # Sent and confirmed: nothing is kept any more, so a third visit sends nothing again.
    assert bob.page.evaluate("() => Object.keys(localStorage).filter(k => k.includes('.live.'))") == []


def test_a_new_board_not_yet_published_comes_back_after_the_tab_closes(people, asgi_server):
    people_services.user_create(username="alice", password=PASSWORD)
    alice = people("alice")
    log_in(alice, "alice", "/new")
    open_editor(alice, "/new", "new")
    alice.page.fill("#title", "Kept for me")
    alice.page.fill("#tags", "kept")
    drag(alice.page, [(0.2, 0.2), (0.5, 0.4), (0.7, 0.3)])
    assert elements_seen(alice) == 1
    drawn = alice.page.evaluate("() => window.ugcsiteEditor.doc().elements[0]")
    alice.page.close()

    alice.page = alice.context.new_page()
    open_editor(alice, "/new", "restored")
    assert elements_seen(alice) == 1
    assert alice.page.input_value("#title") == "Kept for me"
    assert alice.page.input_value("#tags") == "kept"
    alice.page.click("#publish")
    alice.page.wait_for_url("**/b/*")
    board_id = int(alice.page.url.rstrip("/").rsplit("/", 1)[1])
    body = alice.context.request.get(f"/api/v1/boards/{board_id}").json()
    assert body["title"] == "Kept for me"
    assert [(e["type"], e["points"]) for e in body["doc"]["elements"]] == [("path", drawn["points"])]
    # Published: the next new board starts blank. One given up with Cancel is not kept either.
    open_editor(alice, "/new", "blank-again")
    assert elements_seen(alice) == 0 and alice.page.input_value("#title") == ""
    drag(alice.page, [(0.2, 0.2), (0.5, 0.4)])
    assert alice.page.evaluate("() => Object.keys(localStorage).filter(k => k.includes('.keep.new.')).length") == 1
    alice.page.once("dialog", lambda dialog: dialog.accept())  # "leave the page?" (a drawing not saved)
    alice.page.click("[data-discard]")
    alice.page.wait_for_url(f"{asgi_server.url}/")
    open_editor(alice, "/new", "blank-after-cancel")
    assert elements_seen(alice) == 0


def board_seen(page) -> dict:
    """What the editor shows of the board itself: its background, size and title (fields and tab)."""
    return page.evaluate(
        """() => { const doc = window.ugcsiteEditor.doc();
        return {background: doc.background, width: doc.width, height: doc.height,
                field: document.getElementById("background").value, title: document.getElementById("title").value,
                tab: document.title}; }"""
    )


def test_background_size_and_title_reach_the_others_without_a_reload(people, board):
    """alice (the author) and bob (an editor) on one board, carol watching its page: a
    background, a size and a title changed by one reach the others at once, an undo of the
    background too, the board never shrinks below what is drawn, and the REST board agrees."""
    alice, bob, carol = people("alice"), people("bob"), people("carol")
    log_in(alice, "alice", f"/b/{board.pk}/edit")
    log_in(bob, "bob", f"/b/{board.pk}/edit")
    for person in (alice, bob):
        live_ready(person)
    log_in(carol, "carol", f"/b/{board.pk}")
    carol.page.wait_for_selector("#live-view:not([hidden])")

    alice.page.fill("#background", "#1e3a5f")  # a colour picked: one change, one op
    wait_for(lambda: board_seen(bob.page)["background"] == "#1e3a5f", what="bob to see alice's background")
    assert board_seen(bob.page)["field"] == "#1e3a5f"
    assert not bob.page.evaluate("() => window.ugcsiteLive.boards[0].pending.length")

    # The author names the board: when she leaves the field, the others see the new title.
    alice.page.fill("#title", "  Harbour at dawn ")
    alice.page.keyboard.press("Tab")
    wait_for(lambda: board_seen(bob.page)["title"] == "Harbour at dawn", what="bob to see alice's title")
    assert "Harbour at dawn" in board_seen(bob.page)["tab"]
    carol.page.wait_for_function("() => document.getElementById('board-title').textContent === 'Harbour at dawn'")
    assert carol.page.title().startswith("Harbour at dawn")
    alice.shot("titled")

    # bob makes the board wider and shorter; below what is drawn it stops there, and he is told.
    bob.page.fill("#board-width", "1000")
    bob.page.keyboard.press("Tab")
    wait_for(lambda: board_seen(alice.page)["width"] == 1000, what="alice to see bob's width")
    assert alice.page.input_value("#board-width") == "1000"
    bob.page.fill("#board-height", "100")  # the rectangle reaches 220
    bob.page.keyboard.press("Tab")
    assert "cannot be smaller" in bob.page.inner_text("#editor-error")
    wait_for(lambda: board_seen(alice.page)["height"] == 220, what="alice to see the height bob could have")
    assert bob.page.input_value("#board-height") == "220"
    carol.page.wait_for_function("() => window.ugcsiteLive.boards[0].view().height === 220")
    bob.shot("resized")

    # alice undoes her background: an op as well.
    alice.page.evaluate("() => document.activeElement.blur()")  # keys in a field are the field's
    alice.page.keyboard.press("Control+z")
    wait_for(lambda: board_seen(bob.page)["background"] == "#ffffff", what="bob to see alice's undo")
    alice.page.keyboard.press("Control+Shift+z")
    wait_for(lambda: board_seen(bob.page)["background"] == "#1e3a5f", what="bob to see alice's redo")

    compaction.board_compact(board.pk)
    body = bob.context.request.get(f"/api/v1/boards/{board.pk}").json()
    assert body["title"] == "Harbour at dawn"
    assert (body["doc"]["background"], body["doc"]["width"], body["doc"]["height"]) == ("#1e3a5f", 1000, 220)
    for person in (alice, bob, carol):
        person.check_clean()


def test_an_editor_cannot_retitle_the_board_even_by_hand(people, board):
    bob = people("bob")
    log_in(bob, "bob", f"/b/{board.pk}/edit")
    live_ready(bob)
    assert bob.page.locator("#title").is_hidden()  # the author's field alone
    bob.page.evaluate("""() => window.ugcsiteLive.boards[0].send({kind: "board", title: "Mine now"})""")
    bob.page.wait_for_function("() => window.ugcsiteLive.boards[0].pending.length === 0")
    assert "Only the board's author" in bob.page.inner_text("#editor-error")
    assert Board.objects.get(pk=board.pk).title == "Together"
    bob.check_clean()
