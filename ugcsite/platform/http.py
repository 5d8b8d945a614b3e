"""The HTTP layer of the JSON API: errors as ``{"detail": ...}``, the caller, body parsing,
validation and paging. It imports no app of the site: how a bearer token names a user and what
an authenticated call records are the settings ``API_TOKEN_USER`` and ``API_CALLER_SEEN``; what
a read counts, ``API_READ_LIMIT``; a read by a token that names its owner checks the token and
counts the limits in one Redis call, ``API_SIGNED_READ`` (or the handler's ``one_trip``, which
reads its answer in that call too).

A view module declares one function per method and joins them with ``endpoint(GET=..., PUT=...)``.
Order of answers (docs/api.md): 401, then 404, then 403, then 400, so bodies are parsed inside the
handler, after it has loaded what it needs and checked who may touch it. A write whose body is
not JSON is a 415 between the 401 and the 404 (``json_body_required``). Handlers and what
they call raise ``ugcsite.platform.errors`` (domain errors) or ``ApiError``; both become answers here.
"""

import hashlib
import json
import math
from collections.abc import Callable
from functools import cache, wraps
from typing import Annotated, ClassVar, NotRequired

import orjson
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.middleware.csrf import CsrfViewMiddleware
from django.utils.functional import SimpleLazyObject
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.module_loading import import_string
from django.views.decorators.csrf import csrf_exempt
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
)
from typing_extensions import TypedDict

from ugcsite.platform import errors

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


class Error(TypedDict):
    """Every 4xx and 5xx answer of the API: a sentence saying what went wrong, and for a body
    that fails validation one sentence per problem."""

    detail: str
    errors: NotRequired[list[str]]


