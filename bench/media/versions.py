"""A board's versions (issue 40): what one version of a 5,000-stroke board weighs, the time to open
one (target p99 <= 20 ms), and what a busy live board stores over an hour; and, to choose the
storage, whole compressed docs against deltas with a whole doc every k versions.

``python -m bench.media.versions`` (`make bench-versions`) builds a board of ``--strokes`` strokes (pen
paths of 20 points, the drawing limit's 100,000 points in all), keeps it as versions through
feeds.versions (the code the site runs), and measures:
- its size: JSON, and zlib at levels 1 (the site's), 6 and 9, with the time to compress and inflate;
- opening one: feeds.versions.version_get, and GET /api/v1/boards/{id}/versions/{n} through the
  whole Django stack in-process (middleware, auth, the read limit, the response);
- an hour of a busy live board, simulated: ``--drawers`` people each drawing a stroke every
  ``--every`` seconds (one op in ten erasing one of their strokes), a version every
  VERSION_EVERY_SECONDS (300) and one when the last leaves, as compaction keeps them; the bytes
  stored, and what keeping one at every compaction (2 s) would have stored instead;
- deltas (an element-level diff: the elements added or changed, the ids removed, compressed)
  with a whole doc every k versions, on the same hour: the bytes, and the time to open the worst
  version of a chain (inflate the whole doc, parse, apply k-1 deltas, encode again).
Figures in bench/results/versions.md.
"""

import argparse
import json
import os
import platform
import random
import time
import zlib
from datetime import UTC, datetime
from pathlib import Path

import django

from bench.harness.report import RESULTS

POINTS_A_STROKE = 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--strokes", type=int, default=5_000, help="strokes on the big board")
    parser.add_argument("--runs", type=int, default=1_000, help="timed calls a figure")
    parser.add_argument("--drawers", type=int, default=5, help="people drawing on the busy board")
    parser.add_argument("--every", type=float, default=4.0, help="seconds between one person's strokes")
    parser.add_argument("--minutes", type=int, default=60, help="the busy board's session")
    parser.add_argument("--out", default=str(RESULTS / "versions.md"))
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.DEBUG = False  # no query log
    settings.RATE_LIMIT_READS_PER_MINUTE = 0  # the reads are the point here
    settings.RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE = 0
    call_command("migrate", verbosity=0)
    run(args)


def stroke(rng: random.Random, n: int, who: str = "") -> dict:
    """A pen stroke as the editor sends one: a short random walk, coordinates to 0.1."""
    x, y = rng.uniform(20, 1580), rng.uniform(20, 1180)
    points = []
    for _ in range(POINTS_A_STROKE):
        x = min(max(x + rng.uniform(-12, 12), 0), 1600)
        y = min(max(y + rng.uniform(-12, 12), 0), 1200)
        points.append([round(x, 1), round(y, 1)])
    color = rng.choice(["#1d2330", "#3b5bdb", "#e8590c", "#2f9e44", "#c2255c"])
    return {"type": "path", "color": color, "width": rng.choice([2, 4, 8]), "points": points, "id": f"{who}s{n:07d}"}


def doc_of(elements: list[dict]) -> dict:
    return {"width": 1600, "height": 1200, "background": "#ffffff", "elements": elements}


def text_of(doc: dict) -> str:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


# --- deltas (the alternative measured) -------------------------------------------------------


def delta(before: dict, after: dict) -> bytes:
    """An element-level diff, compressed: the elements added or changed (whole), the ids removed,
    the order of ids when it changed otherwise, and the head."""
    old = {e["id"]: e for e in before["elements"]}
    new_ids = [e["id"] for e in after["elements"]]
    changed = [e for e in after["elements"] if old.get(e["id"]) != e]
    removed = [i for i in old if i not in set(new_ids)]
    kept_order = [i for i in new_ids if i in old]
    moved = kept_order != [i for i in old if i not in set(removed)]
    body = {"head": {k: after[k] for k in ("width", "height", "background")}, "put": changed, "del": removed}
    if moved:
        body["order"] = new_ids
    return zlib.compress(text_of(body).encode(), 1)


