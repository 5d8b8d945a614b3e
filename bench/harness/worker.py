"""A real Celery worker beside a benchmark (``celery -A ugcsite worker``, what scripts/run.sh
starts), in its own process, stopped when the benchmark is done."""

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from ugcsite.serving import worker_command


@contextmanager
def celery_worker(name: str, *, concurrency: int, ready=None, options: tuple[str, ...] = ()) -> Iterator:
    """The worker ``<name>@<host>`` with ``concurrency`` processes; with ``ready`` (the Celery
    app), only once it answers a ping. ``options``: more of the worker's command line (-I ...)."""
    worker = subprocess.Popen(
        worker_command(f"{name}@%h", *options, f"--concurrency={concurrency}"),
        env=dict(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while ready is not None and not ready.control.ping(timeout=0.5):
            if worker.poll() is not None:
                sys.exit("the Celery worker did not start: run it by hand (celery -A ugcsite worker) to see why")
        yield worker
    finally:
        worker.terminate()
        worker.wait(timeout=30)
