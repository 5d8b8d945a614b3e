"""Prometheus metrics of the site (``/metrics``): requests by route and status, their latency,
and fan-out lag; the gauges read at scrape time (queue depth, archive backlog, Redis memory)
are added by ugcsite.health. Imports no app: any layer may record here.

With several processes (gunicorn's workers, Celery's) each writes its own files under
``PROMETHEUS_MULTIPROC_DIR`` (make run sets it) and a scrape adds them up; without it, this
process's own figures are served.
"""

import os
import time

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess

REQUESTS = Counter(
    "ugcsite_http_requests_total", "HTTP requests by route pattern, method and status", ["route", "method", "status"]
)
LATENCY = Histogram(
    "ugcsite_http_request_seconds",
    "Time to answer an HTTP request, by route pattern",
    ["route"],
    buckets=(0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
FANOUT_LAG = Histogram(
    "ugcsite_fanout_lag_seconds",
    "From a board's creation to its last batch of followers written",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
)


def exposition(extra: CollectorRegistry | None = None) -> bytes:
    """The text format of every process's metrics, and ``extra``'s (gauges read now)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    text = generate_latest(registry)
    return text + (generate_latest(extra) if extra is not None else b"")


class RequestMetricsMiddleware:
    """Counts every request by its URL pattern (not its path: ids would make endless series)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = match.route if match is not None and match.route else "unmatched"
        REQUESTS.labels(route, request.method, str(response.status_code)).inc()
        LATENCY.labels(route).observe(time.perf_counter() - started)
        return response
