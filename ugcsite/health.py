"""Operations (docs/api.md, "Operations"): is the process up, can it serve, and its metrics."""

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpResponse, JsonResponse
from kombu import Connection
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Gauge
from typing_extensions import TypedDict

from feeds.timelines import archive
from ugcsite.platform import replicas
from ugcsite.platform.apidoc import documented
from ugcsite.platform.http import get_view
from ugcsite.platform.metrics import exposition
from ugcsite.platform.redis import get_redis, used_memory

READY_TIMEOUT = 2  # seconds a check may take before the server counts as unreachable
RETRY_AFTER_SECONDS = 5


class Alive(TypedDict):
    ok: bool


@get_view
@documented("The process answers", {200: ("ok", Alive)})
def health(request):
    """``GET /api/v1/health``: the process answers (for load balancers, and the benchmark's
    trivial view: the framework's own ceiling on this stack). No caller, so no token is read."""
    alive: Alive = {"ok": True}  # a literal: the benchmarks' ceiling view pays for no call
    return JsonResponse(alive)


def healthz(request):
    """``GET /healthz``: 200 while the process serves; it asks no other server."""
    return JsonResponse({"status": "ok"})


def _postgres() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _redis() -> None:
    get_redis().ping()


def _broker() -> None:
    with Connection(settings.CELERY_BROKER_URL, connect_timeout=READY_TIMEOUT) as broker:
        broker.ensure_connection(max_retries=1)


CHECKS = {"postgres": _postgres, "redis": _redis, "broker": _broker}


def _database() -> dict:
    """Which server answers as the primary (with PG_HA=1, the one libpq found), and the
    replica's state and lag in bytes when there is one (a replica down is reported, not a 503:
    its reads go to the primary)."""
    answer = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT host(inet_server_addr()) || ':' || inet_server_port()")
            answer["primary"] = cursor.fetchone()[0]
        if replicas.configured():
            answer["replica"] = replicas.replica_state(max_age=0).as_json()
    except DatabaseError as error:
        answer["primary"] = f"unreachable: {type(error).__name__}"
    return answer


def readyz(request):
    """``GET /readyz``: 200 when PostgreSQL, the data Redis and Celery's broker all answer;
    503 (Retry-After) naming the ones that did not. ``database`` names the primary and the
    replica's lag."""
    checks = {}
    for name, check in CHECKS.items():
        try:
            check()
            checks[name] = "ok"
        except Exception as error:
            checks[name] = f"unreachable: {type(error).__name__}"
    ready = all(value == "ok" for value in checks.values())
    response = JsonResponse(
        {"status": "ok" if ready else "unavailable", "checks": checks, "database": _database()},
        status=200 if ready else 503,
    )
    if not ready:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def _broker_queue_depth() -> int:
    with Connection(settings.CELERY_BROKER_URL, connect_timeout=READY_TIMEOUT) as broker:
        return broker.default_channel.client.llen(settings.CELERY_TASK_DEFAULT_QUEUE)


def metrics(request):
    """``GET /metrics``: Prometheus text format. Requests, latency and fan-out lag are counted
    as they happen (ugcsite.platform.metrics); queue depth, archive backlog and Redis memory are read now."""
    now = CollectorRegistry()
    for name, text, read in (
        ("ugcsite_celery_queue_depth", "Tasks waiting in Celery's default queue", _broker_queue_depth),
        ("ugcsite_archive_backlog", "Timelines waiting for the archiver", archive.waiting_count),
        ("ugcsite_redis_used_memory_bytes", "Memory the data Redis uses (every primary of a cluster)", used_memory),
    ):
        gauge = Gauge(name, text, registry=now)
        try:
            gauge.set(read())
        except Exception:
            now.unregister(gauge)
    return HttpResponse(exposition(now), content_type=CONTENT_TYPE_LATEST)
