"""`make bench`: the site measured against the naive design and the physical limits, side by
side in one run, at 10,000, 100,000 and 1,000,000 boards (`make bench-smoke`: a tiny world).

Prints the table, writes it as Markdown to bench/results/latest.md (with the machine it ran
on) and the feed-latency chart to bench/results/feed-latency.png.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

import django

from bench.cluster.scale import DISCOVERY_RESULTS, DISCOVERY_TARGET
from bench.harness.measure import wsgi_get
from bench.harness.report import RESULTS, Table, ensure_tool
from bench.harness.targets import Target, judged, zadd_rate

SEARCH_TARGET_MS = 15  # every search shape at the largest size, p99 (issue 42, item 3)
# Issue 26: the feed's growth from the smallest world to the largest, settled. Its p99 at each
# size is measured in GROWTH_ROUNDS rounds spread over that size's work (each after PostgreSQL's
# autovacuum is done), GROWTH_CALLS calls a round, so a round's p99 is its 10th-slowest call, not
# the 4th of 300 as it was; the growth is judged on the median of the rounds' ratios.
GROWTH_READERS = ("reader50", "reader500")
GROWTH_ROUNDS = 3
GROWTH_CALLS = 1_000


def http_figures(table: Table, size: str, token: str, someone: str, duration: int) -> dict:
    """The site as make run ships it, and uvicorn alone as it was served before, each started by
    scripts/serve.sh (bench/serving/stacks.py; `make bench-serving` measures every candidate stack):
    the trivial view, the feed and a PostgreSQL read under wrk on loopback.
    Returns {stack: {row: figures}}."""
    if not ensure_tool("wrk", "wrk"):
        return {}
    import tempfile

    from bench.serving import stacks as serving

    measured = {}
    run_dir = Path(tempfile.mkdtemp(prefix="ugcsite-http."))
    run_dir.chmod(0o755)
    try:
        for name, overrides in (serving.STACKS[0], serving.BEFORE):
            results = serving.measure(name, overrides, token=token, someone=someone, seconds=duration, run_dir=run_dir)
            for row in serving.ROWS:
                table.add(f"HTTP {row} ({name}, wrk)", size, results[row], note=f"{results[row]['rps']:,.0f} req/s")
            share = results["feed"]["rps"] / results["trivial view"]["rps"]
            table.rows[-1]["note"] += f"; feed {share:.0%} of the trivial view's throughput"
            measured[name] = results
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    return measured


def profile_http(token: str, *, calls: int = 500) -> None:
    """Where an HTTP feed request's time goes inside the process (pyinstrument): the WSGI
    handler called as gunicorn calls it, middleware, authentication, the page and its JSON;
    everything but the socket. Saved as bench/results/profile-http.txt."""
    try:
        from pyinstrument import Profiler
    except ImportError:
        return
    from django.core.handlers.wsgi import WSGIHandler

    handler = WSGIHandler()

    def call(path="/api/v1/feed"):
        return wsgi_get(handler, path, token)[1]

    plain = {}
    for path in ("/api/v1/health", "/api/v1/feed"):  # unprofiled first: the real cost of each
        for _ in range(20):
            call(path)
        started = time.perf_counter()
        for _ in range(calls):
            call(path)
        plain[path] = (time.perf_counter() - started) / calls * 1000
    profiler = Profiler(interval=0.0001)
    profiler.start()
    started = time.perf_counter()
    for _ in range(calls):
        call()
    elapsed = time.perf_counter() - started
    profiler.stop()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "profile-http.txt").write_text(
        f"# GET /api/v1/feed through Django's WSGI handler in-process, {calls} calls: "
        f"{elapsed / calls * 1000:.3f} ms a call (profiler on); unprofiled {plain['/api/v1/feed']:.3f} ms, "
        f"against {plain['/api/v1/health']:.3f} ms for the trivial view (its middleware and handler)\n\n"
        + profiler.output_text(unicode=False, color=False, show_all=False)
    )
    print(
        f"written: bench/results/profile-http.txt (in-process: feed {plain['/api/v1/feed']:.3f} ms, "
        f"trivial view {plain['/api/v1/health']:.3f} ms a call)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="a tiny world, every measure, in about a minute")
    parser.add_argument(
        "--reading", action="store_true", help="only social reading, on 20,000 users and 20,000 boards (a few minutes)"
    )
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.DEBUG = False  # no query log
    call_command("migrate", verbosity=0)
    from bench.feed import fanout, fanout_limit
    from bench.harness import measure, peers, world as worldmod
    from bench.search import shapes as search
    from feeds.discovery import indexes
    from social import tokens
    from ugcsite.platform.redis import get_redis

    smoke = args.smoke
    if args.reading:
        return reading_only(runs=100)
    sizes = [1_500, 4_000] if smoke else [10_000, 100_000, 1_000_000]
    users = 400 if smoke else 20_000
    runs = 30 if smoke else 300
    if smoke:  # the same readers, scaled to the tiny world
        worldmod.SPECIAL.update({"reader50": 50, "reader450": 150, "reader500": 200, "reader5000": 300})
    table = Table()
    chart = {}
    figures = {}  # what the targets of issue 15 are read from
    w = worldmod.World(seed=2026, users=users)
    started = time.perf_counter()
    print(f"building {users:,} users and their follow graph", flush=True)
    worldmod.build_people(w)
    for size in sizes:
        label = f"{size:,}"
        print(f"\n== {label} boards ==", flush=True)
        worldmod.grow_boards(w, size)
        get_redis().flushdb()
        archived = worldmod.build_redis(w)
        specials = list(w.special.values())
        worldmod.activate(specials)
        for name in ("reader50", "reader500"):
            worldmod.feed_history(w.special[name], 2_500)
        rounds = {name: [] for name in GROWTH_READERS}
        readers = {name: w.special[name] for name in GROWTH_READERS}
        feed_round(rounds, readers)  # the rounds are spread over this size's work (the other two below)
        baselines = {name: measure.timings(measure.sql_feed(w.special[name]), runs=runs) for name in GROWTH_READERS}
        uid = w.special["reader500"]
        deep = 300 if smoke else 2_000
        figures["deep"] = (deep, measure.timings(measure.site_feed(uid, offset=deep), runs=runs // 2))
        table.add(
            f"deep feed page (offset {deep:,}), following {worldmod.SPECIAL['reader500']}",
            label,
            figures["deep"][1],
            measure.timings(measure.sql_feed(uid, offset=deep), runs=runs // 2),
            note="its first call keeps a feed snapshot, the rest read it",
        )
        figures["deep_merged"] = measure.timings(
            measure.site_feed(uid, offset=deep), runs=runs // 2, setup=measure.feed_changed(uid)
        )
        table.add(
            f"deep feed page (offset {deep:,}), merged at every call",
            label,
            figures["deep_merged"],
            note="the snapshot made stale before each call, as any change of the feed does",
        )
        feed_round(rounds, readers)
        for tag in ("tag0", "tag20", "tag300"):
            smallest = min(indexes.index_size("tag", tag), indexes.index_size("kind", "sketch"))
            table.add(
                f"discover kind+tag, popular (smallest set {smallest:,})",
                label,
                measure.timings(measure.discovery_query("sketch", tag), runs=runs),
            )
        table.add(
            "archival (beat task) after the rebuild",
            label,
            None,
            note=f"{archived['ids']:,} ids in {archived['chunks']:,} chunks, "
            f"{archived['ids'] / max(archived['seconds'], 1e-9):,.0f} ids/s",
        )
        figures["search"] = (w.boards, search.figures(table, label, w.boards, runs))  # the largest size's stays
        feed_round(rounds, readers)
        for name in GROWTH_READERS:
            assert len(rounds[name]) == GROWTH_ROUNDS, "the size's work calls feed_round GROWTH_ROUNDS times"
            site, sql = measure.pooled(rounds[name]), baselines[name]
            table.add(
                f"feed page, reader following {worldmod.SPECIAL[name]}",
                label,
                site,
                sql,
                note=f"{GROWTH_ROUNDS} rounds of {GROWTH_CALLS:,} calls pooled; p99 by round "
                + " / ".join(f"{r['p99']:.2f}" for r in site["rounds"])
                + f"; CPU {site['cpu']:.3f} ms a call (this process and Redis; Redis alone "
                f"{site['redis_cpu'] * 1000:.0f} µs)",
            )
            chart.setdefault(name, []).append((size, site["p99"], sql["p99"]))
            figures.setdefault("feed", {}).setdefault(name, []).append((size, site))
        memory = measure.timeline_memory(w.user_ids[:: max(len(w.user_ids) // 400, 1)])
        table.add(
            "memory per hot timeline entry",
            label,
            None,
            note=f"{memory['bytes_per_entry']:.1f} bytes/entry over {memory['timelines']} P "
            f"({', '.join(f'{k}: {v}' for k, v in memory['encodings'].items())})",
        )
    # reading, on the largest world
    print("\n== social reading, HTTP, fan-out ==", flush=True)
    worldmod.give_reads(w, 10 if smoke else 50, time.time())
    worldmod.give_likes(w, 10 if smoke else 50, time.time())
    from feeds.models import Board

    figures["reading"] = reading_figures(table, w, runs // 2, f"{sizes[-1]:,}")
    User = Board.objects.none().model.author.field.related_model
    token = tokens.token_create(user=User.objects.get(pk=w.special["reader500"]))
    http = http_figures(
        table, f"{sizes[-1]:,}", token, User.objects.get(pk=w.user_ids[1]).username, duration=2 if smoke else 15
    )
    profile_http(token)
    limit = zadd_rate(200_000 if smoke else 2_000_000)
    fan = fanout.measure(followers=1_000 if smoke else 100_000, workers=2, posts=3)
    table.add(
        f"fan-out to {fan['followers']:,} followers (Celery, end to end)",
        "—",
        None,
        note=f"{fan['rate']:,.0f} deliveries/s"
        + (f"; redis-benchmark -c 1 -P 16 ZADD: {limit:,.0f}/s; ratio {fan['rate'] / limit:.2f}" if limit else ""),
    )
    from django.conf import settings as site_settings

    print("fan-out in this process (the batch tasks' code, one batch after the other):", flush=True)
    inline = fanout_limit.measure(
        [1_000, 10_000] if smoke else [10_000, 100_000, 1_000_000],
        [site_settings.FANOUT_BATCH_SIZE],
        [site_settings.FANOUT_SCRIPT_CHUNK],
    )
    for row in inline:
        table.add(
            f"fan-out to {row['followers']:,} followers (in-process)",
            "—",
            None,
            note=(
                f"{row['rate']:,.0f} deliveries/s; redis-benchmark -c 1 -P 16 ZADD: {row['limit']:,.0f}/s; "
                f"ratio {row['ratio']:.2f}"
                if row["limit"]
                else f"{row['rate']:,.0f} deliveries/s"
            )
            + f"; Redis CPU {row['redis_us']:.2f} µs a delivery",
        )
    figures.update(http=http, fanout=fan, zadd=limit, fanout_inline=inline)
    print("\n== a board's picture (PNG) ==", flush=True)
    from bench.media import pictures

    drawn = pictures.run(smoke=smoke)
    demo = [row["render"]["p50"] for row in drawn["rows"] if row["name"].startswith("demo")]
    table.add(
        "a board's PNG served from its kept render",
        "—",
        drawn["serve"],
        note=f"rendered once per version in Celery: {min(demo):.0f}-{max(demo):.0f} ms a demo drawing "
        f"(p50), the rest in bench/results/pictures{'-smoke' if smoke else ''}.md",
    )
    print("\n== the peers, same machine, same run ==", flush=True)
    figures["peers"] = peers.run("small" if smoke else "full")
    elapsed = time.perf_counter() - started
    targets = targets_table(figures, smoke=smoke)
    write_results(table, chart, smoke=smoke, elapsed=elapsed, targets=targets)
    if not smoke:
        profile_feed(w.special["reader500"])
        profile_feed(w.special["reader500"], offset=2_000, name="profile-deep.txt")
        profile_feed(w.special["reader500"], offset=2_000, name="profile-deep-merge.txt", merge=True)


def feed_round(rounds: dict[str, list], readers: dict[str, int]) -> None:
    """One round of the growth figure: once PostgreSQL's autovacuum is done, GROWTH_CALLS feed
    pages of each reader ({name: user id}) in turn, appended to ``rounds[name]``."""
    from bench.harness import measure

    waited = measure.postgres_settle()
    for name, user_id in readers.items():
        rounds[name].append(measure.timings(measure.site_feed(user_id), runs=GROWTH_CALLS, keep_samples=True))
    print(
        f"  feed round {len(rounds[next(iter(readers))])} of {GROWTH_ROUNDS}: "
        + ", ".join(f"{name} p99 {rounds[name][-1]['p99']:.2f} ms" for name in readers)
        + f" (load {os.getloadavg()[0]:.1f}; waited {waited:.1f} s for autovacuum)",
        flush=True,
    )


def reading_figures(table: Table, w, runs: int, size_label: str) -> dict:
    """Which of the people I follow read these 100 boards: the site's model (user -> boards)
    against board -> readers, built from the same reads, for 450 and 5,000 followees; then
    which of them like these boards (the same question over the liked sets). Returns
    {reader: (followees, the site's timings)} and {"likes<reader>": ...} for the likes."""
    from bench.harness import measure
    from feeds.models import Board
    from social import graph

    boards = list(Board.objects.order_by("-id").values_list("id", flat=True)[:100])
    measured = {}
    for name in ("reader450", "reader5000"):
        readers = graph.following_ids(w.special[name])
        measure.board_readers_build(readers, boards)
        site = measure.timings(measure.reading_user_to_boards(boards, readers), runs=runs)
        measured[name] = (len(readers), site)
        table.add(
            f"reading 100 boards x {len(readers):,} followees",
            size_label,
            site,
            measure.timings(measure.reading_board_to_readers(boards, readers), runs=runs),
            note=f"baseline = board -> readers model; {_cpu_note(site)}",
        )
        liked = measure.timings(measure.likes_by_followees(boards, readers), runs=runs)
        measured[f"likes{name}"] = (len(readers), liked)
        table.add(
            f"liked by followees, 100 boards x {len(readers):,} followees",
            size_label,
            liked,
            site,
            note=f"baseline = social reading, same call on the read sets; {_cpu_note(liked)}",
        )
    storm = measure.like_storm(boards[0], w.user_ids[: min(len(w.user_ids), 3_000)])
    table.add(
        f"a like storm: {storm['likes']:,} likes of one board, one client",
        size_label,
        None,
        note=f"{storm['rate']:,.0f} likes/s = {storm['per_minute']:,.0f} a minute "
        "(row, count, gathered notification, Redis; one notification row in all)",
    )
    return measured


def _cpu_note(timing: dict) -> str:
    """The CPU a call took (this process's and the data Redis's) and the load when it ended, for
    a note: what a loaded machine does not inflate, beside the p99 it does."""
    return f"CPU {timing['cpu']:.2f} ms a call ({timing['redis_cpu']:.2f} in Redis), load {timing['load']:.1f}"


def reading_only(*, runs: int) -> None:
    from bench.harness import world as worldmod
    from ugcsite.platform.redis import get_redis

    started = time.perf_counter()
    table = Table()
    w = worldmod.World(seed=2026, users=20_000)
    worldmod.build_people(w)
    worldmod.grow_boards(w, 20_000)
    get_redis().flushdb()
    worldmod.build_redis(w)
    worldmod.give_reads(w, 50, time.time())
    worldmod.give_likes(w, 50, time.time())
    reading_figures(table, w, runs, "20,000")
    RESULTS.mkdir(exist_ok=True)
    machine = f"{platform.node()}: {os.cpu_count()} cores, {platform.platform()}, Python {platform.python_version()}"
    (RESULTS / "reading.md").write_text(
        f"# Social reading\n\n{datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine}; `make bench-reading`, "
        f"{(time.perf_counter() - started) / 60:.1f} minutes; 20,000 users reading 50 boards each in 30 days "
        "and liking up to 50. "
        f"Times in milliseconds.\n\n{table.markdown()}\n"
    )
    print(table.markdown())


def targets_table(figures: dict, *, smoke: bool) -> str:
    """The targets (issues 15, 26 and 42): each figure of this run beside its target, the worst
    of the last three full runs and the verdict over them (bench.harness.targets), and the peers' figures
    from the same run (as ratios). Printed and written with the results."""
    peer = figures.get("peers")
    rows: list[Target] = []
    feed = figures.get("feed", {})
    if "reader50" in feed:
        size, site = feed["reader50"][-1]
        versus = site["p50"] / peer["sf_read_p50"] if peer else None
        das = peer and peer["das_page"].get("A")
        rows.append(
            Target(
                "feed-p50",
                f"feed page, in-process, p50 at {size:,} boards (following 50)",
                site["p50"],
                f"{site['p50']:.2f} ms (p99 {site['p99']:.2f})",
                "≤ 0.35 ms",
                site["p50"] <= 0.35,
            )
        )
        rows.append(
            Target(
                "feed-p50-sf",
                "feed page p50 / Stream-Framework's p50, same run",
                versus,
                f"{versus:.2f}x" if versus is not None else "peers not run",
                "≤ 0.5x",
                versus is not None and versus <= 0.5,
                peers=(
                    f"Stream-Framework `feed[:20]` p50 {peer['sf_read_p50']:.2f} / p99 {peer['sf_read_p99']:.2f} ms; "
                    f"actstream `user_stream[:20]` ({das[0]} followees, {peer['das_actions']:,} actions) p50 "
                    f"{das[1]:.2f} ms: site {das[1] / site['p50']:.1f}x faster"
                    if peer
                    else "peers not run"
                ),
            )
        )
    http = figures.get("http") or {}
    if len(http) == 2:
        (shipped, production), (before_name, before) = http.items()
        share = production["feed"]["rps"] / production["trivial view"]["rps"]
        rows.append(
            Target(
                "http-feed-share",
                f"HTTP feed throughput / trivial view ({shipped}; wrk -c8)",
                share,
                f"{share:.2f} ({production['feed']['rps']:,.0f} / {production['trivial view']['rps']:,.0f} req/s)",
                "≥ 0.8",
                share >= 0.8,
                better="higher",
                peers=f"{before_name}: {before['feed']['rps'] / before['trivial view']['rps']:.2f}",
            )
        )
        gain = production["feed"]["rps"] / before["feed"]["rps"]
        rows.append(
            Target(
                "http-feed-gain",
                "HTTP feed throughput, shipped stack / uvicorn alone (before)",
                gain,
                f"{gain:.2f}x ({production['feed']['rps']:,.0f} / {before['feed']['rps']:,.0f} req/s)",
                "≥ 1.5x",
                gain >= 1.5,
                better="higher",
                peers="both started by scripts/serve.sh in this run",
            )
        )
    inline, fan, zadd = figures.get("fanout_inline") or [], figures.get("fanout"), figures.get("zadd")
    if zadd and fan:
        parts = [f"Celery end to end, {fan['followers']:,} followers: {fan['rate'] / zadd:.2f}"]
        parts += [f"in-process, {r['followers']:,}: {r['ratio']:.2f}" for r in inline if r["ratio"]]
        rows.append(
            Target(
                "fanout-zadd",
                "fan-out, deliveries/s ÷ redis-benchmark -c 1 -P 16 ZADD",
                fan["rate"] / zadd,
                "; ".join(parts),
                "≥ 0.5",
                fan["rate"] / zadd >= 0.5,
                better="higher",
                peers=(
                    f"Stream-Framework {peer['sf_fanout_rate']:,.0f} deliveries/s (chunk {peer['sf_fanout_chunk']}) "
                    f"÷ its run's ZADD {peer['sf_zadd_limit']:,.0f}/s = {peer['sf_fanout_ratio']:.2f}"
                    if peer
                    else "peers not run"
                ),
            )
        )
    reading = figures.get("reading", {})
    for key, what, goal in (("reader450", "social reading", 10), ("likesreader450", "liked by followees", 8)):
        if key not in reading:
            continue
        followees, site = reading[key]
        rows.append(
            Target(
                key,
                f"{what} 100 boards x {followees:,} followees, p99",
                site["p99"],
                f"{site['p99']:.2f} ms (p50 {site['p50']:.2f})",
                f"≤ {goal} ms (at 450 followees)",
                site["p99"] <= goal if followees >= 450 else None,
                peers="— (no peer offers it)",
            )
        )
    for name in GROWTH_READERS:
        series = feed.get(name, [])
        if len(series) > 1:
            (first, a), (last, b) = series[0], series[-1]
            growth = growth_figure(a, b)
            ratios = growth["ratios"]
            small, large = (" / ".join(f"{r['p99']:.2f}" for r in x["rounds"]) for x in (a, b))
            rows.append(
                Target(
                    f"growth-{name}",
                    f"feed growth {first:,} → {last:,} boards, p99 ({name}), median of {len(ratios)} rounds",
                    growth["median"],
                    f"{growth['median']:.2f}x (rounds {', '.join(f'{r:.2f}x' for r in ratios)}; p99 {small} → "
                    f"{large} ms; CPU a call {growth['cpu']:.2f}x, pooled p99 {b['p99'] / a['p99']:.2f}x)",
                    "≤ 1.1x (median)",
                    growth["median"] <= 1.1,
                    peers="actstream p99 growth {:,} → {:,} actions: {:.2f}x".format(
                        *peer["das_growth"]["A" if name == "reader50" else "B"]
                    )
                    if peer
                    else "—",
                )
            )
    if "deep" in figures:
        offset, site = figures["deep"]
        das = peer and peer["das_deep"].get("B")
        merged = figures["deep_merged"]
        rows.append(
            Target(
                "deep-p99",
                f"deep page (offset {offset:,}) at the largest size, p99",
                site["p99"],
                f"{site['p99']:.2f} ms (p50 {site['p50']:.2f}; merged at every call: p50 {merged['p50']:.2f} / "
                f"p99 {merged['p99']:.2f})",
                "≤ 3 ms",
                site["p99"] <= 3,
                peers=f"actstream `[2000:2020]` ({das[0]} followees) p50 {das[1]:.2f} / p99 {das[2]:.2f} ms"
                if das
                else "—",
            )
        )
    if "search" in figures:
        boards, shapes = figures["search"]
        worst = max(shapes, key=lambda shape: shape["p99"])
        rows.append(
            Target(
                "search-worst-p99",
                f"search at {boards:,} boards, the worst p99 of {len(shapes)} shapes",
                worst["p99"],
                f"{worst['p99']:.2f} ms ({worst['what']}); at 1,000,000 people too: make bench-search",
                f"≤ {SEARCH_TARGET_MS:g} ms, every shape",
                worst["p99"] <= SEARCH_TARGET_MS,
                peers="— (no peer offers it)",
            )
        )
    discovery = DISCOVERY_RESULTS.exists() and json.loads(DISCOVERY_RESULTS.read_text())
    if discovery:
        one, three = discovery["1"]["uncached_ceiling_per_s"], discovery["3"]["uncached_ceiling_per_s"]
        rows.append(
            Target(
                "discovery-scale",
                "discovery, uncached kind+tag ceiling, 3 nodes / 1 node (not this run: "
                f"make bench-cluster of {discovery['at']}, {discovery['boards']:,} boards)",
                three / one,
                f"{three / one:.2f}x ({three:,.0f} / {one:,.0f} queries/s, from the nodes' CPU)",
                f"≥ {DISCOVERY_TARGET}x",
                three / one >= DISCOVERY_TARGET,
                better="higher",
            )
        )
    note = (
        "\n\nA smoke run: tiny worlds (1,500 and 4,000 boards; reading 150 followees), the peers' small mode; "
        "the targets are judged on the full run."
        if smoke
        else ""
    )
    if peer:
        note += f"\n\nPeers: the harness's run in {peer['folder']} (its mode is the folder's prefix)."
    return judged("bench", rows, zadd=zadd, smoke=smoke) + note


def growth_figure(small: dict, large: dict) -> dict:
    """The feed's growth between two sizes from their rounds (measure.pooled): each round's p99
    ratio (round i at the large size over round i at the small one), their median, and the
    growth of the CPU a call (the median round's)."""
    ratios = [b["p99"] / a["p99"] for a, b in zip(small["rounds"], large["rounds"], strict=True)]
    cpu = statistics.median(r["cpu"] for r in large["rounds"]) / statistics.median(r["cpu"] for r in small["rounds"])
    return {"ratios": ratios, "median": statistics.median(ratios), "cpu": cpu}


def write_results(table: Table, chart: dict, *, smoke: bool, elapsed: float, targets: str = "") -> None:
    RESULTS.mkdir(exist_ok=True)
    name = "smoke" if smoke else "latest"
    machine = f"{platform.node()}: {os.cpu_count()} cores, {platform.platform()}, Python {platform.python_version()}"
    text = (
        f"# Benchmark results ({'smoke' if smoke else 'full'})\n\n"
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine}; `make {'bench-smoke' if smoke else 'bench'}`, "
        f"{elapsed / 60:.1f} minutes. Times in milliseconds.\n\n{table.markdown()}\n"
        + (f"\n## The targets, judged over three runs, beside the peers\n\n{targets}\n" if targets else "")
    )
    (RESULTS / f"{name}.md").write_text(text)
    print("\n" + table.markdown())
    if targets:
        print("\n" + targets)
    print(f"\nwritten: bench/results/{name}.md")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    figure, axis = plt.subplots(figsize=(7, 4.5))
    for reader, points in chart.items():
        sizes = [p[0] for p in points]
        axis.plot(sizes, [p[1] for p in points], marker="o", label=f"site, {reader}")
        axis.plot(sizes, [p[2] for p in points], marker="s", linestyle="--", label=f"SQL fan-out-on-read, {reader}")
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("boards on the site")
    axis.set_ylabel("feed page p99 (ms, in-process)")
    axis.set_title("Feed page latency against site size")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(RESULTS / f"feed-latency{'-smoke' if smoke else ''}.png", dpi=110)
    print(f"written: bench/results/feed-latency{'-smoke' if smoke else ''}.png")


def profile_feed(user_id: int, *, offset: int = 0, name: str = "profile-feed.txt", merge: bool = False) -> None:
    """Where a feed request's time goes (pyinstrument), saved beside the results; with ``merge``,
    the reader's feed snapshot is made stale before each call (its bump is profiled too)."""
    try:
        from pyinstrument import Profiler
    except ImportError:
        return
    from bench.harness import measure

    call = measure.site_feed(user_id, offset=offset)
    stale = measure.feed_changed(user_id) if merge else lambda: None
    call()
    profiler = Profiler(interval=0.0001)
    profiler.start()
    for _ in range(300):
        stale()
        call()
    profiler.stop()
    (RESULTS / name).write_text(
        f"# the feed page at offset {offset:,}, 300 calls{', merged at each' if merge else ''}\n\n"
        + profiler.output_text(unicode=False, color=False, show_all=False)
    )
    print(f"written: bench/results/{name}")


if __name__ == "__main__":
    main()
