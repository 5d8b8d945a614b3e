"""A transaction PostgreSQL ended for a conflicting change (a deadlock, a serialization failure)
is a 503 that says so, not "unreachable": the server is up, and a retry works."""

import psycopg
import pytest
from django.db import OperationalError
from django.test import RequestFactory

from ugcsite.middleware import ServiceUnavailableMiddleware


def _wrapped(cause: Exception) -> OperationalError:
    """What Django raises for a psycopg error: its own class, the driver's error as the cause."""
    try:
        try:
            raise cause
        except psycopg.Error as error:
            raise OperationalError(str(error)) from error
    except OperationalError as wrapped:
        return wrapped


@pytest.mark.parametrize(
    ("cause", "words"),
    [
        (psycopg.errors.DeadlockDetected("deadlock detected"), "conflicting change"),
        (psycopg.errors.SerializationFailure("could not serialize"), "conflicting change"),
        (psycopg.OperationalError("connection refused"), "unreachable"),
    ],
)
def test_a_conflict_and_an_outage_are_told_apart(cause, words):
    middleware = ServiceUnavailableMiddleware(lambda request: None)
    response = middleware.process_exception(RequestFactory().post("/api/v1/boards"), _wrapped(cause))
    assert response.status_code == 503 and int(response["Retry-After"]) >= 1
    assert words in response.content.decode()
