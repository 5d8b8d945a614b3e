"""The peers, measured in the same run as the site: Stream-Framework 1.4.0 (Redis) and
django-activity-stream 2.0.0 (PostgreSQL), by the shared harness in ../shared/peers/
(run_peers.sh: its own virtual environments from PyPI, pinned in its requirements-*.txt, its own
redis-server and PostgreSQL on free ports; see its README).

``run(mode)`` runs the harness (small: about a minute; full: about five) and returns its figures;
``read(folder)`` reads a finished run's JSON instead (``PEERS_RESULTS=<folder>``). Where the
harness is missing (a clone without ../shared) the peers' columns say so and nothing fails.
"""

import hashlib
import json
import os
import subprocess
from pathlib import Path

from bench.harness.report import ROOT as REPO


def harness() -> Path | None:
    """run_peers.sh: ``PEERS_HARNESS``, else ../shared/peers/ beside the checkout."""
    candidates = [Path(os.environ["PEERS_HARNESS"])] if os.environ.get("PEERS_HARNESS") else []
    candidates += [
        REPO.parent / "shared" / "peers" / "run_peers.sh",
        REPO.parent.parent / "shared" / "peers" / "run_peers.sh",
    ]
    return next((path for path in candidates if path.is_file()), None)


def _work_dir() -> Path:
    """Where the harness keeps its environments and results: ``PEERS_DIR``, else a folder of
    this checkout's own in /tmp (two checkouts running at once must not share its pid files)."""
    if os.environ.get("PEERS_DIR"):
        return Path(os.environ["PEERS_DIR"])
    return Path("/tmp") / f"ugcsite-peers-{hashlib.sha1(str(REPO).encode()).hexdigest()[:8]}"


def run(mode: str) -> dict | None:
    """Run the harness (``small`` or ``full``), printing its progress; its figures, or None
    (with the reason printed) when it is missing or failed."""
    if os.environ.get("PEERS_RESULTS"):
        return read(Path(os.environ["PEERS_RESULTS"]))
    script = harness()
    if script is None:
        print("peers: ../shared/peers/run_peers.sh not found (set PEERS_HARNESS); their columns stay empty")
        return None
    work = _work_dir()
    print(f"peers: {script} {mode} (work folder {work}; its own servers on free ports)", flush=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "REDIS_", "DATABASE_"))}
    env["PEERS_DIR"] = str(work)
    before = set((work / "results").glob(f"{mode}-*"))
    finished = subprocess.run(["bash", str(script), mode], env=env)
    runs = sorted(set((work / "results").glob(f"{mode}-*")) - before)
    if finished.returncode != 0 or not runs:
        print(f"peers: the harness failed (exit {finished.returncode}); see its log above. Their columns stay empty")
        return None
    return read(runs[-1])


def read(folder: Path) -> dict | None:
    """The figures of one harness run (its sf.json and das.json)."""
    try:
        sf = json.loads((folder / "sf.json").read_text())
        das = json.loads((folder / "das.json").read_text())
    except (OSError, ValueError) as error:
        print(f"peers: cannot read {folder}: {error}")
        return None
    fanout = max(sf["fanout"], key=lambda entry: entry["median_deliveries_per_s"])
    limit = sf["redis_benchmark"]["median_rps"]
    largest = das["sizes"][-1]
    return {
        "folder": str(folder),
        "sf_read_p50": sf["read"]["p50_ms"],
        "sf_read_p99": sf["read"]["p99_ms"],
        "sf_fanout_rate": fanout["median_deliveries_per_s"],
        "sf_fanout_chunk": fanout["chunk_size"],
        "sf_zadd_limit": limit,
        "sf_fanout_ratio": fanout["median_deliveries_per_s"] / limit,
        "das_actions": largest["actions"],
        "das_page": {
            name: (reader["followees"], reader["actstream_page"]["p50_ms"], reader["actstream_page"]["p99_ms"])
            for name, reader in largest["readers"].items()
        },
        "das_growth": {
            name: (
                das["sizes"][0]["actions"],
                largest["actions"],
                reader["actstream_page"]["p99_ms"] / das["sizes"][0]["readers"][name]["actstream_page"]["p99_ms"],
            )
            for name, reader in largest["readers"].items()
        },
        "das_deep": {
            name: (reader["followees"], reader["actstream_deep"]["p50_ms"], reader["actstream_deep"]["p99_ms"])
            for name, reader in largest["readers"].items()
        },
    }
