"""Paging bounds (API.md, "Timelines" and "Errors"): every list endpoint and every numbered page
refuses an offset, limit, before or page out of range with a 400 and a sentence, before the
number reaches Redis or PostgreSQL; the deepest page allowed answers normally."""

import pytest

from feeds import keys
from feeds.models import Board
from feeds.views.boards import PAGE_SIZE
from social import services as people
from social.views import PEOPLE_PAGE_SIZE
from ugcsite.platform.http import ID_LIMIT, LIMIT_MAX, OFFSET_MAX
from ugcsite.testing import assert_problem

pytestmark = pytest.mark.django_db

DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}

LISTS = [
    "/api/v1/users/alice/followers",
    "/api/v1/users/alice/following",
    "/api/v1/users/alice/boards",
    "/api/v1/feed",
    "/api/v1/discover",
    "/api/v1/popular",
    "/api/v1/popular?scope=trending",
    "/api/v1/popular?scope=following",
    "/api/v1/search?q=alice&type=users",
    "/api/v1/search?q=garden",
    "/api/v1/notifications",
    "/api/v1/boards/{board_id}/likes",  # {board_id}: one of bob's boards (get)
    "/api/v1/boards/{board_id}/remixes",
]
WITH_BEFORE = ["/api/v1/users/alice/boards", "/api/v1/feed"]


@pytest.fixture
def alice(api, run):
    alice = api.as_user("alice")
    bob = api.as_user("bob")
    run(bob.put, "/api/v1/users/alice/follow")
    run(alice.put, "/api/v1/users/bob/follow")
    for title in ("one", "two"):
        assert run(bob.post, "/api/v1/boards", {"title": title, "kind": "note", "doc": DOC}).status_code == 201
    return alice


def get(client, path: str, **query):
    if "{board_id}" in path:
        path = path.replace("{board_id}", str(Board.objects.order_by("id").values_list("id", flat=True).first()))
    path, _, preset = path.partition("?")
    for pair in filter(None, preset.split("&")):
        name, _, value = pair.partition("=")
        query[name] = value
    return client.get(path, **query)


@pytest.mark.parametrize("path", LISTS)
@pytest.mark.parametrize(
    "offset",
    [str(OFFSET_MAX + 1), "99999999999999999", "9" * 40, "1" * 5000],
    ids=["max+1", "17-digits", "40-digits", "5000-digits"],
)
def test_an_offset_past_the_bound_is_a_400(alice, path, offset):
    body = assert_problem(get(alice, path, offset=offset), 400)
    assert str(OFFSET_MAX) in body["detail"]


@pytest.mark.parametrize("path", LISTS)
def test_the_deepest_offset_answers_an_empty_page(alice, path):
    response = get(alice, path, offset=str(OFFSET_MAX), limit=str(LIMIT_MAX))
    assert response.status_code == 200, response.content
    assert response.json()["items"] == []


@pytest.mark.parametrize("path", LISTS)
@pytest.mark.parametrize("limit", ["0", str(LIMIT_MAX + 1), "99999999999999999999", "-1", "1e3"])
def test_a_limit_out_of_range_is_a_400(alice, path, limit):
    assert_problem(get(alice, path, limit=limit), 400)


@pytest.mark.parametrize("path", WITH_BEFORE)
@pytest.mark.parametrize("before", [str(ID_LIMIT + 1), "9" * 30, "0"])
def test_a_before_out_of_range_is_a_400(alice, path, before):
    assert_problem(get(alice, path, before=before), 400)


@pytest.mark.parametrize("path", WITH_BEFORE)
def test_before_the_largest_id_is_the_newest_page(alice, path):
    newest = get(alice, path).json()
    assert get(alice, path, before=str(ID_LIMIT)).json() == newest


def test_leading_zeros_are_the_same_number(alice):
    page = alice.get("/api/v1/discover", limit="1", offset="0" * 30 + "1").json()
    assert page == alice.get("/api/v1/discover", limit="1", offset="1").json()


def test_a_popular_page_reads_only_its_own_boards(api, run, redis_data):
    """The popular orders are paged in Redis: a deep page never hydrates the boards above it."""
    author = api.as_user("alice")
    ids = [
        run(author.post, "/api/v1/boards", {"title": f"b{i}", "kind": "note", "doc": DOC}).json()["id"]
        for i in range(3)
    ]
    for board_id in ids:
        redis_data.delete(keys.board(board_id))

    page = api.get("/api/v1/popular", offset="1", limit="1").json()

    assert [item["board"]["id"] for item in page["items"]] == [ids[1]]  # no views: newest first
    assert [bool(redis_data.exists(keys.board(board_id))) for board_id in ids] == [False, True, False]


# --- numbered pages -------------------------------------------------------------------------------


@pytest.fixture
def person(run):
    return run(people.user_create, username="alice", password="password123")


@pytest.mark.parametrize("path", ["/u/alice/followers", "/u/alice/following", "/discover"])
@pytest.mark.parametrize(
    "number", ["99999999999999999999", "9" * 5000, str(OFFSET_MAX)], ids=["20-digits", "5000-digits", "max"]
)
def test_a_page_number_past_the_bound_is_a_400_page(client, person, path, number):
    response = client.get(path, {"page": number})
    assert response.status_code == 400
    html = response.content.decode()
    assert "site.css" in html and "pages; ask for a page from 1 to" in html


@pytest.mark.parametrize("path", ["/u/alice/followers", "/u/alice/following", "/discover"])
def test_the_last_page_number_allowed_and_junk_still_answer(client, person, path):
    size = PEOPLE_PAGE_SIZE if path.startswith("/u/") else PAGE_SIZE
    assert client.get(path, {"page": str(OFFSET_MAX // size + 1)}).status_code == 200
    for junk in ("x", "-3", "1.5", "", "٣"):
        assert client.get(path, {"page": junk}).status_code == 200, junk


def _query_schemas(operation: dict) -> dict:
    """Each query parameter's schema by the name it has on the wire (the keys of a form-exploded
    object are parameters of their own)."""
    schemas = {}
    for p in operation.get("parameters", []):
        if p["schema"].get("type") == "object" and p.get("style") == "form" and p.get("explode"):
            schemas.update(p["schema"]["properties"])
        else:
            schemas[p["name"]] = p["schema"]
    return schemas


def test_the_openapi_document_states_the_same_bounds(client):
    document = client.get("/api/v1/openapi.json").json()
    paged = {
        path: _query_schemas(operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method == "get" and "offset" in _query_schemas(operation)
    }
    assert {path.replace("{username}", "alice") for path in paged} == {path.partition("?")[0] for path in LISTS}
    for path, schemas in paged.items():
        assert (schemas["offset"]["minimum"], schemas["offset"]["maximum"]) == (0, OFFSET_MAX)
        assert (schemas["limit"]["minimum"], schemas["limit"]["maximum"]) == (1, LIMIT_MAX)
        assert ("before" in schemas) == (path.replace("{username}", "alice") in WITH_BEFORE), path
        if "before" in schemas:
            assert (schemas["before"]["minimum"], schemas["before"]["maximum"]) == (1, ID_LIMIT)


def test_the_openapi_document_says_offset_and_before_exclude_each_other(client, alice):
    document = client.get("/api/v1/openapi.json").json()
    for path in WITH_BEFORE:
        operation = document["paths"][path.replace("alice", "{username}")]["get"]
        (paging,) = [p for p in operation["parameters"] if "before" in p["schema"].get("properties", {})]
        assert paging["schema"]["not"] == {"required": ["offset", "before"]}
        assert_problem(alice.get(path, offset=0, before=1), 400)
