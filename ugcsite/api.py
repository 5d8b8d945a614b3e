"""The plumbing of the JSON API: errors as ``{"detail": ...}``, authentication, body parsing.

A view module declares one function per method and joins them with ``endpoint(GET=..., PUT=...)``.
Order of answers (API.md): 401, then 404, then 403, then 400, so bodies are parsed inside the
handler, after it has loaded what it needs and checked who may touch it.
"""

import json
import math
from collections.abc import Callable
from functools import wraps
from typing import Annotated, Any

from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.utils.functional import SimpleLazyObject
from django.views.decorators.csrf import csrf_exempt
from pydantic import AfterValidator, BaseModel, StrictStr, ValidationError

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


class ApiError(Exception):
    def __init__(self, status: int, detail: str, *, errors: list | None = None, headers: dict | None = None):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = errors
        self.headers = headers or {}

    def response(self) -> JsonResponse:
        return error_response(self.status, self.detail, errors=self.errors, headers=self.headers)


def error_response(status: int, detail: str, *, errors: list | None = None, headers: dict | None = None) -> JsonResponse:
    body: dict[str, Any] = {"detail": detail}
    if errors:
        body["errors"] = errors
    response = JsonResponse(body, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="ugcsite"'
    return response


def not_found(what: str) -> ApiError:
    return ApiError(404, f"There is no {what}.")


# --- authentication ---------------------------------------------------------------------------

class LazyUser(SimpleLazyObject):
    """The caller, loaded from PostgreSQL only when more than its id is needed (a feed read
    needs only the id: no query)."""

    def __init__(self, user_id: int):
        super().__init__(lambda: get_user_model().objects.get(pk=user_id))
        self.__dict__["pk"] = self.__dict__["id"] = user_id

    @property
    def is_authenticated(self):
        return True


def _token_user(key: str):
    from social.models import ApiToken
    from social.services import token_user_id

    user_id = token_user_id(key_hash=ApiToken.hash_key(key))
    if user_id is None:
        raise ApiError(401, "The token is not valid or has expired; get a new one with POST /api/v1/tokens.")
    return LazyUser(user_id)


def authenticate(request: HttpRequest):
    """The caller, or None. A bad bearer token is a 401 on every endpoint, public ones included."""
    header = request.headers.get("Authorization")
    if header is not None:
        scheme, _, key = header.partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise ApiError(401, "Send the token as 'Authorization: Bearer <token>'.")
        return _token_user(key.strip())
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated and user.is_active:
        if request.method not in SAFE_METHODS:
            reason = CsrfViewMiddleware(lambda r: None).process_view(request, None, (), {})
            if reason is not None:
                raise ApiError(403, "The CSRF token is missing or wrong; send the csrftoken cookie's value as X-CSRFToken.")
        return user
    return None


def login_required(handler: Callable) -> Callable:
    handler.login_required = True
    return handler


def endpoint(**handlers: Callable) -> Callable:
    """One URL, one handler per HTTP method. Each handler takes (request, **url_kwargs) and returns
    a dict/list (200 JSON), an HttpResponse, or raises ApiError."""

    @csrf_exempt
    @wraps(next(iter(handlers.values())))
    def view(request: HttpRequest, **kwargs):
        handler = handlers.get(request.method)
        if handler is None:
            allowed = ", ".join(sorted(handlers))
            return error_response(405, f"{request.method} is not allowed here; use {allowed}.", headers={"Allow": allowed})
        try:
            request.api_user = authenticate(request)
            if request.api_user is not None:
                from feeds.services import user_seen

                user_seen(user_id=request.api_user.pk)
            if getattr(handler, "login_required", False) and request.api_user is None:
                raise ApiError(401, "Sign in first: send 'Authorization: Bearer <token>' (POST /api/v1/tokens gives one).")
            result = handler(request, **kwargs)
        except ApiError as error:
            return error.response()
        if isinstance(result, HttpResponse):
            return result
        return JsonResponse(result, safe=False)

    return view


# --- bodies -----------------------------------------------------------------------------------

def _reject_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:40]} is too large")
    return value


def parse_json_object(request: HttpRequest) -> dict:
    """The request body as a JSON object, or a 400 saying what is wrong with it."""
    if not request.body:
        raise ApiError(400, "The body is empty; send a JSON object with 'Content-Type: application/json'.")
    try:
        data = json.loads(request.body.decode("utf-8"), parse_constant=_reject_constant, parse_float=_finite_float)
    except UnicodeDecodeError:
        raise ApiError(400, "The body is not valid UTF-8.") from None
    except RecursionError:
        raise ApiError(400, "The body is nested too deeply.") from None
    except ValueError as error:
        raise ApiError(400, f"The body is not valid JSON: {error}.") from None
    if not isinstance(data, dict):
        raise ApiError(400, "The body must be a JSON object.")
    return data


