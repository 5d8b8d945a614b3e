"""The OpenAPI document served at /api/v1/openapi.json covers the API as routed, and says what
the server really answers: every status an operation gives to a bad token, a session call
without its CSRF token, a body over the limit or a method the path does not take is listed."""

import json
import re

import pytest
from django.conf import settings
from django.test import Client
from django.urls import get_resolver

from feeds.models import Export
from feeds.rules import IMAGE_UPLOAD_MAX
from social.models import User
from social.rules import EMAIL_MAX
from ugcsite.openapi import plain_paths
from ugcsite.testing import ApiClient, assert_problem

METHODS = ("get", "post", "put", "patch", "delete")
DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}


def document(client) -> dict:
    return client.get("/api/v1/openapi.json").json()


def operations(doc: dict):
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield path, method, operation


@pytest.fixture
def concrete(api, run):
    """``concrete(path)``: a documented path with its parameters filled by things that exist."""
    alice = api.as_user("alice")
    board_id = run(alice.post, "/api/v1/boards", {"title": "t", "kind": "note", "doc": DOC}).json()["id"]
    export_id = Export.objects.create(user=User.objects.get(username="alice")).pk
    comment_id = run(alice.post, f"/api/v1/boards/{board_id}/comments", {"text": "hi"}).json()["id"]
    return lambda path: (
        path.replace("{username}", "alice")
        .replace("{board_id}", str(board_id))
        .replace("{export_id}", str(export_id))
        .replace("{comment_id}", str(comment_id))
        .replace("{n}", "1")  # its first version, kept when it was published
    )


def test_the_openapi_document_names_every_api_path(client):
    doc = document(client)
    assert doc["openapi"].startswith("3.")
    routes = {
        "/api/v1/" + re.sub(r"<\w+:(\w+)>", r"{\1}", str(p.pattern))  # <converter:name> is {name}
        for api in get_resolver().url_patterns
        if str(api.pattern) == "api/v1/"
        for p in api.url_patterns
    }
    routes.discard("/api/v1/openapi.json")
    assert routes == set(doc["paths"])
    # the shared shapes, each once, by the name of the model the code builds it as
    shared = {"Doc", "ProfilePatch", "Me", "Profile", "Board", "BoardSummary", "Comment", "Notification"}
    assert shared | {"Session", "PersonFound", "Error"} <= set(doc["components"]["schemas"])


@pytest.mark.django_db
def test_a_bad_token_is_a_documented_401_on_every_operation(client, concrete):
    stranger = ApiClient(Client(), "not-a-token")
    plain = plain_paths()
    assert plain == {"/api/v1/health"}  # the one API view that reads no caller
    for path, method, operation in operations(document(client)):
        response = stranger.request(method.upper(), concrete(path))
        assert str(response.status_code) in operation["responses"], (method, path, response.status_code)
        if path not in plain:
            assert_problem(response, 401)


@pytest.mark.django_db
def test_a_session_call_without_csrf_is_a_documented_403_on_every_unsafe_operation(client, concrete):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(User.objects.create_user("bob", password="password123"))
    unsafe = [(path, method, operation) for path, method, operation in operations(document(client)) if method != "get"]
    assert len(unsafe) >= 9
    for path, method, operation in unsafe:
        response = getattr(browser, method)(concrete(path), data="{}", content_type="application/json")
        assert_problem(response, 403)
        assert "403" in operation["responses"], (method, path)


@pytest.mark.django_db
def test_a_body_over_the_limit_is_a_documented_413_on_every_operation_with_a_body(client, concrete):
    # Past the largest limit of any view (a picture's, feeds.rules.IMAGE_UPLOAD_MAX, is above the API's).
    huge = b'{"title": "' + b"x" * max(settings.API_MAX_BODY_BYTES, IMAGE_UPLOAD_MAX) + b'"}'
    with_body = [
        (path, method, operation)
        for path, method, operation in operations(document(client))
        if "requestBody" in operation
    ]
    assert {(path, method) for path, method, _ in with_body} >= {
        ("/api/v1/users", "post"),
        ("/api/v1/tokens", "post"),
        ("/api/v1/boards", "post"),
        ("/api/v1/boards/{board_id}", "patch"),
        ("/api/v1/me", "patch"),
    }
    for path, method, operation in with_body:
        response = getattr(client, method)(concrete(path), data=huge, content_type="application/json")
        assert_problem(response, 413)
        assert "413" in operation["responses"], (method, path)


@pytest.mark.django_db
def test_every_path_answers_405_naming_exactly_the_documented_methods(client, concrete):
    doc = document(client)
    assert "MethodNotAllowed" in doc["components"]["responses"]
    strict = Client(enforce_csrf_checks=True)  # as a real client is: /health answered a POST with a CSRF 403
    for path, item in [*doc["paths"].items(), ("/api/v1/openapi.json", {"get": {}})]:
        documented = {m.upper() for m in item if m in METHODS}
        answered = documented | ({"HEAD"} if "GET" in documented else set())  # HEAD wherever GET works
        for method in set(METHODS) - {m.lower() for m in answered}:
            response = getattr(strict, method)(concrete(path))
            assert_problem(response, 405)
            assert set(response["Allow"].split(", ")) == answered, (method, path)


def test_an_unsafe_call_to_no_api_path_is_a_404_not_a_csrf_403():
    assert_problem(
        Client(enforce_csrf_checks=True).post("/api/v1/nothing-here", data="{}", content_type="application/json"), 404
    )


@pytest.mark.django_db
def test_the_auth_calls_document_their_rate_limit(client, api, settings):
    settings.RATE_LIMIT_AUTH_PER_MINUTE = 1
    doc = document(client)
    api.post("/api/v1/users", {"username": "carol", "password": "password123"})
    for path in ("/api/v1/users", "/api/v1/tokens"):
        response = api.post(path, {"username": "carol", "password": "password123"})
        assert_problem(response, 429)
        assert "Retry-After" in doc["paths"][path]["post"]["responses"]["429"]["headers"]


def test_the_bodies_are_the_models_that_validate(client):
    schemas = document(client)["components"]["schemas"]
    patch = schemas["ProfilePatch"]
    assert patch["additionalProperties"] is False and "required" not in patch
    assert {name: (field["type"], field.get("maxLength")) for name, field in patch["properties"].items()} == {
        "display_name": ("string", 50),
        "bio": ("string", 300),
        "share_reading": ("boolean", None),
        "email": ("string", EMAIL_MAX),
    }
    assert re.compile(patch["properties"]["email"]["pattern"]).match("") is not None  # "" is no address
    for name in ("ProfilePatch", "BoardPatch"):  # a field left out is never null
        assert all("default" not in field for field in schemas[name]["properties"].values()), name
    assert (
        json.dumps(schemas["Me"]["properties"]["share_reading"])
        and "share_reading" not in schemas["Profile"]["properties"]
    )
