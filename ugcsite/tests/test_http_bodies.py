"""Requests as the site `make run` ships receives them (nginx in front of the web server,
scripts/serve.sh): a chunked body is read whole, not as empty; a body over the limit is a 413,
chunked or not, after which the same keep-alive connection still answers; and what the server
itself refuses (a request it cannot read, a URL or header past its buffers, a body past every
limit) answers the API's error object, never a plain-text page."""

import http.client
import json
import socket
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
    pieces = [body[i : i + 7] for i in range(0, len(body), 7)]
    conn.request(
        "PATCH",
        "/api/v1/me",
        body=iter(pieces),
        encode_chunked=True,
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Transfer-Encoding": "chunked",
        },
    )
    status, data = answer(conn)
    assert status == 200, data
    assert data["bio"] == bio and data["display_name"] == "Chunky"


def test_a_body_over_the_limit_is_413_and_the_connection_answers_again(conn, token):
    huge = b'{"title": "' + b"x" * (3 * 1024 * 1024) + b'"}'
    conn.request(
        "POST",
        "/api/v1/boards",
        body=huge,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    status, data = answer(conn)
    assert status == 413 and data["detail"]
    kept = conn.sock
    assert kept is not None  # the server did not ask to close it (http.client would, on "Connection: close")
    conn.request("GET", "/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    status, data = answer(conn)
    assert status == 200 and data["username"] == "chunky"
    assert conn.sock is kept  # ... and answered on the same connection


def test_a_chunked_body_over_the_limit_is_413_with_a_detail(conn, token, asgi_server):
    logged_before = asgi_server.log_path.stat().st_size  # the session's server: earlier tests logged too
    huge = b'{"title": "' + b"x" * (3 * 1024 * 1024) + b'"}'
    pieces = [huge[i : i + 65536] for i in range(0, len(huge), 65536)]
    conn.request(
        "POST",
        "/api/v1/boards",
        body=iter(pieces),
        encode_chunked=True,
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Transfer-Encoding": "chunked",
        },
    )
    status, data = answer(conn)
    assert status == 413 and "2 MiB" in data["detail"]
    with open(asgi_server.log_path, "rb") as log:
        log.seek(logged_before)
        assert b"Traceback" not in log.read()


def raw(server, request: bytes) -> tuple[int, dict, dict]:
    """Send ``request`` as bytes; (status, headers, JSON body) of the answer."""
    address = urlsplit(server.url)
    with socket.create_connection((address.hostname, address.port), timeout=20) as sock:
        sock.sendall(request)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, json.loads(body)


@pytest.mark.parametrize(
    "request_bytes, status",
    [
        (b"get /api/v1/feed HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),  # a method must be upper case
        (b"GET /api/v1/feed HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Odd: a\x00b\r\n\r\n", 400),  # NUL in a header
        (b"GET /api/v1/feed?q=" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414),
        (b"GET /api/v1/feed HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n", 400),
        (b"POST /api/v1/boards HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999\r\n\r\n", 413),
        (b"NONSENSE\r\n\r\n", 400),
    ],
    ids=["lower-case method", "NUL in a header", "100k URL", "20k header", "100 MB body", "no request line"],
)
def test_what_the_server_itself_refuses_is_the_apis_error_object(asgi_server, request_bytes, status):
    got, headers, body = raw(asgi_server, request_bytes)
    assert got == status
    assert headers["Content-Type"] == "application/json"
    assert isinstance(body["detail"], str) and body["detail"].endswith(".")


@pytest.mark.parametrize("method", [b"TRACE", b"CONNECT"])
def test_a_method_the_proxy_refuses_is_the_apis_405_with_allow(asgi_server, method):
    got, headers, body = raw(asgi_server, method + b" /api/v1/feed HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert got == 405 and headers["Content-Type"] == "application/json"
    assert "GET" in headers["Allow"] and "GET" in body["detail"] and method.decode() not in headers["Allow"]


@pytest.mark.parametrize("length", [4_000, 4_100, 6_000, 8_000, 8_150, 8_170, 8_185, 8_200, 9_000])
def test_a_url_up_to_8_kib_reaches_the_site_and_a_longer_one_is_a_json_414(asgi_server, length):
    """gunicorn's own limit (4 KiB) once answered URLs between it and nginx's 8 KiB with an HTML 414."""
    line = b"GET /api/v1/discover?tag=" + b"a" * (length - len(b"GET /api/v1/discover?tag= HTTP/1.1")) + b" HTTP/1.1"
    assert len(line) == length
    got, headers, body = raw(asgi_server, line + b"\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    assert headers["Content-Type"] == "application/json" and body["detail"]
    assert got == (400 if length <= 8_000 else got)  # a tag that long is a 400 of the site's own
    assert got in (400, 414)


def test_an_unknown_method_is_a_405_with_a_detail(conn):
    conn.request("BREW", "/api/v1/feed")
    status, data = answer(conn)
    assert status == 405 and "GET" in data["detail"]


def test_every_body_over_the_limit_is_a_413_not_a_503(asgi_server, token):
    """gunicorn answering before it read the body closed the socket under nginx's feet: a 502,
    answered as 503, for a few in forty. The body is now drained before the 413."""
    huge = b'{"title": "' + b"x" * (3 * 1024 * 1024) + b'"}'
    address = urlsplit(asgi_server.url)
    statuses = []
    for _ in range(40):
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=20)
        connection.request(
            "POST",
            "/api/v1/boards",
            body=huge,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        statuses.append(connection.getresponse().status)
        connection.close()
    assert statuses == [413] * 40
