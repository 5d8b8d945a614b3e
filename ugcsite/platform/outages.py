"""What counts as a dependency's outage, read by the request path (ugcsite.middleware: a 503
with Retry-After) and the logs (ugcsite.platform.logs: a task that met one logs a line, not a
traceback). Imports no app."""

from django.db import DatabaseError, InterfaceError, OperationalError
from psycopg import errors as psycopg_errors
from redis.exceptions import (
    ClusterDownError,
    ConnectionError as RedisConnectionError,
    TimeoutError as RedisTimeoutError,
)

# A transaction PostgreSQL ended because another one conflicted with it (a deadlock, a
# serialization failure, a lock it waited too long for): the server is up, and a retry works.
CONFLICTS = (psycopg_errors.DeadlockDetected, psycopg_errors.SerializationFailure, psycopg_errors.LockNotAvailable)
# A server we depend on is unreachable: the request may work again in a moment.
OUTAGES = (OperationalError, InterfaceError, RedisConnectionError, RedisTimeoutError, ClusterDownError)
# A write reached a PostgreSQL that is a standby now (its primary failed over, PG_HA=1, and a kept
# connection outlived the change): the next connection finds the new primary.
DEMOTED = psycopg_errors.ReadOnlySqlTransaction


def is_outage(error: BaseException) -> bool:
    """``error`` means a server we depend on is unreachable or was demoted (not a conflict)."""
    if isinstance(error.__cause__, CONFLICTS):
        return False
    return isinstance(error, OUTAGES) or isinstance(error.__cause__, DEMOTED)


def which(error: BaseException) -> str:
    """The dependency an outage is of, as a person reads it."""
    return "database" if isinstance(error, DatabaseError) else "data store (Redis)"
