"""The OpenAPI document of /api/v1 (``/api/v1/openapi.json``), built from the same pydantic
models that validate the bodies and the same constants that bound the parameters, so the two
cannot drift apart. Each operation lists every status it can answer: its own, plus those
``_common_answers`` adds to every operation of its kind (ugcsite.platform.http.endpoint's 401 for a bad
token, 403 for a session call without its CSRF token, 413 for a body over the limit, 415 for a
body that is not JSON)."""

from functools import lru_cache

from django.conf import settings
from django.http import JsonResponse
from pydantic.json_schema import models_json_schema

from feeds.api.comments import CURSOR_PATTERN, CommentCreate, CommentPatch
from feeds.api.likes import MAX_LIKES_IDS
from feeds.api.notifications import NotificationsRead
from feeds.api.people import MAX_READING_IDS, AccountDelete, SignUp
from feeds.api.reports import ReportCreate
from feeds.discovery.queries import SORTS
from feeds.federation import api as federation_api
from feeds.rules import (
    BOARD_KINDS,
    COMMENT_MENTIONS_MAX,
    IMAGE_ID_PATTERN,
    IMAGE_PIXELS_MAX,
    IMAGE_SIDE_MAX,
    IMAGE_TYPES,
    IMAGE_UPLOAD_MAX,
    SEARCH_CONJUNCTION_MATCHES_MAX,
    SEARCH_MATCHES_MAX,
    SEARCH_TYPES,
    TAG_PATTERN,
    CommentPolicy,
    NotificationKind,
)
from feeds.selectors import POPULAR_SCOPES, POPULAR_SORTS
from feeds.validation import BoardCreate, BoardPatch, BoardRemix, Doc
from social.api import Credentials, ProfilePatch, TwoFactorConfirm, TwoFactorDisable, TwoFactorStart
from social.rules import (
    AVATAR_ACCEPT,
    AVATAR_PIXELS_MAX,
    AVATAR_SIZE,
    BIO_MAX,
    DISPLAY_NAME_MAX,
    RECOVERY_CODE_PATTERN,
    RECOVERY_CODES,
    SEARCH_QUERY_LENGTH,
    SESSION_ID_PATTERN,
    USERNAME_PATTERN,
)
from ugcsite.platform.http import (
    ID_DIGITS,
    ID_LIMIT,
    LIMIT_DEFAULT,
    LIMIT_MAX,
    OFFSET_MAX,
    SAFE_METHODS,
    get_view,
)

ERROR = {"$ref": "#/components/schemas/Error"}


REMOTE_HANDLE_PATTERN, REMOTE_HANDLE_MAX = federation_api.HANDLE_PATTERN, federation_api.HANDLE_MAX


def _answer(description: str, schema: dict | None = None, content_type: str = "application/json") -> dict:
    answer: dict = {"description": description}
    if schema is not None:
        answer["content"] = {content_type: {"schema": schema}}
    return answer


_ERROR_TEXT = {
    400: "invalid input",
    401: "no or bad credentials",
    403: "not allowed",
    404: "not found",
    409: "conflict",
    413: "body too large",
    415: "body not JSON (send Content-Type: application/json)",
    429: "rate limit reached",
    503: "PostgreSQL or the data Redis unreachable for a moment, or the list is being rebuilt; try again",
}
_ERROR_HEADERS = {
    401: {"WWW-Authenticate": {"schema": {"type": "string"}, "description": 'Bearer realm="ugcsite"'}},
    429: {
        "Retry-After": {
            "schema": {"type": "integer", "minimum": 1},
            "description": "seconds until the next try may succeed",
        }
    },
    503: {
        "Retry-After": {
            "schema": {"type": "integer", "minimum": 1},
            "description": "seconds until the next try may succeed",
        }
    },
}


def _errors(*codes: int) -> dict:
    answers = {}
    for code in codes:
        answers[str(code)] = _answer(_ERROR_TEXT[code], ERROR)
        if code in _ERROR_HEADERS:
            answers[str(code)]["headers"] = _ERROR_HEADERS[code]
    return answers


def _takes_json(operation: dict) -> bool:
    """A JSON body, or none: a body of any other type is a 415 (ugcsite.platform.http.json_body_required).
    The avatar's PUT takes a picture instead."""
    body = operation.get("requestBody")
    return body is None or "application/json" in body["content"]


def _common_answers(paths: dict) -> dict:
    """Every API operation answers 401 to a bad or expired bearer token (public ones too); every
    read 429 past the read limits; every one 503 while a server it needs is down; every unsafe one 403 to a session call without its CSRF token,
    and 415 to a body that is not JSON unless it takes another type; every one with a body 413 past
    API_MAX_BODY_BYTES. Plain views (health) authenticate no one."""
    for path, item in paths.items():
        for method, operation in item.items():
            if method == "parameters" or path in PLAIN_VIEWS:
                continue
            codes = [401]
            if method.upper() not in SAFE_METHODS:
                codes.append(403)
                if _takes_json(operation):
                    codes.append(415)
            else:
                codes.append(429)  # reads per user and per address (ugcsite.platform.ratelimits.read_attempt)
            if "requestBody" in operation:
                codes.append(413)
            codes.append(503)  # ugcsite.middleware.ServiceUnavailableMiddleware; a list being rebuilt
            for code, answer in _errors(*codes).items():
                operation["responses"].setdefault(code, answer)
            if 403 in codes:
                operation["responses"]["403"]["description"] = (
                    "not allowed, or signed in by session without the CSRF token"
                )
    return paths


PLAIN_VIEWS = {"/api/v1/health"}  # not ugcsite.platform.http.endpoint views: no caller, no 401


