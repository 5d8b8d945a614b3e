"""The page's relative times (static/js/times.js, in a real Chromium) say what the server's
``|ago`` filter (feeds.templatetags.times) says, for the same two instants: Django's calendar
months and years, month ends, 29 February, and every unit's boundary. The clock is an argument
on both sides, so the comparison is deterministic. The page's port of timesince is compared
whole too (every unit, as depth 6 writes them), which the filter's largest unit alone would not
show: the day of the month clamped to its end, as Django does."""

import random
from datetime import UTC, datetime, timedelta

import pytest
from django.utils.timesince import timesince

from feeds.templatetags.times import ago
from ugcsite.tests.support import Person

pytestmark = pytest.mark.browser

SECOND, MINUTE, HOUR, DAY, WEEK = (timedelta(seconds=n) for n in (1, 60, 3600, 86400, 7 * 86400))
MS = timedelta(milliseconds=1)


def at(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


# Instants a month or a year is counted from: month ends, 29 February, a year's last second.
ANCHORS = [
    at(2023, 1, 31),
    at(2023, 2, 1),
    at(2023, 2, 28, 23, 59, 59),
    at(2024, 1, 29, 10),
    at(2024, 1, 31, 12),
    at(2024, 2, 29),
    at(2024, 2, 29, 18, 30),
    at(2024, 3, 31, 6),
    at(2024, 4, 30, 23),
    at(2024, 5, 31),
    at(2024, 8, 31, 0, 0, 1),
    at(2024, 12, 31, 23, 59, 59),
    at(2025, 1, 1),
    at(2025, 6, 15, 12, 0, 0, 500_000),
]
# Ages around each unit's boundary (timesince ignores the seconds, "just now" is under a minute).
AGES = [
    timedelta(0),
    MS,
    59 * SECOND,
    MINUTE - MS,
    MINUTE,
    MINUTE + SECOND,
    59 * MINUTE + 59 * SECOND,
    HOUR,
    HOUR + MINUTE,
    DAY - SECOND,
    DAY,
    6 * DAY + 23 * HOUR,
    WEEK,
    2 * WEEK - MS,
    27 * DAY,
    28 * DAY,
    28 * DAY + HOUR,
    29 * DAY,
    30 * DAY,
    31 * DAY,
    59 * DAY,
    60 * DAY,
    61 * DAY,
    364 * DAY,
    365 * DAY,
    366 * DAY,
    730 * DAY,
    731 * DAY,
]
# Pairs named in issue 25 and their neighbours: one calendar month is 28 to 31 days.
NAMED = [
    (at(2023, 2, 1), at(2023, 3, 1)),
    (at(2024, 2, 1), at(2024, 3, 1)),
    (at(2023, 1, 31), at(2023, 2, 28)),
    (at(2024, 1, 31), at(2024, 2, 28)),
    (at(2024, 1, 31), at(2024, 2, 29)),
    (at(2024, 1, 31), at(2024, 3, 1)),
    (at(2024, 1, 30), at(2024, 3, 1)),
    (at(2024, 2, 29), at(2025, 2, 28)),
    (at(2024, 2, 29), at(2025, 3, 1)),
    (at(2024, 2, 29), at(2028, 2, 29)),
    (at(2024, 2, 29), at(2024, 3, 29)),
    (at(2024, 3, 31), at(2024, 4, 30)),
    (at(2024, 3, 31), at(2024, 5, 1)),
    (at(2024, 12, 31), at(2025, 1, 31)),
    (at(2024, 12, 31), at(2025, 12, 31)),
    (at(2024, 12, 31, 12), at(2025, 12, 31, 11, 59, 59)),
    (at(2023, 12, 1), at(2024, 12, 1)),
]


def calendar_steps(then: datetime) -> list[datetime]:
    """``then`` moved by whole calendar months (day clamped to the month's end), and a second either side."""
    found = []
    for months in (1, 2, 11, 12, 13, 24, 25, 48):
        year, month = divmod(then.month - 1 + months, 12)
        year += then.year
        day = then.day
        while True:
            try:
                moved = then.replace(year=year, month=month + 1, day=day)
                break
            except ValueError:
                day -= 1
        found += [moved - SECOND, moved, moved + SECOND]
    return found


def pairs() -> list[tuple[datetime, datetime]]:
    found = list(NAMED)
    for then in ANCHORS:
        found += [(then, then + age) for age in AGES]
        found += [(then, now) for now in calendar_steps(then)]
        found.append((then, then - HOUR))  # a time in the future
    seeded = random.Random(25)
    for _ in range(200):
        then = at(2020, 1, 1) + timedelta(milliseconds=seeded.randrange(10 * 365 * 86400 * 1000))
        found.append(
            (then, then + timedelta(seconds=10 ** seeded.uniform(0, 8.5), milliseconds=seeded.randrange(1000)))
        )
    # The page's clock counts milliseconds: no instant here is finer, as none of Date.now() is.
    return [(then, now - (now - then) % MS) for then, now in found]


# Every unit timesince counts, written as it writes them (from the first one not zero to the next
# zero), with the words of the page's times-config.
ALL_UNITS_JS = """pairs => {
  const units = JSON.parse(document.getElementById("times-config").textContent).units;
  return pairs.map(([then, now]) => {
    const parts = window.ugcsiteTimes.timesince(new Date(then), new Date(now)), words = [];
    for (let i = parts.findIndex((count) => count !== 0); i >= 0 && i < parts.length && parts[i] !== 0; i++) {
      words.push(units[i][parts[i] === 1 ? 0 : 1].replace("{n}", parts[i]));
    }
    return words.join(", ") || units[units.length - 1][1].replace("{n}", 0);
  });
}"""


@pytest.fixture
def site_page(browser, live_server, request):
    """A page of the site, with times.js and its config as every page has them."""
    reader = Person(browser, live_server.url, "reader", request.node.originalname)
    try:
        reader.page.goto("/login")
        reader.page.wait_for_function("() => window.ugcsiteTimes")
        yield reader.page
        reader.check_clean()
    finally:
        reader.context.close()


def differences(compared, server, shown) -> str:
    mismatches = [
        f"{then.isoformat()} -> {now.isoformat()}: server {said!r}, page {seen!r}"
        for (then, now), said, seen in zip(compared, server, shown, strict=True)
        if said != seen
    ]
    return f"{len(mismatches)} of {len(compared)} pairs differ:\n" + "\n".join(mismatches) if mismatches else ""


def test_the_page_says_what_the_server_says(site_page):
    compared = pairs()
    server = [ago(then, now) for then, now in compared]
    shown = site_page.evaluate(
        "pairs => pairs.map(([then, now]) => window.ugcsiteTimes.ago(then, Date.parse(now)))",
        [[then.isoformat(), now.isoformat()] for then, now in compared],
    )
    mismatches = differences(compared, server, shown)
    assert not mismatches, mismatches


def test_the_pages_timesince_counts_every_unit_as_djangos(site_page):
    compared = [(then, now) for then, now in pairs() if now > then]
    server = [timesince(then, now, depth=6) for then, now in compared]
    shown = site_page.evaluate(ALL_UNITS_JS, [[then.isoformat(), now.isoformat()] for then, now in compared])
    mismatches = differences(compared, server, shown)
    assert not mismatches, mismatches
