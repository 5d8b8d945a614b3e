"""The OpenAPI document of /api/v1 (``/api/v1/openapi.json``), assembled from what each endpoint
declares beside its handlers (ugcsite.platform.apidoc: summary, parameters, request and response
models, its own statuses), found by walking the URL resolver for the views ``endpoint()`` and
``get_view()`` made. The request models validate the bodies and the response models are what the
handlers build, so the document and the code cannot drift apart; the models become the
document's components, by name.

What is kept here: the assembly and the answers every operation of a kind shares
(``_common_answers``: ugcsite.platform.http.endpoint's 401 for a bad token, 403 for a session call
without its CSRF token, 413 for a body over the limit, 415 for a body that is not JSON, 429 past
the read limits, 503 while a server is down), each an Error."""

import re
from functools import lru_cache

from django.conf import settings
from django.http import JsonResponse
from django.urls import URLResolver, get_resolver
from pydantic import TypeAdapter

from ugcsite.platform.apidoc import JSON, Operation
from ugcsite.platform.http import SAFE_METHODS, Error, get_view

REF = "#/components/schemas/{model}"
ERROR = {"$ref": REF.format(model=Error.__name__)}
RETRY_AFTER = {
    "Retry-After": {
        "schema": {"type": "integer", "minimum": 1},
        "description": "seconds until the next try may succeed",
    }
}
# Each status an error answer may have: what it means, and the headers it carries.
ERRORS = {
    400: ("invalid input", {}),
    401: (
        "no or bad credentials",
        {"WWW-Authenticate": {"schema": {"type": "string"}, "description": 'Bearer realm="ugcsite"'}},
    ),
    403: ("not allowed", {}),
    404: ("not found", {}),
    409: ("conflict", {}),
    413: ("body too large", {}),
    415: ("body not JSON (send Content-Type: application/json)", {}),
    429: ("rate limit reached", RETRY_AFTER),
    503: (
        "PostgreSQL or the data Redis unreachable for a moment, or the list is being rebuilt; try again",
        RETRY_AFTER,
    ),
}


def _errors(*codes: int) -> dict:
    answers = {}
    for code in codes:
        description, headers = ERRORS[code]
        answers[str(code)] = {"description": description, "content": {JSON: {"schema": ERROR}}}
        if headers:
            answers[str(code)]["headers"] = headers
    return answers


def _common_answers(operation: dict, method: str) -> None:
    """Every API operation answers 401 to a bad or expired bearer token (public ones too); every
    read 429 past the read limits; every one 503 while a server it needs is down; every unsafe
    one 403 to a session call without its CSRF token, and 415 to a body that is not JSON unless
    it takes another type; every one with a body 413 past API_MAX_BODY_BYTES. Plain views
    (health) authenticate no one, and get none of these."""
    codes = [401]
    body = operation.get("requestBody")
    if method.upper() not in SAFE_METHODS:
        codes.append(403)
        if body is None or JSON in body["content"]:  # ugcsite.platform.http.json_body_required
            codes.append(415)
    else:
        codes.append(429)  # reads per user and per address (social.limits.read_attempt)
    if body is not None:
        codes.append(413)
    codes.append(503)  # ugcsite.middleware.ServiceUnavailableMiddleware; a list being rebuilt
    for code, answer in _errors(*codes).items():
        operation["responses"].setdefault(code, answer)
    if 403 in codes:
        operation["responses"]["403"]["description"] = "not allowed, or signed in by session without the CSRF token"


def _routes(patterns, prefix: str = ""):
    """(OpenAPI path, view) of every route whose view carries API handlers, in the resolver's order."""
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, route)
        elif getattr(pattern.callback, "api_handlers", None):
            yield "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route), pattern.callback


def _documented():
    """(path, view, {method: handler}) of every route with at least one documented handler."""
    for path, view in _routes(get_resolver().url_patterns):
        handlers = {m: h for m, h in view.api_handlers.items() if getattr(h, "openapi", None)}
        if handlers:
            yield path, view, handlers


