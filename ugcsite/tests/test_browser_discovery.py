"""Discovery and social reading in a real browser: the discover page filters and sorts through
shareable links, a feed page shows who of the people I follow read each board, and the popular
page ranks by reads among them. Same setup as test_browser (live server, real Celery worker)."""

import re

import pytest
from django.db import transaction

from feeds import keys
from feeds.models import Board
from feeds.services import boards as board_services, follows
from social import graph, services as people_services
from social.models import User
from ugcsite.platform.redis import get_redis
from ugcsite.testing import wait_for
from ugcsite.tests.support import PASSWORD, log_in_when_asked

pytestmark = [pytest.mark.worker, pytest.mark.browser]

DOC = {
    "width": 800,
    "height": 600,
    "background": "#ffffff",
    "elements": [
        {"type": "ellipse", "color": "#2f9e44", "width": 4, "x": 200, "y": 150, "w": 300, "h": 200, "fill": None}
    ],
}


def card_ids(page) -> list[int]:
    return [int(i) for i in page.locator(".cards > .card").evaluate_all("cards => cards.map(c => c.dataset.boardId)")]


def test_discover_filters_and_sorts_and_feeds_show_who_read_what(celery_worker, people):
    with transaction.atomic():
        alice, bob, carol = (
            people_services.user_create(username=n, password=PASSWORD) for n in ("alice", "bob", "carol")
        )
        for follower, followee in ((carol, alice), (carol, bob), (bob, alice)):
            follows.follow_create(follower=follower, followee=followee)
    with transaction.atomic():
        walk = board_services.board_create(author=alice, title="A walk", kind="map", tags=["walk"], doc=DOC)
    with transaction.atomic():
        cat = board_services.board_create(author=alice, title="A cat", kind="sketch", tags=["cat"], doc=DOC)
    with transaction.atomic():
        cat_walk = board_services.board_create(
            author=alice, title="Cat walk", kind="map", tags=["cat", "walk"], doc=DOC
        )
    wait_for(lambda: get_redis().zcard(keys.home_timeline(carol.pk)) == 3, what="the fan-out to carol")
    for n in range(3):  # three anonymous visitors (a view counts once per visitor and day)
        board_services.board_record_view(board=Board.objects.get(pk=cat_walk.pk), visitor=f"visitor {n}")
    board_services.board_record_view(board=Board.objects.get(pk=walk.pk), reader=bob)  # bob reads "A walk"

    # bob lets the people who follow him see what he reads (off until he says so)
    sharer = people("bob")
    log_in_when_asked(sharer, "bob", "/settings")
    sharer.shot("settings")
    sharer.page.check("#id_share_reading")
    sharer.page.click("form.stacked button[type=submit]")
    sharer.page.locator(".message.success").wait_for(state="visible")
    assert sharer.page.is_checked("#id_share_reading")
    sharer.shot("settings-saved")
    sharer.check_clean()

    reader = people("carol")
    page = reader.page
    reader.visit("/login?next=/", "login")
    page.fill("#id_username", "carol")
    page.fill("#id_password", PASSWORD)
    page.click("form.stacked button[type=submit]")
    page.wait_for_url(re.compile(r"://[^/]+/$"))
    line = page.locator(f'.card[data-board-id="{walk.pk}"] [data-slot="readby"]')
    line.wait_for(state="visible")
    assert line.inner_text() == "Read by bob"
    assert page.locator(f'.card[data-board-id="{cat.pk}"] [data-slot="readby"]').is_hidden()
    reader.shot("feed-read-by")

    reader.visit("/discover", "discover")
    assert card_ids(page) == [cat_walk.pk, cat.pk, walk.pk]
    page.click(".facets a:text-is('map')")
    page.wait_for_url(re.compile(r"kind=map"))
    assert card_ids(page) == [cat_walk.pk, walk.pk]
    page.click(".tabs a:text-is('Most viewed')")
    page.wait_for_url(re.compile(r"sort=popular"))
    assert card_ids(page) == [cat_walk.pk, walk.pk]
    page.click(".facets a:text-is('#cat')")
    page.wait_for_url(re.compile(r"tag=cat"))
    reader.shot("discover-filtered")
    assert card_ids(page) == [cat_walk.pk]
    assert "kind=map" in page.url and "sort=popular" in page.url  # the link keeps every filter
    shared = page.url
    reader.visit(shared, "discover-shared-link")  # a shared link gives the same answer
    assert card_ids(page) == [cat_walk.pk]

    reader.visit(f"/b/{walk.pk}", "board-read-by")
    assert page.locator(".board-head .readby").inner_text() == "Read by bob, whom you follow"
    page.click("a:text-is('More maps')")
    page.wait_for_url(re.compile(r"/discover\?kind=map"))
    assert card_ids(page) == [cat_walk.pk, walk.pk]

    reader.visit("/popular?scope=following", "popular-following")
    assert card_ids(page) == [walk.pk]
    assert page.locator(".card .reads").inner_text() == "1 read"
    reader.visit("/popular", "popular-all")
    assert card_ids(page)[0] == cat_walk.pk
    reader.check_clean()


def test_the_header_search_finds_a_person_and_follows_them_from_the_keyboard(people):
    with transaction.atomic():
        alice = people_services.user_create(username="alice", password=PASSWORD)
        people_services.user_create(username="newbie", password=PASSWORD)
    with transaction.atomic():
        board_services.board_create(author=alice, title="alice draws", kind="note", tags=[], doc=DOC)
    newbie = people("newbie")
    log_in_when_asked(newbie, "newbie", "/settings")
    page = newbie.page
    page.fill("#site-search", "alice")
    page.press("#site-search", "Enter")  # the header searches people and boards together
    page.wait_for_url("**/search?q=alice")
    people_list = page.locator("[data-testid=search-people]")
    assert people_list.locator(".person-name").first.inner_text() == "alice"
    assert "alice draws" in page.locator(".cards").inner_text()  # the boards below the people
    newbie.shot("found-both")
    follow = page.locator("[data-search-follow=alice]")
    follow.focus()
    page.keyboard.press("Enter")
    page.wait_for_url("**/search?q=alice")
    page.locator("[data-testid=search-people] button.following").wait_for()
    assert graph.is_following(follower_id=User.objects.get(username="newbie").pk, followee_id=alice.pk)
    newbie.check_clean()
