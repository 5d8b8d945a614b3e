"""What a browser tour of the editor found (issue 40, item 4), measured in Chromium by the boxes
the browser lays out: a sticky note's text wraps inside its box (on the canvas, in the server's
preview and in the editor's SVG export); a rotated box stays within the board in the exports;
the view follows the pen past the canvas's edge; a person gone offline is told so within seconds
while the others see them reconnecting; and two tabs of one person on one board keep their
unsent ops apart. (The controls below the fold and the phone's toolbar: test_browser_layout.)"""

import json
import re

import pytest
from django.db import transaction

from feeds import rules
from feeds.live import compaction
from feeds.models import Board
from feeds.services import boards as board_services, editors as editor_services
from feeds.validation import turned_box
from social import services as people_services
from ugcsite.testing import wait_for
from ugcsite.tests.support import (
    PASSWORD,
    Person,
    client_of,
    drag,
    element_count,
    live_ready,
    log_in,
    model,
    open_editor,
    sign_up,
)

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.usefixtures("passwords_the_server_reads")]

DESKTOP = (1280, 800)
DOC = {
    "width": 800,
    "height": 600,
    "background": "#ffffff",
    "elements": [{"type": "rect", "color": "#1d2330", "width": 3, "x": 100, "y": 100, "w": 200, "h": 120}],
}
NOTE_TEXT = "Buy milk and eggs on the way home, then call grandma about Sunday lunch"


@pytest.fixture
def people(live_people):
    return live_people


@pytest.fixture
def board(asgi_server):
    """alice's board, with bob invited to draw on it."""
    alice = people_services.user_create(username="alice", password=PASSWORD)
    bob = people_services.user_create(username="bob", password=PASSWORD)
    with transaction.atomic():
        made = board_services.board_create(
            author=alice, title="Together", kind="sketch", tags=[], doc=json.loads(json.dumps(DOC))
        )
    editor_services.editor_invite(board=made, user=bob)
    return made


def publish(person: Person, title: str) -> int:
    person.page.fill("#title", title)
    person.page.click("#publish")
    person.page.wait_for_url(re.compile(r".*/b/\d+$"))
    return int(person.page.url.rsplit("/", 1)[1])


# An SVG document (text) shown in the page, and the boxes the browser gives a sticky note's
# paper and its texts there, or a drawn shape, in the SVG's own units (getBBox, the transform
# applied: a rotated shape's corners).
MEASURE_SVG = """([svg, selector]) => {
  const holder = document.createElement("div");
  holder.id = "measured-svg";
  document.body.appendChild(holder);
  const root = new DOMParser().parseFromString(svg, "image/svg+xml").documentElement;
  holder.appendChild(document.importNode(root, true));
  const shown = holder.querySelector("svg");
  const boxOf = (el) => {
    const b = el.getBBox();
    const m = el.getCTM(), base = shown.getCTM();  // the element's transform, relative to the svg
    const rel = base.inverse().multiply(m);
    const corners = [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]]
      .map(([x, y]) => [rel.a * x + rel.c * y + rel.e, rel.b * x + rel.d * y + rel.f]);
    const xs = corners.map((c) => c[0]), ys = corners.map((c) => c[1]);
    return {x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys)};
  };
  const found = Array.from(shown.querySelectorAll(selector)).map((el) => ({tag: el.tagName, box: boxOf(el)}));
  const size = [Number(shown.getAttribute("width")), Number(shown.getAttribute("height"))];
  holder.remove();
  return {found, size};
}"""


def assert_note_inside(measured: dict) -> None:
    """The note's paper first, then its texts: every text's box within the paper's, two or more."""
    paper, *texts = measured["found"]
    assert paper["tag"] == "rect" and len(texts) >= 2, measured
    for text in texts:
        assert text["tag"] == "text"
        assert paper["box"]["x0"] <= text["box"]["x0"] and text["box"]["x1"] <= paper["box"]["x1"] + 0.5, (paper, text)
        assert paper["box"]["y0"] <= text["box"]["y0"] and text["box"]["y1"] <= paper["box"]["y1"] + 0.5, (paper, text)


