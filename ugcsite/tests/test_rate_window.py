"""The rate limits hold over any 60 seconds, not per clock minute: a burst of the limit and 5%
more, sent across a minute's end, is refused past the limit (counts in fixed minutes let all
of it through), and the window frees as its oldest attempts age. The clock of
ugcsite.platform.ratelimits is set by the test (the limits run on the real plain Redis); the API tests
go through the real views."""

import math

import pytest

from ugcsite.platform import ratelimits
from ugcsite.platform.errors import RateLimited
from ugcsite.testing import assert_problem

pytestmark = pytest.mark.django_db

MINUTE_END = 1_796_000_040.0  # a minute's end: 29,933,334 minutes from the epoch


class Clock:
    def __init__(self, now: float):
        self.now = now

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    clock = Clock(MINUTE_END)
    monkeypatch.setattr(ratelimits, "time", clock)
    return clock


def burst(clock: Clock, *, who: str, per_minute: int, count: int, at: float) -> list[int]:
    """``count`` attempts at ``at``: the Retry-After of each refusal."""
    clock.now = at
    waits = []
    for _ in range(count):
        try:
            ratelimits.attempt("burst", who, per_minute=per_minute, what="bursts")
        except RateLimited as error:
            waits.append(error.retry_after)
    return waits


def test_a_burst_across_a_minutes_end_is_refused_past_the_limit(clock):
    assert MINUTE_END % 60 == 0
    limit = 2000
    first = burst(clock, who="a", per_minute=limit, count=limit // 2, at=MINUTE_END - 0.4)
    then = burst(clock, who="a", per_minute=limit, count=limit // 2 + limit // 20, at=MINUTE_END + 0.3)
    assert first == [] and len(then) == limit // 20  # limit + 5% sent: exactly the 5% refused
    # the first half leaves the window 60 s after its second began: the wait says so
    assert then == [math.ceil(MINUTE_END - 1 + 61 - (MINUTE_END + 0.3))] * len(then)
    assert burst(clock, who="a", per_minute=limit, count=1, at=MINUTE_END + 59.5) == [60 - 59]  # still full
    assert burst(clock, who="a", per_minute=limit, count=limit // 2, at=MINUTE_END + 60.0) == []  # the half freed
    assert len(burst(clock, who="a", per_minute=limit, count=1, at=MINUTE_END + 60.5)) == 1
    assert burst(clock, who="b", per_minute=limit, count=1, at=MINUTE_END + 60.5) == []  # b counts apart


def test_the_limit_holds_over_every_60_seconds_of_a_steady_stream(clock):
    """Attempts every 0.25 s for three minutes against 40 a minute: whatever was let through,
    no 60-second span holds more than 40, and about 40 a minute get through."""
    limit, step = 40, 0.25
    passed = []
    for n in range(int(180 / step)):
        at = MINUTE_END - 90 + n * step
        if not burst(clock, who="steady", per_minute=limit, count=1, at=at):
            passed.append(at)
    assert all(sum(1 for t in passed if start <= t < start + 60) <= limit for start in passed)
    assert len(passed) >= 3 * limit - 3


def test_a_burst_of_writes_through_the_api_across_a_minutes_end_gets_429s(api, clock, settings):
    settings.RATE_LIMIT_WRITES_PER_MINUTE, settings.RATE_LIMIT_WRITES_PER_ADDRESS_PER_MINUTE = 20, 0
    ann = api.as_user("ann")
    api.as_user("bob")
    codes = []
    for n in range(21):
        clock.now = MINUTE_END - 1 + n * 0.1  # ten before the minute's end, eleven after
        codes.append(ann.put("/api/v1/users/bob/follow").status_code)
    assert codes == [204] * 20 + [429]
    response = ann.put("/api/v1/users/bob/follow")
    body = assert_problem(response, 429)
    assert "changes from your account" in body["detail"] and 0 < int(response["Retry-After"]) <= 61