def _body(ref: str) -> dict:
    return {"required": True, "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}}}


def _board_id_param() -> dict:
    return {
        "name": "board_id",
        "in": "path",
        "required": True,
        "schema": {"type": "integer", "minimum": 1, "exclusiveMaximum": ID_LIMIT},
        "description": "ids are below 2^53; any other number is no board (404)",
    }


def _query(name: str, schema: dict, description: str) -> dict:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


OFFSET = {"type": "integer", "minimum": 0, "maximum": OFFSET_MAX, "description": "items to skip"}
LIMIT = {"type": "integer", "minimum": 1, "maximum": LIMIT_MAX, "default": LIMIT_DEFAULT, "description": "page size"}
BEFORE = {"type": "integer", "minimum": 1, "maximum": ID_LIMIT, "description": "only items older than this id"}
PAGING = [_query("offset", OFFSET, OFFSET["description"]), _query("limit", LIMIT, LIMIT["description"])]
# A timeline pages by offset or by before, never both (a 400). Parameters cannot exclude each
# other, so the three are one form-exploded object: each of its keys is a query parameter of
# its own on the wire (?before=42&limit=20), and its schema says "not both".
TIMELINE_PAGING = {
    "name": "paging",
    "in": "query",
    "required": False,
    "style": "form",
    "explode": True,
    "description": "offset=, limit= and before=, each its own query parameter; offset and before exclude each other",
    "schema": {
        "type": "object",
        "properties": {"offset": OFFSET, "limit": LIMIT, "before": BEFORE},
        "not": {"required": ["offset", "before"]},
    },
}
KIND = _query("kind", {"type": "string", "enum": list(BOARD_KINDS)}, "only boards of this kind")
TAG = {
    **_query(
        "tag",
        {"type": "array", "items": {"type": "string", "pattern": TAG_PATTERN}},
        "only boards with this tag; repeat for several (all must match)",
    ),
    "style": "form",
    "explode": True,
}
USERNAME = {
    "name": "username",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": USERNAME_PATTERN},
    "description": "matched case-insensitively; a name no one can have is a 404",
}


COMMENT_ID = {
    "name": "comment_id",
    "in": "path",
    "required": True,
    "schema": {"type": "integer", "minimum": 1, "exclusiveMaximum": ID_LIMIT},
    "description": "a comment the caller may see; any other number is a 404",
}


SESSION_ID = {
    "name": "session_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": SESSION_ID_PATTERN},
    "description": 'an id GET /api/v1/me/sessions listed ("s..." a session, "t..." a token); any other is a 404',
}


EXPORT_ID = {
    "name": "export_id",
    "in": "path",
    "required": True,
    "schema": {"type": "integer", "minimum": 1, "exclusiveMaximum": ID_LIMIT},
    "description": "an archive of the caller's; anyone else's is a 404",
}


VERSION_N = {
    "name": "n",
    "in": "path",
    "required": True,
    "schema": {"type": "integer", "minimum": 0},
    "description": "a version's number (from 1); a number the board has no version of is a 404",
}
VERSION_BEFORE = {
    "type": "integer",
    "minimum": 1,
    "maximum": ID_LIMIT,
    "description": "only versions numbered below this (the next of the page before)",
}


