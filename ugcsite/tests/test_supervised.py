"""make run's processes under supervisord (scripts/serve.sh): kill -9 the Celery worker's main process in the
middle of a fan-out to 20,000 followers; the site keeps answering, a new worker is up within
10 seconds, and every follower gets the board (the outbox sends the walk again)."""

import os
import signal
import time
import urllib.request
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from feeds import keys
from feeds.services.boards import board_create
from social import graph
from social.models import Follow
from ugcsite.celery import app
from ugcsite.platform.redis import get_redis
from ugcsite.serving import Site
from ugcsite.testing import wait_for

ROOT = Path(__file__).resolve().parents[2]
FOLLOWERS = 20_000
QUEUE = "supervised"  # not the session worker's queue: only the supervised worker takes it
pytestmark = pytest.mark.worker


def answers(url: str) -> bool:
    try:
        return urllib.request.urlopen(url, timeout=2).status == 200
    except OSError:
        return False


def followers_with(board_id: int, fans: list[int]) -> int:
    pipe = get_redis().pipeline(transaction=False)
    for fan in fans:
        pipe.zscore(keys.home_timeline(fan), board_id)
    return sum(score is not None for score in pipe.execute())


def test_a_killed_worker_is_replaced_and_its_fanout_reaches_every_follower(transactional_db, tmp_path):
    User = get_user_model()
    star = User.objects.create(username="star")
    fans = User.objects.bulk_create([User(username=f"fan_{i}", password="!") for i in range(FOLLOWERS)])
    Follow.objects.bulk_create([Follow(follower=fan, followee=star, created_at=timezone.now()) for fan in fans])
    pipe = get_redis().pipeline(transaction=False)
    for fan in fans:
        graph.follow_add(follower_id=fan.pk, followee_id=star.pk, at=time.time(), pipe=pipe)
        pipe.set(keys.active(fan.pk), 1, ex=3600)
    pipe.execute()
    fan_ids = [fan.pk for fan in fans]

    db = connection.settings_dict
    env = dict(
        os.environ,
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        CELERY_QUEUE=QUEUE,
        FANOUT_BATCH_SIZE="25",
        OUTBOX_RESEND_AFTER_SECONDS="5",
        OUTBOX_RESEND_EVERY_SECONDS="2",
        DJANGO_DEBUG="0",
        SITE_HTTPS="0",
        DJANGO_SECRET_KEY="s" * 60,
        STATIC_ROOT=str(tmp_path / "static"),
    )
    supervisor = Site(tmp_path / "site", env)
    supervisor.collect_static()
    queue = app.conf.task_default_queue
    app.conf.task_default_queue = QUEUE
    try:
        supervisor.start()
        site = supervisor.url
        wait_for(
            lambda: supervisor.supervisorctl("status", "worker").stdout.split()[1:2] == ["RUNNING"],
            timeout=60,
            what="the worker",
        )
        first = int(supervisor.supervisorctl("pid", "worker").stdout)
        board = board_create(
            author=star,
            title="through a crash",
            kind="note",
            tags=[],
            doc={"width": 10, "height": 10, "background": "#ffffff", "elements": []},
        )
        wait_for(lambda: followers_with(board.id, fan_ids) >= 200, timeout=60, what="the fan-out to start")
        os.kill(first, signal.SIGKILL)
        reached_at_kill = followers_with(board.id, fan_ids)
        assert reached_at_kill < FOLLOWERS, "the fan-out was over before the kill: the test tested nothing"
        killed = time.monotonic()
        assert answers(site + "/api/v1/discover")  # the site keeps answering
        wait_for(
            lambda: supervisor.supervisorctl("pid", "worker").stdout.strip() not in ("", "0", str(first)),
            timeout=10,
            what="supervisord to start a new worker within 10 s",
        )
        back_in = time.monotonic() - killed
        wait_for(lambda: followers_with(board.id, fan_ids) == FOLLOWERS, timeout=120, what="every follower")
        print(
            f"\nkill -9 of the worker at {reached_at_kill:,} of {FOLLOWERS:,} deliveries; a new worker in "
            f"{back_in:.1f} s; every follower reached {time.monotonic() - killed:.1f} s after the kill"
        )
    finally:
        app.conf.task_default_queue = queue
        supervisor.stop()
