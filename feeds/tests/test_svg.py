"""The server-side SVG preview (feeds.svg.render_svg and GET /api/v1/boards/<id>/preview.svg).

Every output is parsed with ElementTree: whatever a document holds, the SVG must be well-formed
XML, texts must come out as text (never markup), and every element must be drawn."""

import xml.etree.ElementTree as ET

import pytest

from feeds.rules import DRAWING_LAYOUT
from feeds.svg import render_svg, sticky_wrap

NS = "{http://www.w3.org/2000/svg}"
BOARDS = "/api/v1/boards"


def drawing(*elements, width=200, height=100, background="#fafafa") -> dict:
    return {"width": width, "height": height, "background": background, "elements": list(elements)}


def text(value: str, **extra) -> dict:
    return {"type": "text", "color": "#123456", "size": 16, "x": 10, "y": 20, "text": value, **extra}


def parse(svg: str) -> ET.Element:
    """The SVG as an element tree; fails the test if it is not well-formed XML."""
    try:
        return ET.fromstring(svg)
    except ET.ParseError as error:
        pytest.fail(f"render_svg made malformed XML ({error}):\n{svg[:2000]}")


def drawn(root: ET.Element) -> list[ET.Element]:
    """The children of <svg> after the background rectangle (and the <title>, if any)."""
    children = [child for child in root if child.tag != f"{NS}title"]
    return children[1:]


def tags(root: ET.Element) -> list[str]:
    return [element.tag.removeprefix(NS) for element in root.iter()]


# --- the document ---------------------------------------------------------------------------


def test_the_root_is_an_svg_of_the_canvas_size():
    root = parse(render_svg(drawing(width=640, height=480.5)))

    assert root.tag == f"{NS}svg"
    assert root.get("width") == "640"
    assert float(root.get("height")) == 480.5
    assert root.get("viewBox").split() == ["0", "0", "640", root.get("height")]


def test_the_background_rect_uses_the_background_color():
    root = parse(render_svg(drawing(background="#1a2B3c")))

    background = [child for child in root if child.tag != f"{NS}title"][0]
    assert background.tag == f"{NS}rect"
    assert background.get("fill") == "#1a2B3c"
    assert (background.get("width"), background.get("height")) == ("100%", "100%")


def test_an_empty_drawing_has_only_the_background():
    root = parse(render_svg(drawing()))

    assert drawn(root) == []


# --- texts are text, never markup -----------------------------------------------------------


def test_a_text_that_tries_to_close_its_tag_stays_one_text_element():
    payload = "</text><script>alert(1)</script><text>"

    svg = render_svg(drawing(text(payload)))
    root = parse(svg)

    texts = list(root.iter(f"{NS}text"))
    assert len(texts) == 1
    assert texts[0].text == payload
    assert len(texts[0]) == 0  # no child elements inside it
    assert "script" not in tags(root)
    assert "<script" not in svg


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("She said \"hi\" and 'bye'", id="quotes"),
        pytest.param("Tom & Jerry &amp; &#60; &lt;", id="ampersands-and-entities"),
        pytest.param("end of ]]> cdata", id="cdata-end"),
        pytest.param("<!-- a comment --> <![CDATA[x]]>", id="comment-and-cdata"),
        pytest.param("<?xml version='1.0'?><!DOCTYPE svg>", id="declarations"),
        pytest.param("  spaced   out  ", id="whitespace-kept"),
        pytest.param("h\u00e9llo \u4e16\u754c \U0001f3a8", id="unicode"),
    ],
)
def test_special_characters_in_a_text_come_back_as_the_same_text(value):
    root = parse(render_svg(drawing(text(value))))

    (element,) = root.iter(f"{NS}text")
    assert element.text == value
    assert tags(root) == ["svg", "rect", "text"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("a\x00b", "ab", id="nul"),
        pytest.param("esc\x1b[31mred", "esc[31mred", id="escape"),
        pytest.param("\x01\x02\x08\x0b\x0c\x0e\x1f!", "!", id="c0-controls"),
        pytest.param("tab\tkept", "tab\tkept", id="tab-kept"),
        pytest.param("bad \ufffe\uffff end", "bad  end", id="non-characters"),
    ],
)
def test_characters_xml_cannot_carry_are_dropped_from_texts(value, expected):
    root = parse(render_svg(drawing(text(value))))

    (element,) = root.iter(f"{NS}text")
    assert element.text == expected