def test_a_sticky_notes_text_wraps_inside_its_box_on_the_canvas_the_export_and_the_preview(people):
    alice = people("alice", viewport=DESKTOP)
    sign_up(alice, "alice")
    open_editor(alice, "/new", "editor")
    page = alice.page
    page.fill("#text-size", "20")
    page.dispatch_event("#text-size", "change")
    page.click("[data-tool=sticky]")
    page.mouse.click(*client_of(page, 200, 150))
    page.wait_for_selector("#text-entry:not([hidden])")
    page.keyboard.type(NOTE_TEXT)
    page.keyboard.press("Enter")
    (note,) = [e for e in model(page)["elements"] if e["type"] == "sticky"]
    assert note["text"] == NOTE_TEXT and note["w"] == 160
    # The lines live.js draws: several, each as wide as the canvas measures it within the
    # paper's padding; the note grew downwards to hold them all.
    lines, widths, height = page.evaluate(
        """note => { const ctx = document.createElement("canvas").getContext("2d");
        ctx.font = note.size + "px sans-serif";
        const lines = window.ugcsiteLive.stickyLines(note);
        return [lines, lines.map(([line]) => ctx.measureText(line).width), window.ugcsiteLive.stickyHeight(note)]; }""",
        note,
    )
    assert len(lines) >= 4 and " ".join(line for line, _, _ in lines) == NOTE_TEXT
    pad = rules.DRAWING_LAYOUT["stickyPad"]
    assert max(widths) <= note["w"] - 2 * pad, (lines, widths)
    assert note["h"] >= height and lines[-1][2] <= note["y"] + note["h"] - pad
    alice.shot("note-wrapped")

    # The editor's SVG export, shown in the page: each line's box within the paper's.
    export = page.evaluate("() => window.ugcsiteExport.toSvg(window.ugcsiteEditor.doc(), 'note')")
    assert_note_inside(page.evaluate(MEASURE_SVG, [export, "g[data-type=sticky] > *"]))

    # The server's preview of the published board: the same lines, each within the paper.
    board_id = publish(alice, "A note")
    preview = page.evaluate("id => fetch(`/api/v1/boards/${id}/preview.svg`).then(r => r.text())", board_id)
    measured = page.evaluate(MEASURE_SVG, [preview, "g[data-type=sticky] > *"])
    assert_note_inside(measured)
    assert len(measured["found"]) - 1 == len([line for line, _, _ in lines if line])
    alice.check_clean()


