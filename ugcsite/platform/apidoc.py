"""What the API document (ugcsite.openapi, ``/api/v1/openapi.json``) says of one operation,
declared beside its handler: ``@documented(summary, answers, errors=..., parameters=...,
body=...)``. ``endpoint()`` keeps its handlers and its path's parameters on the view, and
ugcsite.openapi walks the URL resolver for views that carry them.

Answers are response models: TypedDicts (typing_extensions', which pydantic reads on Python
3.11), defined once beside the code that builds the answer (the board summary in
feeds.timelines.boardcache, the profile in social.selectors...) and named by the document as
components. Why TypedDicts rather than pydantic models: pydantic's TypeAdapter gives their JSON
schema as it does a model's, while at run time a TypedDict is a plain dict, which orjson writes
as it is. A pydantic model would cost on every answer: validating it, or even
``model_construct`` (an object per item, then a dump that walks it), on a feed page of 20
summaries or a list of people. So the code builds its answer as its model says: a dict literal
under the TypedDict as its type (a function's return type, a variable's annotation), which
costs nothing, wherever an answer has many items or a path is hot (the feed, the lists of
summaries, health); a single cold answer may call the TypedDict as a constructor (a dict, about
half a microsecond). What checks the answers against their models is the fuzz
(ugcsite/tests/test_fuzz.py): schemathesis compares every live answer with the document.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from ugcsite.platform.http import ID_DIGITS, ID_LIMIT, LIMIT_DEFAULT, LIMIT_MAX, OFFSET_MAX

# A time as the API writes it: ISO 8601 text (datetime.isoformat, or a datetime the JSON encoder writes so).
IsoTime = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
JSON = "application/json"


@dataclass(frozen=True)
class Operation:
    """One method of one path. ``answers``: status -> description, or (description, model), or
    (description, model, media type); a model is a type pydantic reads (a TypedDict, a
    BaseModel, ``dict[str, list[str]]``) or a JSON schema as a dict. ``errors``: the statuses
    the handler itself gives (ugcsite.openapi adds those every call of its kind may give).
    ``body``: the request model, or {media type: schema}. ``secured``: a bearer token is
    needed (a ``login_required`` handler is secured anyway)."""

    summary: str
    answers: dict[int, Any]
    errors: tuple[int, ...] = ()
    parameters: tuple[dict, ...] = ()
    body: Any = None
    body_required: bool = True
    secured: bool = False


def documented(summary: str, answers: dict[int, Any], **facts) -> Callable:
    """A handler with its Operation (the keywords are Operation's)."""
    operation = Operation(summary, answers, **facts)

    def mark(handler: Callable) -> Callable:
        handler.openapi = operation
        return handler

    return mark


def parameter(name: str, where: str, schema: dict, description: str, *, required: bool = False, **more) -> dict:
    return {
        "name": name,
        "in": where,
        "required": required or where == "path",
        "schema": schema,
        "description": description,
        **more,
    }


def query_param(name: str, schema: dict, description: str, **more) -> dict:
    return parameter(name, "query", schema, description, **more)


def id_path(name: str, description: str) -> dict:
    """An id in the path: below 2^53, as every id of the API (ugcsite.platform.http.ID_LIMIT)."""
    return parameter(name, "path", {"type": "integer", "minimum": 1, "exclusiveMaximum": ID_LIMIT}, description)


def ids_query(name: str, most: int) -> dict:
    """1 to ``most`` ids joined by single commas (ugcsite.platform.http.board_ids_param)."""
    digits = f"[0-9]{{1,{ID_DIGITS}}}"
    pattern = f"^{digits}(,{digits}){{0,{most - 1}}}$"
    return query_param(
        name, {"type": "string", "pattern": pattern}, f"1-{most} board ids, comma separated", required=True
    )


OFFSET = {"type": "integer", "minimum": 0, "maximum": OFFSET_MAX, "description": "items to skip"}
LIMIT = {"type": "integer", "minimum": 1, "maximum": LIMIT_MAX, "default": LIMIT_DEFAULT, "description": "page size"}
BEFORE = {"type": "integer", "minimum": 1, "maximum": ID_LIMIT, "description": "only items older than this id"}
LIMIT_PARAM = query_param("limit", LIMIT, LIMIT["description"])
PAGING = (query_param("offset", OFFSET, OFFSET["description"]), LIMIT_PARAM)
# A timeline pages by offset or by before, never both (a 400). Parameters cannot exclude each
# other, so the three are one form-exploded object: each of its keys is a query parameter of
# its own on the wire (?before=42&limit=20), and its schema says "not both".
TIMELINE_PAGING = query_param(
    "paging",
    {
        "type": "object",
        "properties": {"offset": OFFSET, "limit": LIMIT, "before": BEFORE},
        "not": {"required": ["offset", "before"]},
    },
    "offset=, limit= and before=, each its own query parameter; offset and before exclude each other",
    style="form",
    explode=True,
)
