"""Settings refuse what cannot work: Celery's broker or Django's cache on the Redis Cluster."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def settle(**env) -> subprocess.CompletedProcess:
    """Load the settings in a fresh process with ``env`` (and no Redis variable of this run)."""
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("REDIS_URL", "REDIS_CLUSTER", "PLAIN_REDIS_URL", "CELERY_BROKER_URL", "CACHE_URL")
    }
    code = "import django; django.setup(); from django.conf import settings; print(settings.CELERY_BROKER_URL)"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=60
    )


def test_a_cluster_without_a_plain_redis_for_the_broker_and_cache_is_refused_with_a_way_out():
    done = settle(REDIS_CLUSTER="1", REDIS_URL="redis://127.0.0.1:7001/0")
    assert done.returncode != 0
    assert "cannot use a cluster" in done.stderr and "PLAIN_REDIS_URL" in done.stderr


def test_a_broker_on_a_cluster_node_is_refused_even_when_the_cache_is_plain():
    done = settle(
        REDIS_CLUSTER="1",
        REDIS_URL="redis://127.0.0.1:7001/0",
        CACHE_URL="redis://127.0.0.1:6379/2",
        CELERY_BROKER_URL="redis://127.0.0.1:7001/1",
    )
    assert done.returncode != 0 and "CELERY_BROKER_URL" in done.stderr


def test_a_cluster_beside_a_plain_redis_is_accepted():
    done = settle(REDIS_CLUSTER="1", REDIS_URL="redis://127.0.0.1:7001/0", PLAIN_REDIS_URL="redis://127.0.0.1:6379/0")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "redis://127.0.0.1:6379/1"


def test_production_settings_pass_the_deploy_check_and_hash_with_argon2():
    # Production's environment: none of this run's (the browser tests allow async-unsafe calls).
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_DEBUG", "SITE_HTTPS", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    env.update(DJANGO_DEBUG="0", DJANGO_SECRET_KEY=secrets.token_urlsafe(50))
    check = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    code = "import django; django.setup(); from django.contrib.auth.hashers import make_password; print(make_password('pw'))"
    hashed = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert hashed.stdout.startswith("argon2$argon2id$"), hashed.stdout + hashed.stderr