def test_a_text_is_drawn_where_and_how_the_doc_says():
    root = parse(render_svg(drawing(text("hi", x=12.5, y=30, size=24, color="#abcdef"))))

    (element,) = drawn(root)
    assert element.tag == f"{NS}text"
    assert float(element.get("x")) == 12.5
    assert float(element.get("y")) == 30
    assert float(element.get("font-size")) == 24
    assert element.get("fill") == "#abcdef"


def test_a_title_with_markup_is_escaped():
    title = '</title><script>alert("x")</script> & <b>bold</b>'

    svg = render_svg(drawing(), title=title)
    root = parse(svg)

    (element,) = root.iter(f"{NS}title")
    assert element.text == title
    assert "script" not in tags(root) and "b" not in tags(root)
    assert "<script" not in svg


def test_a_title_with_control_characters_is_still_well_formed():
    root = parse(render_svg(drawing(), title="bell\x07 and nul\x00"))

    assert root.find(f"{NS}title").text == "bell and nul"


def test_no_title_element_without_a_title():
    root = parse(render_svg(drawing()))

    assert root.find(f"{NS}title") is None


def test_hostile_values_outside_texts_cannot_open_markup():
    """The renderer escapes even what validation would refuse (a doc stored before a rule changed)."""
    doc = drawing(
        {
            "type": "rect",
            "color": '"/><script>alert(1)</script>',
            "width": 1,
            "x": 0,
            "y": 0,
            "w": 10,
            "h": 10,
            "fill": "red' onload='alert(1)",
        },
        {"type": "<script>", "color": "#000000"},
        background='#000"><script>alert(2)</script>',
    )

    svg = render_svg(doc)
    root = parse(svg)

    assert "script" not in tags(root)
    assert "<script" not in svg
    assert all(not name.startswith("on") for element in root.iter() for name in element.attrib)


# --- every element type is drawn ------------------------------------------------------------


def test_a_path_is_a_polyline_through_its_points():
    path = {"type": "path", "color": "#ff0000", "width": 4, "points": [[10, 20], [30.5, 40.25], [200, 100], [0, 0]]}

    (element,) = drawn(parse(render_svg(drawing(path))))

    assert element.tag == f"{NS}polyline"
    points = [tuple(float(n) for n in pair.split(",")) for pair in element.get("points").split()]
    assert points == [(10, 20), (30.5, 40.25), (200, 100), (0, 0)]
    assert element.get("stroke") == "#ff0000"
    assert float(element.get("stroke-width")) == 4
    assert element.get("fill") == "none"


@pytest.mark.parametrize(
    ("fill", "expected"),
    [
        pytest.param("#00ff00", "#00ff00", id="filled"),
        pytest.param(None, "none", id="fill-null"),
        pytest.param("omitted", "none", id="fill-omitted"),
    ],
)
def test_a_rect_is_drawn_with_its_box_and_fill(fill, expected):
    rect = {"type": "rect", "color": "#0000ff", "width": 3, "x": 10, "y": 20.5, "w": 30, "h": 15.25}
    if fill != "omitted":
        rect["fill"] = fill

    (element,) = drawn(parse(render_svg(drawing(rect))))

    assert element.tag == f"{NS}rect"
    box = [float(element.get(name)) for name in ("x", "y", "width", "height")]
    assert box == [10, 20.5, 30, 15.25]
    assert element.get("fill") == expected
    assert element.get("stroke") == "#0000ff"
    assert float(element.get("stroke-width")) == 3


