"""Fixtures of the browser tests: pytest-playwright drives the distribution's Chromium
(scripts/services.sh ensure_chromium installs it), never a browser Playwright downloads."""

import os

import pytest

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="session")
def browser_type_launch_args():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"Chromium is not at {CHROMIUM}: `make test` installs it (as root, with apt), or run "
                    "`apt-get install chromium`, or set CHROMIUM to its path.")
    return {
        "executable_path": CHROMIUM,
        "args": [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run",
        ],
    }


@pytest.fixture(scope="session")
def playwright(playwright):
    """pytest-playwright's driver, which runs an asyncio loop in the test thread from its start
    to the end of the session. Django refuses ORM calls while a loop runs in the thread (it
    guards async code); this project has none, so the guard is lifted while the driver lives."""
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    yield playwright
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous
