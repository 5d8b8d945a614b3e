"""A board's history in real browsers (Playwright, Chromium) against the real ASGI server (issue
40): two people draw on one board, one deletes everything, the other opens the history, previews
an earlier version (drawn over the board, the board unchanged) and restores it, and both see the
drawing come back; the panel works with the keyboard and axe finds nothing on it; someone who
may only read the board previews but is offered no restore."""

import json

import pytest

from feeds.live import compaction
from feeds.models import Board, BoardVersion
from social import services as people_services
from ugcsite.testing import wait_for
from ugcsite.tests.support import PASSWORD, axe_run, board_for_two, drag, element_count, live_ready, log_in

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


@pytest.fixture
def board(asgi_server):
    return board_for_two(json.loads(json.dumps(DOC)))


def preview_of(page) -> dict:
    return page.evaluate(
        """() => { const p = document.querySelector('.history-preview');
                  return p && p.isConnected ? {n: Number(p.dataset.version), elements: Number(p.dataset.elements)} : null; }"""
    )


def test_one_deletes_everything_the_other_previews_and_restores_it_and_both_see_it_return(people, board, settings):
    settings.VERSION_EVERY_SECONDS = 0  # every compaction of this test keeps a version
    alice, bob = people("alice"), people("bob")
    log_in(alice, "alice", f"/b/{board.pk}/edit")
    log_in(bob, "bob", f"/b/{board.pk}/edit")
    for person in (alice, bob):
        live_ready(person)
    drag(alice.page, [(0.1, 0.8), (0.3, 0.85), (0.5, 0.8)])
    drag(bob.page, [(0.6, 0.1), (0.8, 0.2)])
    for person in (alice, bob):
        wait_for(lambda person=person: element_count(person.page) == 3, what=f"{person.name} to see both strokes")
    compaction.board_compact(board.pk)  # beat's run: the drawing reaches PostgreSQL, a version is kept
    assert BoardVersion.objects.filter(board_id=board.pk).order_by("-n").values_list("n", "elements").first() == (2, 3)

    # alice selects everything and deletes it
    alice.page.keyboard.press("Control+a")
    alice.page.keyboard.press("Delete")
    for person in (alice, bob):
        wait_for(lambda person=person: element_count(person.page) == 0, what=f"{person.name} to see it all gone")
    compaction.board_compact(board.pk)
    assert Board.objects.get(pk=board.pk).doc["elements"] == []

    # bob opens the history with the keyboard and previews version 2
    page = bob.page
    page.locator("#history > summary").focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#history-list .history-item")
    items = page.locator("#history-list .history-item")
    assert items.count() == 3  # publish, the drawing, the deletion: newest first
    assert "Version 3" in items.nth(0).inner_text() and "alice" in items.nth(0).inner_text()
    assert "Version 2" in items.nth(1).inner_text() and "bob" in items.nth(1).inner_text()
    items.nth(1).focus()
    page.keyboard.press("Enter")
    wait_for(lambda: preview_of(page) == {"n": 2, "elements": 3}, what="version 2 drawn over the board")
    assert element_count(page) == 0  # only a preview: the board is as it was
    assert items.nth(1).get_attribute("aria-pressed") == "true"
    # the slider walks the versions: one step left is version 1 (the board as published)
    page.locator("#history-slider").focus()
    page.keyboard.press("ArrowLeft")
    wait_for(lambda: preview_of(page) == {"n": 1, "elements": 1}, what="version 1 drawn by the slider")
    page.keyboard.press("ArrowRight")
    wait_for(lambda: preview_of(page) == {"n": 2, "elements": 3}, what="back to version 2")
    bob.shot("preview")
    assert axe_run(page) == []

    page.locator("#history-restore").focus()
    page.keyboard.press("Enter")
    for person in (alice, bob):
        wait_for(lambda person=person: element_count(person.page) == 3, what=f"{person.name} to see it return")
    page.wait_for_selector("#history-status:has-text('kept as version 4')")
    assert preview_of(page) is None
    assert len(Board.objects.get(pk=board.pk).doc["elements"]) == 3
    assert list(BoardVersion.objects.filter(board_id=board.pk).order_by("n").values_list("n", "elements")) == [
        (1, 1),
        (2, 3),
        (3, 0),
        (4, 3),
    ]
    assert page.locator("#history-list .history-item").count() == 4
    alice.shot("restored")
    for person in (alice, bob):
        person.check_clean()


def test_a_reader_previews_on_the_board_page_with_no_restore_and_escape_goes_back(people, board, asgi_server):
    carol = people("carol")
    people_services.user_create(username="carol", password=PASSWORD)
    log_in(carol, "carol", f"/b/{board.pk}")
    page = carol.page
    page.locator("#history > summary").click()
    page.wait_for_selector("#history-list .history-item")
    assert page.locator("#history-restore").count() == 0
    page.locator("#history-list .history-item").first.click()
    wait_for(lambda: preview_of(page) == {"n": 1, "elements": 1}, what="the preview on the board page")
    page.keyboard.press("Escape")
    wait_for(lambda: preview_of(page) is None, what="Escape to leave the preview")
    assert axe_run(page) == []
    carol.check_clean()
