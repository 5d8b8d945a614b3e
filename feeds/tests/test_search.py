"""Search (API.md, "Search, notifications, your own settings"): people by username and display
name (prefix, any word, typos), boards by title, tags and drawing text, best match first, paged;
current after every create, update, delete, hide and suspension; the 400s. Each plan of board
search (feeds.search: rows, merge, walk) and people search are held to one plain SQL query that
states the rule, on random boards and people; BoardTerm to the boards it is kept from."""

import json

import pytest
from django.db import connection, transaction
from django.test import Client
from hypothesis import HealthCheck, given, settings, strategies as st

from feeds import search
from feeds.models import Board, BoardTerm
from feeds.rules import SEARCH_CONJUNCTION_MATCHES_MAX, SEARCH_MATCHES_MAX
from feeds.services import boards, moderation
from social import search as people
from social.models import User
from social.rules import NAME_SIMILARITY_MIN
from social.services import profile_update, user_create
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
        "comments",
        "preview_url",
    }
    note = {"type": "sticky", "color": "#1d2330", "fill": "#fff3bf", "size": 2, "x": 1, "y": 1, "w": 5, "h": 5}
    doc = {**DOC, "elements": [{**note, "size": 8, "text": "buy pineapples"}]}
    on_a_note = run(alice.post, "/api/v1/boards", {"title": "Shopping", "kind": "note", "doc": doc}).json()["id"]
    assert found(api, "pineapple") == [on_a_note]  # a sticky note's text is drawing text too


TEXT = {"type": "text", "color": "#000000", "size": 12, "x": 1, "y": 1}
STROKE = {"type": "path", "color": "#000000", "width": 2, "points": [[1, 1], [5, 5]]}


@pytest.mark.parametrize(
    "doc_json",
    [
        json.dumps({**DOC, "elements": [STROKE] * 3}, separators=(",", ":")),
        json.dumps({**DOC, "elements": [STROKE, {**TEXT, "text": "kayak"}]}, separators=(",", ":")),
        json.dumps({**DOC, "elements": [{**TEXT, "text": "spaced out"}, STROKE]}),  # ": " between
        json.dumps({**DOC, "elements": [{**TEXT, "type": "sticky", "text": "caf\u00e9 \\"}]}),
        json.dumps({**DOC, "elements": [{**STROKE, "color": '"type":"text"'}]}),  # looks, finds none
        json.dumps({**DOC, "elements": [{**TEXT, "text": "nul \u0000 here"}]}),
        '{"elements": [{"type": "text", "text": "not json',
    ],
)
def test_the_doc_texts_look_before_they_parse_and_find_what_the_parse_finds(doc_json):
    """ugc_doc_texts (migration 0014) skips the jsonb parse of a doc with no text or sticky
    element: on docs of every kind, its answer is the parse's alone."""
    parse = """SELECT coalesce(array_to_string(ARRAY(SELECT jsonb_array_elements_text(jsonb_path_query_array(
        regexp_replace(%s, '\\\\u0000', ' ', 'g')::jsonb,
        '$.elements[*] ? (@.type == "text" || @.type == "sticky").text'))), ' '), '')"""
    with connection.cursor() as cursor:
        cursor.execute("SELECT ugc_doc_texts(%s)", [doc_json])
        (gated,) = cursor.fetchone()
        try:
            with transaction.atomic():
                cursor.execute(parse, [doc_json])
                (parsed,) = cursor.fetchone()
        except Exception:  # not JSON at all: the function answers nothing
            parsed = ""
    assert gated == parsed


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


