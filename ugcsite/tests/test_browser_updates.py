"""Live updates without reloading, in real browsers (Playwright, Chromium) against a real ASGI
server process: bob reads his feed scrolled down, alice posts (the real fan-out, which tells
readers online over /ws/me), bob sees "1 new board", clicks, and the card is at the top while
the card he was reading stays where it was on his screen; alice follows him and his header's
unread count changes without a reload."""

import pytest
from playwright.sync_api import expect

from feeds.services import boards as board_services, follows as follow_services
from social import services as people_services
from ugcsite.tests.support import PASSWORD, Person, log_in

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.usefixtures("passwords_the_server_reads")]

DOC = {
    "width": 400,
    "height": 300,
    "background": "#ffffff",
    "elements": [{"type": "rect", "color": "#1d2330", "width": 3, "x": 40, "y": 40, "w": 200, "h": 120, "fill": None}],
}


def test_new_boards_come_in_at_the_top_and_the_badge_counts(browser, asgi_server, run, request):
    alice = people_services.user_create(username="alice", password=PASSWORD)
    bob = people_services.user_create(username="bob", password=PASSWORD)
    run(follow_services.follow_create, follower=bob, followee=alice)
    for n in range(24):
        run(board_services.board_create, author=alice, title=f"Board {n}", kind="sketch", tags=[], doc=dict(DOC))
    reader = Person(browser, asgi_server.url, "bob", request.node.originalname)
    try:
        log_in(reader, "bob", "/")
        page = reader.page
        page.wait_for_selector("body[data-live=on]")
        assert page.locator("[data-testid=unread-count]").count() == 0
        page.evaluate("() => window.scrollTo(0, 700)")
        assert page.evaluate("() => window.scrollY") == 700, "the feed is too short to scroll"
        # The card bob is looking at: the first one whose top is on his screen.
        read_id = page.evaluate(
            "() => [...document.querySelectorAll('#boards > li')]"
            ".find((card) => card.getBoundingClientRect().top > 0).dataset.boardId"
        )
        reading = page.locator(f"#boards > li[data-board-id='{read_id}']")
        before = reading.bounding_box()["y"]
        top_before = page.locator("#boards > li").first.get_attribute("data-board-id")

        new = run(board_services.board_create, author=alice, title="Fresh one", kind="sketch", tags=[], doc=dict(DOC))
        button = page.locator("[data-testid=new-boards]")
        button.wait_for(state="visible")
        assert button.inner_text() == "1 new board"
        reader.shot("new-board-told")
        button.click()
        expect(page.locator("#boards > li").first).to_have_attribute("data-board-id", str(new.pk))
        expect(button).to_be_hidden()
        cards = page.locator("#boards > li")
        assert cards.nth(1).get_attribute("data-board-id") == top_before
        assert cards.first.locator("[data-slot=title]").inner_text() == "Fresh one"
        assert abs(reading.bounding_box()["y"] - before) <= 2, "the card bob was reading moved on his screen"
        reader.shot("new-board-in")

        run(follow_services.follow_create, follower=alice, followee=bob)
        expect(page.locator("[data-testid=unread-count]")).to_have_text("1")
        assert not reader.script_errors and not reader.csp_violations
    finally:
        reader.context.close()
