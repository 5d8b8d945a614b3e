import pytest

from feeds.models import Board


@pytest.mark.worker
def test_worker_smoke(celery_worker, api):
    alice = api.as_user("alice")
    assert alice.get("/api/v1/me").status_code == 200