def test_common_words_together_rank_and_count_a_smaller_window(api, run, monkeypatch):
    """Two terms each found SEARCH_MATCHES_MAX times or more: the newest
    SEARCH_CONJUNCTION_MATCHES_MAX matches are ranked and counted; one of them rarer than that, or
    one word alone, keeps the whole window."""
    alice = api.as_user("alice")
    best_but_old = post(run, alice, "Green tree", texts=["green tree"])
    newer = [post(run, alice, f"Green {i}", texts=["a tree"]) for i in range(4)]
    post(run, alice, "Green river")
    monkeypatch.setattr("feeds.search.SEARCH_MATCHES_MAX", 5)
    monkeypatch.setattr("feeds.search.SEARCH_CONJUNCTION_MATCHES_MAX", 2)
    assert api.get(SEARCH, q="green").json()["total"] == 5  # one word: the whole window
    assert api.get(SEARCH, q="green tree").json()["total"] == 2  # green 6 rows, tree 5: both common
    assert found(api, "green tree") == newer[:1:-1]  # the best, but older, fell past the newest 2
    assert api.get(SEARCH, q="green tree", offset=2).json() == {"total": 2, "items": []}
    assert api.get(SEARCH, q="green green").json()["total"] == 5  # one term twice is one term
    assert found(api, "green riv") == [found(api, "river")[0]]  # riv: 1 row, rare: the whole window
    monkeypatch.setattr("feeds.search.SEARCH_MATCHES_MAX", 6)  # tree's 5 rows are rare now
    assert api.get(SEARCH, q="green tree").json()["total"] == 5
    assert found(api, "green tree")[0] == best_but_old


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


def test_a_hash_tag_matches_that_tag_whole(api, run):
    alice = api.as_user("alice")
    red = post(run, alice, "Sunset", tags=["red"])
    sky = post(run, alice, "Evening", tags=["red-sky"])
    titled = post(run, alice, "Red barn", texts=["sunset"])
    assert found(api, "#red") == [red]  # not the tag red-sky, not the word in a title
    assert set(found(api, "red")) == {red, sky, titled}  # a word still finds tags as text, by prefix
    assert found(api, "#RED sunset") == [red]  # a tag and a word: both required
    assert found(api, "#red-sky") == [sky]
    assert found(api, "#red #red-sky") == []
    assert api.get(SEARCH, q="#red").json()["total"] == 1
    assert found(api, "#nothing") == [] and api.get(SEARCH, q="#nothing").json()["total"] == 0
    run(moderation.board_hide, board=Board.objects.get(pk=red))
    assert found(api, "#red") == []


# --- board search against SQL ------------------------------------------------------------------

VOCABULARY = ["garden", "gardener", "garnet", "green", "grey", "tree", "treehouse", "river", "rock"]
TAGS = ["red", "blue", "red-sky", "tiny"]


def terms_expected() -> set[tuple[str, int]]:
    """What BoardTerm must hold: each lexeme of each published board's search vector, and "#" and
    each of its tags."""
    rows = Board.objects.filter(state=Board.State.PUBLISHED).values_list("id", "tags")
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, tsvector_to_array(search_vector) FROM feeds_board WHERE state = 'published'")
        lexemes = dict(cursor.fetchall())
    return {(term, board) for board, tags in rows for term in lexemes[board] + [f"#{tag}" for tag in tags]}