def delta_apply(doc: dict, packed: bytes) -> dict:
    body = json.loads(zlib.decompress(packed))
    elements = {e["id"]: e for e in doc["elements"]}
    for i in body["del"]:
        elements.pop(i, None)
    order = [e["id"] for e in doc["elements"] if e["id"] in elements]
    for e in body["put"]:
        if e["id"] not in elements:
            order.append(e["id"])
        elements[e["id"]] = e
    if "order" in body:
        order = body["order"]
    return {**body["head"], "elements": [elements[i] for i in order]}


def busy_hour(args, rng: random.Random) -> tuple[list[dict], list[dict]]:
    """The docs a busy live board's versions hold over the session (one each VERSION_EVERY_SECONDS
    and one at the end), and the docs at every compaction (each LIVE_COMPACT_SECONDS of drawing)."""
    from django.conf import settings

    every_version, every_compaction = settings.VERSION_EVERY_SECONDS, settings.LIVE_COMPACT_SECONDS
    elements: list[dict] = []
    mine: dict[int, list[int]] = {d: [] for d in range(args.drawers)}
    counter = 0
    versions, compactions = [], []
    t, last_version, last_compaction = 0.0, 0.0, 0.0
    step = args.every / args.drawers  # someone draws every step seconds
    end = args.minutes * 60
    while t < end:
        t += step
        who = counter % args.drawers
        counter += 1
        if counter % 10 == 0 and mine[who]:
            gone = mine[who].pop(rng.randrange(len(mine[who])))
            elements = [e for e in elements if e["id"] != f"d{who}s{gone:07d}"]
        elif len(elements) < 5_000:
            elements = elements + [stroke(rng, counter, f"d{who}")]
            mine[who].append(counter)
        if t - last_compaction >= every_compaction:
            last_compaction = t
            compactions.append(doc_of(elements))
            if t - last_version >= every_version:
                last_version = t
                versions.append(doc_of(elements))
    versions.append(doc_of(elements))  # the last editor leaves
    return versions, compactions


def chain_storage(docs: list[dict], k: int) -> tuple[int, list]:
    """Bytes of ``docs`` kept as a whole doc every k and deltas between, and the stored chain."""
    stored, chain = 0, []
    for i, doc in enumerate(docs):
        if i % k == 0:
            packed = zlib.compress(text_of(doc).encode(), 1)
            chain.append(("full", packed))
        else:
            packed = delta(docs[i - 1], doc)
            chain.append(("delta", packed))
        stored += len(packed)
    return stored, chain


def open_from_chain(chain: list, target: int) -> str:
    """The doc text of version ``target`` from a chain: the whole doc before it, then its deltas."""
    start = target
    while chain[start][0] != "full":
        start -= 1
    doc = json.loads(zlib.decompress(chain[start][1]))
    for i in range(start + 1, target + 1):
        doc = delta_apply(doc, chain[i][1])
    return text_of(doc)


