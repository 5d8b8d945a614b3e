"""Pages that fit (issue 28, item 6), in Chromium on a desktop (1280x800) and a phone (390x844,
touch), measured by the boxes the browser lays out: a card's attribution (avatar, name, time) on
one line; the signed-in header in one row at 1280 px (staff, with a long name and an unread
badge: the widest it gets) and compact on a phone; the editor's Publish in the window without
scrolling; on a phone the tool row and the canvas in the window together, the canvas the
window's width. And axe finds nothing serious or critical on those pages."""

import json

import pytest

from feeds.services import boards as board_services, follows as follow_services
from social import services as people_services
from ugcsite.tests.support import BLOCKING, DOC, PASSWORD, PHONE, axe_run, log_in, open_editor

pytestmark = pytest.mark.browser

LONG_NAME = "a_rather_long_name_1"  # 20 characters
DESKTOP = {"viewport": (1280, 800)}
SIZES = {"desktop": DESKTOP, "phone": PHONE}


@pytest.fixture
def someone(run):
    """A staff member with a long name, an unread notification and a board of their own."""
    person = people_services.user_create(username=LONG_NAME, password=PASSWORD, is_staff=True)
    fan = people_services.user_create(username="fan", password=PASSWORD)
    run(follow_services.follow_create, follower=fan, followee=person)
    run(
        board_services.board_create,
        author=person,
        title="A board with a title long enough to wrap",
        kind="sketch",
        tags=["one", "two"],
        doc=json.loads(json.dumps(DOC)),
    )
    return person


def boxes(page, selector: str) -> list[dict]:
    return [locator.bounding_box() for locator in page.locator(selector).all()]


def one_line(found: list[dict]) -> bool:
    """Whether the boxes share a line: each one's vertical middle lies within every other's."""
    return all(a["y"] <= b["y"] + b["height"] / 2 <= a["y"] + a["height"] for a in found for b in found)


def no_blocking_axe(page) -> None:
    assert [v for v in axe_run(page) if v["impact"] in BLOCKING] == []


@pytest.mark.parametrize("size", sorted(SIZES))
def test_a_cards_attribution_is_one_line(people, someone, size):
    person = people("viewer", **SIZES[size])
    log_in(person, LONG_NAME, "/discover")
    card = f'.card:has(a[href="/u/{LONG_NAME}"])'
    person.page.wait_for_selector(card)
    parts = boxes(person.page, f"{card} .byline img.avatar") + boxes(person.page, f"{card} .byline time")
    name = person.page.locator(f"{card} .byline-author").bounding_box()
    assert len(parts) == 2 and one_line(parts + [name]), parts + [name]
    avatar, time = parts
    assert avatar["x"] < name["x"] + name["width"] <= time["x"]  # avatar, name, then the time
    assert name["height"] < 2 * avatar["height"]  # the name on one line too
    person.page.locator(card).scroll_into_view_if_needed()
    person.shot(f"card-{size}")
    no_blocking_axe(person.page)
    person.check_clean()


def test_the_signed_in_header_is_one_row_at_1280(people, someone):
    person = people("desktop", **DESKTOP)
    log_in(person, LONG_NAME, "/")
    page = person.page
    assert page.locator(".usernav a[href='/admin/']").is_visible()
    assert page.locator(".usernav .badge").is_visible()
    parts = boxes(page, "header.topbar > *")
    assert len(parts) == 4 and one_line(parts), parts
    links = boxes(page, ".usernav > *") + boxes(page, ".mainnav > a")
    assert one_line(links), links
    assert page.locator("header.topbar").bounding_box()["height"] <= 70
    person.shot("header", full_page=False)
    no_blocking_axe(page)
    person.check_clean()


