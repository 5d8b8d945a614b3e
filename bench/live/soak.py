"""The soak's WebSocket clients (`make soak` runs this beside locust, as a process of its own):
people drawing together on shared boards, and people listening on /ws/me, for the whole soak.

    python -m bench.live.soak CONFIG RESULTS PROGRESS

CONFIG (JSON, written by bench/serving/soak.py) names the site, the shared boards with their members
(the author and the editors, each with a bearer token) and the listeners; the first member of
each board and every other listener sign in through the login page instead and open their socket
with the session cookie and the site's Origin, as a browser does (API.md, "Shared boards, live").

1. Every socket opens (a board's members all before anyone draws, so each must see every op).
2. For ``seconds``, each member sends an op every ``op_every`` seconds (uniform between the two
   figures): a 5-point stroke added, one of its own replaced (update) or removed, keeping at most
   OWN_MAX of its own on the board; and a cursor move now and then.
3. Then it waits (up to SETTLE_SECONDS) until every op sent has come back to its sender and every
   member of a board has reached the same seq, closes the boards' sockets (the last editor
   leaving enqueues the compaction into the REST doc) and writes the boards' results beside
   RESULTS (live-boards.json for live.json): bench/serving/soak.py compares each board's doc with them.
4. The listeners stay until SIGTERM (bench/serving/soak.py sends it after the drain, so every fan-out of
   the soak has had its chance to notify them), then RESULTS is written.

What counts: an op is acknowledged when it comes back to its sender (the server's broadcast, with
its seq); each acknowledged op must reach every other member of its board, with the same seq and
client_op_id for all, and seqs must arrive one by one with no gap (a "hello" again mid-run counts
as a gap healed by a whole doc). Anything else is an error: a socket refused or closed by the
server, an "error" message, an op never acknowledged. PROGRESS (JSON, rewritten every few seconds)
carries the running counts and the phase: connecting, drawing, settled.

Imports nothing of the site: it is a client, like locust.
"""

import asyncio
import http.cookiejar
import json
import random
import re
import signal
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

