"""The loop of issue 16 in one go, in Chromium against the real ASGI server (the live parts need
its WebSocket), on a desktop and on a phone (390x844, touch): a new person searches for "alice",
follows her, is told live when she follows back, sees "1 new board" on the feed when she posts
and brings it in, then draws, selects and moves what they drew, zooms and exports a PNG. (Each
part has its own, closer tests: test_browser_loop, test_browser_updates, test_browser_editor.)"""

import struct

import pytest
from playwright.sync_api import expect

from feeds.services import boards as board_services, follows as follow_services
from social import services as people_services
from social.models import User
from ugcsite.testing import wait_for
from ugcsite.tests.support import PASSWORD, PHONE, Person, client_of, model, mouse_drag, sign_up, touch, zoom

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.usefixtures("passwords_the_server_reads")]

DOC = {"width": 400, "height": 300, "background": "#ffffff", "elements": []}


class Hands:
    """How a person presses and drags: a mouse on a desktop, a finger on a phone."""

    def __init__(self, page, phone: bool):
        self.page, self.phone = page, phone
        self.cdp = page.context.new_cdp_session(page) if phone else None

    def press(self, selector: str) -> None:
        locator = self.page.locator(selector)
        locator.tap() if self.phone else locator.click()

    def after_canvas_gesture(self) -> None:
        """In Chromium's phone emulation the first tap after a finger drag on any element with
        ``touch-action: none`` clicks nothing (a bare div of that style, without a line of the
        site's script, does the same; a drag elsewhere does not). The drawing canvas must have
        that style, so after a stroke the next tap lands on the editor's status line first."""
        if self.phone:
            box = self.page.locator("#editor-status").bounding_box()
            touch(self.cdp, "touchStart", [(box["x"] + 4, box["y"] + 4)])
            touch(self.cdp, "touchEnd", [])

    def drag(self, start: tuple[float, float], end: tuple[float, float], steps: int = 8) -> None:
        if not self.phone:
            mouse_drag(self.page, start, end, steps)
            return
        touch(self.cdp, "touchStart", [start])
        for i in range(1, steps + 1):
            touch(
                self.cdp,
                "touchMove",
                [(start[0] + (end[0] - start[0]) * i / steps, start[1] + (end[1] - start[1]) * i / steps)],
            )
        touch(self.cdp, "touchEnd", [])


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_search_follow_told_new_board_then_draw_move_zoom_export(browser, asgi_server, run, request, device):
    phone = device == "phone"
    alice = people_services.user_create(username="alice", password=PASSWORD)
    people_services.profile_update(user=alice, changes={"display_name": "Alice Liddell"})
    run(board_services.board_create, author=alice, title="Alice's first", kind="sketch", tags=[], doc=dict(DOC))
    newbie = Person(
        browser, asgi_server.url, "newbie", f"{request.node.originalname}-{device}", **(PHONE if phone else {})
    )
    page, hands = newbie.page, Hands(newbie.page, phone)
    try:
        sign_up(newbie, "newbie")
        if phone:  # nothing wider than the phone
            assert page.evaluate("() => document.documentElement.scrollWidth") <= 390

        # Search from the header, people tab, then alice's profile and Follow.
        page.fill("#site-search", "alice")
        page.press("#site-search", "Enter")
        page.wait_for_url("**/search?q=alice*")
        page.check("input[name=type][value=users]")
        hands.press(".search-page-form button[type=submit]")
        page.wait_for_selector("[data-testid=search-people]")
        newbie.shot("found")
        hands.press("[data-testid=search-people] .person-name >> text=alice")
        page.wait_for_url("**/u/alice")
        hands.press("[data-follow-button]")
        page.wait_for_selector("text=Following ✓")

        # Her follow back reaches the header while newbie reads the feed; then her new board.
        newbie.visit("/", "feed")
        page.wait_for_selector("body[data-live=on]")
        run(follow_services.follow_create, follower=alice, followee=User.objects.get(username="newbie"))
        expect(page.locator("[data-testid=unread-count]")).to_have_text("1")
        fresh = run(
            board_services.board_create, author=alice, title="Fresh from alice", kind="sketch", tags=[], doc=dict(DOC)
        )
        button = page.locator("[data-testid=new-boards]")
        expect(button).to_have_text("1 new board")
        newbie.shot("told")
        hands.press("[data-testid=new-boards]")
        expect(page.locator("#boards > li").first).to_have_attribute("data-board-id", str(fresh.pk))
        hands.press("[data-testid=notifications-link]")
        page.wait_for_url("**/notifications")
        assert "alice followed you" in " ".join(page.inner_text("[data-testid=notifications]").split())

        # A drawing: a rectangle, selected and moved, the view zoomed, exported as a PNG.
        newbie.visit("/new", "editor")
        page.wait_for_selector("#editor[data-ready=true]")
        page.evaluate(
            "() => window.scrollTo(0, document.getElementById('board-canvas').getBoundingClientRect().top"
            " + window.scrollY - 20)"
        )
        hands.press("[data-tool=rect]")
        hands.drag(client_of(page, 100, 100), client_of(page, 300, 250))
        wait_for(lambda: len(model(page)["elements"]) == 1, what="the rectangle")
        drawn = model(page)["elements"][0]
        hands.after_canvas_gesture()
        hands.press("[data-tool=select]")
        hands.drag(
            client_of(page, drawn["x"], drawn["y"] + drawn["h"] / 2),
            client_of(page, drawn["x"] + 150, drawn["y"] + drawn["h"] / 2 + 100),
        )
        wait_for(lambda: model(page)["elements"][0]["x"] > drawn["x"] + 100, what="the rectangle to move")
        moved = model(page)["elements"][0]
        assert (moved["x"] - drawn["x"], moved["y"] - drawn["y"]) == pytest.approx((150, 100), abs=3)
        assert (moved["w"], moved["h"]) == (drawn["w"], drawn["h"]) and moved["id"] == drawn["id"]
        hands.after_canvas_gesture()
        if phone:  # zoom and export are in the more panel, one tap away
            hands.press(".panel-toggle[aria-controls=more-panel]")
        hands.press("[data-action=zoom-in]")
        assert zoom(page) > 1
        assert model(page)["elements"] == [moved]  # zoom is the view, not the drawing
        newbie.shot("drawn")
        page.fill("#title", "My first")
        with page.expect_download() as info:
            hands.press("[data-action=export-png]")
        png = open(info.value.path(), "rb").read()
        assert info.value.suggested_filename == "My first.png"
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (800, 600)
        newbie.check_clean()
    finally:
        newbie.context.close()
