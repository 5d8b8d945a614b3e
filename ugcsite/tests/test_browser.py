"""The site in a real browser: headless Chromium (Playwright) against pytest-django's live server,
with a real Celery worker doing the fan-out. People sign up, follow, draw with the mouse, publish,
read their feed with infinite scroll, edit and delete; staff hide a board in the admin.

Every page visited is kept as a screenshot under test-artifacts/screenshots/, and every page must
arrive with the Content-Security-Policy header and log no CSP violation and no script error.
"""

import json
import re

import pytest
from django.db import transaction

from feeds.services import boards as board_services
from social import services as people_services
from ugcsite.testing import STAFF_OTP_SECRET, wait_for, with_second_factor
from ugcsite.tests.support import (
    DOC,
    PASSWORD,
    canvas_point,
    drag,
    element_count,
    image_loaded,
    log_in,
    log_in_when_asked,
    open_editor,
    sign_up,
)

pytestmark = [pytest.mark.worker, pytest.mark.browser]

FEED_PAGE = 20
OLDER_BOARDS = 45


@pytest.mark.cluster
def test_two_people_follow_draw_publish_and_scroll_their_feed(celery_worker, people, django_user_model):
    reader, artist, staff = people("reader"), people("artist"), people("staff")
    sign_up(reader, "reader")
    assert "Your feed is empty" in reader.page.inner_text("main")
    sign_up(artist, "artist")

    # The reader follows the artist with the profile page's button.
    reader.visit("/u/artist", "profile")
    reader.page.click("[data-follow-button]")
    reader.page.wait_for_selector("text=Following ✓")
    assert reader.page.inner_text('[data-count="followers"]') == "1"
    reader.shot("following")

    # The artist draws a board with the mouse and publishes it.
    open_editor(artist, "/new", "editor")
    for row in range(3):
        y = 0.15 + row * 0.08
        drag(artist.page, [(0.08, y), (0.2, y + 0.04), (0.32, y), (0.44, y + 0.04)])
    artist.page.click(".swatch[data-color='#e8590c']")
    artist.page.click("[data-tool=text]")
    artist.page.mouse.click(*canvas_point(artist.page, 0.1, 0.75))
    artist.page.keyboard.type("Hello <b>feed</b> & friends")
    artist.page.keyboard.press("Enter")
    artist.page.click("[data-tool=rect]")
    artist.page.check("#fill-on")
    drag(artist.page, [(0.55, 0.2), (0.75, 0.35), (0.9, 0.5)])
    assert element_count(artist.page) == 5
    artist.page.fill("#title", "  A sunny sketch  ")
    artist.page.select_option("#kind", "comic")
    artist.page.fill("#tags", "Sun, first-try, sun")
    artist.shot("drawn")
    artist.page.click("#publish")
    artist.page.wait_for_url(re.compile(r".*/b/\d+$"))
    drawn = int(artist.page.url.rsplit("/", 1)[1])
    image_loaded(artist.page, ".board-image")
    artist.shot("published")
    board = artist.api(f"/api/v1/boards/{drawn}")
    assert (board["title"], board["kind"], board["tags"]) == ("A sunny sketch", "comic", ["sun", "first-try"])
    kinds = [element["type"] for element in board["doc"]["elements"]]
    assert kinds == ["path", "path", "path", "text", "rect"]
    text = board["doc"]["elements"][3]
    assert text["text"] == "Hello <b>feed</b> & friends" and text["color"] == "#e8590c"
    for element in board["doc"]["elements"]:
        for x, y in element.get("points", []) + ([[element["x"], element["y"]]] if "x" in element else []):
            assert 0 <= x <= 800 and 0 <= y <= 600 and round(x, 1) == x and round(y, 1) == y

    # The fan-out (the worker) brings it to the reader's feed, preview image and all.
    def in_feed():
        reader.page.goto("/")
        return drawn in reader.card_ids()

    wait_for(in_feed, timeout=20, interval=0.3, what="the drawn board in the reader's feed")
    image_loaded(reader.page, f'.card[data-board-id="{drawn}"] img')
    reader.shot("feed")
    reader.page.click(f'.card[data-board-id="{drawn}"] .card-link')
    reader.page.wait_for_url(f"**/b/{drawn}")
    image_loaded(reader.page, ".board-image")
    head = reader.page.inner_text(".board-head")
    assert "A sunny sketch" in head and "comic" in head.lower() and "#sun" in head and "#first-try" in head
    assert "artist" in head and re.search(r"\b\d+ views?\b", head)
    assert reader.page.get_by_role("link", name="Edit", exact=True).count() == 0  # not the author
    reader.shot("board")

    # 45 boards newer than the drawn one: it is now 46th, two pages and more down the feed.
    author = django_user_model.objects.get(username="artist")
    with transaction.atomic():
        more = [
            board_services.board_create(
                author=author, title=f"Board number {i}", kind="note", tags=["many"], doc=DOC
            ).pk
            for i in range(OLDER_BOARDS)
        ]
    wait_for(
        lambda: len(reader.api("/api/v1/feed?limit=100")["items"]) == OLDER_BOARDS + 1,
        timeout=30,
        interval=0.3,
        what="the fan-out of 45 boards",
    )
    everything = [drawn] + more
    first_page = reader.page.request.get("/").text()
    assert len(re.findall(r'class="card" data-board-id="\d+"', first_page)) == FEED_PAGE

    reader.visit("/", "feed-first-page")
    for _ in range(20):  # scroll down until the list stops growing at the whole feed
        if len(reader.card_ids()) == len(everything):
            break
        reader.page.mouse.wheel(0, 4000)
        reader.page.wait_for_timeout(250)
    ids = reader.card_ids()
    assert len(ids) > FEED_PAGE
    assert ids == sorted(everything, reverse=True)  # newest first, no gap, no duplicate
    assert ids[-1] == drawn
    reader.page.wait_for_selector("text=you have reached the first board")
    reader.shot("feed-scrolled-to-the-end", full_page=True)

    # Staff hide the newest board with the admin's bulk action; it leaves the reader's feed.
    with_second_factor(people_services.user_create(username="moderator", password=PASSWORD, is_staff=True))
    newest = ids[0]
    log_in(staff, "moderator", "/admin/feeds/board/", otp_secret=STAFF_OTP_SECRET)
    staff.page.check(f'input[name="_selected_action"][value="{newest}"]')
    staff.page.select_option("select[name=action]", "hide_boards")
    staff.page.click("button[name=index]")
    staff.page.wait_for_selector("text=1 board hidden.")
    staff.shot("admin-hidden")

    def gone_from_feed():
        reader.page.goto("/")
        return newest not in reader.card_ids()

    wait_for(gone_from_feed, timeout=20, interval=0.3, what="the hidden board leaving the feed")
    assert reader.card_ids()[0] == ids[1]
    reader.shot("feed-after-hide")
    assert reader.page.goto(f"/b/{newest}").status == 404
    reader.shot("hidden-board-404")

    for person in (reader, artist, staff):
        person.check_clean()


