"""Search (API.md, "Search, notifications, your own settings"): people by username and display
name (prefix, any word, typos), boards by title, tags and drawing text, best match first, paged;
current after every create, update, delete, hide and suspension; the 400s."""

import pytest
from django.test import Client

from feeds.models import Board
from feeds.services import boards, moderation
from social.models import User
from ugcsite.testing import assert_problem

DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}
pytestmark = pytest.mark.django_db

SEARCH = "/api/v1/search"


def doc(*texts: str) -> dict:
    return {
        "width": 400,
        "height": 300,
        "background": "#ffffff",
        "elements": [
            {"type": "text", "color": "#000000", "size": 12, "x": 10, "y": 20 + 20 * i, "text": text}
            for i, text in enumerate(texts)
        ]
        + [{"type": "path", "color": "#000000", "width": 2, "points": [[1, 1], [5, 5]]}],
    }


def post(run, client, title: str, *, tags=(), texts=(), kind="note") -> int:
    response = run(
        client.post, "/api/v1/boards", {"title": title, "kind": kind, "tags": list(tags), "doc": doc(*texts)}
    )
    assert response.status_code == 201, response.content
    return response.json()["id"]


def found(api, q: str, kind: str = "boards", **query) -> list:
    response = api.get(SEARCH, q=q, type=kind, **query)
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"total", "items"}
    key = "username" if kind == "users" else "id"
    return [item[key] for item in body["items"]]


def test_people_by_username_prefix_display_name_and_typo(api, run):
    alice = api.as_user("alice")
    run(alice.patch, "/api/v1/me", {"display_name": "Alice Wönderland"})
    api.as_user("alicia")
    api.as_user("malice")
    bob = api.as_user("bob_smith")
    run(bob.patch, "/api/v1/me", {"display_name": "Robert Alister"})

    assert found(api, "alice", "users")[0] == "alice"  # the name itself first
    assert set(found(api, "ali", "users")) >= {"alice", "alicia", "bob_smith"}  # prefixes: of a name, of a word
    assert found(api, "ali", "users")[:2] == ["alice", "alicia"]  # usernames that start with it before words that do
    assert "alice" in found(api, "alcie", "users")  # a typo
    assert found(api, "wonderl", "users") == ["alice"]  # accents ignored, display name searched
    assert found(api, "ROBERT", "users") == ["bob_smith"]
    assert found(api, "zzzz", "users") == []
    item = api.get(SEARCH, q="alice", type="users").json()["items"][0]
    assert item == {
        "id": User.objects.get(username="alice").pk,
        "username": "alice",
        "display_name": "Alice Wönderland",
        "avatar_url": "/u/alice/avatar?v=0",
    }


def test_short_queries_match_name_prefixes(api):
    for name in ("al_one", "al_two", "bo_three"):
        api.as_user(name)
    assert sorted(found(api, "a", "users")) == ["al_one", "al_two"]
    assert found(api, "bo", "users") == ["bo_three"]
    assert found(api, "%", "users") == [] and found(api, "_", "users") == []  # LIKE's wildcards are plain text


def test_suspended_people_are_not_found(api, run):
    api.as_user("alice")
    run(moderation.user_suspend, user=User.objects.get(username="alice"))
    assert found(api, "alice", "users") == []
    assert api.get(SEARCH, q="alice", type="users").json()["total"] == 0


def test_boards_by_title_tags_and_drawing_text_ranked(api, run):
    alice = api.as_user("alice")
    in_text = post(run, alice, "A quiet evening", texts=["the garden is green"])
    in_tags = post(run, alice, "Something else", tags=["garden-plan"])
    in_title = post(run, alice, "Garden map")
    post(run, alice, "Unrelated", texts=["nothing here"])

    assert found(api, "garden") == [in_title, in_tags, in_text]  # title above tags above drawing text
    assert found(api, "gard") == [in_title, in_tags, in_text]  # words match as prefixes
    assert found(api, "green garden") == [in_text]  # every word must match
    assert found(api, "Gardén") == [in_title, in_tags, in_text]  # accents ignored
    assert found(api, "plan") == [in_tags]  # a word inside a tag
    assert found(api, "!!! ???") == []  # no word at all
    item = api.get(SEARCH, q="garden map").json()["items"][0]
    assert item["title"] == "Garden map" and item["author"] == "alice"
    assert set(item) == {
        "id",
        "author",
        "title",
        "kind",
        "tags",
        "created_at",
        "updated_at",
        "views",
        "likes",
        "preview_url",
    }
    note = {"type": "sticky", "color": "#1d2330", "fill": "#fff3bf", "size": 2, "x": 1, "y": 1, "w": 5, "h": 5}
    doc = {**DOC, "elements": [{**note, "size": 8, "text": "buy pineapples"}]}
    on_a_note = run(alice.post, "/api/v1/boards", {"title": "Shopping", "kind": "note", "doc": doc}).json()["id"]
    assert found(api, "pineapple") == [on_a_note]  # a sticky note's text is drawing text too


def test_search_is_current_after_update_delete_and_hide(api, run):
    alice = api.as_user("alice")
    first = post(run, alice, "Old title")
    second = post(run, alice, "Harbour sketch")
    assert found(api, "old") == [first]

    run(alice.patch, f"/api/v1/boards/{first}", {"title": "New title", "doc": doc("lighthouse")})
    assert found(api, "old") == []
    assert found(api, "new") == [first]
    assert found(api, "lighthouse") == [first]

    run(alice.delete, f"/api/v1/boards/{first}")
    assert found(api, "new") == []

    run(moderation.board_hide, board=Board.objects.get(pk=second))
    assert found(api, "harbour") == []
    run(moderation.board_unhide, board=Board.objects.get(pk=second))
    assert found(api, "harbour") == [second]

    run(moderation.user_suspend, user=User.objects.get(username="alice"))
    assert found(api, "harbour") == []


