"""A board's picture (issue 39 item 2): what rendering a drawing to PNG costs, once per version,
and what serving the kept render costs (feeds.pictures).

``python -m bench.media.pictures`` (`make bench-pictures`; `make bench` runs it too, smaller under
`--smoke`) measures, in this process:

- render: feeds.pictures.render_png (the SVG of feeds.svg rasterised by CairoSVG) and
  blurhash_of, for each of the demo world's drawings (feeds.demo: 800 x 600, tens of elements),
  and for three larger ones: 2,000 x 1,500 with 1,000 strokes, and the largest the rules allow
  (MAX_CANVAS square, MAX_ELEMENTS strokes holding MAX_POINTS points), fewer runs;
- with ``--compare`` and resvg-py importable (not a dependency: `pip install resvg-py`), the
  same SVGs through resvg beside CairoSVG, the choice's evidence;
- serving: feeds.pictures.picture_get(with_png=True) of a kept render, what ``GET /b/<id>.png``
  does after its board read (one primary-key read of the row, the PNG's bytes with it).

Figures in bench/results/pictures.md (smoke: pictures-smoke.md, not kept in git).
"""

import argparse
import os
import platform
import random
import time
from datetime import UTC, datetime

import django

from bench.harness.report import RESULTS


def strokes(count: int, points: int, *, width: int, height: int, seed: int = 39) -> dict:
    """A drawing of ``count`` scribbled strokes of ``points`` points each over a white canvas."""
    rng = random.Random(seed)
    elements = []
    for i in range(count):
        x, y = rng.uniform(0, width), rng.uniform(0, height)
        path = []
        for _ in range(points):
            x = min(max(x + rng.uniform(-40, 40), 0), width)
            y = min(max(y + rng.uniform(-40, 40), 0), height)
            path.append([round(x, 1), round(y, 1)])
        elements.append({"type": "path", "color": f"#{(i * 2654435761) & 0xFFFFFF:06x}", "width": 3, "points": path})
    return {"width": width, "height": height, "background": "#ffffff", "elements": elements}


def drawings(smoke: bool) -> list[tuple[str, dict, int]]:
    """(name, doc, runs) to render."""
    from feeds import demo
    from feeds.rules import MAX_CANVAS, MAX_ELEMENTS, MAX_POINTS

    rng = random.Random(2026)
    runs = 10 if smoke else 50
    found = [(f"demo: {maker.__name__.rstrip('_')}", maker(rng)[3], runs) for maker in demo.MAKERS]
    found.append(
        ("2,000 x 1,500, 1,000 strokes of 20 points", strokes(1_000, 20, width=2_000, height=1_500), runs // 5)
    )
    if not smoke:
        per = MAX_POINTS // MAX_ELEMENTS
        found.append(
            (
                f"the largest allowed: {MAX_CANVAS:,} square, {MAX_ELEMENTS:,} strokes, {MAX_POINTS:,} points",
                strokes(MAX_ELEMENTS, per, width=MAX_CANVAS, height=MAX_CANVAS),
                3,
            )
        )
    return found


def _resvg():
    try:
        import resvg_py
    except ImportError:
        return None
    return resvg_py


def measure(smoke: bool, compare: bool) -> list[str]:
    """The Markdown table's rows, printed as they are measured."""
    from bench.harness.measure import timings
    from feeds import pictures
    from feeds.svg import render_svg

    resvg = _resvg() if compare else None
    rows = []
    for name, doc, runs in drawings(smoke):
        png, width, height = pictures.render_png(doc)
        render = timings(lambda doc=doc: pictures.render_png(doc), runs=runs, warmup=1)
        blur = timings(lambda png=png: pictures.blurhash_of(png), runs=runs, warmup=1)
        other = "—"
        if resvg is not None:
            svg = render_svg(doc)
            took = timings(lambda svg=svg, w=width: resvg.svg_to_bytes(svg_string=svg, width=w), runs=runs, warmup=1)
            other = f"{took['p50']:,.1f}"
        elements = len(doc["elements"])
        row = (
            f"| {name} | {elements:,} | {width} x {height} | {len(png) / 1024:,.1f} KiB | {render['p50']:,.1f} | "
            f"{render['p99']:,.1f} | {blur['p50']:,.1f} | {other} | {runs} |"
        )
        print(row, flush=True)
        rows.append({"name": name, "row": row, "render": render, "blurhash": blur})
    return rows


def serving(runs: int) -> dict:
    """picture_get(with_png=True) of a kept render: the read GET /b/<id>.png makes after the board's."""
    from django.contrib.auth import get_user_model

    from bench.harness.measure import timings
    from feeds import demo, pictures
    from feeds.models import Board, BoardPicture
    from feeds.services.boards import board_create

    User = get_user_model()
    author, _ = User.objects.get_or_create(username="bench-pictures")
    title, kind, tags, doc = demo.MAKERS[0](random.Random(1))
    board = board_create(author=author, title=title, kind=kind, tags=tags, doc=doc)
    board = Board.objects.get(pk=board.pk)
    pictures.picture_render(board)
    try:
        return timings(lambda: pictures.picture_get(board, with_png=True), runs=runs)
    finally:
        BoardPicture.objects.filter(board_id=board.pk).delete()


def run(smoke: bool = False, compare: bool = False) -> dict:
    """Measure and write the results; the figures for make bench's table: {"rows", "serve"}."""
    header = (
        "| drawing | elements | PNG size (px) | PNG | render p50 (ms) | render p99 (ms) | BlurHash p50 (ms) "
        "| resvg p50 (ms) | runs |\n|---|---:|---|---:|---:|---:|---:|---:|---:|"
    )
    print(header, flush=True)
    rows = measure(smoke, compare)
    serve_runs = 200 if smoke else 2_000
    serve = serving(serve_runs)
    machine = (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.1f} at the end"
    )
    text = (
        f"# A board's picture: render and serve ({'smoke' if smoke else 'full'})\n\n"
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine}; `python -m bench.media.pictures"
        f"{' --smoke' if smoke else ''}{' --compare' if compare else ''}` (`make bench-pictures`). "
        "Render: feeds.pictures.render_png (feeds.svg's SVG rasterised by CairoSVG, at most "
        "1,600 px a side), once per version of a board, in a Celery task; BlurHash: blurhash_of "
        "from a 32-pixel thumbnail. resvg: the same SVG through resvg-py, when `--compare` found it.\n\n"
        f"{header}\n" + "\n".join(row["row"] for row in rows) + "\n\n"
        f"Serving a kept render (picture_get with its bytes, one primary-key read): p50 "
        f"{serve['p50']:.2f} ms, p99 {serve['p99']:.2f} ms over {serve_runs:,} calls.\n"
    )
    out = RESULTS / ("pictures-smoke.md" if smoke else "pictures.md")
    out.write_text(text)
    print(f"written: {out.relative_to(RESULTS.parent.parent)}")
    return {"rows": rows, "serve": serve}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="the demo drawings and one larger, few runs")
    parser.add_argument("--compare", action="store_true", help="resvg-py beside CairoSVG, when it is importable")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.DEBUG = False  # no query log
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    run(smoke=args.smoke, compare=args.compare)
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
