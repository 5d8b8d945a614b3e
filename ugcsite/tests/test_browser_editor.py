"""The fuller whiteboard editor (issue 16, item 5) in a real Chromium: select, move and delete
elements (through undo, the REST save and live ops), zoom and pan with strokes landing where the
pointer is, each person's pen remembered, SVG and PNG export of what the editor shows, the
shortcuts dialog, and a phone: touch drawing and a two-finger pinch at 390x844."""

import io
import re
import struct
import xml.etree.ElementTree as ET

import pytest
from django.db import transaction
from PIL import Image

from feeds.live import compaction
from feeds.models import Board
from feeds.services import boards as board_services
from social import services as people_services
from social.models import User
from ugcsite.testing import wait_for
from ugcsite.tests.support import (
    BLOCKING,
    PASSWORD,
    PHONE,
    Person,
    axe_run,
    board_for_two,
    canvas_point,
    client_of,
    drag,
    element_count,
    live_ready,
    log_in,
    log_in_when_asked,
    model,
    mouse_drag,
    open_editor,
    sign_up,
    touch,
    zoom,
)

pytestmark = [pytest.mark.browser]


def new_board_with_a_rect(people):
    """Alice, signed up, in the editor of a new board with a rectangle from (80, 60) to (240, 180)."""
    alice = people("alice")
    sign_up(alice, "alice")
    open_editor(alice, "/new", "editor")
    alice.page.click("[data-tool=rect]")
    drag(alice.page, [(0.1, 0.1), (0.3, 0.3)])
    return alice, alice.page


def test_select_move_delete_undo_and_publish(people):
    alice, page = new_board_with_a_rect(people)
    page.click("[data-tool=pen]")
    drag(page, [(0.6, 0.7), (0.8, 0.7)])
    rect, path = model(page)["elements"]
    assert (rect["x"], rect["y"], rect["w"], rect["h"]) == pytest.approx((80, 60, 160, 120), abs=0.2)

    # V, then a click on the rectangle's edge selects it; a drag moves it 200 units right, 60 down.
    page.keyboard.press("v")
    assert page.get_attribute("[data-tool=select]", "aria-pressed") == "true"
    page.mouse.click(*client_of(page, 80, 120))
    assert page.evaluate("() => window.ugcsiteEditor.selection()") == [rect["id"]]
    assert "1 selected" in page.inner_text("#editor-status")
    alice.shot("selected")
    mouse_drag(page, client_of(page, 80, 120), client_of(page, 280, 180))
    moved = model(page)["elements"][0]
    assert moved["id"] == rect["id"]
    assert (moved["x"], moved["y"]) == pytest.approx((rect["x"] + 200, rect["y"] + 60), abs=0.2)
    assert (moved["w"], moved["h"]) == (rect["w"], rect["h"])
    assert model(page)["elements"][1] == path  # the stroke stayed
    alice.shot("moved")

    # A move is one undo step, and redo brings it back.
    page.keyboard.press("Control+z")
    assert model(page)["elements"][0] == rect
    page.keyboard.press("Control+Shift+z")
    assert model(page)["elements"][0] == moved

    # A move past the right edge grows the board to hold it (it never shrinks, even on undo).
    mouse_drag(page, client_of(page, moved["x"], 180), client_of(page, 790, 180))
    far = model(page)["elements"][0]
    assert far["x"] == pytest.approx(790, abs=0.2) and model(page)["width"] == far["x"] + far["w"]
    page.keyboard.press("Control+z")
    assert model(page)["width"] == far["x"] + far["w"]

    # Clicking the stroke selects it alone; Delete removes it; undo and redo.
    page.mouse.click(*client_of(page, 560, 420))
    assert page.evaluate("() => window.ugcsiteEditor.selection()") == [path["id"]]
    page.keyboard.press("Delete")
    assert [e["id"] for e in model(page)["elements"]] == [rect["id"]]
    assert page.locator("[data-action=delete]").is_disabled()
    page.keyboard.press("Control+z")
    assert len(model(page)["elements"]) == 2
    page.keyboard.press("Control+y")
    assert element_count(page) == 1

    # A box dragged around empty space and the rectangle selects it; Escape selects nothing.
    mouse_drag(page, client_of(page, 270, 110), client_of(page, 450, 250))
    assert page.evaluate("() => window.ugcsiteEditor.selection()") == [rect["id"]]
    page.keyboard.press("Escape")
    assert page.evaluate("() => window.ugcsiteEditor.selection()") == []

    # What is published is what the editor showed.
    page.fill("#title", "Moved about")
    page.click("#publish")
    page.wait_for_url(re.compile(r".*/b/\d+$"))
    board = alice.api(f"/api/v1/boards/{page.url.rsplit('/', 1)[1]}")
    assert board["doc"]["elements"] == [moved]
    alice.check_clean()