def run(args) -> None:
    from django.db import connection, transaction
    from django.test import Client

    from bench.harness.measure import timings
    from feeds import versions
    from feeds.models import BoardVersion
    from feeds.services import boards as board_services
    from social.services import user_create

    rng = random.Random(40)
    started = time.monotonic()
    author = user_create(username="vb_author", password="bench-password")
    big = doc_of([stroke(rng, n) for n in range(args.strokes)])
    text = text_of(big)
    with transaction.atomic():
        board = board_services.board_create(author=author, title="Big", kind="sketch", tags=[], doc=big)
    # More versions of it, so the one opened sits in a table of some size.
    with transaction.atomic():
        for _ in range(20):
            versions.version_keep(board_id=board.pk, author_id=author.pk, doc_json=text, by="vb_author")
    built = time.monotonic() - started

    size_rows = []
    for level in (1, 6, 9):
        packed = zlib.compress(text.encode(), level)
        squeeze = timings(lambda level=level: zlib.compress(text.encode(), level), runs=max(args.runs // 20, 20))
        inflate = timings(lambda packed=packed: zlib.decompress(packed), runs=max(args.runs // 5, 50))
        size_rows.append((level, len(packed), squeeze, inflate))
    stored = BoardVersion.objects.filter(board_id=board.pk, n=1).values_list("doc_z", flat=True).first()

    n = versions.version_latest(board.pk) // 2
    opening = timings(lambda: versions.version_get(board.pk, n), runs=args.runs)
    client = Client()
    path = f"/api/v1/boards/{board.pk}/versions/{n}"
    assert client.get(path).status_code == 200
    http = timings(lambda: client.get(path), runs=args.runs)
    listing = timings(lambda: client.get(f"/api/v1/boards/{board.pk}/versions?limit=20"), runs=args.runs)

    # the busy hour, through the real storage
    docs, compactions = busy_hour(args, rng)
    busy = board_services.board_create(author=author, title="Busy", kind="sketch", tags=[], doc=doc_of([]))
    BoardVersion.objects.filter(board_id=busy.pk).delete()
    for doc in docs:
        with transaction.atomic():
            versions.version_keep(board_id=busy.pk, author_id=author.pk, doc_json=text_of(doc), only_if_changed=True)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*), sum(octet_length(doc_z)), sum(pg_column_size(t.*)) FROM {BoardVersion._meta.db_table} t"
            " WHERE board_id = %s",
            [busy.pk],
        )
        kept, doc_bytes, row_bytes = cursor.fetchone()
    every_compaction = sum(len(versions.doc_compress(text_of(doc))) for doc in compactions)
    raw_hour = sum(len(text_of(doc)) for doc in docs)
    chains = []
    for k in (4, 12):
        k_bytes, chain = chain_storage(docs, k)
        worst = min(k, len(chain)) - 1
        chain_open = timings(
            lambda chain=chain, worst=worst: open_from_chain(chain, worst), runs=max(args.runs // 10, 50)
        )
        chains.append((k, k_bytes, chain_open))
    last_doc = text_of(docs[-1])
    final = versions.doc_compress(last_doc)
    whole_last = timings(lambda: zlib.decompress(final).decode(), runs=max(args.runs // 10, 50))
    floor = timings(lambda: text_of(json.loads(last_doc)), runs=max(args.runs // 10, 50))

    def ms(figure):
        return f"{figure['p50']:.2f} | {figure['p99']:.2f} | {figure['cpu']:.2f}"

    mb = 1024 * 1024
    lines = [
        "# A board's versions",
        "",
        f"`make bench-versions` (`python -m bench.media.versions`), {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
        f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the end; built in {built:.1f} s.",
        "",
        f"## One version of a {args.strokes:,}-stroke board",
        f"{args.strokes:,} pen strokes of {POINTS_A_STROKE} points (coordinates to 0.1): its doc is "
        f"{len(text) / mb:.2f} MiB of JSON; the row the site stores holds {len(bytes(stored)) / 1024:.0f} KiB (zlib {versions.COMPRESS_LEVEL}).",
        "",
        "| zlib level | stored KiB | ratio | compress p50 / p99 ms | inflate p50 / p99 ms |",
        "|---|---|---|---|---|",
    ]
    for level, size, squeeze, inflate in size_rows:
        lines.append(
            f"| {level}{' (the site)' if level == versions.COMPRESS_LEVEL else ''} | {size / 1024:.0f} | "
            f"{len(text) / size:.1f}x | {squeeze['p50']:.1f} / {squeeze['p99']:.1f} | {inflate['p50']:.2f} / {inflate['p99']:.2f} |"
        )
    lines += [
        "",
        f"## Opening one (target p99 <= 20 ms), {args.runs:,} calls each",
        "",
        "| what | p50 ms | p99 ms | CPU ms a call |",
        "|---|---|---|---|",
        f"| feeds.versions.version_get (one indexed row, inflate) | {ms(opening)} |",
        f"| GET /api/v1/boards/{{id}}/versions/{{n}}, the whole Django stack in-process | {ms(http)} |",
        f"| GET /api/v1/boards/{{id}}/versions?limit=20 (no doc read) | {ms(listing)} |",
        "",
        f"## A busy live board over {args.minutes} minutes (simulated)",
        f"{args.drawers} people, each drawing a stroke every {args.every:g} s (one op in ten erases one of theirs): "
        f"{len(docs[-1]['elements']):,} strokes at the end. A version every VERSION_EVERY_SECONDS "
        f"({django.conf.settings.VERSION_EVERY_SECONDS} s) of drawing and one when the last leaves, stored by "
        "feeds.versions.version_keep:",
        "",
        "| what | versions | stored |",
        "|---|---|---|",
        f"| whole docs, zlib {versions.COMPRESS_LEVEL} (the site) | {kept} | {doc_bytes / mb:.2f} MiB of docs, {row_bytes / mb:.2f} MiB of rows |",
        f"| the same docs as JSON, uncompressed | {len(docs)} | {raw_hour / mb:.2f} MiB |",
        f"| a version at every compaction ({django.conf.settings.LIVE_COMPACT_SECONDS:g} s) instead | {len(compactions):,} | "
        f"{every_compaction / mb:.1f} MiB |",
    ]
    for k, k_bytes, _ in chains:
        lines.append(f"| deltas, a whole doc every {k} | {len(docs)} | {k_bytes / mb:.2f} MiB |")
    lines += [
        "",
        "Opening the hour's last version:",
        "",
        "| stored as | p50 ms | p99 ms | CPU ms a call |",
        "|---|---|---|---|",
        f"| a whole doc (inflate; the text is sent as it is) | {ms(whole_last)} |",
    ]
    for k, _, chain_open in chains:
        lines.append(
            f"| deltas, whole every {k}: the worst of a chain (inflate, parse, apply, encode) | {ms(chain_open)} |"
        )
    lines.append(f"| (the floor of any delta scheme: parsing and encoding the doc, no delta applied) | {ms(floor)} |")
    best_k, best_bytes, best_open = min(chains, key=lambda chain: chain[1])
    lines += [
        "",
        "## The choice: whole compressed docs",
        f"Deltas store less: {best_bytes / mb:.2f} MiB for the hour with a whole doc every {best_k}, against "
        f"{doc_bytes / mb:.2f} MiB of whole docs. But a version opens from a delta chain only by parsing the whole "
        f"doc it starts from, applying each delta and encoding the result: {best_open['cpu']:.0f} ms of CPU for the "
        f"worst of that chain, against {whole_last['cpu']:.1f} ms to inflate a whole doc whose text is sent as it is "
        "stored, never parsed (the target is a p99 of 20 ms); parsing and encoding the doc alone, which any delta "
        f"scheme must do, takes {floor['cpu']:.0f} ms. Deltas would also tie versions together: the retention's "
        "thinning to one a day could no longer delete a row without rewriting the ones after it, and a lost or "
        "damaged row would lose every version up to the next whole doc. So each version is its whole doc, "
        f"compressed with zlib at level {versions.COMPRESS_LEVEL} (the levels' table: level 6 saves a sixth of the "
        "bytes for several times the CPU, spent under the board's row lock).",
        "",
        "What bounds the storage: a live board keeps at most one version every VERSION_EVERY_SECONDS of drawing "
        f"(storing one at every compaction would take {every_compaction / mb:.0f} MiB for this hour), a version is "
        "not kept again when the doc has not changed, and past VERSIONS_KEEP_ALL_DAYS (30) days only the last version "
        f"of each UTC day stays: a board drawn like this for an hour every day holds about "
        f"{30 * doc_bytes / mb:.0f} MiB of versions from its last 30 days, and {len(final) / mb:.2f} MiB a day before "
        "that. The thinning (feeds.versions.versions_prune, beat hourly) reads only the versions "
        "made in the seven days before the line, through the created_at index: O(versions made in a week), whatever "
        "the history's length.",
        "",
    ]
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
