"""Bodies as the production server (uvicorn, ASGI) receives them: a chunked body is read whole,
not as empty, and a body over the limit is a 413 after which the same keep-alive connection
still answers the next request."""

import http.client
import json
from urllib.parse import urlsplit

import pytest

from social import tokens
from social.services import user_create


@pytest.fixture
def conn(asgi_server):
    address = urlsplit(asgi_server.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=20)
    yield connection
    connection.close()


@pytest.fixture
def token(asgi_server):
    return tokens.token_create(user=user_create(username="chunky", password="password123"))


def answer(connection) -> tuple[int, dict]:
    response = connection.getresponse()
    return response.status, json.loads(response.read() or b"{}")


def test_a_chunked_body_is_read_whole(conn, token):
    # A profile change, not a post: a post's fan-out would still be running on a session worker
    # (if an earlier test started one) when this test's database is truncated, and deadlock it.
    bio = "sent in chunks, " * 10
    body = json.dumps({"bio": bio, "display_name": "Chunky"}).encode()
    pieces = [body[i:i + 7] for i in range(0, len(body), 7)]
    conn.request("PATCH", "/api/v1/me", body=iter(pieces), encode_chunked=True,
                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                          "Transfer-Encoding": "chunked"})
    status, data = answer(conn)
    assert status == 200, data
    assert data["bio"] == bio and data["display_name"] == "Chunky"


def test_a_body_over_the_limit_is_413_and_the_connection_answers_again(conn, token):
    huge = b'{"title": "' + b"x" * (3 * 1024 * 1024) + b'"}'
    conn.request("POST", "/api/v1/boards", body=huge,
                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    status, data = answer(conn)
    assert status == 413 and data["detail"]
    kept = conn.sock
    assert kept is not None  # the server did not ask to close it (http.client would, on "Connection: close")
    conn.request("GET", "/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    status, data = answer(conn)
    assert status == 200 and data["username"] == "chunky"
    assert conn.sock is kept  # ... and answered on the same connection
