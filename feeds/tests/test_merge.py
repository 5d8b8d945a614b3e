"""The bulk reads of a deep page give what the lazy merge gives: merge.newest_of against
merge_desc, and archive.archived_newest against archived_ids_desc, on random streams and on
random chunk rows in PostgreSQL (overlapping, cut by ``below``, of any size)."""

from itertools import islice

import pytest
from django.db import transaction
from hypothesis import HealthCheck, example, given, settings as hypothesis_settings, strategies as st

from feeds.models import TimelineChunk
from feeds.rules import Timeline
from feeds.timelines import archive, merge

ids = st.lists(st.integers(1, 400), max_size=60).map(lambda found: sorted(set(found), reverse=True))


def deferred(found: list[int], below: int, opened: list[int]) -> merge.Deferred:
    """A Deferred over ``found`` (cut below ``below``) that records when it is read."""
    kept = [i for i in found if i < below]
    return merge.Deferred(
        below, lambda: opened.append(below) or iter(kept), lambda count: opened.append(below) or kept[:count]
    )


@given(
    lists=st.lists(ids, max_size=4),
    deferreds=st.lists(st.tuples(ids, st.integers(1, 401)), max_size=3),
    skip=st.integers(0, 80),
    size=st.integers(1, 40),
)
def test_newest_of_is_the_lazy_merge_read_at_once(lists, deferreds, skip, size):
    count = skip + size
    # merge_desc's streams hold at most what newest_of is given: the first `count` of each list
    expected = list(islice(merge.merge_desc(*lists, *(deferred(f, b, []) for f, b in deferreds)), skip, count))
    logs = [[] for _ in deferreds]  # one log each: two archives may share a bound
    got = merge.newest_of(
        [*lists, *(deferred(f, b, log) for (f, b), log in zip(deferreds, logs))], skip=skip, count=count
    )
    assert got == expected
    # an archive is read only when the ids in hand (the lists, and the archives read, newest bound
    # first) above its bound do not fill the page
    in_hand = [i for stream in lists for i in stream[:count]]
    for (found, below), log in zip(deferreds, logs):
        if log:
            in_hand += [i for i in found if i < below][:count]
    for (found, below), log in zip(deferreds, logs):
        if not log:
            assert len({i for i in in_hand if i >= below}) >= count or not [i for i in found if i < below]


def test_archives_are_opened_newest_first_and_only_while_the_page_needs_them():
    """The first archive read fills the page: the older one is never read (a query saved)."""
    opened = []
    head = [100, 99]
    newer, older = deferred(list(range(90, 60, -1)), 95, opened), deferred(list(range(50, 0, -1)), 60, opened)
    assert merge.newest_of([head, older, newer], skip=0, count=10) == [100, 99, *range(90, 82, -1)]
    assert opened == [95]


def test_an_archive_the_heads_fill_is_never_read():
    opened = []
    head = list(range(100, 0, -1))
    assert merge.newest_of([head, deferred([5, 4, 3], 1, opened)], skip=10, count=20) == head[10:20]
    assert opened == []


chunk_rows = st.lists(st.lists(st.integers(1, 2_000), min_size=1, max_size=30), max_size=12)


@pytest.mark.django_db
@hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=chunk_rows,
    below=st.one_of(st.none(), st.integers(1, 2_001)),
    count=st.integers(1, 200),
    chunk=st.integers(1, 40),
)
# Found in review: an id in two overlapping chunks counted twice stopped the read one row early.
@example(rows=[[28, 25, 24], [28, 8], [24], [17], [9]], below=None, count=5, chunk=40)
@example(rows=[[25, 12], [14, 13, 12], [13], [10], [3]], below=20, count=5, chunk=40)
def test_archived_newest_is_the_lazy_archive_read_at_once(rows, below, count, chunk, settings):
    settings.TIMELINE_CHUNK = chunk  # how many rows a query reads
    with transaction.atomic():
        for found in rows:  # chunks may overlap, as a back-fill archived later makes them
            found = sorted(set(found), reverse=True)
            TimelineChunk.objects.get_or_create(
                owner_id=7, timeline=Timeline.HOME, first_id=found[-1], last_id=found[0], defaults={"ids": found}
            )
        expected = list(islice(archive.archived_ids_desc(7, Timeline.HOME, below=below), count))
        assert archive.archived_newest(7, Timeline.HOME, below=below, count=count) == expected
        transaction.set_rollback(True)
