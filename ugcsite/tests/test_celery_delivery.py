"""Celery's delivery guarantees as configured (ugcsite.settings): a task whose worker process
dies mid-run is delivered again (acks_late + reject_on_worker_lost), and a message a worker took
but never acknowledged comes back within a bounded visibility timeout."""

import os
import signal
import subprocess
from pathlib import Path

from ugcsite.celery import app
from ugcsite.serving import worker_command
from ugcsite.testing import wait_for
from ugcsite.tests import celery_probe

ROOT = Path(__file__).resolve().parents[2]
QUEUE = "probe"  # not the session worker's queue: only the worker started here takes it


def test_the_delivery_settings():
    assert app.conf.task_acks_late is True
    assert app.conf.task_reject_on_worker_lost is True
    assert app.conf.broker_transport_options["visibility_timeout"] == 300


def test_a_task_whose_worker_process_dies_is_delivered_again(tmp_path):
    env = dict(os.environ, DATABASE_CONN_MAX_AGE="0")
    worker = subprocess.Popen(
        worker_command(
            f"probe-{os.getpid()}@%h", "--pool=prefork", "--concurrency=1", "-Q", QUEUE, "-I", celery_probe.__name__
        ),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        app.control.purge()
        celery_probe.die_once.apply_async(args=[str(tmp_path)], queue=QUEUE)
        first = wait_for(
            lambda: (tmp_path / "first-run.pid").exists() and (tmp_path / "first-run.pid").read_text(),
            timeout=60,
            what="the probe task to start",
        )
        os.kill(int(first), signal.SIGKILL)  # the pool's child process, mid-task (not the worker)
        wait_for(lambda: (tmp_path / "ran-again").exists(), timeout=60, what="the task to be delivered again")
        assert int((tmp_path / "ran-again").read_text()) != int(first)
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
