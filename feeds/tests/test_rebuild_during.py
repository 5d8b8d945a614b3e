"""The data Redis emptied, and emptied again while a real `manage.py rebuild_redis` process runs:
meanwhile every feed and profile answers what it answered before or a 503 with Retry-After and
a detail (never a 500, never a wrong list); the rebuild notices the second loss and starts over;
afterwards every list equals what it was. (test_rebuild compares everything after a rebuild.)"""

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from feeds import keys
from feeds.models import Board
from feeds.timelines import rebuild
from feeds.timelines.ids import board_id_time, next_board_id
from feeds.timelines.rebuild import MARK_CHECK_SECONDS
from social.models import Follow, User
from ugcsite.platform.redis import get_redis
from ugcsite.testing import wait_for

ROOT = Path(__file__).resolve().parents[2]
USERS, FOLLOWS_EACH, BOARDS_EACH, ASKED = 300, 15, 4, 12
DOC_JSON = '{"width":10,"height":10,"background":"#ffffff","elements":[]}'


def _world(rng: random.Random) -> list[User]:
    """USERS people who each follow FOLLOWS_EACH others and made BOARDS_EACH boards, loaded in bulk."""
    people = User.objects.bulk_create([User(username=f"p{i}", password="!") for i in range(USERS)])
    boards = []
    for _ in range(BOARDS_EACH):
        for person in people:
            board_id = next_board_id()
            boards.append(
                Board(
                    id=board_id,
                    author=person,
                    title=f"b{board_id % 10000}",
                    kind="note",
                    tags=[],
                    doc_json=DOC_JSON,
                    created_at=board_id_time(board_id),
                    updated_at=board_id_time(board_id),
                )
            )
    Board.objects.bulk_create(boards)
    now = timezone.now()
    Follow.objects.bulk_create(
        [
            Follow(follower=person, followee=other, created_at=now)
            for person in people
            for other in rng.sample([p for p in people if p != person], FOLLOWS_EACH)
        ]
    )
    return people


def _ask(clients: dict, name: str, what: str):
    client = clients[name]
    path = "/api/v1/feed?limit=50" if what == "feed" else f"/api/v1/users/{name}/boards?limit=50"
    return client.get(path)


def _rebuild_process() -> subprocess.Popen:
    db = connection.settings_dict
    env = {**os.environ, "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"}
    return subprocess.Popen(
        [sys.executable, "manage.py", "rebuild_redis"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_feeds_answer_whole_or_503_while_rebuild_redis_runs_and_are_whole_after(transactional_db):
    rng = random.Random(13)
    people = _world(rng)
    call_command("rebuild_redis", stdout=open("/dev/null", "w"), stderr=open("/dev/null", "w"))
    asked = [person.username for person in rng.sample(people, ASKED)]
    clients = {}
    for name in asked:
        clients[name] = Client()
        clients[name].force_login(User.objects.get(username=name))
    questions = [(name, what) for name in asked for what in ("feed", "profile")]
    before = {}
    for name, what in questions:
        response = _ask(clients, name, what)
        assert response.status_code == 200
        before[name, what] = response.json()
        assert before[name, what]["items"], "a list that was empty before proves nothing"

    redis = get_redis()
    redis.flushdb()  # every primary of a cluster
    rebuilder = _rebuild_process()
    seen = {"whole": 0, "503": 0}
    flushed_again = False
    try:
        wait_for(
            lambda: redis.exists(keys.rebuilding()) or rebuilder.poll() is not None,
            timeout=60,
            what="rebuild_redis to start",
        )
        while rebuilder.poll() is None:
            if not redis.exists(keys.rebuilding()):
                time.sleep(MARK_CHECK_SECONDS / 4)  # emptied, and the rebuild has not noticed yet (see README)
                continue
            if not flushed_again and any(redis.exists(keys.home_timeline(p.pk)) for p in people[:50]):
                redis.flushdb()  # lost again, mid-way through the home timelines
                flushed_again = True
                continue
            name, what = rng.choice(questions)
            response = _ask(clients, name, what)
            if response.status_code == 503:
                assert int(response["Retry-After"]) > 0 and "rebuilt" in response.json()["detail"]
                seen["503"] += 1
            else:
                assert response.status_code == 200, response.content[:300]
                assert response.json() == before[name, what], f"{what} of {name} answered a different list mid-rebuild"
                seen["whole"] += 1
        out, err = rebuilder.communicate(timeout=60)
    finally:
        if rebuilder.poll() is None:
            rebuilder.kill()
    assert rebuilder.returncode == 0, err[-2000:]
    assert flushed_again, "the rebuild was over before the second flush: the test tested nothing"
    assert "starting again" in err
    assert seen["503"] and seen["whole"], seen
    assert not redis.exists(keys.rebuilding())
    for name, what in questions:
        response = _ask(clients, name, what)
        assert response.status_code == 200 and response.json() == before[name, what], (name, what)
    print(f"\nwhile rebuilding: {seen['whole']} answers whole, {seen['503']} answered 503; after: every list as before")


def test_the_mark_outlives_a_step_longer_than_its_ttl_and_not_a_flush(monkeypatch, redis_data):
    """A step whose first query outlasts the mark's TTL (the follow graph read whole at 10^6
    boards, make bench-pg) is not taken for a flush: the mark is kept alive from a thread of the
    rebuilding process. A flush still ends it."""
    monkeypatch.setattr(rebuild, "MARK_SECONDS", 1)
    mark = rebuild.RebuildMark()
    mark.start()
    time.sleep(2.5)  # no progress call: only the keeper renews the mark
    mark.check(force=True)
    redis_data.flushdb()
    with pytest.raises(rebuild.RedisEmptied):
        mark.check(force=True)
    mark._done.set()