@pytest.mark.parametrize(
    ("fill", "expected"),
    [
        pytest.param("#AABBCC", "#AABBCC", id="filled"),
        pytest.param(None, "none", id="fill-null"),
        pytest.param("omitted", "none", id="fill-omitted"),
    ],
)
def test_an_ellipse_is_drawn_inside_its_box(fill, expected):
    ellipse = {"type": "ellipse", "color": "#00aa00", "width": 2, "x": 10, "y": 20, "w": 30, "h": 15}
    if fill != "omitted":
        ellipse["fill"] = fill

    (element,) = drawn(parse(render_svg(drawing(ellipse))))

    assert element.tag == f"{NS}ellipse"
    geometry = {name: float(element.get(name)) for name in ("cx", "cy", "rx", "ry")}
    assert geometry == {"cx": 10 + 30 / 2, "cy": 20 + 15 / 2, "rx": 30 / 2, "ry": 15 / 2}
    assert element.get("fill") == expected
    assert element.get("stroke") == "#00aa00"


def test_all_elements_are_drawn_in_document_order():
    doc = drawing(
        {"type": "rect", "color": "#000000", "width": 1, "x": 0, "y": 0, "w": 5, "h": 5},
        text("first"),
        {"type": "path", "color": "#000000", "width": 1, "points": [[0, 0], [1, 1]]},
        {"type": "ellipse", "color": "#000000", "width": 1, "x": 0, "y": 0, "w": 5, "h": 5},
        text("second"),
    )

    elements = drawn(parse(render_svg(doc)))

    assert [e.tag.removeprefix(NS) for e in elements] == ["rect", "text", "polyline", "ellipse", "text"]
    assert [e.text for e in elements if e.tag == f"{NS}text"] == ["first", "second"]


def test_a_large_drawing_renders_every_point():
    points = [[i % 201, i % 101] for i in range(20_000)]
    doc = drawing({"type": "path", "color": "#000000", "width": 1, "points": points})

    (element,) = drawn(parse(render_svg(doc)))

    assert len(element.get("points").split()) == 20_000


# --- through the API ------------------------------------------------------------------------


@pytest.fixture
def alice(api):
    return api.as_user("alice")


def _create(client, doc: dict, title: str = "Preview me") -> int:
    response = client.post(BOARDS, {"title": title, "kind": "sketch", "doc": doc})
    assert response.status_code == 201, response.content[:500]
    return response.json()["id"]


@pytest.mark.django_db
def test_the_preview_endpoint_serves_the_rendered_drawing(api, alice):
    doc = drawing(
        text("</text><script>alert(1)</script>"),
        {"type": "rect", "color": "#ff0000", "width": 2, "x": 1, "y": 2, "w": 3, "h": 4},
        background="#0f0f0f",
    )
    board_id = _create(alice, doc, title="<b>Title</b>")

    response = api.get(f"{BOARDS}/{board_id}/preview.svg")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("image/svg+xml")
    assert "default-src 'none'" in response["Content-Security-Policy"]
    root = parse(response.content.decode("utf-8"))
    assert root.find(f"{NS}title").text == "<b>Title</b>"
    (text_element,) = root.iter(f"{NS}text")
    assert text_element.text == "</text><script>alert(1)</script>"
    assert "script" not in tags(root)
    background, *elements = [child for child in root if child.tag != f"{NS}title"]
    assert background.get("fill") == "#0f0f0f"
    assert [e.tag.removeprefix(NS) for e in elements] == ["text", "rect"]


@pytest.mark.django_db
def test_the_preview_follows_an_update(api, alice):
    board_id = _create(alice, drawing(text("before")))
    response = alice.patch(f"{BOARDS}/{board_id}", {"doc": drawing(text("after"), background="#000000")})
    assert response.status_code == 200, response.content[:500]

    root = parse(api.get(f"{BOARDS}/{board_id}/preview.svg").content.decode())

    assert [e.text for e in root.iter(f"{NS}text")] == ["after"]


@pytest.mark.django_db
def test_the_preview_of_a_deleted_board_is_404(api, alice):
    board_id = _create(alice, drawing(text("soon gone")))
    path = f"{BOARDS}/{board_id}/preview.svg"
    assert api.get(path).status_code == 200

    assert alice.delete(f"{BOARDS}/{board_id}").status_code == 204

    response = api.get(path)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["detail"].strip()


@pytest.mark.django_db
def test_the_preview_of_a_missing_board_is_404(api):
    response = api.get(f"{BOARDS}/1/preview.svg")

    assert response.status_code == 404
    assert response.json()["detail"].strip()


# --- lines, arrows, sticky notes, rotation (issue 28) ---------------------------------------------


