"""Each server process leaves its startup heap out of the cycle collector's walks
(ugcsite.platform.heap): checked in fresh interpreters, as gunicorn and uvicorn import them."""

import os
import subprocess
import sys

import pytest

from ugcsite.platform.heap import YOUNG

PROBE = (
    "import gc, time, {module}; "
    "t = time.perf_counter(); gc.collect(); "
    "print(gc.get_freeze_count(), gc.get_threshold()[0], time.perf_counter() - t)"
)


@pytest.mark.parametrize("module", ["ugcsite.wsgi", "ugcsite.asgi"])
def test_a_server_process_freezes_what_it_loaded_at_start(module):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ugcsite.settings"}
    answer = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)], env=env, capture_output=True, text=True, check=True
    )
    frozen, young, _seconds = answer.stdout.split()
    # Django, the apps and every view module: well over 50,000 objects the collector no longer walks.
    assert int(frozen) > 50_000
    assert int(young) == YOUNG