def sql_window(words: list[str], tags: list[str], *, cap: int) -> list[int]:
    """The rule, in one query: the newest ``cap`` published boards whose search vector matches
    every word as a prefix and whose tags hold every tag, ranked by ts_rank, ties newest first."""
    query = " & ".join(f"{word}:*" for word in words)
    match = "search_vector @@ to_tsquery('simple', %(q)s)" if words else "TRUE"
    rank = "ts_rank(search_vector, to_tsquery('simple', %(q)s))" if words else "0"
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT id FROM (
                    SELECT id, {rank} AS rank FROM feeds_board
                    WHERE {match} AND tags @> %(tags)s::varchar[] AND state = 'published'
                    ORDER BY id DESC LIMIT %(cap)s) AS newest
                ORDER BY rank DESC, id DESC""",
            {"q": query, "tags": tags, "cap": cap},
        )
        return [row[0] for row in cursor.fetchall()]


board_specs = st.lists(
    st.tuples(
        st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=3),  # title words
        st.lists(st.sampled_from(VOCABULARY), max_size=2),  # drawing text
        st.sets(st.sampled_from(TAGS), max_size=2),
        st.integers(0, 2),  # author
        st.sampled_from(["keep", "keep", "keep", "retitle", "retag", "delete", "hide"]),
    ),
    min_size=1,
    max_size=24,
)
query_part = (
    st.sampled_from(VOCABULARY)
    | st.builds(lambda word, n: word[:n], st.sampled_from(VOCABULARY), st.integers(1, 4))
    | st.sampled_from(TAGS).map(lambda tag: f"#{tag}")
)
searches = st.tuples(
    st.lists(query_part, min_size=1, max_size=3),
    st.sampled_from([1, 2, 3, 5, 1000]),  # the window (SEARCH_MATCHES_MAX)
    st.sampled_from([1, 2, 4, 1000]),  # a conjunction's window (SEARCH_CONJUNCTION_MATCHES_MAX)
    st.integers(0, 6),  # offset
    st.integers(1, 5),  # limit
)


def window_expected(parts: list[str], *, cap: int, conjunction: int) -> int:
    """The rule's window: ``cap``, or ``conjunction`` (at most ``cap``) when two or more distinct
    terms each have ``cap`` rows or more: a prefix a row for each word of a published board it
    starts, a tag one for each published board that carries it."""
    terms = terms_expected()

    def rows(part: str) -> int:
        if part.startswith("#"):
            return sum(1 for term, _ in terms if term == part)
        return sum(1 for term, _ in terms if not term.startswith("#") and term.startswith(part))

    distinct = set(parts)
    common = len(distinct) > 1 and all(rows(part) >= cap for part in distinct)
    return min(conjunction, cap) if common else cap


@settings(
    max_examples=30,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(specs=board_specs, suspend=st.booleans(), asked=st.lists(searches, min_size=1, max_size=8))
def test_every_plan_finds_what_the_rule_says(api, run, specs, suspend, asked):
    """Random boards through the services (retitled, retagged, deleted, hidden, an author
    suspended) and random queries of words, prefixes and tags, at random windows: BoardTerm
    holds exactly each published board's terms, and the chosen plan and each plan forced
    (rows, merge, walk) answer exactly the page and total of the rule's SQL."""
    with transaction.atomic():
        authors = [user_create(username=f"author{i}_{len(specs)}", password="long-password-1") for i in range(3)]
        for title, texts, tags, author, fate in specs:
            board = run(
                boards.board_create,
                author=authors[author],
                title=" ".join(title),
                kind="note",
                tags=sorted(tags),
                doc=doc(*([" ".join(texts)] if texts else [])),
            )
            if fate == "retitle":
                run(boards.board_update, board=board, changes={"title": " ".join(reversed(title)) + " rock"})
            elif fate == "retag":
                run(boards.board_update, board=board, changes={"tags": sorted(set(TAGS) - tags)[:2]})
            elif fate == "delete":
                run(boards.board_delete, board=board)
            elif fate == "hide":
                run(moderation.board_hide, board=board)
        if suspend:
            run(moderation.user_suspend, user=authors[0])
        assert set(BoardTerm.objects.values_list("term", "board_id")) == terms_expected()
        for parts, cap, conjunction, offset, limit in asked:
            query = " ".join(parts)
            words = [part for part in parts if not part.startswith("#")]
            tags = sorted({part[1:] for part in parts if part.startswith("#")})
            window = sql_window(words, tags, cap=window_expected(parts, cap=cap, conjunction=conjunction))
            expected = (window[offset : offset + limit], len(window))
            search.SEARCH_MATCHES_MAX, search.SEARCH_CONJUNCTION_MATCHES_MAX = cap, conjunction
            try:
                for plan in (None, "rows", "merge", "walk"):
                    assert search.boards_search(query, offset=offset, limit=limit, plan=plan) == expected, (query, plan)
            finally:
                search.SEARCH_MATCHES_MAX = SEARCH_MATCHES_MAX
                search.SEARCH_CONJUNCTION_MATCHES_MAX = SEARCH_CONJUNCTION_MATCHES_MAX
        transaction.set_rollback(True)


def test_terms_follow_every_write_of_a_board(api, run):
    """The trigger: a new board's terms come, an edit swaps them, a hide, a suspension and a delete
    take them away, an unhide and a lifted suspension bring them back, and a stroke changes
    none (the update trigger's WHEN)."""
    api.as_user("alice")
    alice = User.objects.get(username="alice")

    def terms_of(board_id):
        return set(BoardTerm.objects.filter(board_id=board_id).values_list("term", flat=True))

    board = run(boards.board_create, author=alice, title="Green tree", kind="note", tags=["tiny"], doc=doc("river"))
    assert terms_of(board.pk) == {"green", "tree", "river", "tiny", "#tiny"}
    run(boards.board_update, board=board, changes={"title": "Grey rock", "tags": ["red-sky"]})
    assert terms_of(board.pk) == {"grey", "rock", "river", "red-sky", "red", "sky", "#red-sky"}
    before = BoardTerm.objects.filter(board_id=board.pk).count()
    run(boards.board_update, board=board, changes={"doc": {**doc("river"), "elements": doc("river")["elements"][:1]}})
    assert BoardTerm.objects.filter(board_id=board.pk).count() == before
    run(moderation.board_hide, board=Board.objects.get(pk=board.pk))
    assert terms_of(board.pk) == set()
    run(moderation.board_unhide, board=Board.objects.get(pk=board.pk))
    assert "rock" in terms_of(board.pk)
    run(moderation.user_suspend, user=alice)
    assert terms_of(board.pk) == set()
    run(moderation.user_unsuspend, user=User.objects.get(pk=alice.pk))
    assert "rock" in terms_of(board.pk)
    run(boards.board_delete, board=Board.objects.get(pk=board.pk))
    assert terms_of(board.pk) == set()
    other = run(boards.board_create, author=alice, title="Garden", kind="note", tags=[], doc=doc())
    Board.objects.filter(pk=other.pk).delete()  # a row removed outright (an account purged)
    assert terms_of(other.pk) == set()