def test_copy_paste_and_duplicate_into_this_board_and_another(people):
    alice, page = new_board_with_a_rect(people)
    rect = model(page)["elements"][0]
    page.keyboard.press("v")
    page.mouse.click(*client_of(page, 80, 120))

    # Ctrl+C, Ctrl+V: a copy with its own id, 10 units right and down, selected alone.
    page.keyboard.press("Control+c")
    page.keyboard.press("Control+v")
    first, pasted = model(page)["elements"]
    assert first == rect and pasted["id"] != rect["id"]
    assert (pasted["x"], pasted["y"], pasted["w"], pasted["h"]) == (
        rect["x"] + 10,
        rect["y"] + 10,
        rect["w"],
        rect["h"],
    )
    assert page.evaluate("() => window.ugcsiteEditor.selection()") == [pasted["id"]]
    # Ctrl+D duplicates what is selected; one undo takes one copy away.
    page.keyboard.press("Control+d")
    third = model(page)["elements"][2]
    assert (third["x"], third["y"]) == (pasted["x"] + 10, pasted["y"] + 10) and third["id"] not in (
        rect["id"],
        pasted["id"],
    )
    page.keyboard.press("Control+z")
    assert [e["id"] for e in model(page)["elements"]] == [rect["id"], pasted["id"]]
    # In the corner a copy goes right and down past the edge all the same: the board grows.
    page.click("[data-tool=rect]")
    drag(page, [(0.9, 0.9), (0.999, 0.999)])
    corner = model(page)["elements"][-1]
    page.keyboard.press("v")
    page.mouse.click(*client_of(page, corner["x"], corner["y"] + corner["h"] / 2))
    assert page.evaluate("() => window.ugcsiteEditor.selection()") == [corner["id"]]
    page.keyboard.press("Control+d")
    beside = model(page)["elements"][-1]
    assert (beside["x"], beside["y"]) == (corner["x"] + 10, corner["y"] + 10)
    assert (model(page)["width"], model(page)["height"]) == (beside["x"] + beside["w"], beside["y"] + beside["h"])
    page.keyboard.press("Control+z")
    page.keyboard.press("Control+z")
    # Typing in a field keeps its own copy and paste.
    page.fill("#title", "Copied")
    page.focus("#title")
    page.keyboard.press("Control+v")
    assert len(model(page)["elements"]) == 2
    alice.shot("pasted")

    # The copy outlives the page: pasted into a new board in the same tab, then published. (The
    # unpublished board above is kept in the browser and would come back on /new: it is dropped.)
    page.evaluate(
        "() => Object.keys(localStorage).filter(k => k.startsWith('ugcsite.keep.new.')).forEach(k => localStorage.removeItem(k))"
    )
    open_editor(alice, "/new", "editor")
    page.keyboard.press("Control+v")
    (into_new,) = model(page)["elements"]
    assert (into_new["type"], into_new["x"], into_new["w"]) == ("rect", rect["x"] + 10, rect["w"])
    page.fill("#title", "Pasted")
    page.click("#publish")
    page.wait_for_url(re.compile(r".*/b/\d+$"))
    assert alice.api(f"/api/v1/boards/{page.url.rsplit('/', 1)[1]}")["doc"]["elements"] == [into_new]

    # On a board smaller than what was copied, the paste grows the board (live, through the server).
    with transaction.atomic():
        small = board_services.board_create(
            author=User.objects.get(username="alice"),
            title="Small",
            kind="sketch",
            tags=[],
            doc={"width": 100, "height": 100, "background": "#ffffff", "elements": []},
        )
    open_editor(alice, f"/b/{small.pk}/edit", "small board")
    page.keyboard.press("Control+v")
    (grown,) = model(page)["elements"]
    assert (model(page)["width"], model(page)["height"]) == (grown["x"] + grown["w"], grown["y"] + grown["h"])
    alice.check_clean()


