"""Targets judged over runs (issue 42, item 5). This host's speed swings by up to 0.79x within an
hour, so a figure that passes once on a fast host is not a result: every full run of `make bench`
and `make bench-live` keeps its figure for each target, with the host's own speed measured in
the same run (redis-benchmark's ZADD rate, one client, 16 commands a round trip), in
bench/results/targets-history.json. The table printed and written with the results shows, for
each target, this run's figure, the worst of the last three runs kept (this one included), each
run's ZADD rate, and counts the target reached only when all three reached it.

Smoke runs (tiny worlds) are printed the same way but never kept: they judge nothing.
"""

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

from bench.harness.report import ROOT

HISTORY = ROOT / "bench" / "results" / "targets-history.json"
RUNS_JUDGED = 3  # a target counts as reached when this many consecutive runs reached it
RUNS_KEPT = 12  # per suite: older runs leave the file


@dataclass
class Target:
    """One target of one run: ``value`` is the figure that judges it (``better`` says which way is
    good), ``shown`` how this run shows it (with its detail), ``goal`` the target in words."""

    key: str  # stable across runs: the history is matched on it
    what: str
    value: float | None  # None: not measured in this run
    shown: str
    goal: str
    reached: bool | None  # None: nothing to judge (a size too small, a smoke run)
    better: str = "lower"
    peers: str = "—"


def zadd_rate(requests: int, *, url: str | None = None) -> float | None:
    """redis-benchmark -c 1 -P 16 ZADD into random keys of the Redis at ``url`` (default
    REDIS_URL; db 13): the rate at which one connection writes sorted sets, this host's speed in
    the same run as the figures beside it. None when redis-benchmark is missing."""
    if not shutil.which("redis-benchmark"):
        print("warning: redis-benchmark not found (apt-get install redis-tools): the host's speed is not measured")
        return None
    address = urlsplit(url or os.environ["REDIS_URL"])
    out = subprocess.run(
        [
            "redis-benchmark",
            *("-h", address.hostname, "-p", str(address.port)),
            *("-c", "1", "-P", "16", "-r", "100000000", "-q", "-n", str(requests), "--dbnum", "13"),
            *("ZADD", "bench:zadd:__rand_int__", "__rand_int__", "__rand_int__"),
        ],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    found = re.findall(r"([\d.]+) requests per second", out)
    return float(found[-1]) if found else None


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def _history() -> dict:
    try:
        return json.loads(HISTORY.read_text())
    except (OSError, ValueError):
        return {}


def record(suite: str, targets: list[Target], *, zadd: float | None) -> list[dict]:
    """Keep this run's figures in the history of ``suite``; returns the last RUNS_JUDGED runs,
    oldest first, this one last."""
    history = _history()
    runs = history.setdefault(suite, [])
    runs.append(
        {
            "at": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
            "commit": _commit(),
            "zadd": zadd,
            "figures": {t.key: {"value": t.value, "shown": t.shown, "reached": t.reached} for t in targets},
        }
    )
    del runs[:-RUNS_KEPT]
    HISTORY.parent.mkdir(exist_ok=True)
    HISTORY.write_text(json.dumps(history, indent=1, ensure_ascii=False) + "\n")
    return runs[-RUNS_JUDGED:]


def _worst(target: Target, runs: list[dict]) -> tuple[str, str]:
    """The worst of ``runs``' figures for ``target`` and the verdict over them."""
    found = [(run, run["figures"][target.key]) for run in runs if target.key in run["figures"]]
    values = [(run, figure) for run, figure in found if figure["value"] is not None]
    if not values:
        return "—", "—"
    pick = max if target.better == "lower" else min
    run, figure = pick(values, key=lambda pair: pair[1]["value"])
    zadd = f"; ZADD {run['zadd']:,.0f}/s" if run.get("zadd") else ""
    worst = f"{figure['shown']} ({run['at']}{zadd})"
    verdicts = [figure["reached"] for _, figure in found]
    if len(found) < RUNS_JUDGED:
        verdict = f"not judged: {len(found)} of {RUNS_JUDGED} runs"
    elif all(v is True for v in verdicts):
        verdict = "**reached** in all three"
    elif any(v is None for v in verdicts):
        verdict = "—"
    else:
        verdict = f"not reached ({sum(1 for v in verdicts if v)} of {RUNS_JUDGED})"
    return worst, verdict


def judged(suite: str, targets: list[Target], *, zadd: float | None, smoke: bool) -> str:
    """The targets table of a run: this run's figure, the worst of the last three (a full run is
    kept first), and the verdict over three. A smoke run shows its own figures only."""
    runs = [] if smoke else record(suite, targets, zadd=zadd)
    speed = f"{zadd:,.0f} ZADD/s" if zadd else "not measured"
    lines = [
        f"This run's host: redis-benchmark {speed}. "
        + (
            "A smoke run: tiny worlds, judged on nothing and kept nowhere."
            if smoke
            else "Runs kept: "
            + "; ".join(
                f"{run['at']} on {run['commit']} ({run['zadd']:,.0f} ZADD/s)"
                if run.get("zadd")
                else f"{run['at']} on {run['commit']}"
                for run in runs
            )
            + f" (bench/results/{HISTORY.name})."
        ),
        "",
        "| figure | this run | this run's verdict | worst of the last three | over three runs | target | the peers, same run |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in targets:
        now = "reached" if t.reached else ("—" if t.reached is None else "not reached")
        worst, verdict = ("—", "—") if smoke else _worst(t, runs)
        lines.append(f"| {t.what} | {t.shown} | {now} | {worst} | {verdict} | {t.goal} | {t.peers} |")
    return "\n".join(lines)