def plain_paths() -> set[str]:
    """The paths of plain views (ugcsite.platform.http.get_view): no caller read, so no 401."""
    return {path for path, view, _ in _documented() if getattr(view, "api_plain", False)}


class _Placeholder:
    """Where a model's schema goes, once every model is known."""

    def __init__(self, model):
        self.model = model


class _Models:
    """Every model the operations name, turned into JSON schemas in one pass: a named model
    (a TypedDict, a BaseModel) becomes a component and is referenced by name."""

    def __init__(self):
        self.models: dict = {Error: None}

    def add(self, model) -> dict | _Placeholder:
        """A placeholder for ``model``'s schema (``fill`` puts it in), or a schema as it is."""
        if isinstance(model, dict):
            return model
        self.models.setdefault(model, None)
        return _Placeholder(model)

    def resolve(self) -> dict:
        """The components; each model's own schema (a reference to its component) kept for ``fill``.
        One mode for all: Doc is a request body and a part of the Board answer, one component."""
        models = list(self.models)
        inputs = [(i, "validation", TypeAdapter(model)) for i, model in enumerate(models)]
        schemas, definitions = TypeAdapter.json_schemas(inputs, ref_template=REF)
        for i, model in enumerate(models):
            self.models[model] = schemas[(i, "validation")]
        return definitions.get("$defs", {})

    def fill(self, node):
        """Swap each placeholder in ``node`` for its model's schema."""
        if isinstance(node, _Placeholder):
            return self.models[node.model]
        if isinstance(node, dict):
            return {key: self.fill(value) for key, value in node.items()}
        if isinstance(node, list):
            return [self.fill(value) for value in node]
        return node


def _answer(answer, models: _Models) -> dict:
    """An answer as Operation.answers has it: a description, or (description, model[, media type])."""
    if isinstance(answer, str):
        return {"description": answer}
    description, model, *media = answer
    return {"description": description, "content": {media[0] if media else JSON: {"schema": models.add(model)}}}


def _operation(handler, models: _Models) -> dict:
    spec: Operation = handler.openapi
    operation: dict = {"summary": spec.summary}
    if spec.secured or getattr(handler, "login_required", False):
        operation["security"] = [{"bearer": []}]
    if spec.parameters:
        operation["parameters"] = list(spec.parameters)
    if spec.body is not None:
        content = spec.body if isinstance(spec.body, dict) else {JSON: {"schema": models.add(spec.body)}}
        operation["requestBody"] = {"required": spec.body_required, "content": content}
    operation["responses"] = {str(code): _answer(answer, models) for code, answer in spec.answers.items()}
    operation["responses"].update(
        {code: answer for code, answer in _errors(*spec.errors).items() if code not in operation["responses"]}
    )
    return operation


def _paths(models: _Models) -> dict:
    paths: dict = {}
    for path, view, handlers in _documented():
        item = paths.setdefault(path, {})
        if view.api_parameters:
            item["parameters"] = list(view.api_parameters)
        for method, handler in handlers.items():
            item[method.lower()] = operation = _operation(handler, models)
            if not getattr(view, "api_plain", False):
                _common_answers(operation, method)
    return paths


@lru_cache(maxsize=1)
def build() -> dict:
    models = _Models()
    paths = _paths(models)
    components = models.resolve()
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "ugcsite API",
            "version": "1",
            "description": (
                "Every 4xx answer is an Error object with a `detail` sentence. A method a path does not list "
                "answers 405 with an `Allow` header naming those it does (components.responses.MethodNotAllowed); "
                f"a body over {settings.API_MAX_BODY_BYTES // (1024 * 1024)} MiB is a 413 on any call; a write with "
                "a body not sent as application/json "
                "is a 415, except the avatar's PUT, which takes a picture."
            ),
        },
        "paths": models.fill(paths),
        "components": {
            "schemas": components,
            "responses": {
                "MethodNotAllowed": {
                    "description": "the path exists but not with this method",
                    "headers": {"Allow": {"schema": {"type": "string"}, "description": "the methods the path answers"}},
                    "content": {JSON: {"schema": ERROR}},
                }
            },
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


@get_view
def document(request):
    return JsonResponse(build())
