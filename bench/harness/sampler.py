"""What `make soak` watches while it runs: every SAMPLE_EVERY seconds, the PostgreSQL connections,
each process of the site (found below supervisord in /proc) with its RSS, open files and sockets
to PostgreSQL, the Redis servers' memory and the task queue's depth; then whether anything grew
over the last two thirds of the load, and the plot of it all (bench/results/soak.png).

Everything about a process is read from /proc (Linux): /proc/PID/stat for the tree and the start
time, /proc/PID/status for VmRSS, /proc/PID/fd for the open files, and /proc/net/tcp{,6} for which
of those files are TCP connections to PostgreSQL's port. No psutil: /proc says all of it. The
processes are read every READ_EVERY second, and a sample holds the median of its interval's
readings (and the highest): a single reading can catch a moment that says nothing of a trend.
Two such moments are common here: a web worker checking a password holds Argon2's 100 MiB for a
fraction of a second, and a Celery worker process opens a fresh pool of PostgreSQL connections for
each task and closes it after (celery.fixups.django closes a prefork child's pool before and
after every task), so the site's count jumps by one or two for a few milliseconds at random.

Flat, as judged here (the load's samples only; the drain's are drawn, not judged):
- PostgreSQL connections (the site's own: sockets from its processes to PostgreSQL's port):
  never more in any reading than every pool full (ugcsite.serving.site_connections_max), no
  process above its pool (DATABASE_POOL_SIZE), all client backends of the database (PostgreSQL's
  own count, the soak's connections included) never above the budget (connection_budget: the
  pools and the headroom beside them), and flat: the connections held throughout a sample's interval (the
  fewest of its readings, which a task's passing pool does not move) no more at the end of the
  load than at the start of its last two thirds (each end the median of up to EDGE_SAMPLES
  samples). A leaked connection is held for good, so it raises that floor and keeps it raised.
- RSS of each process: from the start of the last two thirds to the end of the load, grown by at
  most RSS_GROWTH_MAX; each end is the median of up to EDGE_SAMPLES samples (never overlapping).
- Open files of each process, the same way, grown by at most 10% plus FILES_SLACK.
- No process restarted: one that vanished and one that took its place are both reported.
Redis memory and the queue are drawn and reported, not judged: the soak's posts make the timelines
grow, as they should.
"""

import json
import os
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg

from ugcsite.serving import descendants

SAMPLE_EVERY = 10.0  # seconds
READ_EVERY = 1.0  # seconds: each process is read this often; a sample holds the medians of its interval
RSS_GROWTH_MAX = 0.10  # a process's RSS may grow this much over the last two thirds of the load
FILES_SLACK = 5  # open files a process may gain over them besides 10% (a log reopened, a socket in flight)
EDGE_SAMPLES = 3  # samples whose median is "the start" and "the end" of the judged window


# --- the processes, from /proc ----------------------------------------------------------------


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    started: int  # clock ticks after boot (/proc/PID/stat field 22): a pid reused is another process
    cmdline: str


def _proc(pid: int) -> Proc | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the command's name, which may hold spaces
    return Proc(pid=pid, ppid=int(fields[1]), started=int(fields[19]), cmdline=cmdline)


def process_tree(root_pid: int) -> list[Proc]:
    """``root_pid`` and every process below it, parents first (ugcsite.serving.descendants)."""
    return [p for p in map(_proc, descendants(root_pid)) if p is not None]


def program_of(cmdline: str) -> str:
    """Which program of scripts/supervisord.conf a process below supervisord belongs to."""
    if cmdline.startswith("nginx"):
        return "nginx"
    if "gunicorn" in cmdline or ("granian" in cmdline and "wsgi" in cmdline):
        return "web"
    if "uvicorn" in cmdline or "granian" in cmdline:
        return "live"
    if "celery" in cmdline and " beat" in cmdline:
        return "beat"
    if "celery" in cmdline and " worker" in cmdline:
        return "worker"
    return cmdline.split(" ", 1)[0].rsplit("/", 1)[-1] or "?"


def rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return 0  # a zombie has no VmRSS line


def socket_inodes(pid: int) -> tuple[int, set[int]] | None:
    """How many files ``pid`` holds open, and the inodes of those that are sockets."""
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    inodes = set()
    for name in names:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{name}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return len(names), inodes