def error_response(
    status: int, detail: str, *, errors: list | None = None, headers: dict | None = None
) -> JsonResponse:
    body: Error = {"detail": detail}
    if errors:
        body["errors"] = errors
    response = JsonResponse(body, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="ugcsite"'
    return response


_DOMAIN_STATUS = ((errors.NotFound, 404), (errors.NotAllowed, 403), (errors.Invalid, 400), (errors.Conflict, 409))


def domain_error_response(error: errors.DomainError) -> JsonResponse:
    """The answer to a domain error: its status, its message as the detail."""
    if isinstance(error, errors.RateLimited):
        return error_response(429, str(error), headers={"Retry-After": str(error.retry_after)})
    if isinstance(error, errors.Unavailable):
        return error_response(503, str(error), headers={"Retry-After": str(error.retry_after)})
    status = next(code for kind, code in _DOMAIN_STATUS if isinstance(error, kind))
    return error_response(status, str(error))


_JSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS
_django_default = DjangoJSONEncoder().default


def json_answer(data) -> HttpResponse:
    """A 200 JSON answer, serialised by orjson (several times faster than JsonResponse's json
    module on a feed page); dates, lazy strings and the like go through Django's own encoder,
    so the text means the same as JsonResponse's."""
    return HttpResponse(
        orjson.dumps(data, default=_django_default, option=_JSON_OPTIONS), content_type="application/json"
    )


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


@cache
def _hook(setting: str) -> Callable:
    return import_string(getattr(settings, setting))


TOKEN_REFUSED = "The token is not valid or has expired; get a new one with POST /api/v1/tokens."


def _token_user(key: str):
    user_id = _hook("API_TOKEN_USER")(key)
    if user_id is None:
        raise ApiError(401, TOKEN_REFUSED)
    return LazyUser(user_id)


def bearer_key(request: HttpRequest) -> str | None:
    """The bearer token of a well-formed ``Authorization`` header, else None (``authenticate``
    answers a malformed one)."""
    scheme, _, key = request.headers.get("Authorization", "").partition(" ")
    return key.strip() or None if scheme.lower() == "bearer" else None


def authenticate(request: HttpRequest):
    """The caller, or None. A bad bearer token is a 401 on every endpoint, public ones included.
    The token a caller signed in with is ``request.api_token`` (None for a session)."""
    request.api_token = None
    header = request.headers.get("Authorization")
    if header is not None:
        scheme, _, key = header.partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise ApiError(401, "Send the token as 'Authorization: Bearer <token>'.")
        user = _token_user(key.strip())
        request.api_token = key.strip()
        return user
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated and user.is_active:
        if request.method not in SAFE_METHODS:
            reason = CsrfViewMiddleware(lambda r: None).process_view(request, None, (), {})
            if reason is not None:
                raise ApiError(
                    403, "The CSRF token is missing or wrong; send the csrftoken cookie's value as X-CSRFToken."
                )
        return user
    return None


def login_required(handler: Callable) -> Callable:
    handler.login_required = True
    return handler


def takes_bytes(handler: Callable) -> Callable:
    """A write handler whose body is bytes of any type (a picture: its decoder decides what it
    is), not JSON: ``endpoint()`` lets it through whatever its Content-Type."""
    handler.takes_bytes = True
    return handler


def one_trip(fast: Callable) -> Callable:
    """Give a GET handler a way to answer a bearer token's call in one Redis round trip:
    ``fast(request, key, address)`` checks the token and counts the read limits in the same
    call that reads its answer (social.limits.read_gate), and returns ``(user id, answer)``, or
    None to go the usual way (authenticate, API_READ_LIMIT, the handler: a token whose check
    needs PostgreSQL, a request it does not take). It answers problems as a handler does, in
    docs/api.md's order: a 401 before a 429 before anything of the handler's own."""

    def mark(handler: Callable) -> Callable:
        handler.one_trip = fast
        return handler

    return mark


def endpoint(*, parameters: tuple[dict, ...] = (), **handlers: Callable) -> Callable:
    """One URL, one handler per HTTP method. Each handler takes (request, **url_kwargs) and returns
    a dict/list (200 JSON), an HttpResponse, or raises ApiError. HEAD is answered wherever GET is:
    the GET's status and headers, no body. The view keeps its handlers and its path's
    ``parameters`` (ugcsite.platform.apidoc) for the API document."""
    allowed = ", ".join(sorted({*handlers, *(("HEAD",) if "GET" in handlers else ())}))

    @csrf_exempt
    @wraps(next(iter(handlers.values())))
    def view(request: HttpRequest, **kwargs):
        handler = handlers.get(request.method)
        if handler is None and request.method == "HEAD" and "GET" in handlers:
            return without_body(_answer(request, handlers["GET"], kwargs))
        if handler is None:
            return error_response(
                405, f"{request.method} is not allowed here; use {allowed}.", headers={"Allow": allowed}
            )
        return _answer(request, handler, kwargs)

    view.api_handlers, view.api_parameters = handlers, parameters
    return view


def _answer(request: HttpRequest, handler: Callable, kwargs: dict) -> HttpResponseBase:
    """The handler's answer, after the checks every call takes, in docs/api.md's order."""
    try:
        counted = False  # the read limits, counted with the token's check
        key = bearer_key(request) if request.method in ("GET", "HEAD") else None
        if key is not None:
            fast = getattr(handler, "one_trip", None)
            if fast is not None:
                answer = fast(request, key, client_address(request))
                if answer is not None:
                    user_id, result = answer
                    request.api_user, request.api_token = LazyUser(user_id), key
                    _hook("API_CALLER_SEEN")(user_id=user_id)  # O(1) in-process, a trip a minute at most
                    return result if isinstance(result, HttpResponseBase) else json_answer(result)
            else:
                user_id = _hook("API_SIGNED_READ")(key, address=client_address(request))
                if user_id is not None:
                    request.api_user, request.api_token, counted = LazyUser(user_id), key, True
        if not counted:
            request.api_user = authenticate(request)
        if request.api_user is not None:
            _hook("API_CALLER_SEEN")(user_id=request.api_user.pk)
        if getattr(handler, "login_required", False) and request.api_user is None:
            raise ApiError(401, "Sign in first: send 'Authorization: Bearer <token>' (POST /api/v1/tokens gives one).")
        # 415 after the 401s (docs/api.md puts 401 first) and before anything the handler loads
        # (404, 403) or counts (a sign-up's rate limit): the body's type is a fact of the
        # request alone, as a 405 or a 413 is, so a form post to sign-up is refused unread.
        if request.method not in SAFE_METHODS and not getattr(handler, "takes_bytes", False):
            json_body_required(request)
        if request.method in ("GET", "HEAD") and not counted:
            _hook("API_READ_LIMIT")(
                user_id=request.api_user.pk if request.api_user is not None else None,
                address=client_address(request),
            )
        result = handler(request, **kwargs)
    except ApiError as error:
        return error.response()
    except errors.DomainError as error:
        return domain_error_response(error)
    if isinstance(result, HttpResponseBase):
        return result
    return json_answer(result)


def without_body(response: HttpResponseBase) -> HttpResponseBase:
    """The answer to a HEAD: the GET's status and headers (its Content-Length included), no body
    (``endpoint`` does this for every API call; a plain view calls it itself)."""
    if response.streaming:
        response.streaming_content = iter(())
    else:
        length = len(response.content)
        response.content = b""
        response["Content-Length"] = str(length)
    return response


def get_view(view: Callable) -> Callable:
    """A plain view outside ``endpoint`` (no caller read, no limit counted): it answers GET, and
    HEAD with the GET's status and headers (``without_body``); any other method is a 405 naming
    both. CSRF-exempt: it changes nothing and reads no session, so a POST is a 405, not a 403."""

    @csrf_exempt
    @wraps(view)
    def answer(request: HttpRequest, *args, **kwargs):
        if request.method not in ("GET", "HEAD"):
            return error_response(
                405, f"{request.method} is not allowed here; use GET or HEAD.", headers={"Allow": "GET, HEAD"}
            )
        response = view(request, *args, **kwargs)
        return without_body(response) if request.method == "HEAD" else response

    answer.api_handlers, answer.api_parameters, answer.api_plain = {"GET": view}, (), True
    return answer


# --- bodies -----------------------------------------------------------------------------------

JSON_MEDIA_TYPE = "application/json"


def json_body_required(request: HttpRequest) -> None:
    """A 415 unless the request's body is JSON (docs/api.md): ``Content-Type: application/json``,
    parameters such as ``charset=utf-8`` allowed. A cross-site HTML form sends only
    application/x-www-form-urlencoded, multipart/form-data or text/plain: it never reaches a
    handler, nor does a JSON text sent under another name or none. A write with no body (a PUT
    that follows someone, a DELETE) passes whatever its Content-Type: an empty body holds
    nothing to misread, and wsgiref's server (runserver, the tests' live server) reports
    text/plain for a request that sent no Content-Type."""
    if request.content_type == JSON_MEDIA_TYPE or not request.body:  # lower-cased, parameters parsed off
        return
    sent = f"'{request.content_type[:60]}'" if request.content_type else "no Content-Type"
    raise ApiError(415, f"Send the body as JSON with 'Content-Type: {JSON_MEDIA_TYPE}'; this request had {sent}.")


def body_max(limit: int, what: str) -> Callable:
    """A view that takes bodies up to ``limit`` bytes, not API_MAX_BODY_BYTES (a picture, not a
    drawing); ``what`` names it in the 413's sentence (ugcsite.middleware.BodySizeLimitMiddleware)."""

    def mark(view: Callable) -> Callable:
        view.body_max, view.body_what = limit, what
        return view

    return mark


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


def _location(loc: tuple, union_tags: tuple[str, ...]) -> str:
    text = ""
    previous = None
    for part in loc:
        if isinstance(previous, int) and part in union_tags:
            previous = part  # the member of a tagged union pydantic tried: not a key of the body
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
    "model_attributes_type": "must be a JSON object",
    "model_type": "must be a JSON object",
}