def _paths() -> dict:
    board = {"$ref": "#/components/schemas/Board"}
    version_head = {
        "n": {"type": "integer", "minimum": 1, "description": "the version's number, from 1 on each board"},
        "created_at": {"type": "string", "format": "date-time"},
        "authors": {
            "type": "array",
            "items": {"type": "string"},
            "description": "who changed the board since the version before, the last to change it last",
        },
    }
    version_item = {
        "type": "object",
        "required": [*version_head, "elements"],
        "properties": {**version_head, "elements": {"type": "integer", "description": "elements in its drawing"}},
    }
    version_page = {
        "type": "object",
        "required": ["items", "next"],
        "properties": {
            "items": {"type": "array", "items": version_item},
            "next": {"type": ["integer", "null"], "description": "pass as before= for the next page; null at the end"},
        },
    }
    version = {
        "type": "object",
        "required": [*version_head, "doc"],
        "properties": {**version_head, "doc": {"$ref": "#/components/schemas/Doc"}},
    }
    restored = {
        "allOf": [
            board,
            {
                "type": "object",
                "required": ["version"],
                "properties": {"version": {"type": "integer", "description": "the new version's number"}},
            },
        ]
    }
    comment = {"$ref": "#/components/schemas/Comment"}
    comment_page = {
        "type": "object",
        "required": ["items", "next", "total"],
        "properties": {
            "items": {"type": "array", "items": comment},
            "next": {"type": ["string", "null"], "description": "pass as after= for the next page; null at the end"},
            "total": {
                "type": "integer",
                "description": "the board's published comments the caller sees (those of people they hide left out)",
            },
        },
    }
    profile = {"$ref": "#/components/schemas/Profile"}
    me = {"$ref": "#/components/schemas/Me"}
    secured = [{"bearer": []}]
    timeline = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/components/schemas/BoardSummary"}},
            "next": {
                "type": ["string", "null"],
                "description": "pass as before= for the next page; null when no older item",
            },
        },
    }
    people = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"id": {"type": "integer"}, "username": {"type": "string"}}},
            },
            "total": {"type": "integer"},
        },
    }
    export = {
        "type": "object",
        "required": ["id", "status", "progress", "url"],
        "properties": {
            "id": {"type": "integer"},
            "status": {"type": "string", "enum": ["pending", "running", "ready", "failed"]},
            "progress": {"type": "integer", "minimum": 0, "maximum": 100},
            "url": {"type": ["string", "null"], "description": "where to download it once ready"},
        },
    }
    people_items = {"type": "object", "required": ["items"], "properties": {"items": people["properties"]["items"]}}
    return _common_answers(
        {
            "/api/v1/health": {
                "get": {
                    "summary": "The process answers",
                    "responses": {"200": _answer("ok", {"type": "object", "properties": {"ok": {"type": "boolean"}}})},
                }
            },
            "/api/v1/users/{username}": {
                "parameters": [USERNAME],
                "get": {"summary": "A profile", "responses": {"200": _answer("profile", profile), **_errors(401, 404)}},
            },
            "/api/v1/users/{username}/follow": {
                "parameters": [USERNAME],
                "put": {
                    "summary": "Follow (idempotent); 403 when either blocks the other",
                    "security": secured,
                    "responses": {"204": _answer("following"), **_errors(400, 401, 403, 404)},
                },
                "delete": {
                    "summary": "Unfollow (idempotent)",
                    "security": secured,
                    "responses": {"204": _answer("not following"), **_errors(401, 404)},
                },
            },
            "/api/v1/users/{username}/block": {
                "parameters": [USERNAME],
                "put": {
                    "summary": "Block (idempotent): follows end both ways, neither sees the other's boards, "
                    "they get 404 for your profile and boards",
                    "security": secured,
                    "responses": {"204": _answer("blocked"), **_errors(400, 401, 404, 429)},
                },
                "delete": {
                    "summary": "Unblock (idempotent); no follow comes back",
                    "security": secured,
                    "responses": {"204": _answer("not blocked"), **_errors(400, 401, 404, 429)},
                },
            },
            "/api/v1/users/{username}/mute": {
                "parameters": [USERNAME],
                "put": {
                    "summary": "Mute (idempotent): their boards and notifications leave your lists; they are not told",
                    "security": secured,
                    "responses": {"204": _answer("muted"), **_errors(400, 401, 404, 429)},
                },
                "delete": {
                    "summary": "Unmute (idempotent): everything comes back",
                    "security": secured,
                    "responses": {"204": _answer("not muted"), **_errors(400, 401, 404, 429)},
                },
            },
            "/api/v1/reports": {
                "post": {
                    "summary": "Report a board, a comment, a picture or a person to staff (rate limited); enough distinct "
                    "reporters hide it until staff decide",
                    "security": secured,
                    "requestBody": _body("ReportCreate"),
                    "responses": {
                        "201": _answer(
                            "reported",
                            {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}},
                        ),
                        **_errors(400, 401, 404, 413, 429),
                    },
                }
            },
            "/api/v1/me/export": {
                "post": {
                    "summary": "Start an archive of the caller's data (or get the one under way): a zip of the "
                    "profile, every board as JSON and SVG, follows, reads and notifications",
                    "security": secured,
                    "responses": {"202": _answer("started", export), **_errors(401, 429)},
                }
            },
            "/api/v1/me/export/{export_id}": {
                "parameters": [EXPORT_ID],
                "get": {
                    "summary": "Where an archive stands (progress 0-100), and its address once ready",
                    "security": secured,
                    "responses": {"200": _answer("the archive", export), **_errors(401, 404)},
                },
            },
            "/api/v1/me/export/{export_id}/download": {
                "parameters": [EXPORT_ID],
                "get": {
                    "summary": "The archive itself, to its owner alone, for a day after it is ready",
                    "security": secured,
                    "responses": {
                        "200": _answer("the zip", {"type": "string", "format": "binary"}, "application/zip"),
                        **_errors(401, 404),
                    },
                },
            },
            "/api/v1/me/blocks": {
                "get": {
                    "summary": "The people the caller blocks, the latest first",
                    "security": secured,
                    "responses": {"200": _answer("people", people_items), **_errors(401)},
                }
            },
            "/api/v1/me/remote-blocks": {
                "get": {
                    "summary": "The accounts of other servers (fediverse) the caller blocks, the latest first",
                    "security": secured,
                    "responses": {
                        "200": _answer(
                            "remote accounts",
                            {
                                "type": "object",
                                "required": ["items"],
                                "properties": {
                                    "items": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["handle", "uri"],
                                            "properties": {"handle": {"type": "string"}, "uri": {"type": "string"}},
                                        },
                                    }
                                },
                            },
                        ),
                        **_errors(401),
                    },
                }
            },
            "/api/v1/me/remote-blocks/{handle}": {
                "parameters": [
                    {
                        "name": "handle",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string", "pattern": REMOTE_HANDLE_PATTERN, "maxLength": REMOTE_HANDLE_MAX},
                        "description": "user@host of an account of another server known here",
                    }
                ],
                "put": {
                    "summary": "Block a remote account (idempotent): it stops following you, its likes, boosts and "
                    "replies on your boards go, and what it sends about you is dropped",
                    "security": secured,
                    "responses": {"204": _answer("blocked"), **_errors(400, 401, 404, 429)},
                },
                "delete": {
                    "summary": "Unblock a remote account (idempotent); nothing removed comes back",
                    "security": secured,
                    "responses": {"204": _answer("not blocked"), **_errors(400, 401, 404, 429)},
                },
            },
            "/api/v1/me/mutes": {
                "get": {
                    "summary": "The people the caller mutes, the latest first",
                    "security": secured,
                    "responses": {"200": _answer("people", people_items), **_errors(401)},
                }
            },
            "/api/v1/users/{username}/followers": {
                "parameters": [USERNAME],
                "get": {
                    "summary": "Followers, newest follow first",
                    "parameters": PAGING,
                    "responses": {"200": _answer("people", people), **_errors(400, 401, 404)},
                },
            },
            "/api/v1/users/{username}/following": {
                "parameters": [USERNAME],
                "get": {
                    "summary": "Followees, newest follow first",
                    "parameters": PAGING,
                    "responses": {"200": _answer("people", people), **_errors(400, 401, 404)},
                },
            },
            "/api/v1/users/{username}/boards": {
                "parameters": [USERNAME],
                "get": {
                    "summary": "A user's boards, newest first",
                    "parameters": [TIMELINE_PAGING],
                    "responses": {"200": _answer("a page", timeline), **_errors(400, 401, 404)},
                },
            },
            "/api/v1/discover": {
                "get": {
                    "summary": "Boards matching every filter, with the exact total",
                    "parameters": [
                        *PAGING,
                        KIND,
                        TAG,
                        _query("author", {"type": "string"}, "username; unknown gives no matches"),
                        _query(
                            "sort",
                            {"type": "string", "enum": list(SORTS), "default": SORTS[0]},
                            "recent: newest first; popular: views all time; trending: views in 24 hours",
                        ),
                    ],
                    "responses": {
                        "200": _answer(
                            "matches",
                            {
                                "type": "object",
                                "properties": {
                                    "total": {"type": "integer"},
                                    "items": {"type": "array", "items": {"$ref": "#/components/schemas/BoardSummary"}},
                                },
                            },
                        ),
                        **_errors(400, 401),
                    },
                }
            },
            "/api/v1/reading": {
                "get": {
                    "summary": "Which of the people I follow read these boards (last 30 days)",
                    "security": secured,
                    "parameters": [
                        {
                            **_query(
                                "ids",
                                {
                                    "type": "string",
                                    "pattern": f"^[0-9]{{1,{ID_DIGITS}}}(,[0-9]{{1,{ID_DIGITS}}}){{0,{MAX_READING_IDS - 1}}}$",
                                },
                                f"1-{MAX_READING_IDS} board ids, comma separated",
                            ),
                            "required": True,
                        }
                    ],
                    "responses": {
                        "200": _answer(
                            "board id -> usernames",
                            {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
                        ),
                        **_errors(400, 401),
                    },
                }
            },
            "/api/v1/popular": {
                "get": {
                    "summary": "Popular boards by views or likes: all time, trending (24 h) or among the people "
                    "I follow (30 days)",
                    "parameters": [
                        *PAGING,
                        _query(
                            "scope",
                            {"type": "string", "enum": list(POPULAR_SCOPES), "default": POPULAR_SCOPES[0]},
                            "following needs a signed-in caller",
                        ),
                        _query(
                            "sort",
                            {"type": "string", "enum": list(POPULAR_SORTS), "default": POPULAR_SORTS[0]},
                            "views: each item has reads; likes: each item has likes",
                        ),
                    ],
                    "responses": {
                        "200": _answer(
                            "most read first",
                            {
                                "type": "object",
                                "properties": {
                                    "items": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "properties": {
                                                "board": {"$ref": "#/components/schemas/BoardSummary"},
                                                "reads": {"type": "integer", "description": "sort=views"},
                                                "likes": {"type": "integer", "description": "sort=likes"},
                                            },
                                        },
                                    }
                                },
                            },
                        ),
                        **_errors(400, 401),
                    },
                }
            },
            "/api/v1/feed": {
                "get": {
                    "summary": "The caller's home feed, newest first",
                    "security": secured,
                    "parameters": [TIMELINE_PAGING, KIND, TAG],
                    "responses": {"200": _answer("a page", timeline), **_errors(400, 401)},
                }
            },
            "/api/v1/users": {
                "post": {
                    "summary": "Sign up",
                    "requestBody": _body("SignUp"),
                    "responses": {
                        "201": _answer(
                            "created",
                            {
                                "type": "object",
                                "properties": {"id": {"type": "integer"}, "username": {"type": "string"}},
                            },
                        ),
                        **_errors(400, 409, 413, 429),
                    },
                }
            },
            "/api/v1/tokens": {
                "post": {
                    "summary": "Get a bearer token; with two-factor on, otp (a code or a recovery code) too, "
                    "else a 401 saying a one-time code is needed",
                    "requestBody": _body("Credentials"),
                    "responses": {
                        "201": _answer("a token", {"type": "object", "properties": {"token": {"type": "string"}}}),
                        **_errors(400, 401, 413, 429),
                    },
                }
            },
            "/api/v1/tokens/current": {
                "delete": {
                    "summary": "Revoke the bearer token of this call (it stops working at once)",
                    "security": secured,
                    "responses": {"204": _answer("revoked"), **_errors(401)},
                }
            },
            "/api/v1/me": {
                "get": {
                    "summary": "The caller's profile and own settings",
                    "security": secured,
                    "responses": {"200": _answer("profile", me), **_errors(401)},
                },
                "delete": {
                    "summary": "Delete the caller's account, confirmed by its password: sign-in, tokens and "
                    "sessions end now; boards leave every feed and every row and key goes, in the background",
                    "security": secured,
                    "requestBody": _body("AccountDelete"),
                    "responses": {"204": _answer("deleted"), **_errors(400, 401, 403, 413, 429)},
                },
                "patch": {
                    "summary": "Change any of the caller's own settings",
                    "security": secured,
                    "requestBody": _body("ProfilePatch"),
                    "responses": {"200": _answer("profile", me), **_errors(400, 401, 413)},
                },
            },
            "/api/v1/me/2fa": {
                "post": {
                    "summary": "Start enrolling an authenticator app: a new key and its otpauth:// address "
                    "(two-factor is not on until confirmed); 409 when it is on",
                    "security": secured,
                    "requestBody": {**_body("TwoFactorStart"), "required": False},
                    "responses": {
                        "201": _answer(
                            "enrolment started",
                            {
                                "type": "object",
                                "required": ["secret", "otpauth_uri"],
                                "properties": {"secret": {"type": "string"}, "otpauth_uri": {"type": "string"}},
                            },
                        ),
                        **_errors(400, 401, 409, 413),
                    },
                },
                "delete": {
                    "summary": "Turn two-factor sign-in off, confirmed by the password and a code (or a recovery code)",
                    "security": secured,
                    "requestBody": _body("TwoFactorDisable"),
                    "responses": {"204": _answer("off (or already off)"), **_errors(400, 401, 403, 413, 429)},
                },
            },
            "/api/v1/me/2fa/confirm": {
                "post": {
                    "summary": "Turn two-factor sign-in on with the first code of the enrolled key; the recovery "
                    "codes are shown this once",
                    "security": secured,
                    "requestBody": _body("TwoFactorConfirm"),
                    "responses": {
                        "200": _answer(
                            "on",
                            {
                                "type": "object",
                                "required": ["recovery_codes"],
                                "properties": {
                                    "recovery_codes": {
                                        "type": "array",
                                        "items": {"type": "string", "pattern": RECOVERY_CODE_PATTERN},
                                        "minItems": RECOVERY_CODES,
                                        "maxItems": RECOVERY_CODES,
                                    }
                                },
                            },
                        ),
                        **_errors(400, 401, 409, 413, 429),
                    },
                }
            },
            "/api/v1/me/sessions": {
                "get": {
                    "summary": "Where the caller is signed in: every browser session and token, the latest used first",
                    "security": secured,
                    "responses": {
                        "200": _answer(
                            "sessions and tokens",
                            {
                                "type": "object",
                                "required": ["items"],
                                "properties": {
                                    "items": {"type": "array", "items": {"$ref": "#/components/schemas/Session"}}
                                },
                            },
                        ),
                        **_errors(401),
                    },
                }
            },
            "/api/v1/me/sessions/{session_id}": {
                "parameters": [SESSION_ID],
                "delete": {
                    "summary": "End one session or token of the caller's: it is signed out on its next request",
                    "security": secured,
                    "responses": {"204": _answer("ended"), **_errors(401, 404)},
                },
            },
            "/api/v1/me/avatar": {
                "put": {
                    "summary": "Set the caller's picture: the body is the image (PNG, JPEG, GIF or WebP, at most "
                    f"{settings.API_MAX_BODY_BYTES // (1024 * 1024)} MiB and {AVATAR_PIXELS_MAX // 1_000_000} million pixels), "
                    f"cropped and resized to a {AVATAR_SIZE}-pixel square",
                    "security": secured,
                    "requestBody": {
                        "required": True,
                        "content": {
                            media: {"schema": {"type": "string", "format": "binary"}}
                            for media in AVATAR_ACCEPT.split(",")
                        },
                    },
                    "responses": {"200": _answer("profile", me), **_errors(400, 401, 413, 429)},
                },
                "delete": {
                    "summary": "Remove the caller's picture (the identicon is shown again)",
                    "security": secured,
                    "responses": {"200": _answer("profile", me), **_errors(401)},
                },
            },
            "/api/v1/images": {
                "post": {
                    "summary": "Upload a picture for the canvas: the body is the image's bytes, its Content-Type one of "
                    f"{', '.join(IMAGE_TYPES)} (the body must be that format), at most {IMAGE_UPLOAD_MAX // (1024 * 1024)} MiB "
                    f"and {IMAGE_PIXELS_MAX // 1_000_000} million pixels. It is re-encoded (no EXIF or GPS kept), "
                    f"shrunk to {IMAGE_SIDE_MAX} px on its long side, and counts against the caller's storage quota; "
                    "an image element names it by its id. A write (rate limited)",
                    "security": secured,
                    "requestBody": {
                        "required": True,
                        "content": {media: {"schema": {"type": "string", "format": "binary"}} for media in IMAGE_TYPES},
                    },
                    "responses": {
                        "201": _answer(
                            "the picture kept",
                            {
                                "type": "object",
                                "required": ["id", "url", "width", "height"],
                                "additionalProperties": False,
                                "properties": {
                                    "id": {"type": "string", "pattern": IMAGE_ID_PATTERN},
                                    "url": {
                                        "type": "string",
                                        "description": "where pages load it (a redirect to the copy)",
                                    },
                                    "width": {"type": "integer", "minimum": 1, "maximum": IMAGE_SIDE_MAX},
                                    "height": {"type": "integer", "minimum": 1, "maximum": IMAGE_SIDE_MAX},
                                },
                            },
                        ),
                        **_errors(400, 401, 413, 429),
                        "415": _answer(f"not one of {', '.join(IMAGE_TYPES)}", ERROR),
                    },
                }
            },
            "/api/v1/boards": {
                "post": {
                    "summary": "Publish a board",
                    "security": secured,
                    "requestBody": _body("BoardCreate"),
                    "responses": {"201": _answer("the new board", board), **_errors(400, 401, 413)},
                }
            },
            "/api/v1/boards/{board_id}": {
                "parameters": [_board_id_param()],
                "get": {
                    "summary": "Read a board (counts a view)",
                    "responses": {"200": _answer("the board", board), **_errors(401, 404)},
                },
                "patch": {
                    "summary": "Change a board (the author; its editors may change the doc alone)",
                    "security": secured,
                    "requestBody": _body("BoardPatch"),
                    "responses": {"200": _answer("the board", board), **_errors(400, 401, 403, 404, 413)},
                },
                "delete": {
                    "summary": "Delete a board (author or staff)",
                    "security": secured,
                    "responses": {"204": _answer("deleted"), **_errors(401, 403, 404)},
                },
            },
            "/api/v1/search": {
                "get": {
                    "summary": "Search people (by username and display name) or boards (by title, tags and the text in drawings)",
                    "parameters": [
                        {
                            **_query(
                                "q",
                                {
                                    "type": "string",
                                    "minLength": SEARCH_QUERY_LENGTH[0],
                                    "maxLength": SEARCH_QUERY_LENGTH[1],
                                    "pattern": r"^[^\u0000]*$",
                                },
                                "the words to look for (prefixes match; people also by a near spelling; "
                                "for boards, a word written #tag matches that tag whole)",
                            ),
                            "required": True,
                        },
                        _query(
                            "type",
                            {"type": "string", "enum": list(SEARCH_TYPES), "default": SEARCH_TYPES[-1]},
                            "what to search",
                        ),
                        *PAGING,
                    ],
                    "responses": {
                        "200": _answer(
                            "best match first",
                            {
                                "type": "object",
                                "required": ["total", "items"],
                                "properties": {
                                    "total": {
                                        "type": "integer",
                                        "description": f"the matches, counted up to {SEARCH_MATCHES_MAX:,} (boards: up to "
                                        f"{SEARCH_CONJUNCTION_MATCHES_MAX:,} for two or more terms each found "
                                        f"{SEARCH_MATCHES_MAX:,} times or more)",
                                    },
                                    "items": {
                                        "type": "array",
                                        "items": {
                                            "oneOf": [
                                                {"$ref": "#/components/schemas/PersonFound"},
                                                {"$ref": "#/components/schemas/BoardSummary"},
                                            ]
                                        },
                                    },
                                },
                            },
                        ),
                        **_errors(400, 401),
                    },
                }
            },
            "/api/v1/notifications": {
                "get": {
                    "summary": "The caller's notifications, latest first, with the unread count",
                    "security": secured,
                    "parameters": PAGING,
                    "responses": {
                        "200": _answer(
                            "notifications",
                            {
                                "type": "object",
                                "required": ["unread", "items"],
                                "properties": {
                                    "unread": {"type": "integer", "minimum": 0},
                                    "items": {"type": "array", "items": {"$ref": "#/components/schemas/Notification"}},
                                },
                            },
                        ),
                        **_errors(400, 401),
                    },
                }
            },
            "/api/v1/notifications/read": {
                "post": {
                    "summary": "Mark notifications read: some by id, or all",
                    "security": secured,
                    "requestBody": _body("NotificationsRead"),
                    "responses": {"204": _answer("marked read"), **_errors(400, 401, 413)},
                }
            },
            "/api/v1/boards/{board_id}/preview.svg": {
                "parameters": [_board_id_param()],
                "get": {
                    "summary": "The drawing rendered as SVG",
                    "responses": {"200": _answer("SVG", {"type": "string"}, "image/svg+xml"), **_errors(401, 404)},
                },
            },
            "/api/v1/boards/{board_id}/remix": {
                "parameters": [_board_id_param()],
                "post": {
                    "summary": "Remix a board: a new board of the caller's, a copy of it crediting it (body optional: "
                    "what to change before it is made); 403 when its author turned remixing off",
                    "security": secured,
                    "requestBody": {**_body("BoardRemix"), "required": False},
                    "responses": {"201": _answer("the new board", board), **_errors(400, 401, 403, 404, 413, 429)},
                },
            },
            "/api/v1/boards/{board_id}/remixes": {
                "parameters": [_board_id_param()],
                "get": {
                    "summary": "The published remixes of a board, newest first",
                    "parameters": PAGING,
                    "responses": {
                        "200": _answer(
                            "a page and the total",
                            {
                                "type": "object",
                                "required": ["total", "items"],
                                "properties": {
                                    "total": {"type": "integer"},
                                    "items": {"type": "array", "items": {"$ref": "#/components/schemas/BoardSummary"}},
                                },
                            },
                        ),
                        **_errors(400, 401, 404),
                    },
                },
            },
            "/api/v1/boards/{board_id}/like": {
                "parameters": [_board_id_param()],
                "put": {
                    "summary": "Like a board (idempotent)",
                    "security": secured,
                    "responses": {"204": _answer("liked"), **_errors(401, 404, 429)},
                },
                "delete": {
                    "summary": "Take a like back (idempotent)",
                    "security": secured,
                    "responses": {"204": _answer("not liked"), **_errors(401, 404, 429)},
                },
            },
            "/api/v1/boards/{board_id}/likes": {
                "parameters": [_board_id_param()],
                "get": {
                    "summary": "Who likes a board, latest first; the total is the count the board shows",
                    "parameters": PAGING,
                    "responses": {"200": _answer("a page and the total", people), **_errors(400, 401, 404)},
                },
            },
            "/api/v1/likes": {
                "get": {
                    "summary": "For a page of boards: the like count, whether I like it, who of the people I follow do",
                    "security": secured,
                    "parameters": [
                        {
                            **_query(
                                "board_ids",
                                {
                                    "type": "string",
                                    "pattern": f"^[0-9]{{1,{ID_DIGITS}}}(,[0-9]{{1,{ID_DIGITS}}}){{0,{MAX_LIKES_IDS - 1}}}$",
                                },
                                f"1-{MAX_LIKES_IDS} board ids, comma separated",
                            ),
                            "required": True,
                        }
                    ],
                    "responses": {
                        "200": _answer(
                            "board id -> likes (boards not visible are left out)",
                            {
                                "type": "object",
                                "required": ["boards"],
                                "properties": {
                                    "boards": {
                                        "type": "object",
                                        "additionalProperties": {
                                            "type": "object",
                                            "required": ["count", "liked", "by_followees"],
                                            "properties": {
                                                "count": {"type": "integer"},
                                                "liked": {"type": "boolean"},
                                                "by_followees": {"type": "array", "items": {"type": "string"}},
                                            },
                                        },
                                    }
                                },
                            },
                        ),
                        **_errors(400, 401),
                    },
                }
            },
            "/api/v1/boards/{board_id}/comments": {
                "parameters": [_board_id_param()],
                "get": {
                    "summary": "A board's comments in thread order (each top comment, then its replies, oldest first), "
                    "without those of people the caller blocks, is blocked by or mutes; total counts what the caller sees",
                    "parameters": [
                        _query("limit", LIMIT, LIMIT["description"]),
                        _query(
                            "after",
                            {"type": "string", "pattern": CURSOR_PATTERN},
                            "the next of the page before (opaque)",
                        ),
                    ],
                    "responses": {
                        "200": _answer("a page, the cursor of the next and the count", comment_page),
                        **_errors(400, 401, 404),
                    },
                },
                "post": {
                    "summary": "Comment on a board, or reply (reply_to: a reply to a reply joins its top comment's thread "
                    f"and names the person answered); @names notify up to {COMMENT_MENTIONS_MAX} people. "
                    "403 when the board's setting or a block keeps the caller out",
                    "security": secured,
                    "requestBody": _body("CommentCreate"),
                    "responses": {"201": _answer("the comment", comment), **_errors(400, 401, 403, 404, 413, 429)},
                },
            },
            "/api/v1/comments/{comment_id}": {
                "parameters": [COMMENT_ID],
                "get": {
                    "summary": "One comment (a placeholder when deleted with replies)",
                    "responses": {"200": _answer("the comment", comment), **_errors(401, 404)},
                },
                "patch": {
                    "summary": "Change a comment's text (its author only); sets edited_at",
                    "security": secured,
                    "requestBody": _body("CommentPatch"),
                    "responses": {"200": _answer("the comment", comment), **_errors(400, 401, 403, 404, 413, 429)},
                },
                "delete": {
                    "summary": "Delete a comment (its author, the board's author or staff); one with replies leaves a "
                    "placeholder",
                    "security": secured,
                    "responses": {"204": _answer("deleted"), **_errors(401, 403, 404, 429)},
                },
            },
            "/api/v1/boards/{board_id}/versions": {
                "parameters": [_board_id_param()],
                "get": {
                    "summary": "A board's kept versions, newest first (who may read the board may read them)",
                    "parameters": [
                        _query("limit", LIMIT, LIMIT["description"]),
                        _query("before", VERSION_BEFORE, VERSION_BEFORE["description"]),
                    ],
                    "responses": {"200": _answer("a page of versions", version_page), **_errors(400, 401, 404)},
                },
            },
            "/api/v1/boards/{board_id}/versions/{n}": {
                "parameters": [_board_id_param(), VERSION_N],
                "get": {
                    "summary": "One version of a board, with its drawing",
                    "responses": {"200": _answer("the version", version), **_errors(401, 404)},
                },
            },
            "/api/v1/boards/{board_id}/versions/{n}/restore": {
                "parameters": [_board_id_param(), VERSION_N],
                "post": {
                    "summary": "Make this version the board's drawing again, as a new version (the author and "
                    "editors; nothing is lost); a live board's people get it at once",
                    "security": secured,
                    "responses": {
                        "200": _answer("the board at its new version", restored),
                        **_errors(401, 403, 404, 429),
                    },
                },
            },
            "/api/v1/boards/{board_id}/editors": {
                "parameters": [_board_id_param()],
                "get": {
                    "summary": "The people invited to draw on a board",
                    "responses": {"200": _answer("editors", people_items), **_errors(401, 404)},
                },
            },
            "/api/v1/boards/{board_id}/editors/{username}": {
                "parameters": [_board_id_param(), USERNAME],
                "put": {
                    "summary": "Invite someone to draw on the board (author only; idempotent); 403 when either blocks the other",
                    "security": secured,
                    "responses": {"204": _answer("they may draw"), **_errors(400, 401, 403, 404, 429)},
                },
                "delete": {
                    "summary": "Remove an editor (the author, or the editor leaving; idempotent)",
                    "security": secured,
                    "responses": {"204": _answer("they no longer draw"), **_errors(401, 403, 404)},
                },
            },
        }
    )


