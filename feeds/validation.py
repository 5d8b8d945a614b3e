"""The shapes docs/api.md fixes for boards and drawings, checked with pydantic.

Numbers are integers or decimals, never booleans or strings (strict types); NaN and infinities
never get this far (ugcsite.platform.http.parse_json_object refuses them). Unknown keys are refused.
What is stored is the JSON as sent, not these models' dump, so a client reads back its own doc.
"""

import math
import secrets
from typing import Annotated, ClassVar, Literal, get_args

from pydantic import AfterValidator, Field, StrictBool, StrictFloat, StrictStr, field_validator, model_validator

from feeds.rules import (
    BOARD_KINDS,
    COLOR_PATTERN,
    ELEMENT_ID_GENERATED,
    ELEMENT_ID_PATTERN,
    IMAGE_ID_PATTERN,
    MAX_CANVAS,
    MAX_ELEMENTS,
    MAX_POINTS,
    MAX_TAGS,
    MAX_TEXT,
    MAX_TITLE,
    ROTATION,
    STROKE_WIDTH,
    TAG_PATTERN,
    TAG_WORDS,
    TEXT_SIZE,
    TITLE_PATTERN,
    CommentPolicy,
)
from ugcsite.platform.http import Strict, Text

# A strict float takes ints too (kept as sent: the stored doc is the client's JSON), never bools.
Number = Annotated[StrictFloat, Field(allow_inf_nan=False)]
Color = Annotated[StrictStr, Field(pattern=COLOR_PATTERN)]
StrokeWidth = Annotated[Number, Field(ge=STROKE_WIDTH[0], le=STROKE_WIDTH[1])]
# A coordinate lies on the canvas (Doc.within_canvas checks it against the doc's own size);
# the document also states the bounds that hold on every canvas.
Coordinate = Annotated[Number, Field(json_schema_extra={"minimum": 0, "maximum": MAX_CANVAS})]
Extent = Annotated[Number, Field(gt=0, json_schema_extra={"maximum": MAX_CANVAS})]
Point = Annotated[list[Coordinate], Field(min_length=2, max_length=2)]
Tag = Annotated[StrictStr, Field(pattern=TAG_PATTERN)]
ElementId = Annotated[StrictStr, Field(pattern=ELEMENT_ID_PATTERN)]
# Degrees clockwise about the element's centre (a text's: its anchor); 0 when left out.
Rotation = Annotated[Number, Field(ge=ROTATION[0], lt=ROTATION[1])]
KindName = Literal[BOARD_KINDS]
CommentPolicyName = Literal[tuple(CommentPolicy.values)]  # type: ignore[valid-type]
# A canvas's width or height (a doc's, or a live board op's): the canvas grows to MAX_CANVAS.
CanvasSize = Annotated[Number, Field(ge=1, le=MAX_CANVAS)]


def _clean_title(value: str) -> str:
    value = value.strip()
    if not 1 <= len(value) <= MAX_TITLE:
        raise ValueError(f"a title needs 1 to {MAX_TITLE} characters (spaces at both ends do not count)")
    return value


# The title as stored (trimmed) and as the document describes it: _clean_title is the check,
# TITLE_PATTERN says the same. A board's body and a live board op read it alike.
Title = Annotated[
    Text,
    AfterValidator(_clean_title),
    Field(
        json_schema_extra={
            "pattern": TITLE_PATTERN,
            "description": f"1-{MAX_TITLE} characters once white space at both ends is trimmed",
        }
    ),
]


class PathElement(Strict):
    type: Literal["path"]
    id: ElementId = None
    color: Color
    width: StrokeWidth
    points: Annotated[list[Point], Field(min_length=2, max_length=MAX_POINTS)]


class TextElement(Strict):
    type: Literal["text"]
    id: ElementId = None
    color: Color
    size: Annotated[Number, Field(ge=TEXT_SIZE[0], le=TEXT_SIZE[1])]
    x: Coordinate
    y: Coordinate
    text: Annotated[Text, Field(min_length=1, max_length=MAX_TEXT)]  # as a title: no NUL, no unpaired surrogate
    rotation: Rotation = None


class ShapeElement(Strict):
    type: Literal["rect", "ellipse"]
    id: ElementId = None
    color: Color
    width: StrokeWidth
    x: Coordinate
    y: Coordinate
    w: Extent
    h: Extent
    fill: Color | None = None
    rotation: Rotation = None


