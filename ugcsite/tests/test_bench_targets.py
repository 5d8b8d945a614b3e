"""bench.harness.targets: a target counts as reached only when the last three full runs all reached it,
the worst of the three is shown with its run's host speed, and smoke runs are kept nowhere."""

import json

import pytest

from bench.harness import targets


@pytest.fixture
def history(tmp_path, monkeypatch):
    path = tmp_path / "targets-history.json"
    monkeypatch.setattr(targets, "HISTORY", path)
    return path


def run(p99: float, *, zadd: float, smoke: bool = False) -> str:
    row = targets.Target("p99", "a page, p99", p99, f"{p99:.1f} ms", "≤ 10 ms", p99 <= 10)
    rate = targets.Target("rate", "a rate", 1000 / p99, f"{1000 / p99:.0f}/s", "≥ 100/s", 1000 / p99 >= 100, "higher")
    return targets.judged("bench", [row, rate], zadd=zadd, smoke=smoke)


def line(table: str, what: str) -> list[str]:
    [found] = [row for row in table.splitlines() if row.startswith(f"| {what} |")]
    return [cell.strip() for cell in found.strip("|").split("|")]


def test_a_target_is_reached_only_when_three_runs_in_a_row_reach_it(history):
    first = run(9.0, zadd=120_000)
    assert line(first, "a page, p99")[4] == "not judged: 1 of 3 runs"
    run(11.0, zadd=80_000)  # a slow host: missed
    third = run(8.0, zadd=110_000)
    assert line(third, "a page, p99")[1:5] == [
        "8.0 ms",
        "reached",
        f"11.0 ms ({json.loads(history.read_text())['bench'][1]['at']}; ZADD 80,000/s)",
        "not reached (2 of 3)",
    ]
    assert line(third, "a rate")[4] == "not reached (2 of 3)"
    assert line(third, "a rate")[3].startswith("91/s")  # the worst of a rate is its lowest
    assert line(run(9.5, zadd=100_000), "a page, p99")[4] == "not reached (2 of 3)"  # still among the three
    fifth = run(9.0, zadd=100_000)  # the slow run has left the three
    assert line(fifth, "a page, p99")[3].startswith("9.5 ms") and line(fifth, "a page, p99")[4] == (
        "**reached** in all three"
    )
    assert len(json.loads(history.read_text())["bench"]) == 5


def test_a_smoke_run_is_judged_on_nothing_and_kept_nowhere(history):
    run(9.0, zadd=120_000)
    table = run(50.0, zadd=1, smoke=True)
    assert line(table, "a page, p99")[1:5] == ["50.0 ms", "not reached", "—", "—"]
    assert len(json.loads(history.read_text())["bench"]) == 1
