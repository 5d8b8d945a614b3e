"""API writes take JSON bodies (API.md: ``Content-Type: application/json``): a body sent as any
other type, or as none, is a 415 (ugcsite.platform.http.json_body_required), so a cross-site HTML form
cannot sign anyone up. Writes without a body still work, and the avatar's PUT, whose body is a
picture, takes any type. The 415 comes after the 401 and before the 404, 403 and 400."""

import io
import json

import pytest
from django.test import Client
from PIL import Image

from feeds.models import Board
from social.models import User
from ugcsite.testing import assert_problem

pytestmark = pytest.mark.django_db

USERS = "/api/v1/users"
BOARDS = "/api/v1/boards"
BOARD = {
    "title": "A board",
    "kind": "note",
    "doc": {"width": 10, "height": 10, "background": "#ffffff", "elements": []},
}
SIGN_UP = {"username": "eve", "password": "password123"}

# What an HTML form on another site can send: it needs no CORS preflight for these.
FORM_POSTS = [
    pytest.param("application/x-www-form-urlencoded", "username=eve&password=password123", id="urlencoded"),
    pytest.param("text/plain", "username=eve\r\npassword=password123\r\n", id="text-plain"),
    pytest.param("text/plain", json.dumps(SIGN_UP), id="json-as-text-plain"),
    pytest.param(
        "multipart/form-data; boundary=B",
        '--B\r\nContent-Disposition: form-data; name="username"\r\n\r\neve\r\n--B--\r\n',
        id="multipart",
    ),
]


def send(client, method: str, path: str, data, content_type: str | None, token: str | None = None):
    """``data`` sent as is, under ``content_type`` (or with no Content-Type header at all)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    # As META: the test client sends its content_type only with a body, and then always one.
    return client.generic(method, path, data, headers=headers, CONTENT_TYPE=content_type or "")


def picture() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 48), (200, 30, 60)).save(out, format="PNG")
    return out.getvalue()


@pytest.mark.parametrize("content_type, data", FORM_POSTS)
def test_a_form_post_to_sign_up_is_415_and_signs_no_one_up(client, content_type, data):
    body = assert_problem(send(client, "POST", USERS, data, content_type), 415)

    assert "application/json" in body["detail"]
    assert not User.objects.exists()


def test_a_body_without_a_content_type_is_415(client):
    assert_problem(send(client, "POST", USERS, json.dumps(SIGN_UP), None), 415)
    assert not User.objects.exists()


@pytest.mark.parametrize(
    "content_type",
    ["application/json; charset=utf-8", "Application/JSON; charset=UTF-8", "application/json;charset=utf-8"],
)
def test_json_with_parameters_signs_up(client, content_type):
    response = send(client, "POST", USERS, json.dumps(SIGN_UP), content_type)

    assert response.status_code == 201, response.content
    assert User.objects.filter(username="eve").exists()


def test_a_text_plain_board_is_415_and_stores_nothing(api):
    alice = api.as_user("alice")

    body = assert_problem(send(alice.client, "POST", BOARDS, json.dumps(BOARD), "text/plain", alice.token), 415)

    assert "'text/plain'" in body["detail"]
    assert not Board.objects.exists()


def test_a_write_without_a_body_works_whatever_its_content_type_says(api):
    """No body, nothing to misread: wsgiref's server (runserver, the live server) even says
    text/plain for a request that sent no Content-Type. A body on the same call is a 415."""
    alice = api.as_user("alice")
    api.as_user("bob")
    follow = "/api/v1/users/bob/follow"

    assert alice.put(follow).status_code == 204  # no body, no Content-Type
    assert alice.delete(follow).status_code == 204
    assert send(alice.client, "PUT", follow, "", "text/plain", alice.token).status_code == 204
    assert send(alice.client, "DELETE", follow, "", "application/x-www-form-urlencoded", alice.token).status_code == 204
    assert_problem(send(alice.client, "PUT", follow, "x=1", "application/x-www-form-urlencoded", alice.token), 415)
    assert alice.get("/api/v1/users/bob").json()["followers"] == 0  # the 415 followed no one


@pytest.mark.parametrize("content_type", ["image/png", "application/octet-stream", "text/plain", None])
def test_the_avatar_upload_takes_a_picture_under_any_content_type(api, content_type):
    alice = api.as_user("alice")

    response = send(alice.client, "PUT", "/api/v1/me/avatar", picture(), content_type, alice.token)

    assert response.status_code == 200, response.content
    assert response.json()["avatar_url"] == "/u/alice/avatar?v=1"
    assert alice.delete("/api/v1/me/avatar").status_code == 200  # no body


def test_the_415_comes_after_the_401_and_before_the_404_403_and_400(api):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    board_id = alice.post(BOARDS, BOARD).json()["id"]
    form = "title=x"

    assert_problem(send(Client(), "POST", BOARDS, form, "application/x-www-form-urlencoded"), 401)
    assert_problem(send(Client(), "POST", BOARDS, form, "application/x-www-form-urlencoded", "not-a-token"), 401)
    assert_problem(
        send(bob.client, "PATCH", f"{BOARDS}/{board_id + 1}", form, "text/plain", bob.token), 415
    )  # no such board
    assert_problem(
        send(bob.client, "PATCH", f"{BOARDS}/{board_id}", form, "text/plain", bob.token), 415
    )  # alice's board
    assert_problem(send(alice.client, "PATCH", f"{BOARDS}/{board_id}", "{not json", "text/plain", alice.token), 415)
    assert_problem(send(bob.client, "PATCH", f"{BOARDS}/{board_id}", "{not json", "application/json", bob.token), 403)


def test_a_refused_form_post_does_not_count_towards_the_sign_up_rate_limit(client, settings):
    """Refused unread: a flood of form posts cannot lock out the address's real sign-ups."""
    settings.RATE_LIMIT_AUTH_PER_MINUTE = 1
    for _ in range(3):
        assert_problem(
            send(client, "POST", USERS, "username=eve&password=password123", "application/x-www-form-urlencoded"), 415
        )

    assert send(client, "POST", USERS, json.dumps(SIGN_UP), "application/json").status_code == 201


def test_every_write_that_takes_json_documents_its_415(api, client):
    """Each write of the OpenAPI document answers a text/plain body with a 415 it lists; the avatar's
    PUT, whose body is a picture, lists none."""
    alice = api.as_user("alice")
    api.as_user("bob")
    board_id = alice.post(BOARDS, BOARD).json()["id"]
    comment_id = alice.post(f"{BOARDS}/{board_id}/comments", {"text": "hi"}).json()["id"]
    doc = client.get("/api/v1/openapi.json").json()
    writes = [
        (path, method, operation)
        for path, item in doc["paths"].items()
        for method, operation in item.items()
        if method in ("post", "put", "patch", "delete")
    ]
    assert len(writes) >= 14
    for path, method, operation in writes:
        concrete = (
            path.replace("{username}", "bob")
            .replace("{board_id}", str(board_id))
            .replace("{comment_id}", str(comment_id))
            .replace("{n}", "1")  # a board's first version
            .replace("{handle}", "someone@example.org")  # a remote actor's handle
        )
        response = send(Client(), method.upper(), concrete, "{}", "text/plain", alice.token)
        if path == "/api/v1/me/avatar" and method == "put":
            assert "415" not in operation["responses"]
            assert_problem(response, 400)  # "{}" is not a picture: the decoder said so, not the type
        else:
            assert_problem(response, 415)
            assert "415" in operation["responses"], (method, path)