def _sentence(error: dict, model: type["Strict"]) -> str:
    where = _location(error["loc"], model.union_tags) or "the body"
    message = _MESSAGES.get(error["type"])
    if error["type"] == "union_tag_invalid":
        message = f"has an unknown type; use one of {', '.join(model.union_tags)}"
    elif error["type"] == "union_tag_not_found":
        message = f"needs a 'type' ({', '.join(model.union_tags[:-1])} or {model.union_tags[-1]})"
    elif error["type"] == "string_pattern_mismatch":
        field = next((p for p in reversed(error["loc"]) if isinstance(p, str)), "")
        message = model.pattern_messages.get(field)
    if message is None:
        message = error["msg"].removeprefix("Value error, ")
        message = message[:1].lower() + message[1:]
        if error["type"] == "value_error":
            return f"{where}: {message}"
        message = message.removeprefix("input ")
    return f"{where} {message}"


def _no_null_defaults(schema: dict, model: type) -> None:
    """A field a body may leave out (PATCH) is omitted, never null: its schema names no default.
    A body that takes exactly one of some fields (``one_of``) says so with a oneOf."""
    for field in schema.get("properties", {}).values():
        if "default" in field and field["default"] is None:
            del field["default"]
    if getattr(model, "one_of", ()):
        schema["oneOf"] = [{"required": [name]} for name in model.one_of]