def test_a_rotated_box_stays_within_the_board_in_the_exports(people):
    """A note in the board's bottom right corner, turned 45 degrees, and a rectangle at its top
    left, turned 30: the board grows to hold the first's turned corners and the second moves in,
    so both exports (SVG, and the PNG drawn at the board's size) and the preview hold them whole."""
    alice = people("alice", viewport=DESKTOP)
    sign_up(alice, "alice")
    open_editor(alice, "/new", "editor")
    page = alice.page
    page.keyboard.press("s")
    page.mouse.click(*client_of(page, 640, 480))  # a 160 x 120 note: to (800, 600), the board's corner
    page.wait_for_selector("#text-entry:not([hidden])")
    page.keyboard.press("Escape")
    page.click("[data-tool=rect]")
    page.mouse.move(*client_of(page, 4, 4))
    page.mouse.down()
    page.mouse.move(*client_of(page, 200, 60), steps=4)
    page.mouse.up()
    for kind in ("sticky", "rect"):
        (element,) = [e for e in model(page)["elements"] if e["type"] == kind]
        page.click("[data-tool=select]")
        # (a note is taken anywhere on its paper; a rectangle without fill by its outline)
        grip = element["y"] + element["h"] / 2 if kind == "sticky" else element["y"]
        page.mouse.click(*client_of(page, element["x"] + element["w"] / 2, grip))
        wait_for(lambda: page.evaluate("() => window.ugcsiteEditor.selection().length") == 1, what="a selection")
        page.fill("#rotation", "45" if kind == "sticky" else "30")
        page.dispatch_event("#rotation", "change")
    doc = model(page)
    for element in doc["elements"]:
        left, top, right, bottom = turned_box(element)
        assert element.get("rotation") and left >= 0 and top >= 0, element
        assert right <= doc["width"] and bottom <= doc["height"], (element, doc["width"], doc["height"])
    assert doc["width"] > 800 and doc["height"] > 600  # it grew to hold the turned note
    alice.shot("rotated-within")

    export = page.evaluate("() => window.ugcsiteExport.toSvg(window.ugcsiteEditor.doc(), 'turned')")
    measured = page.evaluate(MEASURE_SVG, [export, "g[data-type=sticky] > rect, svg > rect[transform]"])
    assert len(measured["found"]) == 2
    width, height = measured["size"]
    for shape in measured["found"]:
        box = shape["box"]
        assert box["x0"] >= -0.5 and box["y0"] >= -0.5 and box["x1"] <= width + 0.5 and box["y1"] <= height + 0.5, (
            shape,
            measured["size"],
        )
    # The PNG is drawn at the board's size, so it holds what the SVG does.
    png_size = page.evaluate(
        """() => window.ugcsiteExport.toPng(window.ugcsiteEditor.doc(), window.ugcsiteLive.drawElement)
        .then(blob => createImageBitmap(blob)).then(img => [img.width, img.height])"""
    )
    assert png_size == [round(doc["width"]), round(doc["height"])] or png_size == [
        int(doc["width"]),
        int(doc["height"]),
    ]

    board_id = publish(alice, "Turned")
    preview = page.evaluate("id => fetch(`/api/v1/boards/${id}/preview.svg`).then(r => r.text())", board_id)
    measured = page.evaluate(MEASURE_SVG, [preview, "g[data-type=sticky] > rect, svg > rect[transform]"])
    width, height = measured["size"]
    assert len(measured["found"]) == 2
    for shape in measured["found"]:
        box = shape["box"]
        assert box["x0"] >= -0.5 and box["y0"] >= -0.5 and box["x1"] <= width + 0.5 and box["y1"] <= height + 0.5
    alice.check_clean()


def test_the_view_follows_the_pen_past_the_canvass_edge(people):
    """The tour drew past the right edge: the board grew (800 x 600 to 947 x 649), but the new
    part stayed out of view until Fit. Now the view pans after the pen: the stroke's end is on
    the canvas when the pen lifts."""
    alice = people("alice", viewport=DESKTOP)
    sign_up(alice, "alice")
    open_editor(alice, "/new", "editor")
    page = alice.page
    box = page.locator("#board-canvas").bounding_box()
    right, middle = box["x"] + box["width"], box["y"] + box["height"] / 2
    page.mouse.move(right - 200, middle)
    page.mouse.down()
    page.mouse.move(right + 30, middle + 20, steps=12)  # past the canvas's edge, and held there
    for i in range(10):
        page.mouse.move(right + 30 + i, middle + 20)
        page.wait_for_timeout(50)
    page.mouse.up()
    (stroke,) = model(page)["elements"]
    assert model(page)["width"] > 850, model(page)["width"]  # the board grew
    end = client_of(page, *stroke["points"][-1])
    assert box["x"] <= end[0] <= right and box["y"] <= end[1] <= box["y"] + box["height"], (
        end,
        box,
        page.evaluate("() => [window.ugcsiteEditor.view.x, window.ugcsiteEditor.view.zoom]"),
        model(page)["width"],
        stroke["points"][-3:],
    )
    assert page.evaluate("() => window.ugcsiteEditor.view.x") < 0  # the view panned after it
    alice.shot("followed")
    alice.check_clean()