class LineElement(Strict):
    """A straight line from its first point to its second; an arrow has its head at the second."""

    type: Literal["line", "arrow"]
    id: ElementId = None
    color: Color
    width: StrokeWidth
    points: Annotated[list[Point], Field(min_length=2, max_length=2)]


class StickyElement(Strict):
    """A note: a filled box with text inside, one line per line of ``text`` (it may be empty)."""

    type: Literal["sticky"]
    id: ElementId = None
    color: Color  # of the text
    fill: Color  # the paper (the editor's first is STICKY_FILL)
    size: Annotated[Number, Field(ge=TEXT_SIZE[0], le=TEXT_SIZE[1])]
    x: Coordinate
    y: Coordinate
    w: Extent
    h: Extent
    text: Annotated[Text, Field(max_length=MAX_TEXT)]
    rotation: Rotation = None


class ImageElement(Strict):
    """An uploaded picture (POST /api/v1/images gives its id) drawn stretched to its box. Who
    may place which picture is a rule over the database (feeds.images.images_check_placeable)."""

    type: Literal["image"]
    id: ElementId = None
    x: Coordinate
    y: Coordinate
    w: Extent
    h: Extent
    image: Annotated[StrictStr, Field(pattern=IMAGE_ID_PATTERN)]
    rotation: Rotation = None


# The element kinds, defined here once: the tagged union below, the OpenAPI document, and the
# pages' scripts (feeds.views hands ELEMENT_TYPES to the editor's config) read them.
ELEMENT_MODELS = (PathElement, TextElement, ShapeElement, LineElement, StickyElement, ImageElement)
ELEMENT_TYPES = tuple(name for model in ELEMENT_MODELS for name in get_args(model.model_fields["type"].annotation))
Element = Annotated[
    PathElement | TextElement | ShapeElement | LineElement | StickyElement | ImageElement, Field(discriminator="type")
]


class Doc(Strict):
    """A drawing. Every coordinate lies within this canvas (0..width, 0..height), a rect, an
    ellipse or a sticky note whole (unrotated) (x + w <= width, y + h <= height), and all paths hold at most 100,000
    points in all: rules over several fields, which JSON Schema cannot state."""

    width: CanvasSize
    height: CanvasSize
    background: Color
    elements: Annotated[list[Element], Field(max_length=MAX_ELEMENTS)]

    @model_validator(mode="after")
    def within_canvas(self):
        width, height = self.width, self.height
        total = 0
        ids: set[str] = set()
        for i, element in enumerate(self.elements):
            where = f"elements[{i}]"
            if element.id is not None:
                if element.id in ids:
                    raise ValueError(f"{where} has the id {element.id!r} of an earlier element; ids must be unique")
                ids.add(element.id)
            element_fits(element, width, height, where)
            if isinstance(element, PathElement):
                total += len(element.points)
                if total > MAX_POINTS:
                    raise ValueError(f"the drawing has more than {MAX_POINTS:,} points in all; simplify it")
        return self


def element_fits(element, width: float, height: float, where: str = "the element") -> None:
    """Raise ValueError unless ``element`` lies on a ``width`` x ``height`` canvas (a rect, an
    ellipse or a sticky note whole, as if unrotated). O(points)."""
    if isinstance(element, (PathElement, LineElement)):
        for j, (x, y) in enumerate(element.points):
            if not (0 <= x <= width and 0 <= y <= height):
                raise ValueError(f"{where}.points[{j}] ({x}, {y}) lies outside the {width}x{height} canvas")
    elif isinstance(element, TextElement):
        if not (0 <= element.x <= width and 0 <= element.y <= height):
            raise ValueError(f"{where} ({element.x}, {element.y}) lies outside the {width}x{height} canvas")
    elif not (element.x >= 0 and element.y >= 0 and element.x + element.w <= width and element.y + element.h <= height):
        raise ValueError(f"{where}, a {element.type}, does not fit inside the {width}x{height} canvas")


