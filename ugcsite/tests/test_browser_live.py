"""Shared boards, live, in real browsers (Playwright, Chromium) against a real ASGI server
process (uvicorn, as `make run` serves the site): two people draw on one board at once and each
sees the other's strokes; a connection cut and restored loses nothing drawn meanwhile; undo is
each person's own; someone who may only watch sees the strokes on the board's page."""

import json

import pytest
from django.db import transaction

from feeds.models import Board
from feeds.services import boards as board_services, editors as editor_services
from social import services as people_services
from ugcsite.testing import wait_for
from ugcsite.tests.support import PASSWORD, Person, drag, element_count, live_ready, log_in

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
def people(browser, asgi_server, request):
    """conftest's ``people``, on the ASGI server (the live parts need its WebSocket)."""
    made = []

    def person(name: str) -> Person:
        made.append(Person(browser, asgi_server.url, name, request.node.originalname))
        return made[-1]

    yield person
    for each in made:
        each.context.close()


def elements_seen(person: Person) -> int:
    return element_count(person.page)


@pytest.fixture
def board(asgi_server):
    alice = people_services.user_create(username="alice", password=PASSWORD)
    bob = people_services.user_create(username="bob", password=PASSWORD)
    people_services.user_create(username="carol", password=PASSWORD)
    with transaction.atomic():
        made = board_services.board_create(
            author=alice, title="Together", kind="sketch", tags=[], doc=json.loads(json.dumps(DOC))
        )
    editor_services.editor_invite(board=made, user=bob)
    return made


def rest_doc(board_id: int) -> dict:
    return Board.objects.get(pk=board_id).doc


def test_two_people_draw_at_once_and_each_sees_the_other(people, board, asgi_server):
    alice, bob = people("alice"), people("bob")
    log_in(alice, "alice", f"/b/{board.pk}/edit")
    log_in(bob, "bob", f"/b/{board.pk}/edit")
    for person in (alice, bob):
        live_ready(person)
    alice.page.wait_for_function("() => document.getElementById('live-peers').textContent.includes('bob')")
    assert "alice" in bob.page.inner_text("#live-peers")

    drag(alice.page, [(0.1, 0.8), (0.3, 0.85), (0.5, 0.8)])
    drag(bob.page, [(0.6, 0.1), (0.8, 0.2)])
    for person in (alice, bob):
        wait_for(lambda person=person: elements_seen(person) == 3, what=f"{person.name} to see both strokes")
    alice.shot("both-strokes")
    bob.shot("both-strokes")

    # Undo is each person's own: bob's undo takes his stroke, never alice's.
    bob.page.keyboard.press("Control+z")
    for person in (alice, bob):
        wait_for(lambda person=person: elements_seen(person) == 2, what=f"{person.name} to see bob's undo")
    assert bob.page.locator("[data-action=undo]").is_disabled()

    # The socket is cut; bob keeps drawing; on reconnect nothing is lost.
    bob.page.evaluate("() => window.ugcsiteLive.boards[0].hold()")
    bob.page.wait_for_selector("#live-status[data-state=reconnecting]")
    drag(bob.page, [(0.2, 0.2), (0.4, 0.3)])
    drag(bob.page, [(0.2, 0.4), (0.4, 0.5)])
    drag(alice.page, [(0.7, 0.7), (0.9, 0.9)])
    assert elements_seen(bob) == 4  # his own two, offline, on top of what he had
    bob.shot("offline")
    bob.page.evaluate("() => window.ugcsiteLive.boards[0].resume()")
    for person in (alice, bob):
        wait_for(
            lambda person=person: elements_seen(person) == 5,
            what=f"{person.name} to see everything after the reconnect",
        )
    alice.shot("after-reconnect")

    # Every accepted op reaches the REST doc (compaction), and both pages agree with it.
    from feeds.live import compaction

    compaction.board_compact(board.pk)
    ids = [e["id"] for e in rest_doc(board.pk)["elements"]]
    for person in (alice, bob):
        shown = person.page.evaluate("() => window.ugcsiteLive.boards[0].view().elements.map(e => e.id)")
        assert shown == ids
        person.check_clean()


def test_a_watcher_sees_strokes_on_the_board_page_but_cannot_draw(people, board):
    alice, carol = people("alice"), people("carol")
    log_in(alice, "alice", f"/b/{board.pk}/edit")
    live_ready(alice)
    log_in(carol, "carol", f"/b/{board.pk}")
    carol.page.wait_for_selector("#live-view:not([hidden])")
    assert carol.page.evaluate("() => window.ugcsiteLive.boards[0].you.can_edit") is False
    assert carol.page.goto(f"/b/{board.pk}/edit").status == 403
    carol.page.go_back()
    carol.page.wait_for_selector("#live-view:not([hidden])")
    drag(alice.page, [(0.1, 0.1), (0.5, 0.5)])
    carol.page.wait_for_selector("#live-view[data-elements='2']")
    carol.shot("watching")
    # Even a hand-made op from the watcher's page is refused, and nothing changes.
    carol.page.evaluate("""() => window.ugcsiteLive.boards[0].send({kind: "remove", id: "anything"})""")
    carol.page.wait_for_function("() => window.ugcsiteLive.boards[0].pending.length === 0")
    assert elements_seen(alice) == 2
    alice.check_clean()
