"""The API fuzzed with schemathesis against a live server (issue 13): every operation of the
OpenAPI document served at /api/v1/openapi.json, with data the document calls valid and data it
calls invalid, signed in with a bearer token. Every answer must be no 5xx; a documented status,
content type, header set and body; a 4xx with a ``detail`` sentence; valid data accepted and
invalid data refused.

Bounded and reproducible: a fixed seed (FUZZ_SEED, derandomized Hypothesis, no example
database), at most FUZZ_EXAMPLES generated cases per operation in the fuzzing phase (10 in
``make test``; ``make fuzz`` sets 1,000), plus schemathesis's deterministic coverage cases
(boundaries, wrong types, missing fields, methods a path does not take).

Path parameters are aimed: beside the documented range, the schema offers people and boards
that exist (placeholders, swapped for the real ids at call time), so that the fuzz gets past the
404s into validation, permissions and storage. Rate limits are raised out of reach; the cases
of each operation share one world (users, boards), the database and Redis are emptied between
operations. ``conftest.py`` prints the cases sent per operation and what they answered."""

import io
import json
import math
import os
import re
from collections import Counter

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings as hypothesis_settings
from PIL import Image
from schemathesis.checks import (
    content_type_conformance,
    ignored_auth,
    negative_data_rejection,
    not_a_server_error,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core.parameters import ParameterLocation
from schemathesis.core.transport import response_content_type

from feeds.rules import IMAGE_ID_PATTERN, MAX_CANVAS
from feeds.services.images import image_create
from social import tokens
from social.models import User
from ugcsite.openapi import build

FUZZ_SEED = int(os.environ.get("FUZZ_SEED", "13"))
FUZZ_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "10"))
# Rate limits stay on (and 429 documented), out of reach of a run of this size.
UNREACHABLE_LIMIT = 10**9
PASSWORD = "fuzz-password"
CALLER = "fz_caller"
OTHERS = ("alice_fz", "bob_fz")
DOOMED = 4  # boards made for DELETE /boards/{board_id} to take
# Things that exist have ids the server makes at run time, so the aimed document offers
# placeholders beside each documented range (strings no documented value can be, so the
# generator cannot fold them into that range, and URL-safe); each call swaps them for the real thing.
PEOPLE = {"fz-caller": CALLER, "fz-alice": OTHERS[0], "fz-bob": OTHERS[1], "fz-ALICE": OTHERS[0].upper()}
BOARDS = ["fz-own", "fz-others"]
DOOMED_BOARDS = [f"fz-doomed-{i}" for i in range(DOOMED)]
DOC = {
    "width": 100,
    "height": 80,
    "background": "#ffffff",
    "elements": [
        {"type": "path", "color": "#000000", "width": 2, "points": [[1, 1], [50, 40]]},
        {"type": "text", "color": "#112233", "size": 12, "x": 10, "y": 10, "text": "hello <fuzz>"},
        {"type": "rect", "color": "#aa0000", "width": 1, "x": 5, "y": 5, "w": 20, "h": 10, "fill": None},
    ],
}
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
    positive_data_acceptance,
    negative_data_rejection,
    ignored_auth,
]


def _aimed(param: dict, placeholders: list) -> dict:
    return {**param, "schema": {"anyOf": [{"enum": placeholders}, param["schema"]]}}


def aimed_document() -> dict:
    """The document as served (ugcsite.openapi.build), with placeholders for people and boards
    that exist offered beside the documented ranges of the path parameters. (Only there: a
    negative case may break just the placeholder branch of an anyOf, which a path parameter
    answers with a 404, as it should; a query parameter such as author= or ids= would take
    the value as valid and answer 200, and schemathesis would call that a failure.)"""
    doc = json.loads(json.dumps(build()))
    for path, item in doc["paths"].items():
        shared = item.pop("parameters", [])
        for method, operation in item.items():
            params = []
            for param in shared + operation.get("parameters", []):
                if param["name"] == "username":
                    # Following, blocking or muting yourself, or inviting yourself to your own
                    # board, is a 400 a schema cannot express: aim at the others.
                    others = path.endswith(("/follow", "/block", "/mute")) or "/editors/" in path
                    param = _aimed(param, ["fz-alice", "fz-bob", "fz-ALICE"] if others else list(PEOPLE))
                elif param["name"] == "board_id":
                    param = _aimed(param, DOOMED_BOARDS if method == "delete" else BOARDS)
                params.append(param)
            if params:
                operation["parameters"] = params
    return doc


