"""Helpers for tests: a JSON API client, polling for work the Celery worker does, and staff with a second factor."""

import json
import os
import time
from contextlib import contextmanager
from urllib.parse import urlencode

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

from social import services as people_services, two_factor
from social.rules import OTP_PERIOD_SECONDS
from ugcsite.celery import app as celery_app

# The two-factor key of staff in tests (staff need a second factor at /admin/, issue 41).
STAFF_OTP_SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"


def with_second_factor(user, secret: str = STAFF_OTP_SECRET):
    """``user`` with two-factor on under a known key (no code asked): staff who may open /admin/."""
    people_services.two_factor_seed(user=user, secret=secret)
    return user


def unused_code(secret: str = STAFF_OTP_SECRET) -> str:
    """A code of the key that no sign-in has taken yet in this 30 s step: the next step's (the
    drift allowed takes it). One per key per step."""
    return two_factor.current_code(secret, at=time.time() + OTP_PERIOD_SECONDS)


def assert_problem(response, status: int) -> dict:
    """``response`` is ``status`` with a JSON body whose "detail" is a non-empty sentence."""
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert isinstance(body.get("detail"), str), body
    assert body["detail"].strip(), body
    return body


class ApiClient:
    """django.test.Client speaking JSON, optionally with a bearer token."""

    def __init__(self, client, token: str | None = None):
        self.client = client
        self.token = token

    def _headers(self, headers):
        merged = {}
        if self.token:
            merged["Authorization"] = f"Bearer {self.token}"
        merged.update(headers or {})
        return merged

    def request(self, method: str, path: str, body=None, *, raw: bytes | str | None = None, headers=None, **query):
        kwargs = {"headers": self._headers(headers)}
        if body is not None or raw is not None:
            kwargs["data"] = raw if raw is not None else json.dumps(body)
            kwargs["content_type"] = "application/json"
        if query:
            kwargs["QUERY_STRING"] = urlencode(
                [(k, v) for k, values in query.items() for v in (values if isinstance(values, list) else [values])]
            )
        return getattr(self.client, method.lower())(path, **kwargs)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def patch(self, path, body=None, **kw):
        return self.request("PATCH", path, body, **kw)

    def put(self, path, body=None, **kw):
        return self.request("PUT", path, body, **kw)

    def delete(self, path, body=None, **kw):
        return self.request("DELETE", path, body, **kw)

    def as_user(self, username: str, password: str = "password123") -> "ApiClient":
        """A client signed in as ``username`` (created through the API if new)."""
        self.post("/api/v1/users", {"username": username, "password": password})
        response = self.post("/api/v1/tokens", {"username": username, "password": password})
        assert response.status_code == 201, response.content
        return ApiClient(self.client.__class__(), response.json()["token"])


def wait_for(predicate, *, timeout: float = 10.0, interval: float = 0.05, what: str = "the condition"):
    """Poll until ``predicate()`` is truthy (for work done by the worker); fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def socket_close_code(url: str, headers: dict | None = None) -> int:
    """Open a WebSocket at ``url`` (ws://...) and read until the server closes it: its close code."""
    with ws_connect(url, additional_headers=headers or {}, open_timeout=10) as socket:
        with pytest.raises(ConnectionClosed):
            while True:
                socket.recv(timeout=10)
        return socket.close_code


def _route(routes) -> None:
    celery_app.conf.task_routes = routes
    celery_app.amqp.flush_routes()  # Celery builds its router once and keeps it
    celery_app.amqp.router = celery_app.amqp.Router()


@contextmanager
def tasks_routed(routes: dict):
    """Send Celery tasks by ``routes`` inside the block, then as before."""
    before = celery_app.conf.task_routes
    _route(routes)
    try:
        yield
    finally:
        _route(before)


@contextmanager
def federation_tasks_held():
    """Federation's tasks go to a queue no worker serves inside the block, so a test delivers by
    hand (its own deliver_all) and the session's Celery worker, which runs with the site's
    settings (no loopback deliveries, another SITE_URL), never takes one of them first."""
    with tasks_routed({"feeds.federation.tasks.*": {"queue": f"federation-held-{os.getpid()}"}}):
        yield
