"""Boards through the API (API.md, "Boards"): what is refused, what is accepted and read back as
sent, the order of 401/404/403/400 on PATCH and DELETE, and the API's own 404/405/413 answers."""

import copy
import json
import re

import pytest
from hypothesis import given, settings, strategies as st

from feeds.live.protocol import BadMessage, op_check
from feeds.models import Board
from feeds.rules import MAX_TITLE, TITLE_TRIMMED
from feeds.validation import BoardCreate, element_extent, turned_box
from social import services
from ugcsite.openapi import build
from ugcsite.platform.http import ApiError, validate
from ugcsite.testing import ApiClient, assert_problem

pytestmark = pytest.mark.django_db

BOARDS = "/api/v1/boards"
PATH, TEXT, RECT, ELLIPSE = range(4)  # positions of the element kinds in valid_body()


@pytest.fixture
def alice(api):
    return api.as_user("alice")


@pytest.fixture
def bob(api):
    return api.as_user("bob")


# --- helpers ----------------------------------------------------------------------------------


def valid_body() -> dict:
    """A board that passes every check: a 400 for any mutation of it is that mutation's doing."""
    return {
        "title": "A board",
        "kind": "sketch",
        "tags": ["one", "two-2"],
        "doc": {
            "width": 400,
            "height": 300,
            "background": "#ffffff",
            "elements": [
                {"type": "path", "color": "#112233", "width": 3, "points": [[0, 0], [10, 20.5], [30, 40]]},
                {"type": "text", "color": "#000000", "size": 16, "x": 20, "y": 40, "text": "hello"},
                {"type": "rect", "color": "#ff0000", "width": 2, "x": 10, "y": 10, "w": 50, "h": 40, "fill": "#00ff00"},
                {"type": "ellipse", "color": "#0000ff", "width": 1, "x": 100, "y": 100, "w": 60, "h": 30, "fill": None},
            ],
        },
    }


def text_element() -> dict:
    return {"type": "text", "color": "#000000", "size": 8, "x": 1, "y": 1, "text": "a"}


