"""The messages of the live channel (docs/api.md, "Shared boards, live"), checked with the same
element models and canvas rule as the REST ``doc`` (feeds.validation): one validator for both."""

import json
import math
from typing import Annotated, Literal

from pydantic import Field, StrictStr, TypeAdapter, ValidationError

from feeds.rules import MAX_CANVAS
from feeds.validation import Body, Element, ElementId, Number, element_fits
from ugcsite.http import Strict, _sentence

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


Op = Annotated[AddOp | UpdateOp | RemoveOp, Field(discriminator="kind")]


class OpMessage(Body):
    type: Literal["op"]
    client_op_id: Annotated[StrictStr, Field(min_length=1, max_length=CLIENT_OP_ID_MAX)]
    op: Op


class CursorMessage(Strict):
    type: Literal["cursor"]
    x: Number
    y: Number


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
        raise BadMessage('A message is a JSON object with a "type": "op" or "cursor".')
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
    exists, and the doc's limits, are the log's to check (oplog)."""
    cid = data.get("client_op_id") if isinstance(data.get("client_op_id"), str) else None
    message = _check(OpMessage, data, cid)
    op = message.op
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


OP_ADAPTER = TypeAdapter(Op)
