"""The messages of the live channel (docs/api.md, "Shared boards, live"), checked with the same
element models and canvas rule as the REST ``doc`` (feeds.validation): one validator for both."""

import json
import math
from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr, TypeAdapter, ValidationError, model_validator

from feeds.rules import LIVE_STROKE_POINTS, MAX_CANVAS, MAX_POINTS
from feeds.validation import (
    Body,
    CanvasSize,
    Color,
    Element,
    ElementId,
    Number,
    Point,
    StrokeWidth,
    Title,
    element_fits,
)
from ugcsite.platform.http import Strict, _sentence

CLIENT_OP_ID_MAX = 64


class AddOp(Strict):
    kind: Literal["add"]
    element: Element


class UpdateOp(Strict):
    kind: Literal["update"]
    element: Element


class RemoveOp(Strict):
    kind: Literal["remove"]
    id: ElementId


class BoardOp(Strict):
    """A change of the board itself, not of an element: its background, its size (as a doc's;
    never smaller than what is drawn on it: the log checks, feeds.live.oplog) or its title (as a
    board's body; its author's alone: the consumer checks). At least one of them."""

    kind: Literal["board"]
    background: Color = None
    width: CanvasSize = None
    height: CanvasSize = None
    title: Title = None

    @model_validator(mode="after")
    def changes_something(self):
        if not self.model_fields_set - {"kind"}:
            raise ValueError("a board op changes at least one of background, width, height and title")
        return self


Op = Annotated[AddOp | UpdateOp | RemoveOp | BoardOp, Field(discriminator="kind")]


class OpMessage(Body):
    type: Literal["op"]
    client_op_id: Annotated[StrictStr, Field(min_length=1, max_length=CLIENT_OP_ID_MAX)]
    op: Op


class CursorMessage(Strict):
    type: Literal["cursor"]
    x: Number
    y: Number


class StrokeMessage(Strict):
    """Part of a stroke being drawn (ephemeral: relayed to the others, never applied or logged).
    ``points`` are the stroke's points from index ``at`` on; ``done`` ends it without an op (the
    drawer cancelled it). ``id`` is the id its ``add`` op will carry."""

    type: Literal["stroke"]
    id: ElementId
    color: Color
    width: StrokeWidth
    at: Annotated[StrictInt, Field(ge=0, le=MAX_POINTS)]
    points: Annotated[list[Point], Field(max_length=LIVE_STROKE_POINTS)]
    done: StrictBool = False


class BadMessage(Exception):
    """A frame the server refuses; ``str()`` is the sentence sent back, ``client_op_id`` the op's."""

    def __init__(self, detail: str, client_op_id: str | None = None):
        super().__init__(detail)
        self.client_op_id = client_op_id


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError("a number is too large")
    return value


def parse_frame(text: str) -> dict:
    """A text frame as a JSON object with a ``type``, or BadMessage."""
    try:
        data = json.loads(text, parse_constant=_reject_constant, parse_float=_finite)
    except RecursionError:
        raise BadMessage("The message is nested too deeply.") from None
    except ValueError as error:
        raise BadMessage(f"The message is not valid JSON: {error}.") from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise BadMessage('A message is a JSON object with a "type": "op", "cursor", "stroke", "ping" or "pong".')
    return data


def _check(model, data: dict, client_op_id: str | None = None):
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = [_sentence(e, OpMessage) for e in exc.errors(include_url=False, include_input=False)]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise BadMessage(errors[0] + more + ".", client_op_id) from None


def op_check(data: dict, *, head: dict) -> tuple[OpMessage, dict]:
    """An op message checked: its shape, the element's rules, an id on every element, and the
    element within MAX_CANVAS: past the canvas of ``head`` (the live doc's width and height), the
    board grows to hold it (oplog.live_apply). (The message, the op as sent.) Whether the element
    exists, and the doc's limits, are the log's to check (oplog). A board op's title is the
    trimmed one, as stored."""
    cid = data.get("client_op_id") if isinstance(data.get("client_op_id"), str) else None
    message = _check(OpMessage, data, cid)
    op = message.op
    if isinstance(op, BoardOp) and op.title is not None:
        return message, {**data["op"], "title": op.title}
    if isinstance(op, (AddOp, UpdateOp)):
        if op.element.id is None:
            raise BadMessage('op.element needs an "id" (1-64 characters of A-Z, a-z, 0-9, _ and -).', cid)
        try:
            element_fits(op.element, MAX_CANVAS, MAX_CANVAS, "op.element")
        except ValueError as error:
            raise BadMessage(f"{error}.", cid) from None
    return message, data["op"]


def cursor_check(data: dict) -> CursorMessage:
    return _check(CursorMessage, data)


def stroke_check(data: dict) -> StrokeMessage:
    """A stroke frame checked: its shape, and its points within MAX_POINTS and within MAX_CANVAS,
    as the path it becomes must be (past the board's edge that path grows the board: op_check)."""
    message = _check(StrokeMessage, data)
    if message.at + len(message.points) > MAX_POINTS:
        raise BadMessage(f"A stroke holds at most {MAX_POINTS:,} points; this one would go past them.")
    for index, (x, y) in enumerate(message.points):
        if not (0 <= x <= MAX_CANVAS and 0 <= y <= MAX_CANVAS):
            raise BadMessage(f"points[{index}] ({x}, {y}) lies outside the {MAX_CANVAS}x{MAX_CANVAS} canvas limit.")
    return message


OP_ADAPTER = TypeAdapter(Op)