def test_offline_is_said_within_seconds_and_the_others_see_the_person_reconnecting(people, board):
    alice, bob = people("alice", viewport=DESKTOP), people("bob", viewport=DESKTOP)
    log_in(alice, "alice", f"/b/{board.pk}/edit")
    log_in(bob, "bob", f"/b/{board.pk}/edit")
    for person in (alice, bob):
        live_ready(person)
    bob.page.wait_for_function("() => document.getElementById('live-peers').textContent.includes('alice')")

    alice.context.set_offline(True)
    alice.page.wait_for_selector("#live-status[data-state=offline]", timeout=3_000)
    status = alice.page.locator("#live-status")
    assert "Offline" in status.inner_text() and "kept" in status.inner_text()
    assert status.is_visible()
    box = status.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= DESKTOP[1]  # said where it is seen
    bob.page.wait_for_function(
        "() => document.getElementById('live-peers').textContent.includes('alice (reconnecting')",
        timeout=(rules.LIVE_SILENCE + rules.LIVE_PING_EVERY + 2) * 1000,
    )
    drag(alice.page, [(0.2, 0.8), (0.6, 0.9)])  # drawn offline: kept
    assert element_count(alice.page) == 2
    alice.shot("offline")

    alice.context.set_offline(False)
    alice.page.wait_for_selector("#live-status[data-state=live]", timeout=10_000)
    wait_for(lambda: element_count(bob.page) == 2, what="bob to get what alice drew offline")
    bob.page.wait_for_function(
        "() => { const t = document.getElementById('live-peers').textContent;"
        " return t.includes('alice') && !t.includes('alice (reconnecting'); }"
    )
    for person in (alice, bob):
        person.check_clean()


KEPT = "k => Object.keys(localStorage).filter(key => key.startsWith(k)).sort().map(key => [key, JSON.parse(localStorage.getItem(key))])"


def test_two_tabs_of_one_person_keep_their_unsent_ops_apart(people, board):
    """Both of bob's tabs draw while their connections are down: each keeps its own stroke under
    a key of its own (the other's is never overwritten nor sent twice). One tab closes unsent;
    the next tab bob opens takes its stroke over and sends it; the other, reloaded, sends its own."""
    bob = people("bob", viewport=DESKTOP)
    log_in(bob, "bob", f"/b/{board.pk}/edit")
    first = bob.page
    live_ready(bob)
    second = bob.context.new_page()
    second.goto(f"/b/{board.pk}/edit")
    second.wait_for_selector("#live-status[data-state=live]")
    prefix = f"ugcsite.keep.live.bob.{board.pk}."
    drawn = {}
    for name, page, where in (("first", first, [(0.2, 0.7), (0.4, 0.8)]), ("second", second, [(0.6, 0.7), (0.8, 0.8)])):
        page.bring_to_front()
        page.evaluate("() => window.ugcsiteLive.boards[0].hold()")
        page.wait_for_selector("#live-status[data-state=reconnecting]")
        page.locator("#board-canvas").scroll_into_view_if_needed()
        drag(page, where)
        drawn[name] = page.evaluate("() => window.ugcsiteEditor.doc().elements.find(e => e.type === 'path').id")
    kept = first.evaluate(KEPT, prefix)
    assert len(kept) == 2, kept  # one key a tab
    assert sorted(item[0]["op"]["element"]["id"] for _, item in kept) == sorted(drawn.values())
    assert all(len(item) == 1 for _, item in kept)

    first.close()  # closes with its stroke unsent
    third = bob.context.new_page()
    third.goto(f"/b/{board.pk}/edit")
    third.wait_for_selector("#live-status[data-state=live]")
    third.wait_for_function("() => window.ugcsiteLive.boards[0].pending.length === 0")
    compaction.board_compact(board.pk)
    ids = [e.get("id") for e in Board.objects.get(pk=board.pk).doc["elements"]]
    assert drawn["first"] in ids and drawn["second"] not in ids  # the closed tab's, sent by the new one
    (left,) = third.evaluate(KEPT, prefix)
    assert [item["op"]["element"]["id"] for item in left[1]] == [drawn["second"]]  # the living tab's, untouched

    # The living tab reloads (its id is kept in the tab): it takes its own kept stroke back and sends it.
    second.on("dialog", lambda dialog: dialog.accept())  # "leave the page?" (its stroke is unsent)
    second.reload()
    second.wait_for_selector("#live-status[data-state=live]")
    second.wait_for_function("() => window.ugcsiteLive.boards[0].pending.length === 0")
    compaction.board_compact(board.pk)
    ids = [e.get("id") for e in Board.objects.get(pk=board.pk).doc["elements"]]
    assert sorted(i for i in ids if i in drawn.values()) == sorted(drawn.values())  # each once
    assert third.evaluate(KEPT, prefix) == []
    bob.check_clean()
