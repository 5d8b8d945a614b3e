"""/healthz, /readyz and /metrics (API.md, "Operations")."""

import pytest

from ugcsite import health


def test_healthz_answers_while_the_process_serves(client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_says_ok_with_every_check(client, settings):
    response = client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["checks"] == {"postgres": "ok", "redis": "ok", "broker": "ok"}
    db = settings.DATABASES["default"]
    assert body["database"] == {"primary": f"{db['HOST']}:{db['PORT']}"}  # no replica in the suite


@pytest.mark.django_db
def test_readyz_names_the_server_that_does_not_answer(client, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/readyz")
    assert response.status_code == 503 and int(response["Retry-After"]) > 0
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["postgres"] == "ok" and body["checks"]["redis"] == "ok"
    assert body["checks"]["broker"].startswith("unreachable")


@pytest.mark.django_db
def test_metrics_count_requests_by_route_and_status_and_read_the_backlogs(api):
    api.get("/api/v1/boards/123")  # a 404, counted under its route pattern
    text = api.client.get("/metrics").content.decode()
    assert 'ugcsite_http_requests_total{method="GET",route="api/v1/boards/<board_id:board_id>",status="404"}' in text
    assert "ugcsite_http_request_seconds_bucket" in text
    for gauge in ("ugcsite_celery_queue_depth", "ugcsite_archive_backlog", "ugcsite_redis_used_memory_bytes"):
        assert f"\n{gauge} " in text, gauge
    assert health.CHECKS.keys() == {"postgres", "redis", "broker"}
