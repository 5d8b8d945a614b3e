"""Timeline history through a real Celery worker process (conftest.celery_worker): the archival
tasks run in the worker, with the default windows (PROFILE_TIMELINE_HOT 1000, chunks of 100),
and the timeline is then read through the HTTP API. The oracle is plain SQL, as in test_history
(feeds.tests.support)."""

import pytest

from feeds import keys, tasks
from feeds.models import ArchiveRun, TimelineChunk
from feeds.tests.support import (
    LIMITS,
    api_fetch,
    assert_walks_exact,
    bulk_boards,
    expected_page,
    got_page,
    sql_archived_ids,
    sql_ids_stored_twice,
    sql_profile,
    zadd_many,
)
from feeds.timelines import archive
from social.models import User
from social.services import user_create
from ugcsite.testing import wait_for

pytestmark = pytest.mark.worker

DOC = {
    "width": 100,
    "height": 100,
    "background": "#ffffff",
    "elements": [{"type": "path", "color": "#000000", "width": 2, "points": [[1, 1], [99, 99]]}],
}


def _fill_profile(redis_data, author, count: int) -> None:
    zadd_many(redis_data, keys.profile_timeline(author.pk), [b.id for b in bulk_boards([author] * count)])


def _assert_profile_pages_exactly(api, redis_data, author, hot: int) -> None:
    oracle = sql_profile(author.pk)
    fetch = api_fetch(api, f"/api/v1/users/{author.username}/boards")
    assert_walks_exact(fetch, oracle, limits=(100,))
    assert redis_data.zcard(keys.profile_timeline(author.pk)) == hot  # the boundary is at the head's size
    for limit in LIMITS:
        for start in (hot - 1, hot, hot + 1):
            assert got_page(fetch(limit=limit, offset=start)) == expected_page(oracle, start, limit)
            assert got_page(fetch(limit=limit, before=oracle[start - 1])) == expected_page(oracle, start, limit)


def test_the_worker_archives_a_profile_and_the_api_pages_across_the_boundary(celery_worker, api, redis_data, settings):
    hot, chunk = settings.PROFILE_TIMELINE_HOT, settings.TIMELINE_CHUNK
    author = user_create(username="prolific", password="password123")
    _fill_profile(redis_data, author, hot + 2 * chunk)  # 1,200 with the default windows
    tasks.archive_timeline.delay("m", author.pk)
    key = keys.profile_timeline(author.pk)
    wait_for(
        lambda: (
            TimelineChunk.objects.filter(owner_id=author.pk, timeline="m").count() == 2 and redis_data.zcard(key) == hot
        ),
        what="the worker's archival",
    )
    oracle = sql_profile(author.pk)
    assert sorted(sql_archived_ids(author.pk, "m")) == sorted(oracle)[: 2 * chunk]  # the oldest, once each
    assert sql_ids_stored_twice(author.pk, "m") == []
    assert archive.archived_max(author.pk, "m") == max(sql_archived_ids(author.pk, "m"))
    _assert_profile_pages_exactly(api, redis_data, author, hot)


def test_a_post_through_the_api_past_the_window_gets_its_profile_archived_by_the_worker(
    celery_worker, api, redis_data, settings
):
    """The real flow: board_create's on-commit work sees M at hot + one chunk, flags it and
    enqueues archive_timeline; the worker moves the oldest chunk to PostgreSQL."""
    hot, chunk = settings.PROFILE_TIMELINE_HOT, settings.TIMELINE_CHUNK
    client = api.as_user("poster")
    author = User.objects.get(username="poster")
    _fill_profile(redis_data, author, hot + chunk - 1)
    assert not TimelineChunk.objects.exists()
    response = client.post("/api/v1/boards", {"title": "the last straw", "kind": "note", "doc": DOC})
    assert response.status_code == 201, response.content
    newest = response.json()["id"]
    key = keys.profile_timeline(author.pk)
    wait_for(
        lambda: TimelineChunk.objects.filter(owner_id=author.pk).count() == 1 and redis_data.zcard(key) == hot,
        what="the archival the post asked for",
    )
    oracle = sql_profile(author.pk)
    assert oracle[0] == newest and len(oracle) == hot + chunk
    assert sorted(sql_archived_ids(author.pk, "m")) == sorted(oracle)[:chunk]
    assert archive.waiting_count() == 0
    _assert_profile_pages_exactly(api, redis_data, author, hot)


def test_the_beat_run_in_the_worker_archives_every_flagged_timeline(celery_worker, api, redis_data, settings):
    hot, chunk = settings.PROFILE_TIMELINE_HOT, settings.TIMELINE_CHUNK
    one = user_create(username="one", password="password123")
    three = user_create(username="three", password="password123")
    within = user_create(username="within", password="password123")
    _fill_profile(redis_data, one, hot + chunk + 50)
    _fill_profile(redis_data, three, hot + 3 * chunk + 7)
    _fill_profile(redis_data, within, hot + 20)
    archive.flag_waiting("m", [one.pk, three.pk, within.pk])
    tasks.archive_run.delay()
    wait_for(
        lambda: ArchiveRun.objects.filter(trigger="beat", finished_at__isnull=False).exists(),
        timeout=20,
        what="the beat run in the worker",
    )
    run = ArchiveRun.objects.get(trigger="beat")
    assert (run.timelines, run.chunks, run.ids, run.errors) == (3, 4, 4 * chunk, "")
    for user, moved in ((one, chunk), (three, 3 * chunk), (within, 0)):
        oracle = sql_profile(user.pk)
        assert sorted(sql_archived_ids(user.pk, "m")) == sorted(oracle)[:moved]
        assert redis_data.zcard(keys.profile_timeline(user.pk)) == len(oracle) - moved
    assert archive.waiting_count() == 0
    assert_walks_exact(api_fetch(api, "/api/v1/users/three/boards"), sql_profile(three.pk), limits=(100,))