class Strict(BaseModel):
    """A request body: unknown keys are refused, and inputs never echoed into errors.

    A body model names the sentence for a value that misses a field's pattern (by field name,
    nested models included) and the tags of its tagged unions, which pydantic puts in an
    error's location: each app spells its own facts."""

    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True, json_schema_extra=_no_null_defaults)
    pattern_messages: ClassVar[dict[str, str]] = {}
    union_tags: ClassVar[tuple[str, ...]] = ()


def validate(model: type[Strict], data: dict) -> Strict:
    """``data`` checked against ``model``; a 400 with one sentence per problem otherwise."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = [_sentence(e, model) for e in exc.errors(include_url=False, include_input=False)]
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


# What _storable refuses, for the OpenAPI document: NUL is a pattern every regex engine reads
# alike (unpaired surrogates are not: JavaScript's engines see UTF-16 halves of every emoji
# there, so the description says it). A schema that let NUL through promised a 400 as valid.
STORABLE_PATTERN = r"^[^\u0000]*$"
STORABLE_SCHEMA = {"pattern": STORABLE_PATTERN, "description": "no NUL characters or unpaired surrogates"}


# Every free-text field of a body: a JSON string that can be stored and hashed.
Text = Annotated[StrictStr, AfterValidator(_storable), Field(json_schema_extra=STORABLE_SCHEMA)]


# Paging (docs/api.md, "Timelines": ``limit`` 1-100, default 20, ``offset`` >= 0). Every integer a
# client sends has an upper bound, checked here before it reaches Redis or PostgreSQL:
# OFFSET_MAX lies far past any list a person pages through, and keeps offset + limit an exact
# integer wherever it goes (Lua prints numbers with 14 significant digits; Redis ranges and
# PostgreSQL's OFFSET are 64-bit).
LIMIT_DEFAULT = 20
LIMIT_MAX = 100
OFFSET_MAX = 10**9
# Every id of the API is a positive integer below 2^53 (docs/api.md, "Boards"), so ``before`` needs
# no more than that: anything above names no item.
ID_LIMIT = 2**53
ID_DIGITS = len(str(ID_LIMIT - 1))  # 16: a longer number names no item


def _integral(value):
    """JSON has one kind of number: 12.0 is the integer 12 (JSON Schema says so too)."""
    return int(value) if isinstance(value, float) and value.is_integer() and abs(value) < ID_LIMIT else value


# An id in a JSON body (a board, a comment, a notification): a whole number from 1 below
# ID_LIMIT, written 315 or 315.0; never a boolean, a string or 315.5. The bounds sit inside the
# validator, so the OpenAPI document states them.
ApiId = Annotated[Annotated[StrictInt, Field(ge=1, lt=ID_LIMIT)], BeforeValidator(_integral)]


def whole_number(raw: str) -> int | None:
    """A page's lenient reading of a number it put in a link or a form (an id, ``since``): ASCII
    digits of at most ID_DIGITS, else None, so that junk is ignored rather than refused
    (``"²".isdigit()`` is true, and int() refuses it)."""
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= ID_DIGITS else None


def _int_param(request: HttpRequest, name: str, default: int | None, low: int, high: int) -> int | None:
    raw = request.GET.get(name)
    if raw is None:
        return default
    if not (raw.isascii() and raw.isdigit()):
        raise ApiError(400, f"{name} must be a whole number from {low} to {high}.")
    digits = raw.lstrip("0") or "0"
    if len(digits) > len(str(high)) or not low <= int(digits) <= high:  # never int() of a huge string
        shown = digits if len(digits) <= 20 else f"{digits[:20]}..."
        raise ApiError(400, f"{name} must be from {low} to {high}; it was {shown}.")
    return int(digits)


def board_ids_param(raw: str, *, name: str, most: int) -> list[int]:
    """A query parameter of 1 to ``most`` ids separated by single commas (``ids=1,2,3``), in order
    without repeats, or a 400 that says what was wrong: nothing but digits and commas (no space,
    sign, newline or empty item: ``1,,2``, ``+5`` and ``5%0a`` are refused as ``,,,`` is)."""
    parts = raw.split(",") if raw else []
    if not 1 <= len(parts) <= most:
        raise ApiError(400, f"Give {name}=1,2,3 with 1 to {most} board ids.")
    if not all(part.isascii() and part.isdigit() and len(part) <= ID_DIGITS for part in parts):
        raise ApiError(400, f"{name} must be board ids (whole numbers) separated by single commas, nothing else.")
    return list(dict.fromkeys(int(part) for part in parts))


def paging(request: HttpRequest, *, allow_before: bool = False) -> dict:
    """``offset``/``limit`` (and ``before`` where allowed) of a list endpoint (docs/api.md), or a 400."""
    limit = _int_param(request, "limit", LIMIT_DEFAULT, 1, LIMIT_MAX)
    offset = _int_param(request, "offset", None, 0, OFFSET_MAX)
    before = _int_param(request, "before", None, 1, ID_LIMIT) if allow_before else None
    if offset is not None and before is not None:
        raise ApiError(400, "Give either offset or before, not both.")
    return {"offset": offset if before is not None or offset is not None else 0, "before": before, "limit": limit}


class PageOutOfRange(errors.Invalid):
    def __init__(self, last: int):
        super().__init__(f"There are at most {last:,} pages; ask for a page from 1 to {last:,}.")


def page_number(request: HttpRequest, *, page_size: int) -> int:
    """``?page=`` of a page with numbered pages (1 and up). Junk is page 1, so a mangled link
    still shows something; a number past the deepest offset any list serves (OFFSET_MAX) is
    ``PageOutOfRange`` (a 400 page)."""
    raw = request.GET.get("page", "1")
    if not (raw.isascii() and raw.isdigit()):
        return 1
    last = OFFSET_MAX // page_size + 1
    digits = raw.lstrip("0") or "0"
    if len(digits) > len(str(last)) or int(digits) > last:
        raise PageOutOfRange(last)
    return max(int(digits), 1)


def client_address(request: HttpRequest) -> str:
    """The client's address: the header the proxy in front overwrites on every request
    (CLIENT_ADDRESS_HEADER, set by scripts/serve.sh behind its nginx), else the peer's."""
    header = settings.CLIENT_ADDRESS_HEADER
    return (header and request.META.get(header)) or request.META.get("REMOTE_ADDR") or "unknown"


def visitor(request: HttpRequest) -> str:
    """Who an anonymous visitor is, for counting views once each: a digest of their address
    and browser (never the address itself, which is not kept)."""
    seen = f"{client_address(request)}|{request.META.get('HTTP_USER_AGENT', '')}"
    return hashlib.blake2b(seen.encode(), digest_size=8, key=settings.SECRET_KEY.encode()[:64]).hexdigest()


def safe_next(request: HttpRequest, default: str) -> str:
    """Where a page goes after a form: ``next`` when it stays on this site, else ``default``."""
    target = request.POST.get("next") or request.GET.get("next")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return default
