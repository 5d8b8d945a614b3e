"""Fixtures of the browser tests: pytest-playwright drives the distribution's Chromium
(scripts/services.sh ensure_chromium installs it), never a browser Playwright downloads; the
people at their browsers, and the password hashers a server process reads. Their helpers are in
support.py. And the fuzz run's summary (test_fuzz.py)."""

import os
import sys

import pytest

from ugcsite.tests.support import Person

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="session")
def browser_type_launch_args():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"Chromium is not at {CHROMIUM}: `make test` installs it (as root, with apt), or run "
            "`apt-get install chromium`, or set CHROMIUM to its path."
        )
    return {
        "executable_path": CHROMIUM,
        "args": [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
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


def _people(browser, url: str, request):
    made = []

    def person(name: str, **kwargs) -> Person:
        made.append(Person(browser, url, name, request.node.originalname, **kwargs))
        return made[-1]

    yield person
    for each in made:
        each.context.close()


@pytest.fixture
def people(browser, live_server, request):
    """``people(name, **options)``: a Person at their own browser on pytest-django's live server
    (options: Person's); every one is closed after the test."""
    yield from _people(browser, live_server.url, request)


@pytest.fixture
def live_people(browser, asgi_server, request):
    """``people``, on the site as `make run` serves it (the live parts need its WebSocket)."""
    yield from _people(browser, asgi_server.url, request)


@pytest.fixture
def passwords_the_server_reads(_fast_password_hashing, settings):
    """Passwords hashed as the ASGI server process (conftest.asgi_server) checks them when the
    people log in there: with the site's own hasher, not the fast one of the tests."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.Argon2PasswordHasher"]


def pytest_terminal_summary(terminalreporter, config):
    """After a fuzz run (test_fuzz.py): how many cases went to each operation and what they were
    answered (the table with -v, as `make fuzz` runs; one line otherwise)."""
    fuzz = sys.modules.get("ugcsite.tests.test_fuzz")  # imported only when collected
    tally = config.stash.get(fuzz.FUZZ_TALLY, None) if fuzz else None
    if not tally:
        return
    total = sum(sum(statuses.values()) for statuses in tally.values())
    errors = sum(count for statuses in tally.values() for status, count in statuses.items() if status >= 500)
    terminalreporter.section("fuzz")
    if config.option.verbose > 0:
        width = max(map(len, tally))
        for label, statuses in sorted(tally.items(), key=lambda item: item[0].split(" ", 1)[::-1]):
            answers = ", ".join(f"{status}: {count:,}" for status, count in sorted(statuses.items()))
            terminalreporter.write_line(f"{label:<{width}}  {sum(statuses.values()):>7,} cases  ({answers})")
    terminalreporter.write_line(
        f"{total:,} cases over {len(tally)} operations; {errors} answered 5xx (failures, if any, are listed above)"
    )


def pytest_collection_modifyitems(items):
    """schemathesis (4.32) makes one test item per API operation, named by the operation, but
    pytest 9.2 builds an item's node id from its original name and parametrize id only: every
    operation's item had the same id, and -v could not say which one passed or failed. Each gets
    its operation back as the id's parameter: test_the_api_survives_fuzzing[GET /api/v1/feed]."""
    for item in items:
        label = getattr(item, "operation_label", None)
        if label and item.nodeid.endswith(item.originalname):
            item._id = item._id.with_params(label)
