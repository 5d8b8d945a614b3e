"""Remix and likes in a real Chromium (issue 27): remix a board, draw on the copy, publish it,
see the credit on both pages; like it from another account, with the keyboard, and see the count
move in place and the author's gathered notification. Live server, real Celery worker."""

import pytest
from django.db import transaction

from feeds.models import Board, Like, Notification
from feeds.services import boards as board_services
from social import services as people_services
from ugcsite.testing import wait_for
from ugcsite.tests.support import PASSWORD, axe_run, drag, element_count, log_in

pytestmark = [pytest.mark.worker, pytest.mark.browser]

LINE = {"type": "path", "color": "#1d2330", "width": 4, "points": [[100, 100], [300, 200]]}


def test_remix_then_like_from_another_account(celery_worker, people):
    with transaction.atomic():
        alice, bob, _ = (people_services.user_create(username=n, password=PASSWORD) for n in ("alice", "bob", "carol"))
    with transaction.atomic():
        source = board_services.board_create(
            author=alice,
            title="Sunset",
            kind="map",
            tags=["sky"],
            doc={"width": 800, "height": 600, "background": "#ffffff", "elements": [LINE]},
        )

    # bob remixes alice's board: the editor opens on a copy, and nothing exists until he publishes
    remixer = people("bob")
    log_in(remixer, "bob", f"/b/{source.pk}")
    page = remixer.page
    page.get_by_role("link", name="Remix").click()
    page.wait_for_selector("#editor[data-ready=true]")
    assert "remix=" in page.url and page.input_value("#title") == "Remix of Sunset"
    assert element_count(page) == 1 and Board.objects.count() == 1
    remixer.shot("remix-editor")
    page.locator("#board-canvas").scroll_into_view_if_needed()
    page.click("[data-tool=pen]")
    drag(page, [(0.6, 0.6), (0.8, 0.7)])
    assert element_count(page) == 2
    page.click("#publish")
    page.wait_for_url("**/b/*")
    remix = Board.objects.exclude(pk=source.pk).get()
    assert remix.author_id == bob.pk and remix.remixed_from_id == source.pk and len(remix.doc["elements"]) == 2
    credit = page.locator(".credit")
    assert credit.inner_text() == "Remix of Sunset by alice"
    remixer.shot("remix-page")

    # the source's page counts and lists its remixes
    remixer.visit(f"/b/{source.pk}", "source-page")
    assert page.locator("#remixes-title").inner_text() == "1 remix"
    assert page.locator(".remixes .card").count() == 1
    assert page.locator(".remixes .card-title").inner_text() == "Remix of Sunset"

    # carol likes the remix from the keyboard; the heart toggles in place, without a reload
    fan = people("carol")
    log_in(fan, "carol", f"/b/{remix.pk}")
    heart = fan.page.locator(".board-head [data-like]")
    wait_for(lambda: heart.get_attribute("aria-pressed") == "false")
    fan.page.evaluate("() => { window.notReloaded = true; }")
    heart.focus()
    fan.page.keyboard.press("Enter")
    wait_for(lambda: Like.objects.filter(board=remix).count() == 1)
    assert heart.get_attribute("aria-pressed") == "true" and heart.inner_text().endswith("1")
    assert fan.page.evaluate("() => window.notReloaded") is True
    fan.shot("liked")
    assert axe_run(fan.page) == []
    fan.page.reload()
    heart = fan.page.locator(".board-head [data-like]")
    wait_for(lambda: heart.get_attribute("aria-pressed") == "true")  # the server's answer, not the page's memory
    assert heart.inner_text().endswith("1")

    # bob sees the count on his board's card and the notification, gathered
    remixer.visit("/u/bob", "profile-card")
    card_heart = page.locator(f'.card[data-board-id="{remix.pk}"] [data-like]')
    assert card_heart.inner_text().endswith("1")
    remixer.visit("/notifications", "notifications")
    assert Notification.objects.filter(recipient=bob, kind="like", board_id=remix.pk).count() == 1
    text = page.locator('[data-kind="like"] .notification-text').inner_text()
    assert text.startswith("carol liked Remix of Sunset")
    # and alice heard of the remix
    author = people("alice")
    log_in(author, "alice", "/notifications")
    assert author.page.locator('[data-kind="remix"] .notification-text').inner_text().startswith("bob remixed Sunset")
    for person in (remixer, fan, author):
        person.check_clean()
