"""Comments in real browsers (Playwright, Chromium) against the ASGI server: two people on one
board see each other's comments appear without a reload, reply, mention and delete, all from
the keyboard; axe finds nothing on the page with a thread on it."""

import json

import pytest
from django.db import transaction

from feeds.models import Notification
from feeds.services import boards as board_services
from social import services as people_services
from ugcsite.testing import wait_for
from ugcsite.tests.support import PASSWORD, Person, axe_run, log_in

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.usefixtures("passwords_the_server_reads")]

DOC = {"width": 400, "height": 300, "background": "#ffffff", "elements": []}


@pytest.fixture
def people(live_people):
    def person(name: str) -> Person:
        made = live_people(name)
        made.page.on("dialog", lambda dialog: dialog.accept())  # "Delete this comment?"
        return made

    return person


@pytest.fixture
def board(asgi_server):
    alice = people_services.user_create(username="alice", password=PASSWORD)
    people_services.user_create(username="bob", password=PASSWORD)
    with transaction.atomic():
        return board_services.board_create(
            author=alice, title="Sunset", kind="sketch", tags=[], doc=json.loads(json.dumps(DOC))
        )


def write(person: Person, text: str) -> None:
    """Type a comment and send it with the keyboard: the field, then Tab to the button, Enter."""
    box = person.page.get_by_label("Add a comment")
    box.focus()
    person.page.keyboard.type(text)
    person.page.get_by_role("button", name="Comment", exact=True).focus()
    person.page.keyboard.press("Enter")


def item(person: Person, text: str):
    return person.page.locator("#comment-list > li", has_text=text)


def test_two_people_see_each_others_comments_live_reply_mention_and_delete(people, board):
    alice, bob = people("alice"), people("bob")
    log_in(alice, "alice", f"/b/{board.pk}")
    log_in(bob, "bob", f"/b/{board.pk}")
    for person in (alice, bob):
        person.page.wait_for_selector("#live-status[data-state='live']")
        assert person.page.locator("#comments-empty").is_visible()
        assert not person.page.locator("#comments-more").is_visible()  # one page holds them all

    write(bob, "What a sky, @alice! https://example.org/sky")
    item(alice, "What a sky").wait_for()  # no reload
    link = item(alice, "What a sky").get_by_role("link", name="https://example.org/sky")
    assert link.get_attribute("rel") == "nofollow ugc"
    assert item(alice, "What a sky").get_by_role("link", name="@alice").get_attribute("href") == "/u/alice"
    wait_for(lambda: alice.page.locator("[data-slot='comment-count']").inner_text() == "1")  # its own request
    wait_for(lambda: Notification.objects.filter(kind="comment", recipient__username="alice").exists())
    # bob's own answer may come after alice's live copy: the field takes focus back when it does
    wait_for(lambda: bob.page.get_by_label("Add a comment").evaluate("e => e === document.activeElement"))

    # alice replies from the keyboard; bob sees it under his comment, indented
    item(alice, "What a sky").get_by_role("button", name="Reply").focus()
    alice.page.keyboard.press("Enter")
    assert alice.page.locator("#comment-replying").is_visible()
    assert alice.page.get_by_label("Add a comment").evaluate("e => e === document.activeElement")
    alice.page.keyboard.type("Thank you, bob")
    alice.page.get_by_role("button", name="Comment", exact=True).focus()
    alice.page.keyboard.press("Enter")
    reply = item(bob, "Thank you, bob")
    reply.wait_for()
    assert "reply" in reply.get_attribute("class")
    assert bob.page.locator("#comment-list > li").nth(1).inner_text().find("Thank you") >= 0
    wait_for(lambda: Notification.objects.filter(kind="reply", recipient__username="bob").exists())
    bob.shot("a thread")
    assert axe_run(bob.page) == []

    # bob deletes his comment: it had a reply, so both pages show the placeholder, live
    item(bob, "What a sky").get_by_role("button", name="Delete").focus()
    bob.page.keyboard.press("Enter")
    for person in (alice, bob):
        person.page.locator("#comment-list > li", has_text="This comment was deleted.").wait_for()
        assert item(person, "Thank you, bob").is_visible()
        wait_for(lambda p=person: p.page.locator("[data-slot='comment-count']").inner_text() == "1")
    alice.shot("after the delete")
    assert axe_run(alice.page) == []
    for person in (alice, bob):
        person.check_clean()
