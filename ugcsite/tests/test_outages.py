"""A server we depend on is down: 503 with Retry-After and a sentence (API), the site's own 503
page (pages), never a 500 or a traceback; and `make run`'s settings (DEBUG off) show no debug page."""

import json
import os
import socket
import threading
import urllib.error
import urllib.request

import pytest
from django.db import connection

from social.models import User
from ugcsite.platform.redis import get_redis
from ugcsite.serving import Site
from ugcsite.testing import assert_problem


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the socket is closed


@pytest.fixture
def redis_down(settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{closed_port()}/0"
    settings.REDIS_CLUSTER = False
    get_redis.cache_clear()
    yield
    get_redis.cache_clear()


@pytest.mark.django_db
def test_redis_down_answers_503_with_retry_after_on_the_api_and_the_pages(client, redis_down):
    body = assert_problem(client.get("/api/v1/discover"), 503)
    assert "Redis" in body["detail"]
    response = client.get("/api/v1/discover")
    assert int(response["Retry-After"]) > 0
    page = client.get("/discover")
    assert page.status_code == 503 and int(page["Retry-After"]) > 0
    text = page.content.decode()
    assert "Back in a moment" in text and "Traceback" not in text


def _get(url: str, **kwargs) -> tuple[int, dict, str]:
    request = urllib.request.Request(url, **kwargs)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def test_postgres_down_shows_the_sites_503_with_debug_off(tmp_path):
    """The site as `make run` serves it (scripts/serve.sh, DEBUG off) with PostgreSQL unreachable."""
    env = {
        **os.environ,
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "x" * 50,
        "SITE_HTTPS": "0",
        "SERVE_TASKS": "0",
        "DATABASE_URL": f"postgres://ugcsite@127.0.0.1:{closed_port()}/ugcsite",
        "STATIC_ROOT": str(tmp_path / "static"),
    }
    server = Site(tmp_path / "site", env)
    server.collect_static()
    server.start()
    try:
        status, headers, text = _get(server.url + "/")
        assert status == 503 and int(headers["Retry-After"]) > 0
        assert "Back in a moment" in text
        for leak in ("Traceback", "SECRET_KEY", "DATABASES", "OperationalError"):
            assert leak not in text
        status, headers, text = _get(
            server.url + "/api/v1/users",
            method="POST",
            data=b'{"username": "zoe", "password": "long-enough"}',
            headers={"Content-Type": "application/json"},
        )
        assert status == 503 and int(headers["Retry-After"]) > 0 and "database" in text
    finally:
        server.stop()


@pytest.mark.django_db
def test_a_sign_up_while_redis_is_down_leaves_no_account_and_works_once_it_is_back(client, settings):
    """All or nothing: the account commits only after its Redis marks are written."""
    from social.models import User

    redis_url = settings.REDIS_URL, settings.REDIS_CLUSTER
    settings.REDIS_URL, settings.REDIS_CLUSTER = f"redis://127.0.0.1:{closed_port()}/0", False
    get_redis.cache_clear()
    body = {"username": "zoe", "password": "long-enough"}
    response = client.post("/api/v1/users", body, content_type="application/json")
    assert_problem(response, 503)
    assert int(response["Retry-After"]) > 0
    page = client.post("/signup", {"username": "zed", "password": "long-enough", "password_again": "long-enough"})
    assert page.status_code == 503
    assert not User.objects.filter(username__in=["zoe", "zed"]).exists()
    settings.REDIS_URL, settings.REDIS_CLUSTER = redis_url
    get_redis.cache_clear()
    assert client.post("/api/v1/users", body, content_type="application/json").status_code == 201


@pytest.mark.django_db
def test_a_hung_redis_is_a_503_after_the_socket_timeout_not_a_hung_request(client, settings):
    """A server that takes the connection and never answers (hung, or a half-dead network)."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)  # the kernel completes the handshake; nobody ever reads or answers
    try:
        settings.REDIS_URL, settings.REDIS_CLUSTER = f"redis://127.0.0.1:{silent.getsockname()[1]}/0", False
        settings.REDIS_SOCKET_TIMEOUT = 0.5
        get_redis.cache_clear()
        answers = []
        asking = threading.Thread(target=lambda: answers.append(client.get("/api/v1/discover")), daemon=True)
        asking.start()
        asking.join(timeout=120)  # not a speed check: without a socket timeout the request never ends
        assert answers, "the request hung on the silent Redis"
        assert_problem(answers[0], 503)
        assert int(answers[0]["Retry-After"]) > 0
    finally:
        silent.close()
        get_redis.cache_clear()


@pytest.mark.django_db
def test_every_operation_of_the_document_lists_its_503(client):
    paths = client.get("/api/v1/openapi.json").json()["paths"]
    operations = [
        op
        for path, item in paths.items()
        if path != "/api/v1/health"
        for method, op in item.items()
        if method != "parameters"
    ]
    assert operations and all("Retry-After" in op["responses"]["503"]["headers"] for op in operations)


def test_a_web_server_that_is_down_behind_the_proxy_is_a_503_with_retry_after(tmp_path):
    """nginx stays up while the web server restarts (or is stopped): 503, Retry-After, a detail."""
    env = {
        **os.environ,
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "x" * 50,
        "SITE_HTTPS": "0",
        "SERVE_TASKS": "0",
        "STATIC_ROOT": str(tmp_path / "static"),
    }
    server = Site(tmp_path / "site", env)
    server.collect_static()
    server.start()
    try:
        assert server.supervisorctl("stop", "web").returncode == 0
        status, headers, text = _get(server.url + "/api/v1/feed")
        assert status == 503 and int(headers["Retry-After"]) > 0
        assert headers["Content-Type"] == "application/json" and "try again" in json.loads(text)["detail"].lower()
    finally:
        server.stop()


@pytest.mark.django_db(transaction=True)
def test_a_write_on_a_server_that_turned_standby_is_a_503_not_a_500(client):
    """After a failover (PG_HA=1) a kept connection may reach a server that is a standby now: its
    writes fail with read_only_sql_transaction (SQLSTATE 25006), which is an outage, not a bug. A
    read-only session gives the same error."""
    User.objects.create_user(username="reader", password="long-enough")
    client.login(username="reader", password="long-enough")
    with connection.cursor() as cursor:
        cursor.execute("SET SESSION default_transaction_read_only = on")
    try:
        response = client.generic("PATCH", "/api/v1/me", '{"bio": "x"}', content_type="application/json")
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET SESSION default_transaction_read_only = off")
    body = assert_problem(response, 503)
    assert int(response["Retry-After"]) > 0 and "database" in body["detail"]