def test_zoom_and_pan_then_draw_in_document_units(people):
    alice = people("alice")
    sign_up(alice, "alice")
    open_editor(alice, "/new", "editor")
    page = alice.page
    box = page.locator("#board-canvas").bounding_box()
    base = box["width"] / 800  # CSS pixels per document unit at 100%

    # Ctrl+wheel zooms around the pointer: the document point under it stays under it.
    middle = canvas_point(page, 0.5, 0.5)  # (400, 300) at 100%
    page.mouse.move(*middle)
    page.keyboard.down("Control")
    page.mouse.wheel(0, -100)  # one notch of a mouse wheel: 10%, not the 2.7x it once was
    page.wait_for_function("() => window.ugcsiteEditor.view.zoom > 1.05")
    assert zoom(page) == pytest.approx(1.1, abs=0.001)
    page.mouse.wheel(0, 100)  # and back
    page.wait_for_function("() => window.ugcsiteEditor.view.zoom < 1.05")
    assert zoom(page) == pytest.approx(1.0, abs=0.001)
    for notches in range(1, 6):  # five notches: 1.1 ** 5
        page.mouse.wheel(0, -100)
        page.wait_for_function(f"() => window.ugcsiteEditor.view.zoom > {1.1**notches - 0.01}")
    page.keyboard.up("Control")
    assert zoom(page) == pytest.approx(1.1**5, abs=0.01)
    scale = base * zoom(page)
    near = 1 / scale + 0.1  # one CSS pixel, in document units: the browser rounds pointer positions
    label = page.inner_text("[data-action=zoom-reset]")
    assert label == f"{round(zoom(page) * 100)}%" and label != "100%"
    mouse_drag(page, middle, (middle[0] + 120, middle[1] + 60))
    points = model(page)["elements"][0]["points"]
    assert points[0] == pytest.approx([400, 300], abs=near)
    assert points[-1] == pytest.approx([400 + 120 / scale, 300 + 60 / scale], abs=near)

    # The hand tool pans: the same place on the screen is now 100 CSS pixels further left in the drawing.
    page.keyboard.press("h")
    mouse_drag(page, middle, (middle[0] + 100, middle[1]))
    assert len(model(page)["elements"]) == 1  # panning draws nothing
    page.keyboard.press("p")
    mouse_drag(page, middle, (middle[0], middle[1] + 40))
    points = model(page)["elements"][1]["points"]
    assert points[0] == pytest.approx([400 - 100 / scale, 300], abs=near)
    assert points[-1] == pytest.approx([400 - 100 / scale, 300 + 40 / scale], abs=near)
    alice.shot("zoomed")

    # Space held down pans too; then the keys: + zooms in, - out, 0 resets.
    offset = lambda: page.evaluate("() => [window.ugcsiteEditor.view.x, window.ugcsiteEditor.view.y]")  # noqa: E731
    before = offset()
    page.keyboard.down("Space")
    mouse_drag(page, middle, (middle[0], middle[1] - 50))
    page.keyboard.up("Space")
    assert offset() == pytest.approx([before[0], before[1] - 50], abs=1)
    # So does the middle button, whatever the tool.
    page.mouse.move(*middle)
    page.mouse.down(button="middle")
    page.mouse.move(middle[0] - 30, middle[1], steps=3)
    page.mouse.up(button="middle")
    assert offset() == pytest.approx([before[0] - 30, before[1] - 50], abs=1)
    assert len(model(page)["elements"]) == 2
    before = zoom(page)
    page.keyboard.press("+")
    assert zoom(page) == pytest.approx(before * 1.25)
    page.keyboard.press("-")
    assert zoom(page) == pytest.approx(before)
    page.keyboard.press("0")
    assert page.inner_text("[data-action=zoom-reset]") == "100%"
    page.click("[data-action=zoom-out]")
    assert zoom(page) == pytest.approx(0.8)
    page.click("[data-action=zoom-reset]")
    assert zoom(page) == 1

    # The view is never part of the drawing: the publish stores strokes in document units only.
    page.fill("#title", "Zoomed in")
    page.click("#publish")
    page.wait_for_url(re.compile(r".*/b/\d+$"))
    doc = alice.api(f"/api/v1/boards/{page.url.rsplit('/', 1)[1]}")["doc"]
    assert set(doc) == {"width", "height", "background", "elements"}
    assert doc["elements"][0]["points"][0] == pytest.approx([400, 300], abs=near)
    alice.check_clean()


