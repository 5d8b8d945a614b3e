"""Hidden means hidden in every count, not only in lists (issue 38, item 6): what a browser tour
found, each case through the API and the pages on real PostgreSQL and Redis. After a block or a
mute, totals, facets and lists agree for the viewer, and a third person still counts everyone."""

import re

import pytest
from django.test import Client

from social.models import User

pytestmark = pytest.mark.django_db

DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}


def publish(run, client, title: str, *, kind="note", tags=("hiddencount",)) -> int:
    response = run(client.post, "/api/v1/boards", {"title": title, "kind": kind, "tags": list(tags), "doc": DOC})
    assert response.status_code == 201, response.content
    return response.json()["id"]


def page_for(username: str) -> Client:
    page = Client()
    page.force_login(User.objects.get(username=username))
    return page


def test_a_person_who_blocks_is_neither_found_nor_counted_by_the_blocked(api, run):
    erin, frank, gina = api.as_user("erin"), api.as_user("frank"), api.as_user("gina")
    publish(run, erin, "erin's sunset")
    run(erin.put, "/api/v1/users/frank/block")
    found = frank.get("/api/v1/search?q=erin&type=users").json()
    assert found == {"total": 0, "items": []}
    assert frank.get("/api/v1/search?q=sunset&type=boards").json() == {"total": 0, "items": []}
    # a third person still finds and counts her
    assert gina.get("/api/v1/search?q=erin&type=users").json()["total"] == 1
    assert gina.get("/api/v1/search?q=sunset&type=boards").json()["total"] == 1
    html = page_for("frank").get("/search?q=erin").content.decode()
    total = re.search(r'data-testid="search-total">([^<]*)<', html).group(1)
    assert total.startswith("0 people and 0 boards found"), total


def test_a_muted_authors_boards_leave_the_discover_total_and_its_facets(api, run):
    carol, dave, gina = api.as_user("carol"), api.as_user("dave"), api.as_user("gina")
    for n in range(3):
        publish(run, dave, f"dave {n}", kind="sketch", tags=("hiddencount", "onlydave"))
    publish(run, gina, "gina's", kind="note", tags=("hiddencount",))
    assert carol.get("/api/v1/discover?author=dave").json()["total"] == 3
    assert run(carol.put, "/api/v1/users/dave/mute").status_code == 204
    assert carol.get("/api/v1/discover?author=dave").json() == {"total": 0, "items": []}
    shown = carol.get("/api/v1/discover?tag=hiddencount").json()
    assert shown["total"] == 1 == len(shown["items"])
    assert gina.get("/api/v1/discover?tag=hiddencount").json()["total"] == 4  # others count him
    html = page_for("carol").get("/discover?author=dave").content.decode()
    assert "No board matches" in html and "3 boards" not in html
    # the facets: dave's kind and his tags count none of his boards for carol; for gina they do
    facets = {who: page_for(who).get("/discover").content.decode() for who in ("carol", "gina")}
    assert "onlydave" not in facets["carol"] and "onlydave" in facets["gina"]

    def sketches(html: str) -> int:
        return int(re.search(r'>sketch</a> <span class="count">(\d+)</span>', html).group(1))

    assert sketches(facets["gina"]) == 3
    assert sketches(facets["carol"]) == 0


def test_a_blocker_sees_none_of_the_blocked_persons_boards_on_their_profile(api, run):
    erin, frank = api.as_user("erin"), api.as_user("frank")
    titles = [f"frank's board {n}" for n in range(8)]
    for title in titles:
        publish(run, frank, title)
    run(erin.put, "/api/v1/users/frank/block")
    assert erin.get("/api/v1/users/frank/boards").json() == {"items": [], "next": None}
    html = page_for("erin").get("/u/frank").content.decode()
    assert 'data-testid="blocked-boards"' in html and "8 boards are not shown" in html
    assert not any(title.replace("'", "&#x27;") in html for title in titles)
    assert len(api.get("/api/v1/users/frank/boards").json()["items"]) == 8  # to anyone else they are there


def test_likers_and_remixes_count_no_one_the_viewer_hides(api, run):
    alice, bob, carol, dave = (api.as_user(n) for n in ("alice", "bob", "carol", "dave"))
    board = publish(run, alice, "liked and remixed")
    for person in (bob, carol, dave):
        assert run(person.put, f"/api/v1/boards/{board}/like").status_code == 204
        assert run(person.post, f"/api/v1/boards/{board}/remix", {}).status_code == 201
    run(alice.put, "/api/v1/users/bob/block")  # blocked either way: neither liker nor remix counts
    run(alice.put, "/api/v1/users/carol/mute")  # muted: her like still counts, her remix does not
    likers = alice.get(f"/api/v1/boards/{board}/likes").json()
    assert likers["total"] == 2 == len(likers["items"])
    assert {item["username"] for item in likers["items"]} == {"carol", "dave"}
    remixes = alice.get(f"/api/v1/boards/{board}/remixes").json()
    assert remixes["total"] == 1 == len(remixes["items"])
    assert remixes["items"][0]["author"] == "dave"
    # bob, blocked, is told the same from his side: alice's board is not there for him at all
    assert bob.get(f"/api/v1/boards/{board}/likes").status_code == 404
    everyone = dave.get(f"/api/v1/boards/{board}/likes").json()
    assert everyone["total"] == 3 and dave.get(f"/api/v1/boards/{board}/remixes").json()["total"] == 3


def test_a_search_total_counts_no_board_of_a_muted_author(api, run):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    publish(run, bob, "harbour at dawn")
    publish(run, alice, "harbour at dusk")
    run(alice.put, "/api/v1/users/bob/mute")
    found = alice.get("/api/v1/search?q=harbour&type=boards").json()
    assert found["total"] == 1 == len(found["items"])
    assert api.get("/api/v1/search?q=harbour&type=boards").json()["total"] == 2
    # muting is not blocking: people search still finds him (to unmute him)
    assert alice.get("/api/v1/search?q=bob&type=users").json()["total"] == 1


def test_an_empty_feed_whose_only_followee_is_muted_says_so(api, run):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    run(alice.put, "/api/v1/users/bob/follow")
    publish(run, bob, "bob's")
    run(alice.put, "/api/v1/users/bob/mute")
    html = page_for("alice").get("/").content.decode()
    assert "have not published a board yet" not in html
    assert 'data-testid="muted-followees"' in html and "You mute 1 of the people you follow" in html
    run(alice.delete, "/api/v1/users/bob/mute")
    assert "bob&#x27;s" in page_for("alice").get("/").content.decode()