def test_edit_and_delete_your_own_board(celery_worker, people):
    owner = people("owner")
    user = people_services.user_create(username="owner", password=PASSWORD)
    with transaction.atomic():
        board = board_services.board_create(author=user, title="First draft", kind="sketch", tags=["draft"], doc=DOC)
    log_in_when_asked(owner, "owner", f"/b/{board.pk}/edit")
    owner.visit(f"/b/{board.pk}", "board")
    image_loaded(owner.page, ".board-image")
    first_src = owner.page.get_attribute(".board-image", "src")
    owner.page.get_by_role("link", name="Edit", exact=True).click()
    owner.page.wait_for_url(f"**/b/{board.pk}/edit")
    owner.page.wait_for_selector("#editor[data-ready=true]")
    owner.shot("editor-loaded")
    assert element_count(owner.page) == 2  # the drawing came along (json_script)
    assert owner.page.input_value("#title") == "First draft"
    assert owner.page.input_value("#tags") == "draft"

    # Undo and redo, with the buttons and the keyboard.
    drag(owner.page, [(0.1, 0.9), (0.3, 0.85), (0.5, 0.9)])
    assert element_count(owner.page) == 3
    owner.page.keyboard.press("Control+z")
    assert element_count(owner.page) == 2
    owner.page.keyboard.press("Control+y")
    assert element_count(owner.page) == 3
    owner.page.click("[data-action=undo]")
    owner.page.keyboard.press("Control+Shift+z")
    assert element_count(owner.page) == 3
    owner.page.click("[data-action=clear]")
    assert element_count(owner.page) == 0
    owner.page.click("[data-action=undo]")
    assert element_count(owner.page) == 3

    # The eraser takes away the stroke it touches; an ellipse is dragged to size.
    owner.page.click("[data-tool=eraser]")
    drag(owner.page, [(0.3, 0.8), (0.3, 0.95)])
    assert element_count(owner.page) == 2
    owner.page.click("[data-tool=ellipse]")
    drag(owner.page, [(0.6, 0.6), (0.8, 0.8)])
    assert element_count(owner.page) == 3

    # A narrow window: the canvas shrinks, the drawing keeps its 800x600 coordinates, and a drag
    # past the edge grows the board to hold it (clamped at 0 above).
    owner.page.set_viewport_size({"width": 640, "height": 900})
    owner.page.locator("#board-canvas").scroll_into_view_if_needed()
    owner.page.click("[data-tool=pen]")
    drag(owner.page, [(0.25, 0.5), (0.75, 0.5)], steps=8)
    box = owner.page.locator("#board-canvas").bounding_box()
    owner.page.mouse.move(*canvas_point(owner.page, 0.5, 0.1))
    owner.page.mouse.down()
    owner.page.mouse.move(box["x"] + box["width"] + 80, box["y"] - 40, steps=6)
    owner.page.mouse.up()
    owner.shot("editor-narrow")
    assert element_count(owner.page) == 5

    # A tag the API refuses (one too many) shows the API's own sentence; a malformed one is caught first.
    owner.page.fill("#tags", "Not a tag!")
    owner.page.click("#publish")
    assert "“Not a tag!” is not one" in owner.page.inner_text("#editor-error")
    owner.page.fill("#tags", ", ".join(f"t{i}" for i in range(11)))
    owner.page.click("#publish")
    owner.page.wait_for_selector("#editor-error:not([hidden])")
    problem = owner.page.inner_text("#editor-error")
    assert problem.startswith("tags") and "10" in problem
    owner.shot("editor-api-error")
    assert owner.page.url.endswith("/edit")

    owner.page.fill("#tags", "edited, draft")
    owner.page.fill("#title", "Second draft")
    owner.page.click("#publish")
    owner.page.wait_for_url(f"**/b/{board.pk}")
    owner.shot("board-edited")
    assert "Second draft" in owner.page.inner_text("h1")
    assert owner.page.get_attribute(".board-image", "src") != first_src  # the new drawing, not a cached one
    saved = owner.api(f"/api/v1/boards/{board.pk}")
    assert saved["tags"] == ["edited", "draft"]
    elements = saved["doc"]["elements"]
    # what was there is sent back as it was (with the ids the server gave it)
    assert [{k: v for k, v in e.items() if k != "id"} for e in elements[:2]] == DOC["elements"]
    assert all(e["id"] for e in elements)
    assert [e["type"] for e in elements] == ["rect", "text", "ellipse", "path", "path"]
    line, clamped = elements[3]["points"], elements[4]["points"]
    assert abs(line[0][0] - 200) <= 3 and abs(line[-1][0] - 600) <= 3 and all(abs(y - 300) <= 3 for _, y in line)
    assert clamped[-1][1] == 0 and clamped[-1][0] > 800
    assert (saved["doc"]["width"], saved["doc"]["height"]) == (clamped[-1][0], 600)  # the board grew to hold it
    assert json.dumps(saved["doc"]["background"]) == '"#fffdf0"'

    # Delete, with a confirmation.
    owner.page.set_viewport_size({"width": 1280, "height": 860})
    owner.page.get_by_role("link", name="Delete", exact=True).click()
    owner.page.wait_for_url(f"**/b/{board.pk}/delete")
    owner.shot("delete-confirm")
    owner.page.get_by_role("button", name="Delete for good").click()
    owner.page.wait_for_url("**/u/owner")
    assert "is deleted" in owner.page.inner_text(".messages")
    assert "You have not published a board yet" in owner.page.inner_text("main")
    owner.shot("profile-empty")
    response = owner.visit(f"/b/{board.pk}", "deleted-404")
    assert response.status == 404 and "Not found" in owner.page.inner_text("main")
    owner.check_clean()