def test_paging_and_total(api, run):
    alice = api.as_user("alice")
    ids = [post(run, alice, f"Tree number {i}") for i in range(5)]
    newest_first = ids[::-1]
    assert found(api, "tree", limit=2) == newest_first[:2]  # equal rank: newest first
    assert found(api, "tree", limit=2, offset=2) == newest_first[2:4]
    assert found(api, "tree", limit=2, offset=4) == newest_first[4:]
    past = api.get(SEARCH, q="tree", offset=10).json()
    assert past == {"total": 5, "items": []}
    assert api.get(SEARCH, q="tree").json()["total"] == 5


def test_only_the_newest_matches_are_ranked_and_counted(api, run, monkeypatch):
    alice = api.as_user("alice")
    best_but_old = post(run, alice, "Cloud", texts=["cloud cloud"])
    newer = [post(run, alice, f"Sky {i}", texts=["a cloud"]) for i in range(3)]
    assert found(api, "cloud")[0] == best_but_old
    monkeypatch.setattr("feeds.search.SEARCH_MATCHES_MAX", 3)
    assert api.get(SEARCH, q="cloud").json()["total"] == 3
    assert found(api, "cloud") == newer[::-1]  # the old board fell past the newest 3
    assert api.get(SEARCH, q="cloud", offset=5).json() == {"total": 3, "items": []}


@pytest.mark.parametrize(
    "query, problem",
    [
        ({}, "q must be 1 to 100 characters"),
        ({"q": ""}, "q must be 1 to 100 characters"),
        ({"q": "x" * 101}, "q must be 1 to 100 characters"),
        ({"q": "a\x00b"}, "NUL"),
        ({"q": "alice", "type": "posts"}, "type must be users or boards"),
        ({"q": "alice", "limit": "0"}, "limit"),
        ({"q": "alice", "offset": "-1"}, "offset"),
    ],
)
def test_bad_queries_are_400_with_detail(api, query, problem):
    detail = assert_problem(api.get(SEARCH, **query), 400)["detail"]
    assert problem in detail


def test_search_page_and_header_box(api, run, client):
    alice = api.as_user("alice")
    post(run, alice, "Search me please")
    html = client.get("/search", {"q": "search me"}).content.decode()
    assert 'role="search"' in html and "1 board found" in html and "Search me please" in html
    html = client.get("/search", {"q": "ali", "type": "users"}).content.decode()
    assert "1 person found" in html and "/u/alice" in html
    assert client.get("/search", {"q": "x" * 101}).status_code == 400
    assert client.get("/search").status_code == 200


def test_a_drawing_text_jsonb_cannot_hold_is_stored_and_the_rest_searched(api, run):
    """The API refuses a NUL in a drawing's text (feeds.validation); a board stored before it did keeps one."""
    alice = api.as_user("alice")
    texts = ["nul \x00 inside", "an emoji \U0001f600 here", "findable words"]
    odd = run(
        boards.board_create,
        author=User.objects.get(username="alice"),
        title="Odd drawing",
        kind="note",
        tags=[],
        doc=doc(*texts),
    ).pk
    board = alice.get(f"/api/v1/boards/{odd}").json()
    assert [e["text"] for e in board["doc"]["elements"] if e["type"] == "text"][:2] == [
        "nul \x00 inside",
        "an emoji \U0001f600 here",
    ]
    assert found(api, "findable") == [odd]
    assert found(api, "emoji") == [odd]


def test_people_rank_a_bounded_set_and_the_name_itself_stays_first(api, monkeypatch):
    for name in ("sam_a", "sam_b", "sam_c", "sam_d", "sam"):
        api.as_user(name)
    monkeypatch.setattr("social.search.SEARCH_MATCHES_MAX", 2)
    body = api.get(SEARCH, q="sam", type="users").json()
    assert body["total"] == 2 and body["items"][0]["username"] == "sam"


def test_the_search_page_finds_people_then_boards_with_follow_buttons(api, run):
    alice = api.as_user("alice")
    run(alice.post, "/api/v1/boards", {"title": "alice in the garden", "kind": "note", "doc": DOC})
    api.as_user("bob")
    page = Client()
    page.force_login(User.objects.get(username="bob"))
    html = page.get("/search?q=alice").content.decode()
    people, boards = html.index('data-testid="search-people"'), html.index('class="cards"')
    assert people < boards and "alice in the garden" in html[boards:]
    assert 'data-search-follow="alice"' in html and "1 person and 1 board found" in html
    response = run(page.post, "/u/alice/follow", {"action": "follow", "next": "/search?q=alice"})
    assert response["Location"] == "/search?q=alice"
    assert "Following ✓" in page.get("/search?q=alice").content.decode()
    only_people = page.get("/search?q=alice&type=users").content.decode()
    assert 'data-testid="search-people"' in only_people and 'class="cards"' not in only_people
    assert (
        "Follow"
        not in Client()
        .get("/search?q=alice")
        .content.decode()
        .split('data-testid="search-people"')[1]
        .split("</ul>")[0]
    )