def test_the_header_is_compact_on_a_phone(people, someone):
    person = people("phone", **PHONE)
    log_in(person, LONG_NAME, "/")
    page = person.page
    header = page.locator("header.topbar").bounding_box()
    person.shot("header")
    assert header["height"] <= 110, header  # it was 183 px in three to five rows
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    # Every link and the search box on the screen, none cut off.
    for part in boxes(page, "header.topbar a:visible, header.topbar button:visible, #site-search"):
        assert part["x"] >= 0 and part["x"] + part["width"] <= 390 and part["y"] + part["height"] <= header["height"]
    # The names the phone leaves out of sight are still there for a screen reader.
    assert page.locator(".usernav .me").inner_text() == LONG_NAME
    assert page.locator(".usernav .new-board").text_content() == "New board"
    person.shot("header")
    no_blocking_axe(page)
    person.check_clean()


def test_publish_is_in_the_window_at_1280x800(people, someone):
    person = people("desktop", **DESKTOP)
    log_in(person, LONG_NAME, "/new")
    page = person.page
    page.wait_for_selector("#editor[data-ready=true]")
    for moment in ("opened", "canvas in view"):
        if moment == "canvas in view":
            page.locator("#board-canvas").scroll_into_view_if_needed()
        box = page.locator("#publish").bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= 800, (moment, box)
        assert page.locator("#publish").is_visible()
    person.shot("editor")
    no_blocking_axe(page)
    person.check_clean()


def test_on_a_phone_the_tool_row_stays_with_a_canvas_as_wide_as_the_window(people, someone):
    person = people("phone", **PHONE)
    log_in(person, LONG_NAME, "/new")
    open_editor(person, "/new", "editor")
    page = person.page
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    canvas = page.locator("#board-canvas").bounding_box()
    assert canvas["x"] == pytest.approx(0, abs=1) and canvas["width"] == pytest.approx(390, abs=1)
    for moment in ("opened", "scrolled down"):
        if moment == "scrolled down":
            page.evaluate("() => window.scrollBy(0, 150)")
        toolbar = page.locator(".toolbar").bounding_box()
        canvas = page.locator("#board-canvas").bounding_box()
        assert toolbar["height"] <= 140, toolbar  # the strip: tools in two rows, edits and toggles in one
        assert toolbar["y"] >= 0 and toolbar["y"] + toolbar["height"] <= 844, (moment, toolbar)
        assert canvas["y"] < 844 and canvas["y"] + canvas["height"] > toolbar["y"] + toolbar["height"], (moment, canvas)
        visible = min(canvas["y"] + canvas["height"], 844) - max(canvas["y"], toolbar["y"] + toolbar["height"])
        assert visible >= canvas["height"] * 0.75, (moment, canvas, toolbar)  # most of the canvas, below the tools
    page.evaluate("() => window.scrollTo(0, 0)")
    publish = page.locator("#publish").bounding_box()
    assert publish["y"] + publish["height"] <= 844
    person.shot("editor-phone")
    no_blocking_axe(page)
    person.check_clean()


# Every control of the editor, as the browser lays it out: its name, its box, and whether it is
# what the window shows at its centre (nothing else, a sticky bar or a panel, lies over it).
CONTROLS_JS = """root => Array.from(document.querySelectorAll(root)).flatMap(scope => Array.from(
    scope.querySelectorAll("button, input, select, textarea, a.button")))
  .filter(el => el.getClientRects().length && getComputedStyle(el).visibility !== "hidden")
  .map(el => { const r = el.getBoundingClientRect();
    const top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
    return {name: el.getAttribute("aria-label") || el.id || el.textContent.trim() || el.dataset.color,
            box: {x: r.x, y: r.y, width: r.width, height: r.height},
            on_top: !!top && (el === top || el.contains(top))}; })"""


def controls(page, root: str) -> list[dict]:
    return page.evaluate(CONTROLS_JS, root)


def overlap(a: dict, b: dict) -> float:
    """The area two boxes share (0 when they only touch)."""
    width = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
    height = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
    return max(width, 0) * max(height, 0)


def assert_all_reachable(found: list[dict], width: int, height: int) -> None:
    """Each control lies in the window, is not covered, and shares no area with another."""
    for control in found:
        box = control["box"]
        assert box["width"] > 0 and box["height"] > 0, control
        assert box["x"] >= 0 and box["y"] >= 0, control
        assert box["x"] + box["width"] <= width + 0.5 and box["y"] + box["height"] <= height + 0.5, control
        assert control["on_top"], control
    for i, a in enumerate(found):
        for b in found[i + 1 :]:
            assert overlap(a["box"], b["box"]) < 1, (a, b)


