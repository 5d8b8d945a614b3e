"""The outbox: a fan-out or retraction whose task never ran (the broker was down, or lost its
queue) reaches every follower once beat sends it again; nothing is half-written."""

import pytest

from feeds import keys, tasks
from feeds.models import Board, Outbox
from feeds.services.boards import board_create, board_delete
from feeds.services.follows import follow_create
from feeds.timelines import store
from social import graph
from social.graph import FollowerCursor
from social.models import Follow
from social.services import user_create
from ugcsite.celery import app

pytestmark = pytest.mark.django_db

DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}


@pytest.fixture
def pair(run):
    author, reader = (user_create(username=name, password="pw-long-enough") for name in ("author", "reader"))
    run(follow_create, follower=reader, followee=author)
    return author, reader


@pytest.fixture
def broker_down():
    """Celery's broker unreachable for this test: its address points at a closed port."""
    previous = app.conf.broker_url, app.conf.broker_write_url
    app.conf.broker_url = app.conf.broker_write_url = "redis://127.0.0.1:1/0"
    app._pool = app.amqp._producer_pool = None  # new connections, to the new address
    yield
    app.conf.broker_url, app.conf.broker_write_url = previous
    app._pool = app.amqp._producer_pool = None


def test_a_flushed_broker_loses_no_fanout(pair, redis_data, django_capture_on_commit_callbacks, eager_tasks, settings):
    author, reader = pair
    app.conf.task_always_eager = False  # the tasks go to the real broker ...
    with django_capture_on_commit_callbacks(execute=True):
        board = board_create(author=author, title="lost in the queue", kind="note", tags=[], doc=DOC)
    assert app.control.purge() >= 1  # ... which loses them before any worker runs them
    assert redis_data.zscore(keys.home_timeline(reader.pk), board.id) is None
    assert Outbox.objects.filter(board_id=board.id, action="fanout").exists()
    app.conf.task_always_eager = True
    assert tasks.outbox_resend() == 0  # not due yet: its walk may still be under way
    settings.OUTBOX_RESEND_AFTER_SECONDS = 0
    assert tasks.outbox_resend() == 1
    assert redis_data.zscore(keys.home_timeline(reader.pk), board.id) == board.id
    assert not Outbox.objects.exists()  # the last batch cleared it


def test_a_post_while_the_broker_is_down_answers_201_and_reaches_the_followers_later(
    pair, redis_data, django_capture_on_commit_callbacks, eager_tasks, broker_down, settings, caplog
):
    author, reader = pair
    app.conf.task_always_eager = False
    with django_capture_on_commit_callbacks(execute=True):
        board = board_create(author=author, title="posted in the dark", kind="note", tags=[], doc=DOC)
    assert "board_fanout" in caplog.text and "the broker is unreachable" in caplog.text  # it was refused
    assert Board.objects.filter(pk=board.id).exists()
    assert redis_data.zscore(keys.profile_timeline(author.pk), board.id) == board.id  # the author's list at once
    assert redis_data.zscore(keys.home_timeline(reader.pk), board.id) is None
    app.conf.task_always_eager = True  # the broker is back (tasks run here)
    settings.OUTBOX_RESEND_AFTER_SECONDS = 0
    assert tasks.outbox_resend() == 1
    assert redis_data.zscore(keys.home_timeline(reader.pk), board.id) == board.id
    with django_capture_on_commit_callbacks(execute=True):  # a delete in the dark is finished the same way
        app.conf.task_always_eager = False
        board_delete(board=board)
    app.conf.task_always_eager = True
    assert redis_data.zscore(keys.home_timeline(reader.pk), board.id) == board.id
    assert tasks.outbox_resend() == 1
    assert redis_data.zscore(keys.home_timeline(reader.pk), board.id) is None
    assert not Outbox.objects.exists()


def test_a_walk_that_makes_progress_is_not_sent_again(run, redis_data, django_capture_on_commit_callbacks, settings):
    """A long walk on a busy machine outlasts the resend delay; each batch stamps its row, so beat
    sends again only a walk that stopped, never a second copy of one still going."""
    author = user_create(username="author", password="pw-long-enough")
    for i in range(3):
        run(follow_create, follower=user_create(username=f"reader{i}", password="pw-long-enough"), followee=author)
    settings.FANOUT_BATCH_SIZE = 1
    with django_capture_on_commit_callbacks(execute=False):  # the first batch is not sent: run below
        board = board_create(author=author, title="a long walk", kind="note", tags=[], doc=DOC)
    Outbox.objects.update(queued_at=Outbox.objects.get().queued_at.replace(year=2000))  # long overdue
    app.conf.task_always_eager = False  # (``run`` made tasks eager for this test)
    tasks.board_fanout(board.id)  # one batch written, the next queued on the real broker ...
    assert app.control.purge() >= 1  # ... and lost
    settings.OUTBOX_RESEND_AFTER_SECONDS = 60
    assert Outbox.objects.filter(board_id=board.id, action="fanout").exists()
    assert tasks.outbox_resend() == 0  # the batch stamped it: alive
    Outbox.objects.update(queued_at=Outbox.objects.get().queued_at.replace(year=2000))  # ... then stalled
    app.conf.task_always_eager = True
    assert tasks.outbox_resend() == 1
    assert all(
        redis_data.zscore(keys.home_timeline(u.pk), board.id) == board.id
        for u in Follow.objects.filter(followee=author).select_related("follower")
        for u in [u.follower]
    )
    assert not Outbox.objects.exists()


def test_a_batch_that_dies_after_queuing_the_next_keeps_the_row_until_beat_sends_the_walk_again(
    run, redis_data, django_capture_on_commit_callbacks, settings, monkeypatch
):
    """A worker killed mid-batch, after that batch queued the next: the rest of the walk runs and
    stamps the row, but the dead batch's followers never got the board; the row stays (its count
    never came down), goes due once nothing stamps it, and beat's new walk reaches them."""
    author = user_create(username="author", password="pw-long-enough")
    readers = [user_create(username=f"reader{i}", password="pw-long-enough") for i in range(3)]
    for reader in readers:
        run(follow_create, follower=reader, followee=author)
    settings.FANOUT_BATCH_SIZE = 1
    with django_capture_on_commit_callbacks(execute=False):
        board = board_create(author=author, title="a batch lost", kind="note", tags=[], doc=DOC)
    deliver, first = store.home_deliver, None

    def first_dies(followers, *args):  # the first batch's successors run (eagerly) inside it, then it dies
        if followers and set(followers) == {first}:
            raise RuntimeError("the worker died")
        return deliver(followers, *args)

    [first], _ = graph.followers_batch(author.pk, FollowerCursor(), 1)  # the first batch's follower
    monkeypatch.setattr(store, "home_deliver", first_dies)
    with pytest.raises(RuntimeError):
        tasks.board_fanout(board.id)
    monkeypatch.setattr(store, "home_deliver", deliver)
    reached = [r for r in readers if redis_data.zscore(keys.home_timeline(r.pk), board.id) == board.id]
    assert len(reached) == 2  # the walk went on past the dead batch to its end ...
    assert Outbox.objects.get(board_id=board.id, action="fanout").pending == 1  # ... and the row stays
    assert tasks.outbox_resend() == 0  # stamped by the batches that ran: not due yet
    settings.OUTBOX_RESEND_AFTER_SECONDS = 0
    assert tasks.outbox_resend() == 1
    assert all(redis_data.zscore(keys.home_timeline(r.pk), board.id) == board.id for r in readers)
    assert not Outbox.objects.exists()  # the new walk's last batch cleared it
