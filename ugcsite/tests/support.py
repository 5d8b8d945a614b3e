"""What the browser tests share: a Person at their own browser, the steps every journey takes
(sign up, log in, open the editor), drawing on the canvas with a mouse or a finger, reading the
editor's model, and axe-core's accessibility check. Their fixtures (``people``, and the password
hashers of the ASGI server process) are in conftest.py beside this module.

Helpers only: no tests and no fixtures here.
"""

import copy
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.db import transaction

from feeds.services import boards as board_services, editors as editor_services
from social import services as people_services
from ugcsite.testing import unused_code

SCREENSHOTS = Path(settings.BASE_DIR) / "test-artifacts" / "screenshots"
PASSWORD = "long-enough-password"
DOC = {
    "width": 800,
    "height": 600,
    "background": "#fffdf0",
    "elements": [
        {"type": "rect", "color": "#1d2330", "width": 3, "x": 100, "y": 100, "w": 200, "h": 120, "fill": "#d0ebff"},
        {"type": "text", "color": "#c2255c", "size": 32, "x": 120, "y": 300, "text": "Made by a service"},
    ],
}
# A phone, as Person's options (its viewport, then the browser context's): 390x844, touch.
PHONE = {"viewport": (390, 844), "has_touch": True, "is_mobile": True, "device_scale_factor": 2}

AXE = Path(settings.BASE_DIR) / "static" / "vendor" / "axe-core" / "axe.min.js"
# The rules axe runs: WCAG 2.0/2.1 A and AA, and its best practices (landmarks, headings).
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
BLOCKING = {"serious", "critical"}


class Person:
    """Someone at their own browser (a context of their own: cookies, session). Each visit is
    screenshotted; CSP violations, script errors and pages without a CSP header are collected."""

    def __init__(self, browser, base_url: str, name: str, test_name: str, viewport=(1280, 860), **context_options):
        self.name = name
        self.prefix = f"{test_name}-{name}"
        self.context = browser.new_context(
            base_url=base_url, viewport={"width": viewport[0], "height": viewport[1]}, **context_options
        )
        self.context.set_default_timeout(15_000)
        self.page = self.context.new_page()
        self.csp_violations: list[str] = []
        self.script_errors: list[str] = []
        self.pages_without_csp: list[str] = []
        self.shots = 0
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.script_errors.append(str(error)))
        self.page.on("response", self._response)

    def _console(self, message):
        if "content security policy" in message.text.lower():
            self.csp_violations.append(f"{self.page.url}: {message.text}")

    def _response(self, response):
        if response.request.resource_type == "document" and "content-security-policy" not in response.headers:
            self.pages_without_csp.append(response.url)

    def shot(self, label: str, *, full_page: bool = False) -> None:
        self.shots += 1
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=SCREENSHOTS / f"{self.prefix}-{self.shots:02d}-{label}.png", full_page=full_page)

    def visit(self, path: str, label: str, **shot):
        response = self.page.goto(path)
        self.shot(label, **shot)
        return response

    def api(self, path: str):
        """GET an API path with this person's session, from inside the page (what its scripts see)."""
        return self.page.evaluate("path => fetch(path, {credentials: 'same-origin'}).then(r => r.json())", path)

    def card_ids(self) -> list[int]:
        return [
            int(i)
            for i in self.page.locator("#boards > .card").evaluate_all(
                "cards => cards.map(card => card.dataset.boardId)"
            )
        ]

    def check_clean(self) -> None:
        assert self.csp_violations == [], self.csp_violations
        assert self.script_errors == [], self.script_errors
        assert self.pages_without_csp == [], self.pages_without_csp


# --- signing up and in ----------------------------------------------------------------------------


def sign_up(person: Person, username: str) -> None:
    person.visit("/signup", "signup")
    person.page.fill("#id_username", username)
    person.page.fill("#id_password", PASSWORD)
    person.page.fill("#id_password_again", PASSWORD)
    person.page.click("form.stacked button[type=submit]")
    person.page.wait_for_url(re.compile(r"://[^/]+/$"))
    person.shot("signed-up")
    assert person.page.locator(".usernav .me").inner_text() == username


def log_in_when_asked(person: Person, username: str, next_path: str) -> None:
    """Visit ``next_path``, be sent to the login form (the page asks for a login), log in there
    and land back on it."""
    person.visit(next_path, "login-asked")
    assert "/login?next=" in person.page.url
    person.page.fill("#id_username", username)
    person.page.fill("#id_password", PASSWORD)
    person.page.click("form.stacked button[type=submit]")
    person.page.wait_for_url(f"**{next_path}")