def paths_with_points(total: int, paths: int = 4) -> list[dict]:
    """``paths`` path elements holding ``total`` points in all, every point inside a 400x300 canvas."""
    sizes = [total // paths] * paths
    sizes[-1] += total - sum(sizes)
    elements, n = [], 0
    for size in sizes:
        points = [[(n + i) % 401, (n + i) % 301] for i in range(size)]
        n += size
        elements.append({"type": "path", "color": "#000000", "width": 1, "points": points})
    return elements


def with_change(*path_and_value):
    """A mutation setting body[path...] to value (a callable value is called, for big values)."""
    *path, value = path_and_value

    def mutate(body):
        target = body
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value() if callable(value) else copy.deepcopy(value)

    return mutate


def without(*path):
    def mutate(body):
        target = body
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return mutate


def create(client: ApiClient, body: dict | None = None) -> dict:
    response = client.post(BOARDS, body if body is not None else valid_body())
    assert response.status_code == 201, response.content[:500]
    return response.json()


def as_typed_json(value) -> str:
    """JSON text that tells 1 from 1.0 (Python's == does not), with keys in a fixed order."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def as_sent(read: dict, sent: dict) -> dict:
    """A doc read back, less the ids the server gave to elements sent without one (each is checked
    to be there): the rest must be exactly what was sent."""
    read = copy.deepcopy(read)
    for got, gave in zip(read.get("elements", []), sent.get("elements", [])):
        if isinstance(gave, dict) and "id" not in gave:
            assert isinstance(got.pop("id"), str)
    return read


def el(index, *path_and_value):
    return with_change("doc", "elements", index, *path_and_value)


def listed(client: ApiClient, path: str) -> list[int]:
    """The board ids of the first page of a list (a profile's boards, a feed)."""
    response = client.get(path)
    assert response.status_code == 200, response.content[:500]
    return [item["id"] for item in response.json()["items"]]


def assert_kept(client: ApiClient, board: dict) -> None:
    """The board is still there, published and as it was."""
    response = client.get(f"{BOARDS}/{board['id']}")
    assert response.status_code == 200, response.content[:500]
    assert response.json()["title"] == board["title"]
    assert Board.objects.get(pk=board["id"]).state == Board.State.PUBLISHED


def assert_deleted(api: ApiClient, board: dict, *, follower: ApiClient) -> None:
    """What a delete does (feeds.services.boards.board_delete, a soft delete): the row is kept,
    marked deleted; the board is a 404 to everyone and has left its author's profile and the
    feed of someone who follows them."""
    path = f"{BOARDS}/{board['id']}"
    assert Board.objects.get(pk=board["id"]).state == Board.State.DELETED
    assert_problem(api.get(path), 404)
    assert_problem(api.get(f"{path}/preview.svg"), 404)
    assert board["id"] not in listed(api, f"/api/v1/users/{board['author']}/boards")
    assert board["id"] not in listed(follower, "/api/v1/feed")


# --- what is refused --------------------------------------------------------------------------

INVALID = [
    # kind
    pytest.param(with_change("kind", "painting"), id="kind-unknown"),
    pytest.param(with_change("kind", "Sketch"), id="kind-wrong-case"),
    pytest.param(with_change("kind", 1), id="kind-not-a-string"),
    pytest.param(without("kind"), id="kind-missing"),
    # title
    pytest.param(with_change("title", ""), id="title-empty"),
    pytest.param(with_change("title", "    "), id="title-only-spaces"),
    pytest.param(with_change("title", "  " + "t" * 121 + "  "), id="title-121-chars-after-trim"),
    pytest.param(with_change("title", 42), id="title-not-a-string"),
    pytest.param(with_change("title", None), id="title-null"),
    pytest.param(without("title"), id="title-missing"),
    # tags
    pytest.param(with_change("tags", [f"tag{i}" for i in range(11)]), id="tags-11"),
    pytest.param(with_change("tags", ["same", "other", "same"]), id="tags-duplicate"),
    pytest.param(with_change("tags", ["Upper"]), id="tag-uppercase"),
    pytest.param(with_change("tags", ["under_score"]), id="tag-underscore"),
    pytest.param(with_change("tags", ["t" * 33]), id="tag-33-chars"),
    pytest.param(with_change("tags", [""]), id="tag-empty"),
    pytest.param(with_change("tags", ["with space"]), id="tag-space"),
    pytest.param(with_change("tags", [7]), id="tag-not-a-string"),
    pytest.param(with_change("tags", "one,two"), id="tags-not-a-list"),
    pytest.param(with_change("tags", None), id="tags-null"),
    # doc
    pytest.param(without("doc"), id="doc-missing"),
    pytest.param(with_change("doc", "a drawing"), id="doc-not-an-object"),
    pytest.param(with_change("doc", [1, 2]), id="doc-a-list"),
    pytest.param(with_change("doc", "width", 0), id="doc-width-0"),
    pytest.param(with_change("doc", "width", 4097), id="doc-width-4097"),
    pytest.param(with_change("doc", "height", "300"), id="doc-height-string"),
    pytest.param(with_change("doc", "width", True), id="doc-width-true"),
    pytest.param(without("doc", "height"), id="doc-height-missing"),
    pytest.param(with_change("doc", "background", "red"), id="background-red"),
    pytest.param(with_change("doc", "background", "#fff"), id="background-short-hex"),
    pytest.param(with_change("doc", "background", "#ffffff\n"), id="background-trailing-newline"),
    pytest.param(with_change("doc", "background", None), id="background-null"),
    pytest.param(with_change("doc", "layers", []), id="doc-unknown-key"),
    pytest.param(with_change("doc", "elements", {"0": {}}), id="elements-not-a-list"),
    pytest.param(with_change("doc", "elements", lambda: [text_element() for _ in range(5_001)]), id="elements-5001"),
    pytest.param(with_change("doc", "elements", lambda: paths_with_points(100_001)), id="points-100001-in-all"),
    # path
    pytest.param(el(PATH, "points", [[1, 1]]), id="path-1-point"),
    pytest.param(el(PATH, "points", []), id="path-no-points"),
    pytest.param(el(PATH, "points", [[1, 1], [2, 2, 2]]), id="path-point-3-numbers"),
    pytest.param(el(PATH, "points", [[1, 1], [2]]), id="path-point-1-number"),
    pytest.param(el(PATH, "points", [[1, 1], "2,2"]), id="path-point-a-string"),
    pytest.param(el(PATH, "points", [[1, 1], ["2", 2]]), id="path-coordinate-a-string"),
    pytest.param(el(PATH, "points", [[1, 1], [True, 2]]), id="path-coordinate-boolean"),
    pytest.param(el(PATH, "points", [[1, 1], [2, None]]), id="path-coordinate-null"),
    pytest.param(el(PATH, "points", [[1, 1], [400.5, 2]]), id="path-x-beyond-width"),
    pytest.param(el(PATH, "points", [[1, 1], [2, 300.01]]), id="path-y-beyond-height"),
    pytest.param(el(PATH, "points", [[1, 1], [2, -1]]), id="path-y-negative"),
    pytest.param(el(PATH, "width", 0), id="path-width-0"),
    pytest.param(el(PATH, "width", 65), id="path-width-65"),
    pytest.param(el(PATH, "color", "#GGGGGG"), id="path-color-not-hex"),
    pytest.param(el(PATH, "color", "black"), id="path-color-name"),
    # text
    pytest.param(el(TEXT, "size", 7), id="text-size-7"),
    pytest.param(el(TEXT, "size", 129), id="text-size-129"),
    pytest.param(el(TEXT, "text", ""), id="text-empty"),
    pytest.param(el(TEXT, "text", "x" * 501), id="text-501-chars"),
    pytest.param(el(TEXT, "text", 5), id="text-not-a-string"),
    pytest.param(el(TEXT, "x", 401), id="text-x-outside-canvas"),
    pytest.param(el(TEXT, "y", -0.5), id="text-y-outside-canvas"),
    # rect / ellipse
    pytest.param(el(RECT, "w", 0), id="rect-w-0"),
    pytest.param(el(RECT, "w", -10), id="rect-w-negative"),
    pytest.param(el(RECT, "h", 0), id="rect-h-0"),
    pytest.param(el(RECT, "x", 351), id="rect-beyond-right-edge"),
    pytest.param(el(RECT, "x", -1), id="rect-beyond-left-edge"),
    pytest.param(el(ELLIPSE, "y", 270.5), id="ellipse-beyond-bottom-edge"),
    pytest.param(el(RECT, "fill", "blue"), id="fill-color-name"),
    pytest.param(el(ELLIPSE, "width", 65), id="ellipse-stroke-65"),
    pytest.param(without("doc", "elements", RECT, "w"), id="rect-w-missing"),
    # elements in general
    pytest.param(el(ELLIPSE, "type", "circle"), id="element-type-circle"),
    pytest.param(without("doc", "elements", TEXT, "type"), id="element-missing-type"),
    pytest.param(el(TEXT, 42), id="element-a-number"),
    pytest.param(el(TEXT, None), id="element-null"),
    pytest.param(el(TEXT, "layer", 2), id="element-unknown-key"),
    pytest.param(el(PATH, "fill", "#000000"), id="path-with-fill"),
    # body
    pytest.param(with_change("author", "bob"), id="body-unknown-key"),
]


@pytest.mark.parametrize("mutate", INVALID)
def test_an_invalid_board_is_400_and_stores_nothing(alice, mutate):
    body = valid_body()
    mutate(body)

    assert_problem(alice.post(BOARDS, body), 400)
    assert Board.objects.count() == 0


def _raw_with_coordinate(token: str) -> str:
    body = valid_body()
    body["doc"]["elements"][TEXT]["x"] = "@@"
    return json.dumps(body).replace('"@@"', token)


RAW_INVALID = [
    pytest.param(_raw_with_coordinate("NaN"), id="nan"),
    pytest.param(_raw_with_coordinate("Infinity"), id="infinity"),
    pytest.param(_raw_with_coordinate("-Infinity"), id="minus-infinity"),
    pytest.param(_raw_with_coordinate("1e400"), id="1e400"),
    pytest.param(_raw_with_coordinate("-1e400"), id="minus-1e400"),
    pytest.param(_raw_with_coordinate("1" + "0" * 400), id="401-digit-integer"),
    pytest.param(_raw_with_coordinate("1" + "0" * 5000), id="5001-digit-integer"),
    pytest.param(
        '{"title": "t", "kind": "sketch", "doc": ' + "[" * 100_000 + "]" * 100_000 + "}", id="nested-100000-deep"
    ),
    pytest.param(json.dumps(valid_body()).encode().replace(b"hello", b"he\xff\xfello"), id="invalid-utf8"),
    pytest.param("", id="empty-body"),
    pytest.param('{"title": "t", "kind": ', id="malformed-json"),
    pytest.param(json.dumps(valid_body())[:-1] + ",}", id="trailing-comma"),
    pytest.param(json.dumps([valid_body()]), id="json-array"),
    pytest.param("null", id="json-null"),
]


@pytest.mark.parametrize("raw", RAW_INVALID)
def test_a_bad_raw_body_is_400_and_stores_nothing(alice, raw):
    assert_problem(alice.post(BOARDS, raw=raw), 400)
    assert Board.objects.count() == 0


# Valid JSON strings that PostgreSQL text (NUL) or UTF-8 (a lone surrogate) cannot hold as they are.
UNSTORABLE_TITLES = [
    pytest.param("a\x00b", id="nul-character"),
    pytest.param("a\ud800b", id="lone-surrogate"),
]


@pytest.mark.parametrize("title", UNSTORABLE_TITLES)
def test_a_title_with_a_nul_or_lone_surrogate_is_400_or_kept_never_a_5xx(alice, title):
    """Bad input is never a 5xx: such a title is either a 400 or stored and read back as sent."""
    body = valid_body()
    body["title"] = title

    response = alice.post(BOARDS, body)  # json.dumps writes \u0000 and \ud800 escapes

    assert response.status_code in (201, 400), response.status_code
    if response.status_code == 400:
        assert_problem(response, 400)
        assert Board.objects.count() == 0
    else:
        read = alice.get(f"{BOARDS}/{response.json()['id']}")
        assert read.json()["title"] == title


@pytest.mark.parametrize("title", UNSTORABLE_TITLES)
def test_a_patch_to_a_nul_or_lone_surrogate_title_is_400_or_kept_never_a_5xx(alice, title):
    board = create(alice)
    path = f"{BOARDS}/{board['id']}"

    response = alice.patch(path, {"title": title})

    assert response.status_code in (200, 400), response.status_code
    expected = board["title"] if response.status_code == 400 else title
    assert alice.get(path).json()["title"] == expected


@pytest.mark.parametrize("text", UNSTORABLE_TITLES)
def test_a_text_element_refuses_what_a_title_refuses_naming_the_element(alice, text):
    """A NUL (which the preview could only drop) or a lone surrogate: the same check as a title's
    (ugcsite.platform.http.Text), on create and on a PATCH of the doc."""
    body = valid_body()
    body["doc"]["elements"][TEXT]["text"] = text
    board = create(alice)
    path = f"{BOARDS}/{board['id']}"

    for response in (alice.post(BOARDS, body), alice.patch(path, {"doc": body["doc"]})):
        problem = assert_problem(response, 400)
        assert problem["detail"].startswith(f"doc.elements[{TEXT}].text: must not contain"), problem["detail"]

    assert Board.objects.count() == 1
    assert alice.get(path).json()["doc"] == board["doc"]


def test_a_live_op_with_a_nul_in_its_text_is_refused_by_the_same_validator():
    """The live channel checks an op's element with the REST doc's models (feeds.live.protocol):
    the socket sends this BadMessage back as its {"type": "error"} and applies nothing."""
    element = {**valid_body()["doc"]["elements"][TEXT], "id": "t1", "text": "a\x00b"}

    with pytest.raises(BadMessage, match=r"element\.text\.text: must not contain NUL") as refused:
        op_check(
            {"type": "op", "client_op_id": "c1", "op": {"kind": "add", "element": element}},
            head={"width": 400, "height": 300},
        )
    assert refused.value.client_op_id == "c1"


def test_the_valid_body_of_the_table_is_accepted(alice):
    """The control of the tables above: unmutated, the body is a 201."""
    board = create(alice)

    assert Board.objects.filter(pk=board["id"]).exists()


def test_a_body_over_2_mib_is_413(alice):
    raw = json.dumps(valid_body()).encode()
    raw = raw[:-1] + b',"padding":"' + b"x" * (2 * 1024 * 1024) + b'"}'
    assert len(raw) > 2 * 1024 * 1024

    assert_problem(alice.post(BOARDS, raw=raw), 413)
    assert Board.objects.count() == 0


def test_an_unauthenticated_create_is_401(api):
    assert_problem(api.post(BOARDS, valid_body()), 401)
    assert Board.objects.count() == 0


# --- what is accepted -------------------------------------------------------------------------


def _edge_points(body):
    body["doc"]["elements"][PATH]["points"] = [[0, 0], [400, 300], [0, 300], [400, 0]]
    body["doc"]["elements"][RECT].update(x=0, y=0, w=400, h=300)


def _ten_tags(body):
    body["tags"] = [f"t-{i}" for i in range(10)]


def _flat_canvas(body):
    body["doc"]["height"] = 1
    body["doc"]["elements"] = [
        {"type": "path", "color": "#000000", "width": 1, "points": [[0, 0], [400, 1]]},
        {"type": "text", "color": "#000000", "size": 8, "x": 0, "y": 1, "text": "flat"},
        {"type": "rect", "color": "#000000", "width": 1, "x": 0, "y": 0, "w": 400, "h": 1},
    ]


VALID = [
    pytest.param(el(PATH, "points", [[0.5, 1.25], [399.999, 299.5]]), id="decimal-coordinates"),
    pytest.param(_edge_points, id="points-on-the-canvas-edge"),
    pytest.param(el(RECT, "fill", None), id="fill-null"),
    pytest.param(without("doc", "elements", RECT, "fill"), id="fill-omitted"),
    pytest.param(el(RECT, "fill", "#AbCdEf"), id="fill-mixed-case-hex"),
    pytest.param(_ten_tags, id="10-tags"),
    pytest.param(with_change("tags", ["t" * 32]), id="tag-32-chars"),
    pytest.param(with_change("tags", []), id="tags-empty"),
    pytest.param(with_change("title", "t" * 120), id="title-120-chars"),
    pytest.param(with_change("doc", "elements", []), id="no-elements"),
    pytest.param(with_change("doc", "width", 4096), id="width-4096"),
    pytest.param(_flat_canvas, id="canvas-1-high"),
    pytest.param(el(PATH, "width", 64), id="stroke-64"),
    pytest.param(el(TEXT, "size", 8), id="text-size-8"),
    pytest.param(el(TEXT, "size", 128), id="text-size-128"),
    pytest.param(el(TEXT, "text", "x" * 500), id="text-500-chars"),
    pytest.param(el(TEXT, "rotation", 0), id="text-rotation-0"),
    pytest.param(el(RECT, "rotation", 359.9), id="rect-rotation-359.9"),
    pytest.param(el(ELLIPSE, "rotation", 45), id="ellipse-rotation-45"),
    pytest.param(with_change("doc", "elements", lambda: [text_element() for _ in range(5_000)]), id="elements-5000"),
]


@pytest.mark.parametrize("mutate", VALID)
def test_a_valid_edge_case_is_accepted(alice, mutate):
    body = valid_body()
    mutate(body)

    response = alice.post(BOARDS, body)

    assert response.status_code == 201, response.content[:500]
    board = response.json()
    assert as_typed_json(as_sent(board["doc"], body["doc"])) == as_typed_json(body["doc"])
    assert board["tags"] == body["tags"]
    assert Board.objects.filter(pk=board["id"]).count() == 1


def test_tags_may_be_left_out(alice):
    body = valid_body()
    del body["tags"]

    board = create(alice, body)

    assert board["tags"] == []
    assert alice.get(f"{BOARDS}/{board['id']}").json()["tags"] == []


def test_the_title_is_stored_trimmed(alice):
    body = valid_body()
    body["title"] = " \t  Sunset over the bay \n "

    board = create(alice, body)

    assert board["title"] == "Sunset over the bay"
    assert Board.objects.get(pk=board["id"]).title == "Sunset over the bay"
    assert alice.get(f"{BOARDS}/{board['id']}").json()["title"] == "Sunset over the bay"


def test_a_title_of_120_chars_inside_spaces_is_accepted(alice):
    body = valid_body()
    body["title"] = "   " + "t" * 120 + "   "

    assert create(alice, body)["title"] == "t" * 120


# Strings a title check can trip on: every character str.strip() trims, NUL, letters, an emoji.
TITLE_ALPHABET = st.sampled_from([*TITLE_TRIMMED, "\x00", "a", "Z", "é", "\ufeff", "\U0001f600"])


@settings(max_examples=300, derandomize=True, database=None)
@given(
    title=st.text(TITLE_ALPHABET, max_size=MAX_TITLE + 6)
    | st.builds(
        lambda pad, core, end: pad + core + end,
        st.text(TITLE_ALPHABET, max_size=3),
        st.text(st.sampled_from("ab"), min_size=MAX_TITLE - 2, max_size=MAX_TITLE + 1),
        st.text(TITLE_ALPHABET, max_size=3),
    )
)
def test_the_documented_title_pattern_accepts_exactly_what_the_server_does(title):
    """The OpenAPI document's title pattern (a fuzz found titles it called valid refused) says
    what BoardCreate checks: trimmed, 1 to 120 characters, no NUL."""
    pattern = build()["components"]["schemas"]["BoardCreate"]["properties"]["title"]["pattern"]
    try:
        validate(BoardCreate, {**valid_body(), "title": title})
        accepted = True
    except ApiError:
        accepted = False
    assert bool(re.search(pattern, title)) == accepted, repr(title)


def test_the_document_says_tags_are_distinct_and_text_has_no_nul():
    schemas = build()["components"]["schemas"]
    assert schemas["BoardCreate"]["properties"]["tags"]["uniqueItems"] is True
    for model, field in (("SignUp", "password"), ("Credentials", "username"), ("ProfilePatch", "bio")):
        pattern = schemas[model]["properties"][field]["pattern"]
        assert re.search(pattern, "any text at all") and not re.search(pattern, "a\x00b"), (model, field)


def test_100000_points_are_accepted_and_read_back_equal(alice):
    body = valid_body()
    body["doc"]["elements"] = paths_with_points(100_000)

    board = create(alice, body)

    read = alice.get(f"{BOARDS}/{board['id']}")
    assert read.status_code == 200
    doc = read.json()["doc"]
    assert sum(len(e["points"]) for e in doc["elements"]) == 100_000
    assert as_typed_json(as_sent(doc, body["doc"])) == as_typed_json(body["doc"])


def test_what_you_store_is_what_you_read_back(alice):
    doc = {
        "elements": [
            {"type": "path", "color": "#aBcDeF", "width": 2.5, "points": [[1, 2], [1.5, 2.25], [0, 0], [640, 480.5]]},
            {
                "type": "text",
                "color": "#123456",
                "size": 12.5,
                "x": 1,
                "y": 2.0,
                "text": 'h\u00e9llo \u4e16\u754c \U0001f3a8 <script>alert(1)</script> & "quoted" \\ back\tslash',
            },
            {"type": "rect", "color": "#000000", "width": 1, "x": 0.1, "y": 0, "w": 10, "h": 10.75, "fill": None},
            {"type": "ellipse", "color": "#000000", "width": 64, "x": 5, "y": 5, "w": 1e-3, "h": 2},
        ],
        "background": "#FFFFFF",
        "height": 480.5,
        "width": 640,
    }
    body = {"title": "Round trip", "kind": "diagram", "tags": ["a"], "doc": doc}

    created = alice.post(BOARDS, body)
    assert created.status_code == 201, created.content[:500]
    read = alice.get(f"{BOARDS}/{created.json()['id']}")

    assert read.status_code == 200
    for answer in (created.json()["doc"], read.json()["doc"]):
        assert as_typed_json(as_sent(answer, doc)) == as_typed_json(doc)
        points = answer["elements"][PATH]["points"]
        assert type(points[0][0]) is int and points[0][0] == 1
        assert type(points[1][0]) is float and points[1][0] == 1.5
        assert type(answer["elements"][TEXT]["y"]) is float  # 2.0 stays a decimal
        assert type(answer["width"]) is int
        assert answer["elements"][TEXT]["text"] == doc["elements"][TEXT]["text"]
        assert "fill" not in answer["elements"][ELLIPSE]


def test_the_full_board_has_the_fields_of_the_contract(alice):
    body = valid_body()

    board = create(alice, body)

    assert set(board) >= {
        "id",
        "author",
        "title",
        "kind",
        "tags",
        "doc",
        "created_at",
        "updated_at",
        "views",
        "preview_url",
    }
    assert board["author"] == "alice"
    assert (board["title"], board["kind"], board["tags"]) == (body["title"], body["kind"], body["tags"])
    assert board["preview_url"] == f"/api/v1/boards/{board['id']}/preview.svg"
    assert board["views"] == 0


# --- ids --------------------------------------------------------------------------------------


def test_board_ids_are_positive_below_2_53_and_grow(alice, bob):
    first = create(alice)["id"]
    second = create(bob)["id"]
    third = create(alice)["id"]

    for board_id in (first, second, third):
        assert isinstance(board_id, int)
        assert 0 < board_id < 2**53
    assert first < second < third


@pytest.mark.parametrize(
    "board_id", ["12345678901234567890", "99999999999999999", "0"], ids=["20-digits", "17-digits", "zero"]
)
def test_a_board_id_that_cannot_exist_is_a_json_404(api, board_id):
    assert_problem(api.get(f"{BOARDS}/{board_id}"), 404)
    assert_problem(api.get(f"{BOARDS}/{board_id}/preview.svg"), 404)


def test_a_20_digit_board_id_is_a_json_404_for_writes_too(alice):
    assert_problem(alice.patch(f"{BOARDS}/12345678901234567890", {"title": "x"}), 404)
    assert_problem(alice.delete(f"{BOARDS}/12345678901234567890"), 404)


def test_an_unknown_api_path_is_a_json_404(api):
    assert_problem(api.get("/api/v1/nope"), 404)


def test_a_wrong_method_is_a_json_405(alice):
    response = alice.put(BOARDS, valid_body())

    assert_problem(response, 405)
    assert "POST" in response["Allow"]
    assert Board.objects.count() == 0


# --- PATCH ------------------------------------------------------------------------------------


def test_patch_by_the_author_changes_the_fields_given(alice):
    board = create(alice)
    new_doc = {"width": 10, "height": 10, "background": "#000000", "elements": []}

    response = alice.patch(f"{BOARDS}/{board['id']}", {"title": "  Renamed ", "tags": ["new"], "doc": new_doc})

    assert response.status_code == 200, response.content[:500]
    read = alice.get(f"{BOARDS}/{board['id']}").json()
    assert read["title"] == "Renamed"
    assert read["tags"] == ["new"]
    assert read["kind"] == board["kind"]
    assert as_typed_json(as_sent(read["doc"], new_doc)) == as_typed_json(new_doc)


@pytest.mark.parametrize(
    "patch",
    [
        pytest.param(
            {"title": "A valid new title", "doc": {"width": 0, "height": 10, "background": "#000000", "elements": []}},
            id="valid-title-invalid-doc",
        ),
        pytest.param({"kind": "note", "tags": ["BAD"]}, id="valid-kind-invalid-tags"),
        pytest.param({"title": "A valid new title", "colour": "red"}, id="valid-title-unknown-key"),
        pytest.param({"title": None}, id="title-null"),
        pytest.param({"kind": None}, id="kind-null"),
        pytest.param({"tags": None}, id="tags-null"),
        pytest.param({"doc": None}, id="doc-null"),
        pytest.param({"title": "   "}, id="title-only-spaces"),
    ],
)
def test_an_invalid_patch_is_400_and_changes_nothing(alice, patch):
    board = create(alice)
    path = f"{BOARDS}/{board['id']}"
    before = alice.get(path).json()

    assert_problem(alice.patch(path, patch), 400)

    after = alice.get(path).json()
    for field in ("title", "kind", "tags", "updated_at"):
        assert after[field] == before[field], field
    assert as_typed_json(after["doc"]) == as_typed_json(before["doc"])


def test_patch_of_someone_elses_board_with_an_invalid_body_is_403(alice, bob):
    board = create(alice)

    assert_problem(bob.patch(f"{BOARDS}/{board['id']}", {"title": None, "kind": "nope"}), 403)
    assert_problem(bob.patch(f"{BOARDS}/{board['id']}", {"title": "Mine now"}), 403)
    assert alice.get(f"{BOARDS}/{board['id']}").json()["title"] == board["title"]


def test_patch_of_a_missing_board_with_an_invalid_body_is_404(alice):
    assert_problem(alice.patch(f"{BOARDS}/1", {"title": None}), 404)
    assert_problem(alice.patch(f"{BOARDS}/1", raw="{not json"), 404)


def test_patch_without_credentials_with_an_invalid_body_is_401(api, alice):
    board = create(alice)

    assert_problem(api.patch(f"{BOARDS}/{board['id']}", {"title": None}), 401)
    assert_problem(api.patch(f"{BOARDS}/999", {"title": None}), 401)


# --- DELETE -----------------------------------------------------------------------------------


def test_delete_by_someone_else_is_403_and_keeps_the_board(alice, bob):
    board = create(alice)

    assert_problem(bob.delete(f"{BOARDS}/{board['id']}"), 403)
    assert_kept(alice, board)


def test_delete_without_credentials_is_401(api, alice):
    board = create(alice)

    assert_problem(api.delete(f"{BOARDS}/{board['id']}"), 401)
    assert_kept(api, board)


def test_delete_by_the_author_is_204_then_the_board_is_gone(api, alice, bob, run):
    """The on-commit work and its tasks run (``run``), as they would after a real request."""
    assert run(bob.put, "/api/v1/users/alice/follow").status_code == 204
    board = run(create, alice)
    path = f"{BOARDS}/{board['id']}"
    assert api.get(f"{path}/preview.svg").status_code == 200
    assert board["id"] in listed(api, "/api/v1/users/alice/boards")
    assert board["id"] in listed(bob, "/api/v1/feed")

    response = run(alice.delete, path)

    assert response.status_code == 204
    assert_deleted(api, board, follower=bob)
    assert_problem(alice.get(path), 404)
    assert_problem(alice.patch(path, {"title": "Back"}), 404)
    assert_problem(alice.delete(path), 404)
    assert alice.get("/api/v1/me").json()["boards"] == 0


def test_delete_by_staff_is_204(api, alice, bob, run):
    assert run(bob.put, "/api/v1/users/alice/follow").status_code == 204
    board = run(create, alice)
    services.user_create(username="moderator", password="password123", is_staff=True)
    staff = api.as_user("moderator")
    assert board["id"] in listed(api, "/api/v1/users/alice/boards")
    assert board["id"] in listed(bob, "/api/v1/feed")

    assert run(staff.delete, f"{BOARDS}/{board['id']}").status_code == 204
    assert_deleted(api, board, follower=bob)
    assert alice.get("/api/v1/me").json()["boards"] == 0


def test_delete_of_a_missing_board_is_404(alice):
    assert_problem(alice.delete(f"{BOARDS}/1"), 404)


def test_writes_beyond_the_limits_are_429_per_user_and_per_address(alice, bob, settings):
    settings.RATE_LIMIT_WRITES_PER_MINUTE = 2
    settings.RATE_LIMIT_WRITES_PER_ADDRESS_PER_MINUTE = 3
    assert alice.post("/api/v1/boards", valid_body()).status_code == 201
    assert alice.put("/api/v1/users/bob/follow").status_code == 204
    response = alice.post("/api/v1/boards", valid_body())
    body = assert_problem(response, 429)
    assert "your account" in body["detail"] and int(response["Retry-After"]) > 0
    assert Board.objects.count() == 1  # nothing was stored
    assert bob.post("/api/v1/boards", valid_body()).status_code == 201  # bob's own budget
    assert Board.objects.count() == 2
    body = assert_problem(bob.post("/api/v1/boards", valid_body()), 429)  # the address's 3 are spent
    assert "this address" in body["detail"]
    assert Board.objects.count() == 2
    settings.RATE_LIMIT_WRITES_PER_MINUTE = settings.RATE_LIMIT_WRITES_PER_ADDRESS_PER_MINUTE = 0  # 0: off
    assert alice.post("/api/v1/boards", valid_body()).status_code == 201
    assert Board.objects.count() == 3


# --- lines, arrows, sticky notes and rotation (issue 28) ----------------------------------------

LINE, ARROW, STICKY = range(4, 7)  # positions of the newer element kinds in shapes_body()


def shapes_body() -> dict:
    """valid_body() with a line, an arrow and a sticky note (each rotation allowed is given once)."""
    body = valid_body()
    body["doc"]["elements"] += [
        {"type": "line", "color": "#112233", "width": 2, "points": [[10, 10], [200, 150.5]]},
        {"type": "arrow", "color": "#c2255c", "width": 4, "points": [[300, 20], [20, 280]]},
        {
            "type": "sticky",
            "color": "#1d2330",
            "fill": "#fff3bf",
            "size": 18,
            "x": 200,
            "y": 150,
            "w": 160,
            "h": 120,
            "text": "first line\nsecond",
            "rotation": 350,
        },
    ]
    return body


def new_el(index, *path_and_value):
    return with_change("doc", "elements", index, *path_and_value)


SHAPES_INVALID = [
    # line and arrow: exactly two points on the canvas
    pytest.param(new_el(LINE, "points", [[1, 1]]), "points", id="line-1-point"),
    pytest.param(new_el(LINE, "points", [[1, 1], [2, 2], [3, 3]]), "points", id="line-3-points"),
    pytest.param(new_el(ARROW, "points", [[1, 1], [401, 2]]), "outside", id="arrow-beyond-width"),
    pytest.param(new_el(ARROW, "points", [[1, 1], [2, -3]]), "points", id="arrow-y-negative"),
    pytest.param(new_el(ARROW, "width", 65), "width", id="arrow-width-65"),
    pytest.param(new_el(LINE, "fill", "#000000"), "fill", id="line-with-fill"),
    pytest.param(without("doc", "elements", LINE, "color"), "color", id="line-color-missing"),
    pytest.param(new_el(LINE, "type", "arow"), "type", id="arrow-misspelt"),
    pytest.param(new_el(LINE, "rotation", 10), "rotation", id="line-rotation"),
    # sticky: a whole box on the canvas, a fill, text 0..500 characters
    pytest.param(new_el(STICKY, "x", 300), "does not fit", id="sticky-beyond-right-edge"),
    pytest.param(new_el(STICKY, "w", 0), "w", id="sticky-w-0"),
    pytest.param(without("doc", "elements", STICKY, "fill"), "fill", id="sticky-fill-missing"),
    pytest.param(new_el(STICKY, "fill", None), "fill", id="sticky-fill-null"),
    pytest.param(new_el(STICKY, "text", "x" * 501), "text", id="sticky-text-501"),
    pytest.param(new_el(STICKY, "text", "a\x00b"), "text", id="sticky-text-nul"),
    pytest.param(new_el(STICKY, "size", 7), "size", id="sticky-size-7"),
    # rotation: a number of degrees, 0 up to (not including) 360
    pytest.param(new_el(STICKY, "rotation", 360), "rotation", id="rotation-360"),
    pytest.param(new_el(STICKY, "rotation", -1), "rotation", id="rotation-negative"),
    pytest.param(el(RECT, "rotation", "90"), "rotation", id="rotation-a-string"),
    pytest.param(el(RECT, "rotation", True), "rotation", id="rotation-true"),
    pytest.param(el(TEXT, "rotation", None), "rotation", id="rotation-null"),
    pytest.param(el(PATH, "rotation", 90), "rotation", id="path-rotation"),
]


@pytest.mark.parametrize(("mutate", "named"), SHAPES_INVALID)
def test_a_bad_line_arrow_sticky_or_rotation_is_400_with_a_sentence_naming_it(alice, mutate, named):
    body = shapes_body()
    mutate(body)

    problem = assert_problem(alice.post(BOARDS, body), 400)

    assert named in problem["detail"], problem["detail"]
    assert problem["detail"].endswith("."), problem["detail"]
    assert Board.objects.count() == 0


SHAPES_VALID = [
    pytest.param(lambda body: None, id="as-built"),
    pytest.param(new_el(LINE, "points", [[0, 0], [400, 300]]), id="line-corner-to-corner"),
    pytest.param(new_el(ARROW, "points", [[5, 5], [5, 5]]), id="arrow-of-no-length"),
    pytest.param(new_el(STICKY, "text", ""), id="sticky-empty"),
    pytest.param(without("doc", "elements", STICKY, "rotation"), id="sticky-unrotated"),
    pytest.param(new_el(STICKY, "rotation", 0.5), id="rotation-decimal"),
    pytest.param(new_el(STICKY, "x", 240), id="sticky-touching-the-right-edge"),
]


@pytest.mark.parametrize("mutate", SHAPES_VALID)
def test_lines_arrows_and_sticky_notes_are_stored_as_sent(alice, mutate):
    body = shapes_body()
    mutate(body)

    board = create(alice, body)

    read = alice.get(f"{BOARDS}/{board['id']}").json()["doc"]
    assert as_typed_json(as_sent(read, body["doc"])) == as_typed_json(body["doc"])


def test_a_patch_restyles_rotates_and_resizes_an_element(alice):
    board = create(alice, shapes_body())
    doc = board["doc"]
    doc["elements"][RECT].update(color="#3b5bdb", width=6, w=80, h=60, rotation=30)
    doc["elements"][STICKY].update(text="changed", size=24)

    response = alice.patch(f"{BOARDS}/{board['id']}", {"doc": doc})

    assert response.status_code == 200, response.content[:500]
    read = alice.get(f"{BOARDS}/{board['id']}").json()["doc"]
    assert read["elements"][RECT] == doc["elements"][RECT]
    assert read["elements"][STICKY]["text"] == "changed"


def test_a_live_op_is_checked_by_the_same_models_and_may_reach_past_the_canvas_to_its_limit():
    """An op's element may lie past the live doc's canvas (the board grows to hold it, up to
    MAX_CANVAS: feeds.live.oplog), never past MAX_CANVAS, and its rotation is checked as in a doc."""
    arrow = {**shapes_body()["doc"]["elements"][ARROW], "id": "a1"}

    def check(element):
        return op_check(
            {"type": "op", "client_op_id": "c1", "op": {"kind": "update", "element": element}},
            head={"width": 400, "height": 300},
        )

    _, op = check({**arrow, "points": [[1, 1], [1000, 2000]]})
    assert op["element"]["points"][1] == [1000, 2000]
    with pytest.raises(BadMessage, match="outside the 4096x4096 canvas"):
        check({**arrow, "points": [[1, 1], [4097, 2]]})
    sticky = {**shapes_body()["doc"]["elements"][STICKY], "id": "s1"}
    with pytest.raises(BadMessage, match="rotation"):
        check({**sticky, "rotation": 400})


def test_a_rotated_boxs_extent_holds_its_turned_corners_up_to_the_largest_canvas():
    """Issue 40: what is exported at the board's size holds a rotated element whole, so the
    canvas it needs counts its turned corners (a live board grows to them)."""
    upright = {"type": "rect", "x": 0, "y": 40, "w": 100, "h": 20}
    assert element_extent(upright) == (100, 60)
    standing = {**upright, "rotation": 90}
    assert turned_box(standing) == (40, 0, 60, 100)
    assert element_extent(standing) == (100, 100)
    tilted = {"type": "sticky", "x": 10, "y": 10, "w": 100, "h": 100, "rotation": 45}
    half = 50 * 2**0.5
    left, top, right, bottom = turned_box(tilted)
    assert (left, top) == (pytest.approx(60 - half, abs=0.1), pytest.approx(60 - half, abs=0.1))
    assert left <= 60 - half and right >= 60 + half and right == round(right, 1)
    assert element_extent(tilted) == (right, bottom)
    # Never past the largest canvas, and a text (not measured on the server) keeps its anchor.
    edge = {"type": "ellipse", "x": 4000, "y": 0, "w": 96, "h": 10, "rotation": 45}
    assert element_extent(edge) == (4096, pytest.approx(edge_bottom(edge)))
    assert element_extent({"type": "text", "x": 5, "y": 7, "size": 20, "text": "hi", "rotation": 30}) == (5, 7)


def edge_bottom(element: dict) -> float:
    return max(element["y"] + element["h"], turned_box(element)[3])