OWN_MAX = 20  # elements of its own a member keeps on the board: the doc stays small however long the run
SETTLE_SECONDS = 20.0  # after the drawing, how long the last acknowledgements and deliveries may take
PROGRESS_EVERY = 2.0
CANVAS = 1000  # the shared boards' width and height (bench/serving/soak.py makes them so)
CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def session_login(url: str, name: str, password: str) -> str:
    """Sign in through the login page as a browser does (its form, the CSRF token and cookie, the
    site's Origin); returns the Cookie header for the socket. Raises if the site does not answer
    with the redirect that means signed in."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)
    page = opener.open(f"{url}/login", timeout=30).read().decode()
    token = CSRF_FIELD.search(page)
    if token is None:
        raise RuntimeError("the login page holds no csrfmiddlewaretoken field")
    form = urllib.parse.urlencode({"username": name, "password": password, "csrfmiddlewaretoken": token.group(1)})
    request = urllib.request.Request(
        f"{url}/login",
        data=form.encode(),
        method="POST",
        headers={"Origin": url, "Referer": f"{url}/login", "Content-Type": "application/x-www-form-urlencoded"},
    )
    try:
        answer = opener.open(request, timeout=30)
        status = answer.status
    except urllib.error.HTTPError as error:
        status = error.code
    cookies = {cookie.name: cookie.value for cookie in jar}
    if status != 302 or "sessionid" not in cookies:
        raise RuntimeError(f"logging in as {name} through /login answered {status}, not 302 with a session")
    return "; ".join(f"{k}={v}" for k, v in cookies.items())


class Member:
    """One socket on a shared board."""

    def __init__(self, board: "Board", person: dict, index: int, by_session: bool):
        self.board, self.name, self.token, self.index = board, person["name"], person["token"], index
        self.by_session = by_session
        self.rng = random.Random(f"{board.id}-{index}")
        self.ws = None
        self.seq = 0  # the last seq this socket has seen
        self.received: dict[int, str] = {}  # seq -> client_op_id
        self.received_at: dict[int, float] = {}
        self.ops: dict[int, dict] = {}  # seq -> op, to replay the doc
        self.hello_doc: dict | None = None
        self.sent: dict[str, float] = {}  # client_op_id -> when sent
        self.acked: dict[str, int] = {}  # client_op_id -> seq
        self.refused: dict[str, str] = {}  # client_op_id -> the server's sentence
        self.own: list[str] = []
        self.gaps: list[str] = []
        self.rehellos = 0
        self.errors: list[str] = []
        self.closing = False
        self.next_id = 0

    async def open(self, site: dict, cookie: str | None) -> None:
        headers = (
            {"Cookie": cookie, "Origin": site["url"]} if self.by_session else {"Authorization": f"Bearer {self.token}"}
        )
        self.ws = await connect(
            f"{site['ws']}/ws/boards/{self.board.id}",
            additional_headers=headers,
            open_timeout=60,
            max_size=8 * 1024 * 1024,
        )
        hello = json.loads(await self.ws.recv())
        if hello.get("type") != "hello" or "doc" not in hello:
            raise RuntimeError(f"the first message was {str(hello)[:120]}, not a hello with the doc")
        if not hello["you"]["can_edit"]:
            raise RuntimeError(f"{self.name} may not draw on board {self.board.id}")
        self.seq, self.hello_doc = hello["seq"], hello["doc"]
        self.hello_seq = hello["seq"]

    async def read(self) -> None:
        try:
            async for raw in self.ws:
                message = json.loads(raw)
                kind = message.get("type")
                if kind == "op":
                    seq = message["seq"]
                    if seq != self.seq + 1:
                        self.gaps.append(f"seq {seq} after {self.seq}")
                    self.seq = max(self.seq, seq)
                    self.received[seq] = message["client_op_id"]
                    self.received_at[seq] = time.monotonic()
                    self.ops[seq] = message["op"]
                    if message["client_op_id"] in self.sent:
                        self.acked[message["client_op_id"]] = seq
                elif kind == "error":
                    cid = message.get("client_op_id")
                    if cid in self.sent:
                        self.refused[cid] = message["detail"]
                    self.errors.append(f"error message: {message['detail'][:160]}")
                elif kind == "hello":  # the server gave up on ops one by one and sent the doc again
                    self.rehellos += 1
                    self.gaps.append(f"hello again at seq {message.get('seq')} (was at {self.seq})")
                    self.seq = max(self.seq, message.get("seq", self.seq))
        except ConnectionClosed as closed:
            if not self.closing:
                self.errors.append(f"closed by the server: {closed.rcvd.code if closed.rcvd else 'no close frame'}")
        except Exception as error:
            self.errors.append(f"reading failed: {type(error).__name__}: {error}")

    def _element(self, element_id: str) -> dict:
        x, y = self.rng.randrange(10, CANVAS - 60), self.rng.randrange(10, CANVAS - 60)
        return {
            "type": "path",
            "id": element_id,
            "color": "#1d2330",
            "width": self.rng.randint(1, 8),
            "points": [[x + 10 * k, y + self.rng.randrange(0, 50)] for k in range(5)],
        }

    def _next_op(self) -> dict:
        r = self.rng.random()
        if len(self.own) < 3 or (len(self.own) < OWN_MAX and r < 0.6):
            element_id = f"{self.name}-{self.next_id}"
            self.next_id += 1
            self.own.append(element_id)
            return {"kind": "add", "element": self._element(element_id)}
        if r < 0.85:
            return {"kind": "update", "element": self._element(self.rng.choice(self.own))}
        return {"kind": "remove", "id": self.own.pop(0)}

    async def draw(self, until: float, every: tuple[float, float], counts: dict) -> None:
        n = 0
        while True:
            await asyncio.sleep(self.rng.uniform(*every))
            if time.monotonic() >= until or self.ws is None:
                return
            cid = f"{self.name}-op{n}"
            n += 1
            self.sent[cid] = time.monotonic()  # before the send: the echo may be read before send() returns
            counts["sent"] += 1
            try:
                await self.ws.send(json.dumps({"type": "op", "client_op_id": cid, "op": self._next_op()}))
                if self.rng.random() < 0.3:
                    await self.ws.send(
                        json.dumps({"type": "cursor", "x": self.rng.randrange(CANVAS), "y": self.rng.randrange(CANVAS)})
                    )
            except ConnectionClosed:
                return  # recorded by read()


class Board:
    def __init__(self, spec: dict):
        self.id = spec["id"]
        self.members = [Member(self, person, i, by_session=(i == 0)) for i, person in enumerate(spec["members"])]

    def settled(self) -> bool:
        for m in self.members:
            if any(cid not in m.acked and cid not in m.refused for cid in m.sent):
                return False
        return len({m.seq for m in self.members}) == 1

    def result(self) -> dict:
        """Deliveries: each acknowledged op (its seq) to every other member, the same op for all."""
        acked = {seq: (m, cid) for m in self.members for cid, seq in m.acked.items()}
        expected = delivered = 0
        missing: list[str] = []
        mismatched = 0
        latencies = []
        for seq, (sender, cid) in sorted(acked.items()):
            last = sender.received_at.get(seq, 0.0)
            for other in self.members:
                if other is sender:
                    continue
                expected += 1
                if seq in other.received:
                    delivered += 1
                    mismatched += other.received[seq] != cid
                    last = max(last, other.received_at[seq])
                elif len(missing) < 20:
                    missing.append(f"board {self.id}: op seq {seq} by {sender.name} never reached {other.name}")
            latencies.append(last - sender.sent[cid])
        unacked = sum(1 for m in self.members for cid in m.sent if cid not in m.acked and cid not in m.refused)
        finals = {m.name: sorted(self.replay(m)) for m in self.members}
        return {
            "id": self.id,
            "members": len(self.members),
            "sent": sum(len(m.sent) for m in self.members),
            "acked": len(acked),
            "refused": sum(len(m.refused) for m in self.members),
            "unacked": unacked,
            "expected": expected,
            "delivered": delivered,
            "missing": expected - delivered,
            "missing_examples": missing,
            "mismatched": mismatched,
            "gaps": [g for m in self.members for g in m.gaps][:20],
            "gap_count": sum(len(m.gaps) for m in self.members),
            "rehellos": sum(m.rehellos for m in self.members),
            "errors": [f"{m.name}: {e}" for m in self.members for e in m.errors],
            "elements": finals[self.members[0].name],
            "members_agree": len({tuple(v) for v in finals.values()}) == 1,
            "latencies": latencies,
            "seq_end": max(m.seq for m in self.members),
        }

    @staticmethod
    def replay(m: Member) -> set[str]:
        """The ids of the elements on the board after the ops this member saw, in seq order (a
        member that never got its hello starts from nothing: its errors say why)."""
        ids = {e.get("id") for e in (m.hello_doc or {}).get("elements", [])}
        for seq in sorted(m.ops):
            op = m.ops[seq]
            if op["kind"] == "add":
                ids.add(op["element"]["id"])
            elif op["kind"] == "remove":
                ids.discard(op["id"])
        return ids


class Listener:
    """A socket on /ws/me: counts the "feed" and "unread" messages it is sent."""

    def __init__(self, person: dict, by_session: bool):
        self.name, self.token, self.by_session = person["name"], person["token"], by_session
        self.ws = None
        self.connected_at = None
        self.feed: list[int] = []
        self.unread = 0
        self.errors: list[str] = []
        self.closing = False

    async def open(self, site: dict, cookie: str | None) -> None:
        headers = (
            {"Cookie": cookie, "Origin": site["url"]} if self.by_session else {"Authorization": f"Bearer {self.token}"}
        )
        self.ws = await connect(f"{site['ws']}/ws/me", additional_headers=headers, open_timeout=60)
        hello = json.loads(await self.ws.recv())
        if hello.get("type") != "hello" or hello.get("username") != self.name:
            raise RuntimeError(f"the first message on /ws/me was {str(hello)[:120]}, not {self.name}'s hello")
        self.connected_at = time.time()

    async def read(self) -> None:
        try:
            async for raw in self.ws:
                message = json.loads(raw)
                if message.get("type") == "feed":
                    self.feed.append(int(message["board_id"]))
                elif message.get("type") == "unread":
                    self.unread += 1
        except ConnectionClosed as closed:
            if not self.closing:
                self.errors.append(f"closed by the server: {closed.rcvd.code if closed.rcvd else 'no close frame'}")
        except Exception as error:
            self.errors.append(f"reading failed: {type(error).__name__}: {error}")


async def run(config: dict, results: Path, progress: Path) -> None:
    boards_path = results.with_name(results.stem + "-boards.json")
    site = {"url": config["url"], "ws": config["ws"]}
    boards = [Board(spec) for spec in config["boards"]]
    listeners = [Listener(person, by_session=(i % 2 == 1)) for i, person in enumerate(config["listeners"])]
    members = [m for b in boards for m in b.members]
    state = {"phase": "connecting", "sent": 0, "connect_errors": []}
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    def write_progress() -> None:
        acked = sum(len(m.acked) for m in members)
        figures = {
            "phase": state["phase"],
            "sockets": sum(1 for s in members + listeners if s.ws is not None),
            "sent": state["sent"],
            "acked": acked,
            "deliveries": sum(len(m.received) for m in members) - acked,
            "errors": sum(len(s.errors) for s in members + listeners) + len(state["connect_errors"]),
            "feed_notices": sum(len(x.feed) for x in listeners),
        }
        progress.write_text(json.dumps(figures))

    async def reporter():
        while True:
            write_progress()
            await asyncio.sleep(PROGRESS_EVERY)

    reporting = asyncio.create_task(reporter())

    async def open_socket(client) -> None:
        try:
            cookie = None
            if client.by_session:
                cookie = await asyncio.to_thread(session_login, config["url"], client.name, config["password"])
            await client.open(site, cookie)
        except Exception as error:
            client.ws = None
            state["connect_errors"].append(f"{client.name}: {type(error).__name__}: {str(error)[:200]}")

    await asyncio.gather(*(open_socket(c) for c in members + listeners))
    readers = [asyncio.create_task(c.read()) for c in members + listeners if c.ws is not None]
    state["phase"] = "drawing"
    write_progress()
    until = time.monotonic() + config["seconds"]
    counts = {"sent": 0}

    async def count_sent():
        while state["phase"] == "drawing":
            state["sent"] = counts["sent"]
            await asyncio.sleep(0.5)

    counting = asyncio.create_task(count_sent())
    await asyncio.gather(*(m.draw(until, tuple(config["op_every"]), counts) for m in members if m.ws is not None))
    state["sent"] = counts["sent"]
    settle_until = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < settle_until and not all(b.settled() for b in boards):
        await asyncio.sleep(0.2)
    for m in members:
        m.closing = True
        if m.ws is not None:
            await m.ws.close()
    board_results = [b.result() for b in boards]
    boards_path.write_text(json.dumps(board_results))
    state["phase"] = "settled"
    write_progress()
    await stop.wait()
    for x in listeners:
        x.closing = True
        if x.ws is not None:
            await x.ws.close()
    await asyncio.gather(*readers, return_exceptions=True)
    for task in (reporting, counting):
        task.cancel()
    state["phase"] = "done"
    write_progress()
    results.write_text(
        json.dumps(
            {
                "boards": board_results,
                "listeners": [
                    {
                        "name": x.name,
                        "by_session": x.by_session,
                        "connected_at": x.connected_at,
                        "feed": x.feed,
                        "unread": x.unread,
                        "errors": x.errors,
                    }
                    for x in listeners
                ],
                "connect_errors": state["connect_errors"],
                "session_sockets": sum(1 for c in members + listeners if c.by_session and c.ws is not None),
            }
        )
    )


def main() -> None:
    config_path, results, progress = (Path(a) for a in sys.argv[1:4])
    asyncio.run(run(json.loads(config_path.read_text()), results, progress))


if __name__ == "__main__":
    main()