def _stats(rows: int, oldest: int, words: int) -> search.TermStats:
    return search.TermStats(rows=rows, oldest=oldest, words=[f"w{i}" for i in range(words)])


def test_the_plan_reads_the_fewest_rows():
    cap, newest = 1000, 1_000_000
    # A term with fewer rows than the window: all of them, the smallest such term.
    plan = search.choose_plan([_stats(1000, 1, 1), _stats(40, 1, 1), _stats(999, 1, 1)], newest, cap=cap)
    assert plan == search.Plan("rows", [1])
    # All common: the sparsest (its 1,000th newest board the oldest) first, then those less than
    # _DENSER_MAX times denser; a term of too many words is never merged.
    stats = [_stats(cap, 999_000, 1), _stats(cap, 100_000, 2), _stats(cap, 990_000, 1), _stats(cap, 1, 17)]
    assert search.choose_plan(stats, newest, cap=cap) == search.Plan("merge", [1])  # 900 and 90 times denser
    stats[2] = _stats(cap, 950_000, 1)  # 18 times denser: still checked on each board, not merged
    assert search.choose_plan(stats, newest, cap=cap) == search.Plan("merge", [1])
    stats[2] = _stats(cap, 940_000, 1)  # 15 times denser: merged
    assert search.choose_plan(stats, newest, cap=cap) == search.Plan("merge", [1, 2])
    stats[0] = _stats(cap, 700_000, 1)  # 3 times denser: merged too, the sparser first
    assert search.choose_plan(stats, newest, cap=cap) == search.Plan("merge", [1, 0, 2])
    # Only terms of many words (one or two letters): boards are walked.
    assert search.choose_plan([_stats(cap, 5, 17), _stats(cap, 9, 30)], newest, cap=cap) == search.Plan("walk", [])


# --- people search against SQL -----------------------------------------------------------------

NAMES = ["sam", "sam_a", "samuel", "sma", "alice", "alicia", "alcie", "malice", "bob", "bobby", "robert"]
DISPLAY = ["", "Sam Alice", "Robert Smith", "Alice Wönderland", "Samantha"]