schema = schemathesis.openapi.from_dict(
    aimed_document(),
    config=schemathesis.Config.from_dict(
        {
            "seed": FUZZ_SEED,
            "generation": {"max-examples": FUZZ_EXAMPLES, "database": "none", "deterministic": True, "mode": "all"},
            "phases": {
                "examples": {"enabled": True},
                "coverage": {"enabled": True},
                "fuzzing": {"enabled": True},
                "stateful": {"enabled": False},
            },
        }
    ),
)


def _api(url: str, method: str, path: str, token: str | None = None, body=None) -> requests.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return requests.request(method, url + path, json=body, headers=headers, timeout=30)


def _sign_up(url: str, username: str) -> str:
    assert _api(url, "POST", "/api/v1/users", body={"username": username, "password": PASSWORD}).status_code == 201
    response = _api(url, "POST", "/api/v1/tokens", body={"username": username, "password": PASSWORD})
    assert response.status_code == 201, response.text
    return response.json()["token"]


def _board(url: str, token: str, title: str) -> int:
    response = _api(
        url, "POST", "/api/v1/boards", token, {"title": title, "kind": "note", "tags": ["fuzz"], "doc": DOC}
    )
    assert response.status_code == 201, response.text
    return response.json()["id"]


FUZZ_TALLY = pytest.StashKey[dict]()


@pytest.fixture(scope="session")
def fuzz_tally(pytestconfig) -> dict[str, Counter]:
    """Statuses answered, per operation, for the summary at the end of the run (conftest.py)."""
    tally: dict[str, Counter] = {}
    pytestconfig.stash[FUZZ_TALLY] = tally
    return tally


@pytest.fixture
def fuzz_world(live_server, settings, tmp_path) -> dict:
    """The caller (signed in), two other people it follows, a board of each, and what every
    placeholder stands for. One world per operation, its cases sharing it as a site's callers do."""
    settings.RATE_LIMIT_AUTH_PER_MINUTE = UNREACHABLE_LIMIT
    settings.RATE_LIMIT_WRITES_PER_MINUTE = UNREACHABLE_LIMIT
    settings.RATE_LIMIT_WRITES_PER_ADDRESS_PER_MINUTE = UNREACHABLE_LIMIT
    settings.RATE_LIMIT_READS_PER_MINUTE = UNREACHABLE_LIMIT
    settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE = UNREACHABLE_LIMIT
    url = live_server.url
    token = _sign_up(url, CALLER)
    real = {**PEOPLE, "fz-own": _board(url, token, "mine")}
    for name in OTHERS:
        real.setdefault("fz-others", _board(url, _sign_up(url, name), f"{name}'s board"))
        assert _api(url, "PUT", f"/api/v1/users/{name}/follow", token).status_code == 204
    caller = User.objects.get(username=CALLER)
    settings.MEDIA_ROOT = tmp_path / "media"
    png = io.BytesIO()
    Image.new("RGB", (8, 8), (10, 20, 30)).save(png, format="PNG")
    picture = image_create(owner=caller, data=png.getvalue(), content_type="image/png").pk
    return {"url": url, "token": token, "caller": caller, "real": real, "picture": picture}


def _swap_placeholders(case, world: dict) -> None:
    real = world["real"]
    values = case.path_parameters or {}
    if not any(isinstance(value, str) and value.startswith("fz-") for value in values.values()):
        return
    for value in values.values():
        if value in DOOMED_BOARDS and value not in real:
            real[value] = _board(world["url"], world["token"], "to be deleted")
    # A new dict, so that schemathesis sees the change and judges the case again.
    case.path_parameters = {
        name: real.get(value, value) if isinstance(value, str) else value for name, value in values.items()
    }


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _on_canvas(value) -> bool:
    """Within the range the document gives every coordinate."""
    return _number(value) and 0 <= value <= MAX_CANVAS


