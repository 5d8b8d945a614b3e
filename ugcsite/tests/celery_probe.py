"""A task for test_celery_delivery only, loaded into a worker started with ``-I``: its first run
records its process id and waits to be killed; a later run records that it happened. It takes
its acks_late from the project's tasks and everything else from the app's configuration."""

import os
import time
from pathlib import Path

from celery import shared_task


@shared_task(acks_late=True)
def die_once(folder: str) -> None:
    first = Path(folder) / "first-run.pid"
    if not first.exists():
        first.write_text(str(os.getpid()))
        time.sleep(120)  # the test kills this process meanwhile
    (Path(folder) / "ran-again").write_text(str(os.getpid()))