def sql_people(query: str) -> list[str]:
    """The rule, in one query: active people whose name starts with the query or who are at
    least NAME_SIMILARITY_MIN alike, best first (the ranking of social.search, over all of them)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT lower(ugc_unaccent(%s))", [query.strip()])
        q = cursor.fetchone()[0]
        prefix = people._like_escaped(q) + "%"
        cursor.execute(
            """SELECT username FROM social_user
               WHERE is_active AND (search_name LIKE %(prefix)s OR word_similarity(%(q)s, search_name) >= %(min)s)
               ORDER BY lower(username) = %(q)s DESC, search_name LIKE %(prefix)s DESC,
                        search_name LIKE %(word)s DESC, word_similarity(%(q)s, search_name) DESC, id""",
            {"q": q, "prefix": prefix, "word": "% " + prefix, "min": NAME_SIMILARITY_MIN},
        )
        return [row[0] for row in cursor.fetchall()]


@settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    made=st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(DISPLAY), st.booleans()), max_size=12),
    asked=st.lists(
        st.tuples(
            st.sampled_from(NAMES) | st.builds(lambda name, n: name[:n], st.sampled_from(NAMES), st.integers(1, 3)),
            st.sampled_from([1, 2, 3, 1000]),
            st.integers(0, 3),
            st.integers(1, 4),
        ),
        min_size=1,
        max_size=6,
    ),
)
def test_people_search_finds_what_the_rule_says(run, made, asked):
    """Random people (some suspended) and queries: with a window that holds every match, the page
    and total are the rule's SQL; with a smaller one, the total is still every match up to the
    window, each person on the page matches, the name itself comes first and names with the
    prefix before the rest."""
    with transaction.atomic():
        taken = set()
        for n, (name, display, suspended) in enumerate(made):
            username = name if name not in taken else f"{name}{n}"
            taken.add(username)
            user = user_create(username=username, password="long-password-1")
            if display:
                profile_update(user=user, changes={"display_name": display})
            if suspended:
                run(moderation.user_suspend, user=user)
        for query, cap, offset, limit in asked:
            matches = sql_people(query)
            people.SEARCH_MATCHES_MAX = cap
            try:
                items, total = people.people_search(query, offset=offset, limit=limit)
            finally:
                people.SEARCH_MATCHES_MAX = SEARCH_MATCHES_MAX
            names = [item["username"] for item in items]
            assert total == min(cap, len(matches)), query
            if len(matches) <= cap:
                assert names == matches[offset : offset + limit], query
            assert set(names) <= set(matches), query
            prefixed = [name.startswith(query.lower()) for name in names]
            assert prefixed == sorted(prefixed, reverse=True), query
            if offset == 0 and query.lower() in matches:
                assert names[0] == query.lower(), query
        transaction.set_rollback(True)


def _window_nodes(query: str, plan: str | None = None) -> set[str]:
    """The node types of the plan PostgreSQL makes for ``query``'s window (the CTE window_rows of
    the third of boards_search's queries), planned as boards_search plans it."""
    sent = []

    def keep(execute, sql, params, many, context):
        if not sql.startswith(("SAVEPOINT", "RELEASE SAVEPOINT")):
            sent.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        search.boards_search(query, offset=0, limit=5, plan=plan)
    (_, _), stats, window = sent
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(*stats)  # turns the settings off for the window, as boards_search does
        cursor.execute("EXPLAIN (FORMAT JSON) " + window[0], window[1])
        plan = cursor.fetchone()[0][0]["Plan"]
        cursor.execute(*window)  # and puts them back
    (cte,) = [node for node in plan["Plans"] if node.get("Subplan Name") == "CTE window_rows"]
    nodes, stack = set(), [cte]
    while stack:
        node = stack.pop()
        nodes.add(f"{node['Node Type']} {node.get('Relation Name', '')}".strip())
        stack.extend(node.get("Plans", []))
    return nodes


@pytest.mark.parametrize("analyzed", [False, True])
def test_a_window_is_read_newest_first_whatever_the_statistics(api, run, monkeypatch, analyzed):
    """A merged term and the walk read rows newest first from an index and stop at the window,
    whether the planner has statistics of the boards or none (a table just bulk-loaded, before
    ANALYZE, where it once read every row of a common word and sorted them: 220 ms a search at
    10^6 boards): no sort, no hash, no bitmap scan, no sequential scan of the terms under the
    window (a board of these few is looked up by a scan of one page; of a million, by its key),
    and terms are merged, not probed a board at a time."""
    api.as_user("alice")
    alice = User.objects.get(username="alice")
    for n in range(40):
        title = "green tree" if n % 2 else "green river"
        run(boards.board_create, author=alice, title=title, kind="note", tags=["tiny"], doc=doc())
    if analyzed:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE feeds_board, feeds_boardterm")
    monkeypatch.setattr(search, "SEARCH_MATCHES_MAX", 5)
    slow = {"Sort", "Incremental Sort", "Bitmap Heap Scan feeds_boardterm", "Bitmap Heap Scan feeds_board"}
    slow |= {"Seq Scan feeds_boardterm", "Hash Join", "HashAggregate"}
    for query, plan in (("green", None), ("green tree", None), ("#tiny green tr", None), ("green", "walk")):
        nodes = _window_nodes(query, plan)
        read = "feeds_board" if plan == "walk" else "feeds_boardterm"
        assert nodes & {f"Index Only Scan {read}", f"Index Scan {read}"} and not nodes & slow, (query, plan, nodes)
        assert ("Merge Join" in nodes) == (" " in query and plan is None), (query, plan, nodes)
