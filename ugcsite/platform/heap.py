"""The servers' heap and Python's cycle collector.

A server process holds a few hundred thousand objects from its start (Django, the apps, their
modules, the URL map) that live as long as it does. CPython's collector walks all of them in
every full collection: in the live server (`make bench-live`, issue 42) a full collection took
about 120 ms, during which no socket was served, and one came every few seconds under load: the
tail of the live latency. ``freeze_startup`` moves them out of the collector's sight
(``gc.freeze``, what the Python documentation advises for servers), so a full collection walks
only what requests made since.

It also collects the young generation after YOUNG allocations rather than CPython's 700: a
request or a socket's opening allocates thousands of objects that reference counting frees, and
each young collection walks what is alive then (5,000 sockets opening at once ran dozens of
collections a second in the live server, and promoted every socket's objects through them).
"""

import gc

from django.urls import get_resolver

YOUNG = 20_000  # allocations between young collections (CPython: 700); the older two keep theirs


def freeze_startup(*, views: bool = True) -> int:
    """Load what the first request would (``views``: the URL map imports every view module),
    collect, then freeze every object alive: the number frozen. Called once a process, at its
    start (the ASGI and WSGI entry points, and each Celery worker process). O(objects alive),
    once."""
    if views:
        get_resolver().url_patterns  # noqa: B018 - imports the views now, not on the first request
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG, middle, old)
    return gc.get_freeze_count()