# Names pydantic puts in a location for the member of a tagged union it tried; not a key of the body.
_UNION_TAGS = {"path", "text", "rect", "ellipse"}


def _location(loc: tuple) -> str:
    text = ""
    previous = None
    for part in loc:
        if isinstance(previous, int) and part in _UNION_TAGS:
            previous = part
            continue
        previous = part
        if isinstance(part, int):
            text += f"[{part}]"
        elif not text:
            text = str(part)
        else:
            text += f".{part}"
    return text


_MESSAGES = {
    "extra_forbidden": "is not a field this accepts; remove it",
    "float_type": "must be a number",
    "int_type": "must be an integer",
    "string_type": "must be a string",
    "list_type": "must be a list",
    "bool_type": "must be true or false",
    "missing": "is required",
    "union_tag_invalid": "has an unknown type; use one of path, text, rect, ellipse",
    "union_tag_not_found": "needs a 'type' (path, text, rect or ellipse)",
    "model_attributes_type": "must be a JSON object",
    "model_type": "must be a JSON object",
}


_PATTERN_MESSAGES = {
    "color": "must be a color like #1a2b3c",
    "background": "must be a color like #1a2b3c",
    "fill": "must be a color like #1a2b3c, or null",
    "tags": "must be 1-32 characters of a-z, 0-9 and -",
    "username": "must be 3-30 characters of A-Z, a-z, 0-9 and _",
}


def _sentence(error: dict) -> str:
    where = _location(error["loc"]) or "the body"
    message = _MESSAGES.get(error["type"])
    if error["type"] == "string_pattern_mismatch":
        field = next((p for p in reversed(error["loc"]) if isinstance(p, str)), "")
        message = _PATTERN_MESSAGES.get(field)
    if message is None:
        message = error["msg"].removeprefix("Value error, ")
        message = message[:1].lower() + message[1:]
        if error["type"] == "value_error":
            return f"{where}: {message}"
        message = message.removeprefix("input ")
    return f"{where} {message}"


def validate(model: type[BaseModel], data: dict) -> BaseModel:
    """``data`` checked against ``model``; a 400 with one sentence per problem otherwise."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = [_sentence(e) for e in exc.errors(include_url=False, include_input=False)]
        more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
        raise ApiError(400, errors[0] + more + ".", errors=errors) from None


def _storable(value: str) -> str:
    """PostgreSQL text holds no NUL, and UTF-8 no unpaired surrogate (JSON can spell both)."""
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must not contain unpaired surrogates (invalid Unicode)") from None
    return value


# Every free-text field of a body: a JSON string that can be stored and hashed.
Text = Annotated[StrictStr, AfterValidator(_storable)]


def _int_param(request: HttpRequest, name: str, default: int | None, low: int, high: int | None = None) -> int | None:
    raw = request.GET.get(name)
    if raw is None:
        return default
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:
        raise ApiError(400, f"{name} must be a whole number{f' from {low} to {high}' if high else f' of at least {low}'}.")
    value = int(raw)
    if value < low or (high is not None and value > high):
        raise ApiError(400, f"{name} must be {f'from {low} to {high}' if high else f'at least {low}'}; it was {value}.")
    return value


def paging(request: HttpRequest, *, allow_before: bool = False) -> dict:
    """``offset``/``limit`` (and ``before`` where allowed) of a list endpoint (API.md), or a 400."""
    limit = _int_param(request, "limit", 20, 1, 100)
    offset = _int_param(request, "offset", None, 0)
    before = _int_param(request, "before", None, 1) if allow_before else None
    if offset is not None and before is not None:
        raise ApiError(400, "Give either offset or before, not both.")
    return {"offset": offset if before is not None or offset is not None else 0, "before": before, "limit": limit}


def client_address(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR") or "unknown"


def get_user_by_name(username: str):
    """The user of a path or filter, matched case-insensitively; a 404 if none."""
    from social.models import USERNAME_RE

    user = None
    if USERNAME_RE.match(username):  # anything else can name nobody: no query
        user = get_user_model().objects.filter(username__iexact=username, is_active=True).first()
    if user is None:
        raise not_found(f"user named {username!r}")
    return user
