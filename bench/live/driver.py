"""The live boards' load generator and the y-websocket peer (`bench/live/livegen/`, Node), from Python.

    python -m bench.live.driver install          # npm ci where a lock changed (make bench-deps runs it)
    python -m bench.live.driver peer PORT        # the peer on 127.0.0.1:PORT until Ctrl-C
    python -m bench.live.driver run CONFIG.json  # one run of the load generator, its result printed

`bench/live/livegen/loadgen.mjs` drives our server (mode "ugc") and `@y/websocket-server` (mode
"yjs") alike, every client in one Node process; its header and bench/README.md ("The live
load generator and the y-websocket peer") say what it measures. Two npm projects, each with its
own lock: `bench/live/livegen/` (the generator: ws, yjs 13, y-websocket's client) and
`bench/live/livegen/peer/` (the server as published, on the yjs 14 it asks for; one tree would load
two copies of yjs into it).

The children here get the soft open-files limit raised to the hard one: thousands of connections
need a descriptor each, in the generator and in the server (start our server likewise).
"""

import hashlib
import json
import os
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness.report import ROOT
from feeds import rules

LIVEGEN = ROOT / "bench" / "live" / "livegen"
PEER = LIVEGEN / "peer"
PROJECTS = (LIVEGEN, PEER)
LOADGEN = LIVEGEN / "loadgen.mjs"
PEER_BIN = PEER / "node_modules" / ".bin" / "y-websocket-server"
NODE_MAJOR = 18  # the oldest Node the projects' "engines" allow
STROKE_POINTS = 10  # points in each stroke the generator adds (a board's MAX_POINTS budget counts them)
NODE_MISSING = (
    "The live load generator and its peer run on Node.js {major}+ with npm. Install them "
    "(Debian/Ubuntu: sudo apt-get install nodejs npm; macOS: brew install node), then run "
    "`make bench-deps`."
)


def _stamp(project: Path) -> Path:
    """The file saying `npm ci` installed this project's current lock (npm ci empties node_modules
    first, so an install from another lock leaves no stamp behind)."""
    digest = hashlib.sha256((project / "package-lock.json").read_bytes()).hexdigest()[:16]
    return project / "node_modules" / f".installed-{digest}"


def _need_node() -> str:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise SystemExit("error: " + NODE_MISSING.format(major=NODE_MAJOR) + f" (node: {node}, npm: {npm})")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < NODE_MAJOR:
        raise SystemExit(f"error: found Node.js {version} at {node}. " + NODE_MISSING.format(major=NODE_MAJOR))
    return node


def ensure_installed() -> str:
    """Install each npm project whose lock changed since its last install (`npm ci`, pinned and
    integrity-checked); answer the path of node. Cheap when nothing changed: two small hashes."""
    node = _need_node()
    for project in PROJECTS:
        stamp = _stamp(project)
        if stamp.exists():
            continue
        print(f"==> npm ci in {project.relative_to(ROOT)} (its lock changed, or it was never installed)", flush=True)
        done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=project)
        if done.returncode != 0:
            raise SystemExit(f"error: npm ci failed in {project}; its output is above.")
        stamp.touch()
    return node


def _raise_nofile() -> None:
    """In a child before exec: the soft open-files limit up to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _with_limits(config: dict) -> dict:
    """The board limits the generator keeps within, from feeds.rules (their one home)."""
    return {"max_elements": rules.MAX_ELEMENTS, "max_points": rules.MAX_POINTS, "points": STROKE_POINTS, **config}


def _write_config(config: dict) -> str:
    handle, path = tempfile.mkstemp(prefix="livegen-", suffix=".json")
    with os.fdopen(handle, "w") as out:
        json.dump(_with_limits(config), out)
    return path


def run_loadgen(config: dict, timeout: float | None = None) -> dict:
    """One run of the load generator (its progress goes to our stderr); its result. `timeout`
    (seconds, default: the run's own length plus two minutes for connecting and closing) kills it."""
    node = ensure_installed()
    if timeout is None:
        timeout = config.get("seconds", 15) + config.get("settle", 3) + 120
    path = _write_config(config)
    try:
        done = subprocess.run(
            [node, str(LOADGEN), path],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=timeout,
            preexec_fn=_raise_nofile,
        )
    finally:
        os.unlink(path)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"the load generator exited {done.returncode} without a result; its stderr is above")
    return json.loads(lines[-1])


def _read_line(process: subprocess.Popen, timeout: float, want: str) -> str:
    """The first line of process's stdout holding `want`, within `timeout` seconds (or stop it)."""
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if not selector.select(left):
                break
            line = process.stdout.readline()
            if not line:
                break
            if want in line:
                return line
    stop(process)
    raise RuntimeError(f"{process.args[1]} did not print {want!r} within {timeout:g} s; its stderr is above")


def hold_idle(config: dict, timeout: float = 600) -> tuple[subprocess.Popen, dict]:
    """Connect every client of `config` (made idle) and keep them connected: the generator's
    process, and ``{"connected", "connect_seconds"}`` (how many connected, and how long that
    took, `connect_concurrency` at a time). `stop(process)` lets them go and answers the last counts."""
    node = ensure_installed()
    path = _write_config({**config, "idle": True})
    process = subprocess.Popen(
        [node, str(LOADGEN), path],
        stdin=subprocess.PIPE,  # its end (our exit, or stop) ends the holding too
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=_raise_nofile,
    )
    try:
        line = _read_line(process, timeout, '"connected"')
    finally:
        os.unlink(path)
    return process, json.loads(line)


def start_peer(port: int, host: str = "127.0.0.1", timeout: float = 30) -> subprocess.Popen:
    """@y/websocket-server on host:port, as published (0.1.5 keeps no documents on disk: its
    persistence is commented out), once it accepts connections; what it prints goes to our
    stderr. Its pid is the server's own (for its RSS). Rooms live until it stops, even empty:
    give each run rooms of its own, or a peer of its own."""
    node = ensure_installed()
    process = subprocess.Popen(
        [node, str(PEER_BIN)],
        env={**os.environ, "HOST": host, "PORT": str(port)},
        stdin=subprocess.DEVNULL,
        stdout=sys.stderr,
        preexec_fn=_raise_nofile,
    )
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((host, port), timeout=1).close()
            return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                stop(process)
                raise RuntimeError(
                    f"the peer did not listen on {host}:{port} within {timeout:g} s; its output is above"
                ) from None
            time.sleep(0.1)


def stop(process: subprocess.Popen, timeout: float = 15) -> dict | None:
    """SIGTERM, then SIGKILL after `timeout` seconds; for a load generator, its last result line."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        out, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
    lines = (out or "").strip().splitlines()
    return json.loads(lines[-1]) if lines and lines[-1].startswith("{") else None


def main() -> None:
    command = sys.argv[1:2]
    if command == ["install"]:
        ensure_installed()
    elif command == ["peer"] and len(sys.argv) == 3:
        process = start_peer(int(sys.argv[2]))
        print(f"the peer listens on ws://127.0.0.1:{sys.argv[2]} (pid {process.pid}); Ctrl-C stops it", flush=True)
        try:
            process.wait()
        except KeyboardInterrupt:
            stop(process)
    elif command == ["run"] and len(sys.argv) == 3:
        print(json.dumps(run_loadgen(json.loads(Path(sys.argv[2]).read_text())), indent=1))
    else:
        raise SystemExit(__doc__.split("\n\n")[1])


if __name__ == "__main__":
    main()