def _within(value, high):
    return min(value, high) if _on_canvas(value) and _on_canvas(high) else value


def _own_pictures(body, picture: str) -> None:
    """An image element names an uploaded picture its board may show (the caller's own): a rule
    over the database that JSON Schema cannot state. Only ids the schema calls valid are swapped
    for the caller's picture; an invalid one stays invalid."""
    doc = body.get("doc") if isinstance(body, dict) else None
    if not isinstance(doc, dict) or not isinstance(doc.get("elements"), list):
        return
    for element in doc["elements"]:
        if (
            isinstance(element, dict)
            and isinstance(element.get("image"), str)
            and re.fullmatch(IMAGE_ID_PATTERN.strip("^$"), element["image"])
        ):
            element["image"] = picture


def _fit_to_canvas(body) -> None:
    """Move a generated drawing's elements onto its canvas: the rule of Doc's description that
    JSON Schema cannot state (a coordinate is bounded by a sibling field). Only numbers already
    in the documented ranges are moved, and only within them: what the schema calls valid stays
    valid, what it calls invalid stays invalid."""
    doc = body.get("doc") if isinstance(body, dict) else None
    if not isinstance(doc, dict) or not isinstance(doc.get("elements"), list):
        return
    width, height = doc.get("width"), doc.get("height")
    seen_ids = set()
    for element in doc["elements"]:
        if not isinstance(element, dict):
            continue
        # Element ids are unique within a drawing, which JSON Schema cannot state either.
        if isinstance(element.get("id"), str):
            if element["id"] in seen_ids:
                element.pop("id")
            else:
                seen_ids.add(element["id"])
        if isinstance(element.get("points"), list):
            for point in element["points"]:
                if isinstance(point, list) and len(point) == 2:
                    point[:] = [_within(point[0], width), _within(point[1], height)]
        for x, w, size in (("x", "w", width), ("y", "h", height)):
            extent = element.get(w, 0) if element.get("type") in ("rect", "ellipse", "sticky", "image") else 0
            if not (_on_canvas(element.get(x)) and _on_canvas(extent) and _on_canvas(size)):
                continue
            if extent > 0:
                element[w] = extent = min(extent, size)
            room = size - extent
            while room > 0 and room + extent > size:  # float rounding: x + w must not pass the edge
                room = math.nextafter(room, 0)
            element[x] = min(element[x], max(room, 0))


@schema.parametrize()
# One world per operation, shared by its cases on purpose (their writes pile up, as on a site).
@hypothesis_settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_api_survives_fuzzing(case, fuzz_world, fuzz_tally):
    _swap_placeholders(case, fuzz_world)
    _fit_to_canvas(case.body)
    _own_pictures(case.body, fuzz_world["picture"])
    token = fuzz_world["token"]
    if case.operation.label == "DELETE /api/v1/tokens/current":
        token = tokens.token_create(user=fuzz_world["caller"])  # each case revokes a token of its own
    # Signed in, unless the case is about its Authorization header being wrong or missing.
    header = case.meta.components.get(ParameterLocation.HEADER)
    headers = {} if header and header.mode.is_negative else {"Authorization": f"Bearer {token}"}
    response = case.call(base_url=fuzz_world["url"], headers=headers)
    fuzz_tally.setdefault(case.operation.label, Counter())[response.status_code] += 1
    case.validate_response(
        response, checks=CHECKS, headers=headers, transport_kwargs={"base_url": fuzz_world["url"], "headers": headers}
    )
    if 400 <= response.status_code < 500:  # API.md: every 4xx says what to do in a "detail" sentence
        assert (response_content_type(response) or "").startswith("application/json"), response.text[:300]
        body = response.json()
        assert isinstance(body.get("detail"), str) and body["detail"].strip(), (response.status_code, body)