@lru_cache(maxsize=1)
def build() -> dict:
    _, schemas = models_json_schema(
        [
            (m, "validation")
            for m in (
                SignUp,
                Credentials,
                ProfilePatch,
                BoardCreate,
                BoardPatch,
                BoardRemix,
                Doc,
                ReportCreate,
                AccountDelete,
                CommentCreate,
                CommentPatch,
                TwoFactorStart,
                TwoFactorConfirm,
                TwoFactorDisable,
            )
        ],
        ref_template="#/components/schemas/{model}",
    )
    components = schemas.get("$defs", {})
    summary_props = {
        "id": {"type": "integer"},
        "author": {"type": "string"},
        "title": {"type": "string"},
        "kind": {"type": "string", "enum": list(BOARD_KINDS)},
        "tags": {"type": "array", "items": {"type": "string"}},
        "created_at": {"type": "string", "format": "date-time"},
        "updated_at": {"type": "string", "format": "date-time"},
        "views": {"type": "integer"},
        "likes": {"type": "integer", "description": "the likes that count (of people who may use the site)"},
        "comments": {
            "type": "integer",
            "description": "the published comments (it counts those of people the caller does not see)",
        },
        "preview_url": {"type": "string"},
    }
    components["BoardSummary"] = {"type": "object", "properties": summary_props, "required": list(summary_props)}
    board_props = {
        **summary_props,
        "remixable": {"type": "boolean", "description": "others may remix it"},
        "remixed_from": {
            "description": "the board this one is a remix of (username and title null once it is gone), or null",
            "oneOf": [
                {
                    "type": "object",
                    "required": ["id", "username", "title"],
                    "properties": {
                        "id": {"type": "integer"},
                        "username": {"type": ["string", "null"]},
                        "title": {"type": ["string", "null"]},
                    },
                },
                {"type": "null"},
            ],
        },
        "commenting": {
            "type": "string",
            "enum": list(CommentPolicy.values),
            "description": 'who may comment (set by PATCH {"comments": ...})',
        },
        "doc": {"$ref": "#/components/schemas/Doc"},
    }
    components["Board"] = {"type": "object", "properties": board_props, "required": list(board_props)}
    profile_props = {
        "id": {"type": "integer"},
        "username": {"type": "string"},
        "display_name": {"type": "string", "maxLength": DISPLAY_NAME_MAX},
        "bio": {"type": "string", "maxLength": BIO_MAX},
        "followers": {"type": "integer", "description": "the total of the followers list (suspended people left out)"},
        "following": {"type": "integer", "description": "the total of the following list (suspended people left out)"},
        "boards": {"type": "integer"},
        "followed_by_me": {"type": "boolean"},
        "avatar_url": {"type": "string", "description": "the avatar (an uploaded picture, else an identicon)"},
    }
    components["Profile"] = {"type": "object", "properties": profile_props, "required": list(profile_props)}
    me_props = {
        **profile_props,
        "share_reading": {
            "type": "boolean",
            "description": "whether the people who follow the caller see what they read (off until set)",
        },
        "email": {"type": "string", "description": 'the caller\'s address, "" for none (only for password resets)'},
        "email_verified": {"type": "boolean", "description": "whether the link mailed to the address was opened"},
    }
    components["Me"] = {"type": "object", "properties": me_props, "required": list(me_props)}
    components["PersonFound"] = {
        "type": "object",
        "required": ["id", "username", "display_name"],
        "properties": {
            "id": {"type": "integer"},
            "username": {"type": "string"},
            "display_name": {"type": "string"},
            "avatar_url": {"type": "string"},
        },
    }
    components["Notification"] = {
        "type": "object",
        "required": ["id", "kind", "actors", "actor_count", "board", "created_at", "read"],
        "properties": {
            "id": {"type": "integer"},
            "kind": {"type": "string", "enum": list(NotificationKind.values)},
            "actors": {"type": "array", "items": {"type": "string"}, "description": "the latest few, newest first"},
            "actor_count": {
                "type": "integer",
                "minimum": 0,
                "description": "everyone gathered here (0: no person did it, as staff's decision on a report)",
            },
            "board": {"oneOf": [{"$ref": "#/components/schemas/BoardSummary"}, {"type": "null"}]},
            "created_at": {"type": "string", "format": "date-time"},
            "read": {"type": "boolean"},
        },
    }
    read_ids = NotificationsRead.model_json_schema()["properties"]["ids"]
    components["NotificationsRead"] = {
        "type": "object",
        "additionalProperties": False,
        "description": 'either {"ids": [...]} or {"all": true}',
        "properties": {"ids": {k: v for k, v in read_ids.items() if k != "title"}, "all": {"const": True}},
        "oneOf": [{"required": ["ids"]}, {"required": ["all"]}],
    }
    comment_author = {
        "type": "object",
        "required": ["username", "display_name", "avatar"],
        "description": "a local person; a remote (fediverse) author has its user@host handle as username",
        "properties": {
            "username": {"type": "string"},
            "display_name": {"type": "string"},
            "avatar": {"type": ["string", "null"]},
        },
    }
    comment_props = {
        "id": {"type": "integer"},
        "board": {"type": "integer"},
        "author": {"oneOf": [comment_author, {"type": "null"}], "description": "null for a deleted placeholder"},
        "text": {"type": "string", "description": "plain text as written (empty for a placeholder)"},
        "html": {"type": "string", "description": "the text escaped, links rel=nofollow ugc, @names linked"},
        "reply_to": {"type": ["integer", "null"], "description": "the top comment it answers"},
        "created_at": {"type": "string", "format": "date-time"},
        "edited_at": {"type": ["string", "null"], "format": "date-time"},
        "deleted": {"type": "boolean", "description": "a placeholder of a comment deleted while it had replies"},
    }
    components["Comment"] = {"type": "object", "properties": comment_props, "required": list(comment_props)}
    session_props = {
        "id": {"type": "string", "pattern": SESSION_ID_PATTERN},
        "kind": {"type": "string", "enum": ["session", "token"]},
        "created_at": {"type": "string", "format": "date-time"},
        "last_used_at": {"type": "string", "format": "date-time", "description": "to within five minutes"},
        "user_agent": {"type": "string", "description": "the browser or client that signed in"},
        "current": {"type": "boolean", "description": "the session or token of this call"},
    }
    components["Session"] = {"type": "object", "properties": session_props, "required": list(session_props)}
    components["Error"] = {
        "type": "object",
        "required": ["detail"],
        "properties": {"detail": {"type": "string"}, "errors": {"type": "array", "items": {"type": "string"}}},
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "ugcsite API",
            "version": "1",
            "description": (
                "Every 4xx answer is an Error object with a `detail` sentence. A method a path does not list "
                "answers 405 with an `Allow` header naming those it does (components.responses.MethodNotAllowed); "
                "a body over 2 MiB is a 413 on any call; a write with a body not sent as application/json "
                "is a 415, except the avatar's PUT, which takes a picture."
            ),
        },
        "paths": _paths(),
        "components": {
            "schemas": components,
            "responses": {
                "MethodNotAllowed": {
                    "description": "the path exists but not with this method",
                    "headers": {"Allow": {"schema": {"type": "string"}, "description": "the methods the path answers"}},
                    "content": {"application/json": {"schema": ERROR}},
                }
            },
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


@get_view
def document(request):
    return JsonResponse(build())