@pytest.mark.parametrize("page_kind", ["new", "own board"])
def test_every_editor_control_is_in_the_window_at_1280x800(people, someone, page_kind):
    """Issue 40: the zoom, export and shortcut buttons were below the fold (the page ran to
    1,117 px) and the sticky Publish bar lay over Delete and Clear. Every control of the editor,
    its fields, tools, panels and foot, is in the window as it opens, and none covers another."""
    person = people("desktop", **DESKTOP)
    log_in(person, LONG_NAME, "/")
    board = person.api(f"/api/v1/users/{LONG_NAME}/boards")["items"][0]["id"]
    path = "/new" if page_kind == "new" else f"/b/{board}/edit"
    person.visit(path, "editor")
    page = person.page
    page.wait_for_selector("#editor[data-ready=true]")
    assert page.evaluate("() => window.scrollY") == 0
    found = controls(page, "#editor")
    names = {control["name"] for control in found}
    for name in ("Zoom out", "Zoom in", "Fit", "Export SVG", "Export PNG", "Shortcuts ?", "Delete", "Clear", "publish"):
        assert name in names, (name, sorted(names))
    assert not page.locator(".panel-toggle").first.is_visible()  # a desktop shows the panels as they are
    assert_all_reachable(found, 1280, 800)
    person.shot("every-control")
    no_blocking_axe(page)
    person.check_clean()


def test_on_a_phone_each_control_is_at_most_one_tap_away(people, someone):
    """Issue 40: at 390x844 the tools were one strip 2,545 px wide, with colours, width, undo,
    zoom and export screen-widths away. Now the strip holds the tools, the edits and two toggles;
    the style panel and the more panel each open with one tap. Every control of the toolbar is
    in the strip or in one panel, and each in the window, uncovered, when it shows."""
    person = people("phone", **PHONE)
    log_in(person, LONG_NAME, "/new")
    open_editor(person, "/new", "editor")
    page = person.page
    page.evaluate("() => window.scrollTo(0, 0)")
    everything = page.locator(".toolbar").evaluate(
        # the picture's file input is never shown: the Picture button opens it
        "bar => Array.from(bar.querySelectorAll('button, input:not([type=file]), select')).map(el => el.getAttribute('aria-label') || el.id || el.textContent.trim() || el.dataset.color)"
    )
    strip = controls(page, ".toolbar")
    assert_all_reachable(strip, 390, 844)
    toolbar = page.locator(".toolbar").bounding_box()
    assert toolbar["height"] <= 140, toolbar
    assert all(control["box"]["y"] + control["box"]["height"] <= toolbar["y"] + toolbar["height"] for control in strip)
    assert {"Select", "Pen", "Eraser", "Undo", "Redo", "Style", "More"} <= {c["name"] for c in strip}
    reached = {control["name"] for control in strip}
    for toggle_name, inside in (
        ("Style", {"Stroke and text color", "stroke-width", "Fill color", "Board width"}),
        ("More", {"Picture", "Zoom in", "Export PNG"}),
    ):
        toggle = page.locator(".panel-toggle", has_text=toggle_name)
        toggle.tap()
        assert toggle.get_attribute("aria-expanded") == "true"
        panel = "#" + toggle.get_attribute("aria-controls")
        shown = controls(page, panel)
        assert inside <= {c["name"] for c in shown}, shown
        assert_all_reachable(shown, 390, 844)
        for control in shown:  # the panel lies under the strip, never over it
            assert control["box"]["y"] >= toolbar["y"] + toolbar["height"] - 1, control
        reached |= {control["name"] for control in shown}
        person.shot(f"panel-{toggle_name.lower()}")
        no_blocking_axe(page)
        toggle.tap()  # closes it again
        assert not page.locator(panel).is_visible()
    assert set(everything) <= reached, set(everything) - reached
    person.check_clean()