def test_a_line_and_an_arrow_are_drawn_the_arrow_with_its_head_at_the_second_point():
    line = {"type": "line", "color": "#112233", "width": 2, "points": [[10, 10], [190, 10]]}
    arrow = {"type": "arrow", "color": "#c2255c", "width": 4, "points": [[10, 50], [150, 50]]}
    root = parse(render_svg(drawing(line, arrow)))

    shapes = drawn(root)
    assert [shape.tag.removeprefix(NS) for shape in shapes] == ["line", "line", "polyline"]
    assert (shapes[0].get("x1"), shapes[0].get("x2"), shapes[0].get("stroke")) == ("10", "190", "#112233")
    head = [tuple(map(float, point.split(","))) for point in shapes[2].get("points").split()]
    assert head[1] == (150, 50)  # the tip
    assert head[0][0] < 150 and head[2][0] < 150 and sorted([head[0][1], 50, head[2][1]])[1] == 50  # behind, both sides
    assert shapes[2].get("stroke") == "#c2255c" and shapes[2].get("fill") == "none"


def test_a_sticky_note_is_a_filled_box_with_a_text_per_line_rotated_about_its_centre():
    sticky = {
        "type": "sticky",
        "color": "#1d2330",
        "fill": "#fff3bf",
        "size": 16,
        "x": 20,
        "y": 10,
        "w": 100,
        "h": 80,
        "text": "one <b>\n\ntwo",
        "rotation": 15,
    }
    root = parse(render_svg(drawing(sticky)))

    (group,) = drawn(root)
    assert group.tag == f"{NS}g" and group.get("transform") == "rotate(15 70 50)"
    paper, *texts = list(group)
    assert paper.tag == f"{NS}rect" and paper.get("fill") == "#fff3bf"
    assert [t.text for t in texts] == ["one <b>", "two"]
    assert float(texts[1].get("y")) > float(texts[0].get("y"))


def note(text_value: str, *, w: float = 160, size: float = 16) -> dict:
    return {
        "type": "sticky",
        "color": "#1d2330",
        "fill": "#fff3bf",
        "size": size,
        "x": 0,
        "y": 0,
        "w": w,
        "h": 80,
        "text": text_value,
    }


def test_a_sticky_notes_text_wraps_at_spaces_to_what_its_box_holds():
    # (160 - 2 * 10) / (16 * 0.6) = 14.58: 14 characters a line
    room = int((160 - 2 * DRAWING_LAYOUT["stickyPad"]) / (16 * DRAWING_LAYOUT["stickyCharWidth"]))
    assert room == 14
    assert sticky_wrap(note("Buy milk and eggs on the way home")) == ["Buy milk and", "eggs on the", "way home"]
    # A word longer than a line is cut; the person's own line breaks and empty lines stay.
    assert sticky_wrap(note("x" * 30 + "\n\nok")) == ["x" * 14, "x" * 14, "xx", "", "ok"]
    # Characters are counted as code points (an emoji is one), as live.js counts them.
    assert sticky_wrap(note("\U0001f600" * 20)) == ["\U0001f600" * 14, "\U0001f600" * 6]
    # A box narrower than one character still holds one a line.
    assert sticky_wrap(note("abc", w=5)) == ["a", "b", "c"]
    for line in sticky_wrap(note("the quick brown fox jumps over the lazy dog " * 5)):
        assert len(line) <= room


def test_a_sticky_notes_wrapped_lines_are_its_svg_texts():
    root = parse(render_svg(drawing(note("Buy milk and eggs on the way home"))))
    (group,) = drawn(root)
    assert [t.text for t in list(group)[1:]] == ["Buy milk and", "eggs on the", "way home"]


def test_a_rotated_rect_and_text_carry_their_rotation():
    rect = {"type": "rect", "color": "#000000", "width": 1, "x": 10, "y": 10, "w": 40, "h": 20, "rotation": 90}
    root = parse(render_svg(drawing(rect, text("hi", rotation=45.5))))

    shape, label = drawn(root)
    assert shape.get("transform") == "rotate(90 30 20)"
    assert label.get("transform") == "rotate(45.5 10 20)"