def test_pen_is_remembered_per_person_across_reloads(people):
    alice = people("alice")
    sign_up(alice, "alice")
    open_editor(alice, "/new", "editor")
    page = alice.page
    page.click(".swatch[data-color='#2f9e44']")
    page.eval_on_selector(
        "#stroke-width",
        """range => { range.value = "17";
        range.dispatchEvent(new Event("input", {bubbles: true})); range.dispatchEvent(new Event("change", {bubbles: true})); }""",
    )
    open_editor(alice, "/new", "editor-again")
    assert page.input_value("#color") == "#2f9e44"
    assert page.input_value("#stroke-width") == "17"
    assert page.inner_text("#stroke-width-value") == "17"
    drag(page, [(0.2, 0.2), (0.4, 0.4)])
    stroke = model(page)["elements"][0]
    assert (stroke["color"], stroke["width"]) == ("#2f9e44", 17)
    # Someone else signing in on the same browser gets their own (the defaults).
    page.goto("/logout")
    page.click("main form button[type=submit]")
    sign_up(alice, "bob")
    open_editor(alice, "/new", "bob-editor")
    assert page.input_value("#color") == "#1d2330" and page.input_value("#stroke-width") == "4"
    alice.check_clean()


def test_export_svg_and_png_of_what_the_editor_shows(people):
    alice = people("alice")
    sign_up(alice, "alice")
    open_editor(alice, "/new", "editor")
    page = alice.page
    page.fill("#background", "#fff4e6")
    page.dispatch_event("#background", "change")
    page.click("[data-tool=rect]")
    page.check("#fill-on")
    page.fill("#fill", "#3b5bdb")
    drag(page, [(0.25, 0.25), (0.5, 0.5)])  # (200, 150) to (400, 300), filled blue
    page.uncheck("#fill-on")
    page.click("[data-tool=text]")
    page.mouse.click(*canvas_point(page, 0.1, 0.9))
    text = "Tom & Jerry <script>alert('x')</script> \"quoted\""
    page.keyboard.type(text)
    page.keyboard.press("Enter")
    page.click("[data-tool=pen]")
    drag(page, [(0.7, 0.2), (0.9, 0.3)])
    page.fill("#title", "My <drawing>: one/two")
    shown = model(page)

    with page.expect_download() as info:
        page.click("[data-action=export-svg]")
    download = info.value
    assert download.suggested_filename == "My drawing one two.svg"
    svg = ET.fromstring(open(download.path(), "rb").read())
    ns = "{http://www.w3.org/2000/svg}"
    assert svg.tag == f"{ns}svg" and (svg.get("width"), svg.get("height")) == ("800", "600")
    assert svg.find(f"{ns}title").text == "My <drawing>: one/two"
    assert [child.tag.removeprefix(ns) for child in svg][1:] == ["rect", "rect", "text", "polyline"]  # background first
    assert svg.findall(f"{ns}rect")[0].get("fill") == "#fff4e6"
    rect = svg.findall(f"{ns}rect")[1]
    drawn = shown["elements"][0]
    assert [float(rect.get(k)) for k in ("x", "y", "width", "height")] == [
        drawn["x"],
        drawn["y"],
        drawn["w"],
        drawn["h"],
    ]
    assert [drawn["x"], drawn["y"], drawn["w"], drawn["h"]] == pytest.approx([200, 150, 200, 150], abs=0.2)
    assert rect.get("fill") == "#3b5bdb"
    assert svg.find(f"{ns}text").text == text
    polyline = svg.find(f"{ns}polyline").get("points").split()
    assert len(polyline) == len(shown["elements"][2]["points"])

    with page.expect_download() as info:
        page.click("[data-action=export-png]")
    download = info.value
    assert download.suggested_filename == "My drawing one two.png"
    data = open(download.path(), "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (800, 600)  # IHDR: the document's size, whatever the zoom
    image = Image.open(io.BytesIO(data)).convert("RGB")
    assert image.getpixel((20, 20)) == (0xFF, 0xF4, 0xE6)  # the background
    assert image.getpixel((300, 225)) == (0x3B, 0x5B, 0xDB)  # inside the filled rectangle
    alice.check_clean()


def test_shortcuts_help_and_keys_leave_typing_alone(people):
    alice = people("alice")
    sign_up(alice, "alice")
    open_editor(alice, "/new", "editor")
    page = alice.page
    dialog = page.locator("#shortcuts-help")
    page.keyboard.press("?")
    assert dialog.is_visible()
    assert "Undo your last change" in dialog.inner_text()
    alice.shot("help")
    # axe on the open dialog: no serious or critical violation.
    assert [v for v in axe_run(page) if v["impact"] in BLOCKING] == []
    page.keyboard.press("Escape")
    assert not dialog.is_visible()
    page.click("[data-action=help]")
    assert dialog.is_visible()
    page.click("[data-action=close-help]")
    assert not dialog.is_visible()
    assert page.evaluate("() => document.activeElement.dataset.action") == "help"  # the focus goes back

    # Keys typed into a field are text, not shortcuts.
    page.click("#title")
    page.keyboard.type("vhe?0+")
    assert page.input_value("#title") == "vhe?0+"
    assert not dialog.is_visible()
    assert page.get_attribute("[data-tool=pen]", "aria-pressed") == "true"
    page.click("h1")
    for key, name in (
        ("v", "select"),
        ("h", "hand"),
        ("t", "text"),
        ("r", "rect"),
        ("o", "ellipse"),
        ("e", "eraser"),
        ("p", "pen"),
    ):
        page.keyboard.press(key)
        assert page.get_attribute(f"[data-tool={name}]", "aria-pressed") == "true"
    alice.check_clean()


def test_on_a_phone_touch_draws_and_two_fingers_pinch(people):
    people_services.user_create(username="alice", password=PASSWORD)
    phone = people("phone", **PHONE)
    log_in_when_asked(phone, "alice", "/new")
    open_editor(phone, "/new", "editor")
    page = phone.page
    page.evaluate(
        "() => window.scrollTo(0, document.getElementById('board-canvas').getBoundingClientRect().top + window.scrollY - 20)"
    )
    phone.shot("phone-editor")
    # Nothing is wider than the phone, and every button the tool strip shows is on the screen
    # (the panels' are measured in test_browser_layout).
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    for button in page.locator(".toolbar button:visible").all():
        box = button.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, button.inner_text()
    assert page.evaluate("() => getComputedStyle(document.getElementById('board-canvas')).touchAction") == "none"

    cdp = page.context.new_cdp_session(page)
    near = 800 / page.locator("#board-canvas").bounding_box()["width"] + 0.1  # a CSS pixel in document units
    start, end = client_of(page, 100, 100), client_of(page, 300, 200)
    touch(cdp, "touchStart", [start])
    for i in range(1, 9):
        touch(cdp, "touchMove", [(start[0] + (end[0] - start[0]) * i / 8, start[1] + (end[1] - start[1]) * i / 8)])
    touch(cdp, "touchEnd", [])
    wait_for(lambda: len(model(page)["elements"]) == 1, what="the finger's stroke")
    points = model(page)["elements"][0]["points"]
    assert points[0] == pytest.approx([100, 100], abs=near) and points[-1] == pytest.approx([300, 200], abs=near)

    # Two fingers spread apart around (400, 300): the view zooms in there; nothing is drawn.
    a, b = client_of(page, 350, 300), client_of(page, 450, 300)
    touch(cdp, "touchStart", [a])
    touch(cdp, "touchStart", [a, b])
    for i in range(1, 7):
        touch(cdp, "touchMove", [(a[0] - 6 * i, a[1]), (b[0] + 6 * i, b[1])])
    touch(cdp, "touchEnd", [])
    wait_for(lambda: zoom(page) > 1.3, what="the pinch to zoom in")
    spread = (b[0] - a[0] + 72) / (b[0] - a[0])
    assert zoom(page) == pytest.approx(spread, rel=0.05)  # touch points land on whole pixels
    assert len(model(page)["elements"]) == 1  # neither finger drew
    assert page.inner_text("[data-action=zoom-reset]") == f"{round(zoom(page) * 100)}%"
    # The point between the fingers stayed between them: (400, 300) is still at the middle.
    middle = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    assert client_of(page, 400, 300) == pytest.approx(middle, abs=2)
    phone.shot("pinched")

    # Drawing after the pinch lands in document units at the new zoom.
    start, end = client_of(page, 380, 250), client_of(page, 420, 270)
    touch(cdp, "touchStart", [start])
    for i in range(1, 5):
        touch(cdp, "touchMove", [(start[0] + (end[0] - start[0]) * i / 4, start[1] + (end[1] - start[1]) * i / 4)])
    touch(cdp, "touchEnd", [])
    wait_for(lambda: len(model(page)["elements"]) == 2, what="the stroke after the pinch")
    points = model(page)["elements"][1]["points"]
    near /= zoom(page)
    assert points[0] == pytest.approx([380, 250], abs=near) and points[-1] == pytest.approx([420, 270], abs=near)
    phone.check_clean()


# --- live: a move and a delete reach the others as ops ---------------------------------------------
LIVE_DOC = {
    "width": 800,
    "height": 600,
    "background": "#ffffff",
    "elements": [
        {
            "id": "box",
            "type": "rect",
            "color": "#1d2330",
            "width": 3,
            "x": 100,
            "y": 100,
            "w": 200,
            "h": 120,
            "fill": None,
        }
    ],
}


@pytest.fixture
def live_board(asgi_server, passwords_the_server_reads):
    return board_for_two(LIVE_DOC)


@pytest.mark.live
def test_live_a_move_and_a_delete_reach_the_other_editor(browser, asgi_server, live_board, request):
    alice = Person(browser, asgi_server.url, "alice", request.node.originalname)
    bob = Person(browser, asgi_server.url, "bob", request.node.originalname)
    try:
        for person in (alice, bob):
            log_in(person, person.name, f"/b/{live_board.pk}/edit")
            live_ready(person)

        def box_seen_by(person):
            elements = person.page.evaluate("() => window.ugcsiteLive.boards[0].view().elements")
            return elements[0] if elements else None

        # Alice zooms in; her cursor still reaches bob in document units.
        alice.page.click("[data-action=zoom-in]")
        target = client_of(alice.page, 520, 410)
        near = 800 / alice.page.locator("#board-canvas").bounding_box()["width"] / zoom(alice.page) + 0.1  # a CSS pixel

        def cursor_at_bob():
            # A cursor goes out at most every 50 ms (live.js): a move sooner after another is dropped.
            alice.page.mouse.move(target[0] - 3, target[1])
            alice.page.wait_for_timeout(60)
            alice.page.mouse.move(*target)
            alice.page.wait_for_timeout(60)
            cursor = bob.page.evaluate("() => window.ugcsiteLive.boards[0].cursors.alice || null")
            return cursor and (cursor["x"], cursor["y"]) == pytest.approx((520, 410), abs=near)

        wait_for(cursor_at_bob, what="alice's cursor at bob's, in document units")

        # Alice selects the rectangle and drags it: bob sees it move (an update op), same id.
        alice.page.keyboard.press("v")
        mouse_drag(alice.page, client_of(alice.page, 100, 160), client_of(alice.page, 150, 200))
        wait_for(lambda: box_seen_by(bob)["x"] == pytest.approx(150, abs=0.2), what="bob to see the move")
        moved = box_seen_by(bob)
        assert (moved["id"], moved["y"], moved["w"]) == ("box", pytest.approx(140, abs=0.2), 200)
        bob.shot("moved")

        # Her undo moves it back, for everyone; redo moves it again.
        alice.page.keyboard.press("Control+z")
        wait_for(lambda: box_seen_by(bob) == LIVE_DOC["elements"][0], what="bob to see alice's undo")
        alice.page.keyboard.press("Control+Shift+z")
        wait_for(lambda: box_seen_by(bob) == moved, what="bob to see alice's redo")

        # Delete removes it for everyone (a remove op), and the stored doc follows.
        alice.page.keyboard.press("Delete")
        wait_for(lambda: box_seen_by(bob) is None, what="bob to see the delete")
        wait_for(
            lambda: alice.page.evaluate("() => window.ugcsiteLive.boards[0].pending.length") == 0,
            what="alice's ops confirmed",
        )
        compaction.board_compact(live_board.pk)
        assert Board.objects.get(pk=live_board.pk).doc["elements"] == []
        alice.page.keyboard.press("Control+z")
        wait_for(lambda: box_seen_by(bob) == moved, what="bob to see the delete undone")
        for person in (alice, bob):
            person.check_clean()
    finally:
        alice.context.close()
        bob.context.close()