def log_in(person: Person, username: str, next_path: str, *, otp_secret: str | None = None) -> None:
    """Log in on the login page and land on ``next_path``; with ``otp_secret`` (two-factor on),
    the page then asks for the code, and gets one."""
    person.visit(f"/login?next={next_path}", "login")
    person.page.fill("#id_username", username)
    person.page.fill("#id_password", PASSWORD)
    person.page.click("form.stacked button[type=submit]")
    if otp_secret is not None:
        person.page.wait_for_url("**/login/code**")
        person.page.fill("#id_code", unused_code(otp_secret))
        person.page.click("form.stacked button[type=submit]")
    person.page.wait_for_url(f"**{next_path}")


# --- the editor -----------------------------------------------------------------------------------


def open_editor(person: Person, path: str, label: str) -> None:
    person.visit(path, label)
    person.page.wait_for_selector("#editor[data-ready=true]")
    person.page.locator("#board-canvas").scroll_into_view_if_needed()


def live_ready(person: Person) -> None:
    """The editor is ready and its shared board's socket is live."""
    person.page.wait_for_selector("#editor[data-ready=true]")
    person.page.wait_for_selector("#live-status[data-state=live]")
    person.page.locator("#board-canvas").scroll_into_view_if_needed()


def element_count(page) -> int:
    return int(page.locator("#editor-status").inner_text().split()[0])


def model(page) -> dict:
    """The drawing the editor shows (its doc, live ops included)."""
    return page.evaluate("() => window.ugcsiteEditor.doc()")


def zoom(page) -> float:
    return page.evaluate("() => window.ugcsiteEditor.view.zoom")


def canvas_point(page, fx: float, fy: float) -> tuple[float, float]:
    """Where the fractions (fx, fy) of the canvas's box are on the page."""
    box = page.locator("#board-canvas").bounding_box()
    return box["x"] + fx * box["width"], box["y"] + fy * box["height"]


def client_of(page, x: float, y: float) -> tuple[float, float]:
    """Where the document point (x, y) is on the page now: computed here from the canvas's box
    and the view's zoom and offset (screen = offset + doc * width/frame.width * zoom: the frame is
    the board's size when the page opened, as the board grows with its content)."""
    box = page.locator("#board-canvas").bounding_box()
    view = page.evaluate("() => { const v = window.ugcsiteEditor.view; return [v.zoom, v.x, v.y, v.frame.width]; }")
    scale = box["width"] / view[3] * view[0]
    return box["x"] + view[1] + x * scale, box["y"] + view[2] + y * scale


def drag(page, points: list[tuple[float, float]], *, steps: int = 4) -> None:
    """Press the mouse at the first point (fractions of the canvas), move through the rest, release."""
    page.mouse.move(*canvas_point(page, *points[0]))
    page.mouse.down()
    for point in points[1:]:
        page.mouse.move(*canvas_point(page, *point), steps=steps)
    page.mouse.up()


def mouse_drag(page, start: tuple[float, float], end: tuple[float, float], steps: int = 6) -> None:
    """Press the mouse at ``start``, move to ``end``, release (page coordinates)."""
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(*end, steps=steps)
    page.mouse.up()


def touch(cdp, kind: str, points: list[tuple[float, float]]) -> None:
    """One touch event (touchStart, touchMove, touchEnd) with a finger at each of ``points``,
    through a CDP session of the page."""
    cdp.send(
        "Input.dispatchTouchEvent",
        {
            "type": kind,
            "touchPoints": [
                {"x": x, "y": y, "id": i, "radiusX": 2, "radiusY": 2, "force": 1} for i, (x, y) in enumerate(points)
            ],
        },
    )


# --- what pages show ------------------------------------------------------------------------------


def image_loaded(page, selector: str) -> None:
    page.wait_for_function(
        "selector => { const img = document.querySelector(selector);"
        " return img && img.complete && img.naturalWidth > 0; }",
        arg=selector,
    )


def axe_run(page) -> list[dict]:
    """axe-core's violations on the page as it is now (every one, any impact), loaded from this
    site (the CSP allows scripts from 'self' alone)."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `make vendor` (make test does) to fetch axe-core from npm.")
    page.add_script_tag(url="/static/vendor/axe-core/axe.min.js")
    return page.evaluate(
        """tags => axe.run(document, {runOnly: {type: "tag", values: tags}}).then(result =>
        result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                     nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ") + ": " + n.failureSummary)})))""",
        AXE_TAGS,
    )


def board_for_two(doc: dict):
    """alice's board "Together", drawn from ``doc`` (copied), with bob invited to draw on it:
    the pair of the live tests, both with PASSWORD."""
    alice = people_services.user_create(username="alice", password=PASSWORD)
    bob = people_services.user_create(username="bob", password=PASSWORD)
    with transaction.atomic():
        made = board_services.board_create(
            author=alice, title="Together", kind="sketch", tags=[], doc=copy.deepcopy(doc)
        )
    editor_services.editor_invite(board=made, user=bob)
    return made