def tcp_inodes_to(port: int) -> set[int]:
    """Inodes of the established TCP connections whose remote end is ``port`` (this network
    namespace): the client ends of connections to the server on that port."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "01" and int(fields[2].rsplit(":", 1)[1], 16) == port:
                found.add(int(fields[9]))
    return found


class ProcessNames:
    """Stable names for the site's processes ("web 2", "worker child 1"), each kept for the life
    of its process (pid and start time); a process that takes the place of one gone gets its name
    again, and both are recorded in ``events``."""

    def __init__(self):
        self.names: dict[tuple[int, int], str] = {}
        self.alive: set[tuple[int, int]] = set()
        self.events: list[dict] = []  # {"t", "name", "pid", "what": "gone" | "new"}
        self.sampled = False

    def name(self, tree: list[Proc], t: float) -> dict[str, Proc]:
        by_pid = {p.pid: p for p in tree}
        root = tree[0].pid if tree else None
        now = {(p.pid, p.started): p for p in tree}  # parents first, as the tree lists them
        for key in sorted(self.alive - now.keys()):
            self.events.append({"t": t, "name": self.names[key], "pid": key[0], "what": "gone"})
        taken = {self.names[key] for key in now if key in self.names}
        named: dict[str, Proc] = {}
        for key, p in now.items():
            if key not in self.names:
                self.names[key] = self._new_name(p, by_pid, root, taken)
                taken.add(self.names[key])
                if self.sampled:
                    self.events.append({"t": t, "name": self.names[key], "pid": p.pid, "what": "new"})
            named[self.names[key]] = p
        self.alive, self.sampled = set(now), True
        return named

    def _new_name(self, p: Proc, by_pid: dict[int, Proc], root: int | None, taken: set[str]) -> str:
        if p.pid == root:
            return "supervisord"
        top = p
        while top.ppid in by_pid and top.ppid != root:
            top = by_pid[top.ppid]
        program = program_of(top.cmdline)
        has_children = any(q.ppid == p.pid for q in by_pid.values())
        if p is top:
            if program == "nginx":
                return "nginx master"
            if program in ("beat",):
                return "beat"
            return f"{program} master" if has_children else program
        role = {"nginx": "nginx worker", "worker": "worker child"}.get(program, program)
        n = 1
        while f"{role} {n}" in taken:
            n += 1
        return f"{role} {n}"


# --- the sampler ------------------------------------------------------------------------------


class Sampler(threading.Thread):
    """Samples every ``every`` seconds in a thread of its own until ``stop()``, reading the site's
    processes every READ_EVERY second between samples. Each sample, appended to ``samples`` and
    written to ``path`` as JSON, holds: ``t`` (seconds since ``start()``), ``phase`` ("load", then
    "drain": the caller's to set), ``at`` (epoch seconds); ``processes``: by name, the pid, the
    median RSS (KiB) and open files of the interval's readings, the highest RSS, and the
    connections to PostgreSQL (the last reading and the most); ``pg_median``, ``pg_min`` and
    ``pg_max`` of the site's connections over the interval; ``pg_all`` and ``pg_by_app``
    (pg_stat_activity); ``redis_<label>`` (used_memory, bytes) and ``queue`` (``queue_depth()``)."""

    def __init__(
        self,
        *,
        root_pid: int,
        pg_port: int | None,
        pg_conninfo: str,
        redis_servers: dict,
        queue_depth: Callable[[], dict],
        path: Path,
        every: float = SAMPLE_EVERY,
        on_sample: Callable[[dict], None] | None = None,
    ):
        super().__init__(name="soak-sampler", daemon=True)
        self.root_pid, self.pg_port, self.pg_conninfo = root_pid, pg_port, pg_conninfo
        self.redis_servers, self.queue_depth, self.path, self.every = redis_servers, queue_depth, path, every
        self.on_sample = on_sample
        self.samples: list[dict] = []
        self.names = ProcessNames()
        self.phase = "load"
        self.errors: list[str] = []
        self._halt = threading.Event()
        self._pg = None
        self._named: dict[str, int] = {}  # name -> pid, as of the last sample
        self._readings: list[dict] = []  # read_every second since the last sample: {"pg": total, name: reading}

    def start(self) -> None:
        self.t0 = time.monotonic()
        super().start()

    def run(self) -> None:
        next_at = self.t0
        while not self._halt.is_set():
            self.take()
            next_at += self.every
            while not self._halt.wait(min(READ_EVERY, max(next_at - time.monotonic(), 0))):
                if time.monotonic() >= next_at:
                    break
                self._readings.append(self._read(self._named))

    def stop(self) -> None:
        """Stop, after one last sample."""
        self._halt.set()
        self.join()
        self.take()
        if self._pg is not None:
            self._pg.close()

    def take(self) -> dict:
        t = time.monotonic() - self.t0
        sample = {"t": round(t, 2), "phase": self.phase, "at": time.time()}
        named = {name: p.pid for name, p in self.names.name(process_tree(self.root_pid), t).items()}
        readings = self._readings + [self._read(named)]
        processes = {}
        for name, pid in named.items():
            mine = [r[name] for r in readings if name in r and r[name]["pid"] == pid]
            if not mine:
                continue  # gone between the listing and the read
            processes[name] = {
                "pid": pid,
                "rss_kib": statistics.median(m["rss_kib"] for m in mine),
                "rss_max": max(m["rss_kib"] for m in mine),
                "files": statistics.median(m["files"] for m in mine),
                "pg": mine[-1]["pg"],
                "pg_max": max(m["pg"] for m in mine),
            }
        sample["processes"] = processes
        totals = [r["pg"] for r in readings]
        sample["pg_site"], sample["pg_median"] = totals[-1], statistics.median(totals)
        sample["pg_min"], sample["pg_max"] = min(totals), max(totals)
        sample["readings"] = len(readings)
        self._named, self._readings = named, []
        sample.update(self._pg_counts())
        for label, client in self.redis_servers.items():
            try:
                info = client.info("memory")
                if "used_memory" not in info:  # a cluster answers per node
                    info = {"used_memory": sum(node["used_memory"] for node in info.values())}
                sample[f"redis_{label}"] = info["used_memory"]
            except Exception as error:
                self._error(f"redis {label}: {error}")
        try:
            sample["queue"] = self.queue_depth()
        except Exception as error:
            self._error(f"queue depth: {error}")
        self.samples.append(sample)
        self.path.write_text(json.dumps({"names_events": self.names.events, "samples": self.samples}))
        if self.on_sample is not None:
            self.on_sample(sample)
        return sample

    def _read(self, named: dict[str, int]) -> dict:
        """Each process's RSS, open files and connections to PostgreSQL now, and the site's total
        of those connections ("pg"). About a millisecond a process (/proc)."""
        to_pg = tcp_inodes_to(self.pg_port) if self.pg_port else set()
        found: dict = {"pg": 0}
        for name, pid in named.items():
            rss, files = rss_kib(pid), socket_inodes(pid)
            if rss is None or files is None:
                continue  # gone meanwhile
            found[name] = {"pid": pid, "rss_kib": rss, "files": files[0], "pg": len(files[1] & to_pg)}
            found["pg"] += found[name]["pg"]
        return found

    def _pg_counts(self) -> dict:
        """What PostgreSQL counts (pg_stat_activity): the client backends on the site's database,
        this query's own excepted ("pg_all": the soak's connections too), and by application_name
        ("pg_by_app"; the site's processes name themselves ugcsite-<program>, scripts/supervisord.conf)."""
        try:
            if self._pg is None or self._pg.closed:
                self._pg = psycopg.connect(self.pg_conninfo, autocommit=True, application_name="soak-sampler")
            rows = self._pg.execute(
                "SELECT application_name, count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND backend_type = 'client backend' AND pid <> pg_backend_pid() GROUP BY 1"
            ).fetchall()
        except Exception as error:
            self._error(f"pg_stat_activity: {error}")
            self._pg = None
            return {"pg_all": None, "pg_by_app": {}}
        return {"pg_all": sum(n for _, n in rows), "pg_by_app": {app or "(unnamed)": n for app, n in rows}}

    def _error(self, text: str) -> None:
        if text not in self.errors:
            self.errors.append(text)


# --- judging ----------------------------------------------------------------------------------


def _edges(values: list[float]) -> tuple[float, float]:
    """The median of the first and of the last up to EDGE_SAMPLES values, never overlapping."""
    k = max(1, min(EDGE_SAMPLES, len(values) // 2))
    return statistics.median(values[:k]), statistics.median(values[-k:])


def judge(
    samples: list[dict], events: list[dict], *, load_seconds: float, pools: int, budget: int, pool_size: int
) -> dict:
    """Whether anything grew over the last two thirds of the load (see the module's docstring).
    ``pools``: the most the site's processes may hold (every pool full); ``budget``: that plus
    the headroom, what all clients of the database may hold; ``pool_size``: one process's pool."""
    load = [s for s in samples if s["phase"] == "load"]
    third = load_seconds / 3
    rest = [s for s in load if s["t"] >= third]
    verdict = {
        "samples": len(samples),
        "load_samples": len(load),
        "pools": pools,
        "budget": budget,
        "pool_size": pool_size,
        "pg_max": max((s["pg_max"] for s in samples), default=0),
        "pg_end": load[-1]["pg_median"] if load else None,
        "pg_named_max": max(
            (sum(n for app, n in s["pg_by_app"].items() if app.startswith("ugcsite-")) for s in samples), default=0
        ),
        "pg_all_max": max((s["pg_all"] or 0 for s in samples), default=0),
        "pg_all_end": load[-1]["pg_all"] if load else None,
        "restarts": [e for e in events if e["what"] in ("gone", "new")],
        "processes": {},
    }
    verdict["pg_over_pools"] = verdict["pg_max"] > pools
    verdict["pg_all_over_budget"] = verdict["pg_all_max"] > budget
    verdict["pg_over_pool"] = sorted(
        {name for s in samples for name, p in s["processes"].items() if p["pg_max"] > pool_size}
    )
    if len(rest) >= 2:
        verdict["pg_held_start"], verdict["pg_held_end"] = _edges([s["pg_min"] for s in rest])
        verdict["pg_flat"] = verdict["pg_held_end"] <= verdict["pg_held_start"]
    else:
        verdict["pg_held_start"] = verdict["pg_held_end"] = None
        verdict["pg_flat"] = False  # too few samples to say: not a pass
    names = sorted({name for s in load for name in s["processes"]})
    for name in names:
        series = [(s["t"], s["processes"][name]) for s in load if name in s["processes"]]
        window = [p for t, p in series if t >= third]
        row = {
            "rss_first": series[0][1]["rss_kib"],
            "files_first": series[0][1]["files"],
            "pg_max": max(p["pg_max"] for _, p in series),
            "pg_end": series[-1][1]["pg"],
            "pid": series[-1][1]["pid"],
        }
        if len(window) >= 2:
            row["rss_start"], row["rss_end"] = _edges([p["rss_kib"] for p in window])
            row["files_start"], row["files_end"] = _edges([p["files"] for p in window])
            row["rss_growth"] = row["rss_end"] / row["rss_start"] - 1 if row["rss_start"] else 0.0
            row["rss_ok"] = row["rss_growth"] <= RSS_GROWTH_MAX
            row["files_ok"] = row["files_end"] <= row["files_start"] * 1.10 + FILES_SLACK
        else:
            row["rss_ok"] = row["files_ok"] = False  # too few samples to say: not a pass
        verdict["processes"][name] = row
    return verdict


def problems(v: dict) -> list[str]:
    """The judged failures as sentences (empty: nothing grew)."""
    found = []
    if v["load_samples"] < 4:
        found.append(
            f"only {v['load_samples']} samples during the load: run longer (SOAK_SECONDS ≥ 40) to judge growth"
        )
    if v["pg_over_pools"]:
        found.append(
            f"the site's processes held {v['pg_max']} PostgreSQL connections, more than their pools "
            f"allow together ({v['pools']})"
        )
    if v["pg_all_over_budget"]:
        found.append(f"the database had {v['pg_all_max']} client connections, above the budget of {v['budget']}")
    if v["pg_over_pool"]:
        found.append(
            f"a process held more PostgreSQL connections than its pool allows ({v['pool_size']}, "
            f"DATABASE_POOL_SIZE): {', '.join(v['pg_over_pool'])}"
        )
    if not v["pg_flat"] and v["pg_held_start"] is not None:
        found.append(
            f"PostgreSQL connections grew over the last two thirds of the load: held throughout "
            f"{v['pg_held_start']:g} at its start, {v['pg_held_end']:g} at its end"
        )
    for name, row in v["processes"].items():
        if not row["rss_ok"] and "rss_growth" in row:
            found.append(
                f"{name}'s RSS grew {row['rss_growth']:+.0%} over the last two thirds of the load "
                f"({row['rss_start'] / 1024:.1f} → {row['rss_end'] / 1024:.1f} MiB)"
            )
        if not row["files_ok"] and "files_start" in row:
            found.append(
                f"{name}'s open files grew over the last two thirds of the load "
                f"({row['files_start']:.0f} → {row['files_end']:.0f})"
            )
    for event in v["restarts"]:
        found.append(
            f"{event['name']} (pid {event['pid']}) {'went away' if event['what'] == 'gone' else 'started'} "
            f"at {event['t']:.0f} s: a process restarted"
        )
    return found


# --- the plot ---------------------------------------------------------------------------------


def plot(samples: list[dict], *, load_seconds: float, pools: int, budget: int, path: Path, title: str) -> None:
    """Connections (with the budget), RSS and open files per process, Redis memory and the
    queue over time, one panel each; the load's first third shaded, the drain after the line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [s["t"] for s in samples]
    names = sorted(
        {name for s in samples for name in s["processes"]},
        key=lambda n: -max(s["processes"].get(n, {}).get("rss_kib", 0) for s in samples),
    )
    fig, axes = plt.subplots(5, 1, figsize=(11, 15), sharex=True)
    fig.suptitle(title, fontsize=11)

    def series(name, field, scale=1.0):
        return [s["processes"][name][field] / scale if name in s["processes"] else None for s in samples]

    ax = axes[0]
    ax.fill_between(
        t,
        [s["pg_min"] for s in samples],
        [s["pg_max"] for s in samples],
        alpha=0.25,
        label="the site's processes: fewest to most in each 10 s (read every second)",
    )
    ax.plot(t, [s["pg_min"] for s in samples], marker=".", label="the site's processes: held throughout (judged)")
    ax.plot(t, [s["pg_all"] for s in samples], linestyle="--", label="pg_stat_activity: all client backends")
    ax.axhline(pools, color="tab:red", linewidth=1, linestyle="--", label=f"every pool of the site full ({pools})")
    ax.axhline(budget, color="tab:red", linewidth=1, label=f"budget: pools and headroom ({budget})")
    ax.set_ylabel("PostgreSQL connections")
    ax.set_ylim(bottom=0, top=max([budget] + [s["pg_all"] or 0 for s in samples]) * 1.1)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    colours = plt.get_cmap("tab20")
    for ax, field, scale, label in (
        (axes[1], "rss_kib", 1024, "RSS (MiB, median of each 10 s)"),
        (axes[2], "files", 1, "open files (median of each 10 s)"),
    ):
        for n, name in enumerate(names):
            ax.plot(
                t, series(name, field, scale), marker=".", markersize=3, linewidth=1, label=name, color=colours(n % 20)
            )
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7, ncol=1, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax = axes[3]
    for key in sorted(k for k in samples[0] if k.startswith("redis_")):
        ax.plot(t, [s.get(key, 0) / 2**20 for s in samples], marker=".", label=key.removeprefix("redis_") + " Redis")
    ax.set_ylabel("Redis used_memory (MiB)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax = axes[4]
    for key, label in (("queued", "queued tasks"), ("unacked", "tasks in flight"), ("outbox", "outbox rows")):
        ax.plot(t, [s.get("queue", {}).get(key, 0) for s in samples], marker=".", label=label)
    ax.set_ylabel("queue depth")
    ax.set_ylim(bottom=0, top=max([1] + [v for s in samples for v in s.get("queue", {}).values()]) * 1.1)
    ax.set_xlabel("seconds since the load started")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    for ax in axes:
        ax.axvspan(0, load_seconds / 3, color="0.92", zorder=0)
        ax.axvline(load_seconds, color="0.4", linestyle=":", linewidth=1)
        ax.grid(alpha=0.3)
    axes[0].text(
        load_seconds / 6,
        axes[0].get_ylim()[1] * 0.95,
        "first third (not judged)",
        ha="center",
        va="top",
        fontsize=8,
        color="0.4",
    )
    axes[0].text(load_seconds, axes[0].get_ylim()[1] * 0.95, " load ends, drain", va="top", fontsize=8, color="0.4")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90, bbox_inches="tight")
    plt.close(fig)
