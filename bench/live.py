"""Shared boards, live, measured (issue 14): K boards x N clients on loopback against a real
uvicorn (the ASGI app `make run` serves) with W worker processes, the Channels layer on the
plain Redis and the op logs on the data Redis.

    make bench-live                         # the table of bench/results/live.md
    make bench-live ARGS="--quick"          # a short run of each scenario

Each client connects by bearer token, then sends ops (a 10-point stroke each) at random times,
RATE a second on average (Poisson), for SECONDS; every client reads everything. Reported:
- ops/s accepted: ops that came back to their sender (the server's broadcast), per second;
- broadcast latency p50 / p99: from a client's send to the moment the last client of the board
  received it (the slowest receiver), over every op; `lost` counts ops some receiver never got;
- memory per connection: the server processes' RSS with every client connected and idle, less
  their RSS before, divided by the connections.
The load generator runs on the same 2-core machine as the server (one Python process, one event
loop), so it takes CPU from the server: the figures are a floor, not the server's ceiling.
"""

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import django

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "live.md"
SERVER_LOG = ROOT / "test-artifacts" / "bench-live-server.log"  # what the server said (warnings, drops)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _rss_kib(root_pid: int) -> int:
    """RSS of a process and all its descendants (KiB), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(entry))
            except OSError:
                continue
    total, todo = 0, [root_pid]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


class Server:
    def __init__(self, workers: int):
        self.workers = workers
        self.port = _free_port()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "ugcsite.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--workers",
                str(workers),
                "--log-level",
                "warning",
                "--ws-max-size",
                str(4 * 1024 * 1024),
                "--timeout-graceful-shutdown",
                "3",
            ],
            cwd=ROOT,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=open(SERVER_LOG, "a"),
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=1).read()
                break
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise SystemExit(f"uvicorn did not start; see {SERVER_LOG}") from None
                time.sleep(0.2)
        time.sleep(1.5)  # every worker up (the parent answers as soon as one is)

    def stop(self):
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=15)


def make_world(boards: int, per_board: int):
    """K boards, each with its author and N-1 editors; a token for each of the N."""
    from feeds.models import BoardEditor
    from feeds.services.boards import board_create
    from social import tokens
    from social.models import User

    stamp = int(time.time() * 1000) % 10**8
    world = []
    for b in range(boards):
        people = [User.objects.create(username=f"lb{stamp}_{b}_{i}") for i in range(per_board)]
        board = board_create(
            author=people[0],
            title=f"bench {b}",
            kind="sketch",
            tags=[],
            doc={"width": 1000, "height": 1000, "background": "#ffffff", "elements": []},
        )
        BoardEditor.objects.bulk_create([BoardEditor(board=board, user=p) for p in people[1:]])
        world.append((board.pk, [tokens.token_create(user=p) for p in people]))
    return world


async def run_scenario(port: int, world, *, rate: float, seconds: float, server: Server) -> dict:
    from websockets.asyncio.client import connect

    sent: dict[str, float] = {}
    received: dict[str, list[float]] = {}
    acked: set[str] = set()
    dropped: set[str] = set()
    per_board = len(world[0][1])
    sockets = []
    before = _rss_kib(server.process.pid)
    for board_id, board_tokens in world:
        for token in board_tokens:
            ws = await connect(
                f"ws://127.0.0.1:{port}/ws/boards/{board_id}",
                max_size=8 * 1024 * 1024,
                additional_headers={"Authorization": f"Bearer {token}"},
                open_timeout=60,
            )
            json.loads(await ws.recv())  # hello
            sockets.append((board_id, ws))
    await asyncio.sleep(2)
    connected = _rss_kib(server.process.pid)

    async def reader(ws, me: str):
        try:
            async for raw in ws:
                now = time.perf_counter()
                message = json.loads(raw)
                if message["type"] == "op":
                    cid = message["client_op_id"]
                    received.setdefault(cid, []).append(now)
                    if cid.startswith(me + "-"):
                        acked.add(cid)
        except Exception:
            pass

    async def writer(ws, me: str, rng: random.Random, end: float):
        i = 0
        while True:
            await asyncio.sleep(rng.expovariate(rate))
            if time.perf_counter() >= end:
                return
            cid = f"{me}-{i}"
            x = rng.randrange(0, 980)
            op = {
                "kind": "add",
                "element": {
                    "type": "path",
                    "color": "#1d2330",
                    "width": 3,
                    "id": cid,
                    "points": [[x + k, x + (k * 7) % 20] for k in range(10)],
                },
            }
            sent[cid] = time.perf_counter()
            try:
                await ws.send(json.dumps({"type": "op", "client_op_id": cid, "op": op}))
            except Exception:  # the server dropped this client: counted in `dropped`
                dropped.add(me)
                return
            i += 1

    readers = [asyncio.create_task(reader(ws, f"c{n}")) for n, (_, ws) in enumerate(sockets)]
    start = time.perf_counter()
    end = start + seconds
    await asyncio.gather(*(writer(ws, f"c{n}", random.Random(n), end) for n, (_, ws) in enumerate(sockets)))
    await asyncio.sleep(3)  # the last broadcasts
    for task in readers:
        task.cancel()
    for _, ws in sockets:
        await ws.close()
    latencies, lost = [], 0
    for cid, at in sent.items():
        times = received.get(cid, [])
        if len(times) < per_board:
            lost += 1
            continue
        latencies.append(max(times) - at)
    latencies.sort()

    def pct(p):
        return latencies[min(int(len(latencies) * p), len(latencies) - 1)] * 1000 if latencies else float("nan")

    connections = len(sockets)
    return {
        "sent": len(sent),
        "accepted_per_s": len(acked) / seconds,
        "p50_ms": pct(0.5),
        "p99_ms": pct(0.99),
        "lost": lost,
        "connections": connections,
        "deliveries_per_s": sum(map(len, received.values())) / seconds,
        "kib_per_connection": (connected - before) / connections,
        "rss_mib": connected / 1024,
        "dropped": len(dropped),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="5 seconds a scenario instead of 15")
    parser.add_argument(
        "--pair",
        action="store_true",
        help="only two people on one board, 2 strokes a second each, 2 worker processes "
        "(the issue's 200 ms check); prints, writes no table",
    )
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    SERVER_LOG.parent.mkdir(exist_ok=True)
    seconds = 5 if args.quick else 15
    scenarios = [  # (boards, clients a board, ops/s a client, worker processes)
        (100, 5, 1.0, 1),
        (100, 5, 1.0, 2),
        (100, 5, 1.0, 4),
        (1, 100, 0.5, 1),
        (1, 100, 0.5, 2),
        (1, 100, 0.5, 4),
    ]
    if args.pair:
        scenarios = [(1, 2, 2.0, 2)]
    rows = []
    for boards, per_board, rate, workers in scenarios:
        print(
            f"{boards} boards x {per_board} clients, {rate:g} op/s each, {workers} worker process(es): setting up",
            flush=True,
        )
        world = make_world(boards, per_board)
        server = Server(workers)
        try:
            result = asyncio.run(run_scenario(server.port, world, rate=rate, seconds=seconds, server=server))
        finally:
            server.stop()
        rows.append(((boards, per_board, rate, workers), result))
        print(
            f"  {result['accepted_per_s']:.0f} ops/s accepted ({result['sent']} sent, {result['lost']} not seen by "
            f"every receiver), {result['deliveries_per_s']:.0f} deliveries/s, latency p50 {result['p50_ms']:.1f} ms "
            f"p99 {result['p99_ms']:.1f} ms, {result['kib_per_connection']:.0f} KiB a connection, "
            f"{result['dropped']} clients dropped",
            flush=True,
        )
    if args.pair:
        return
    lines = [
        "# Shared boards, live: `make bench-live`",
        "",
        f"{seconds} s a scenario on loopback, the load generator (one Python process) on the same 2-core machine as "
        "uvicorn; each client sends a 10-point stroke at random times (Poisson) and reads everything. Latency is from a "
        "send to the last receiver of the board. Memory: the server processes' RSS with every client connected, less "
        "before, per connection.",
        "",
        "| boards x clients | op/s a client | worker processes | ops/s accepted | deliveries/s | p50 ms | p99 ms | not seen by all | KiB a connection | server RSS MiB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (boards, per_board, rate, workers), r in rows:
        lines.append(
            f"| {boards} x {per_board} | {rate:g} | {workers} | {r['accepted_per_s']:.0f} | {r['deliveries_per_s']:.0f} "
            f"| {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | {r['lost']} of {r['sent']} | {r['kib_per_connection']:.0f} "
            f"| {r['rss_mib']:.0f} |"
        )
    RESULTS.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[4:]))
    print(f"Written to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