def turned_box(element: dict) -> tuple[float, float, float, float]:
    """The box (left, top, right, bottom) a rect, ellipse or sticky note covers turned by its
    rotation about its centre, each side rounded outwards to 0.1 (so that the browser's sines,
    static/js/live.js's turnedBox, land on the same figures). O(1)."""
    x, y, w, h = (float(element[k]) for k in ("x", "y", "w", "h"))
    angle = math.radians(float(element.get("rotation") or 0))
    half_w = abs(w / 2 * math.cos(angle)) + abs(h / 2 * math.sin(angle))
    half_h = abs(w / 2 * math.sin(angle)) + abs(h / 2 * math.cos(angle))
    cx, cy = x + w / 2, y + h / 2
    return (
        math.floor((cx - half_w) * 10 + _ROUNDING) / 10,
        math.floor((cy - half_h) * 10 + _ROUNDING) / 10,
        math.ceil((cx + half_w) * 10 - _ROUNDING) / 10,
        math.ceil((cy + half_h) * 10 - _ROUNDING) / 10,
    )


_ROUNDING = 1e-6  # a sine's last bits, which differ between libraries, never move a side's tenth


def element_extent(element: dict) -> tuple[float, float]:
    """The right and bottom end of the coordinates a valid element (as a dict) places: the canvas
    it needs, from 0 (a rotated box's turned corners included, up to MAX_CANVAS, so that what is
    exported at the board's size holds it). A live board's canvas grows to hold it
    (feeds.live.oplog). O(points)."""
    if "points" in element:
        return max(x for x, _ in element["points"]), max(y for _, y in element["points"])
    if "w" in element:
        right, bottom = element["x"] + element["w"], element["y"] + element["h"]
        if not element.get("rotation"):
            return right, bottom
        _, _, turned_right, turned_bottom = turned_box(element)
        return max(right, min(turned_right, MAX_CANVAS)), max(bottom, min(turned_bottom, MAX_CANVAS))
    return element["x"], element["y"]


def element_points(element: dict) -> int:
    """How many points an element (valid, as a dict) counts toward MAX_POINTS."""
    return len(element["points"]) if element.get("type") == "path" else 0


def new_element_id() -> str:
    """A fresh element id: ELEMENT_ID_GENERATED characters of ``[A-Za-z0-9_-]`` (72 random bits)."""
    return secrets.token_urlsafe(ELEMENT_ID_GENERATED * 3 // 4)


def doc_with_ids(doc: dict) -> dict:
    """A valid doc (as sent) whose elements without an ``id`` get a fresh one, the others kept
    as sent (docs/api.md: a GET always returns ids). ``doc`` itself is left as it was (a copy is
    returned when an id was given)."""
    if all("id" in element for element in doc["elements"]):
        return doc
    elements = [element if "id" in element else {**element, "id": new_element_id()} for element in doc["elements"]]
    return {**doc, "elements": elements}


def _clean_tags(value: list[str]) -> list[str]:
    if len(set(value)) != len(value):
        raise ValueError("tags must be distinct")
    return value


Tags = Annotated[list[Tag], Field(max_length=MAX_TAGS, json_schema_extra={"uniqueItems": True})]  # _clean_tags checks


class Body(Strict):
    """A board body: the sentences for its patterns, and the element types (its tagged union)."""

    pattern_messages: ClassVar[dict[str, str]] = {
        "color": "must be a color like #1a2b3c",
        "background": "must be a color like #1a2b3c",
        "fill": "must be a color like #1a2b3c, or null",
        "tags": f"must be {TAG_WORDS}",
        "image": "must be a picture's id from POST /api/v1/images (16 characters of A-Z, a-z, 0-9, _ and -)",
    }
    union_tags: ClassVar[tuple[str, ...]] = ELEMENT_TYPES


class BoardCreate(Body):
    title: Title
    kind: KindName
    tags: Tags = []
    doc: Doc
    remixable: StrictBool = True  # others may remix it (docs/api.md, "Likes and remixes")

    _tags = field_validator("tags")(_clean_tags)


class BoardChanges(Body):
    """Any of the fields; a field given as null is a 400 (the types are not optional)."""

    title: Title = None
    kind: KindName = None
    tags: Tags = None
    doc: Doc = None
    remixable: StrictBool = None

    _tags = field_validator("tags")(_clean_tags)


class BoardPatch(BoardChanges):
    """Any of the fields; a field given as null is a 400 (the types are not optional)."""

    comments: CommentPolicyName = None  # who may comment (docs/api.md, "Comments"; Board.commenting)


class BoardRemix(BoardChanges):
    """The optional body of a remix: what to change in the copy before it is made (docs/api.md,
    "Likes and remixes"); what it leaves out is the source's (the title "Remix of ...")."""
