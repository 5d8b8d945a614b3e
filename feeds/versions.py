"""A board's kept versions (docs/api.md, "Versions"): storage in PostgreSQL (``BoardVersion``), and
who drew since the last one in the data Redis (``keys.live_version_authors``). No tasks here.

A version is kept at every publish and every API change of the drawing (a restore is one), and on
a live board by compaction (feeds.live.compaction) at most once every VERSION_EVERY_SECONDS of
drawing and when its last editor leaves, unless the doc equals the latest version's. Each row
holds its doc whole, zlib-compressed: one row read and one inflate open a version, and pruning
deletes rows without rewriting any other. bench/results/versions.md measures this against
deltas (a full doc every k versions) and says why whole docs were chosen.

Retention (``versions_prune``, beat hourly): every version of the last VERSIONS_KEEP_ALL_DAYS
days, then the last one of each UTC day; the latest version of a board is always kept.
"""

import hashlib
import time
import zlib
from datetime import datetime, timedelta
from typing import Annotated

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from pydantic import Field
from typing_extensions import TypedDict

from feeds import keys
from feeds.models import BoardVersion
from feeds.validation import Doc
from ugcsite.platform.apidoc import IsoTime
from ugcsite.platform.errors import NotFound
from ugcsite.platform.redis import REDIS_FAILURES, get_redis

# zlib's level. Drawings are mostly coordinates, which the higher levels' longer searches gain
# little on: on a 5,000-stroke board (1.7 MiB of JSON) level 1 stores 652 KiB in about 18 ms,
# level 6 551 KiB in about 250 ms (bench/results/versions.md). A version is compressed under the
# board's row lock, in a PATCH or a compaction: the time matters more than 18% of the bytes.
COMPRESS_LEVEL = 1


class VersionNotFound(NotFound):
    def __init__(self, board_id: int, n: int):
        super().__init__(f"Board {board_id} has no version {n}.")


def doc_compress(doc_json: str) -> bytes:
    """The stored form of a doc's JSON text. O(size of the doc)."""
    return zlib.compress(doc_json.encode(), COMPRESS_LEVEL)


def doc_inflate(doc_z: bytes) -> str:
    """The doc's JSON text from its stored form. O(size of the doc)."""
    return zlib.decompress(doc_z).decode()


def _digest(doc_json: str) -> bytes:
    return hashlib.sha256(doc_json.encode()).digest()


def authors_note(author_id: int, board_id: int, names: list[str], *, now: float | None = None) -> None:
    """Remember who drew on a live board since its last version (the last in ``names`` last).
    One ZADD and one EXPIRE in the board's slot; called once per compaction, never per op."""
    if not names:
        return
    at = time.time() if now is None else now
    key = keys.live_version_authors(author_id, board_id)
    pipe = get_redis().pipeline(transaction=False)
    pipe.zadd(key, {name: at + i * 1e-6 for i, name in enumerate(names)})
    pipe.expire(key, settings.LIVE_STATE_TTL_SECONDS)
    pipe.execute()


def _authors_pending(author_id: int, board_id: int) -> tuple[list[str], float | None]:
    """(who drew since the last version, oldest first; the newest score) from the board's set, or
    nothing when the data Redis does not answer (the version then names only the caller's)."""
    try:
        pairs = get_redis().zrange(keys.live_version_authors(author_id, board_id), 0, -1, withscores=True)
    except REDIS_FAILURES:
        return [], None
    names = [name.decode() if isinstance(name, bytes) else name for name, _ in pairs]
    return names, (pairs[-1][1] if pairs else None)


def _authors_clear(author_id: int, board_id: int, upto: float) -> None:
    """Forget the names a kept version took (those noted later stay for the next version)."""
    try:
        get_redis().zremrangebyscore(keys.live_version_authors(author_id, board_id), "-inf", upto)
    except REDIS_FAILURES:
        pass  # they are named again by the next version: more names, never fewer


def version_keep(
    *, board_id: int, author_id: int, doc_json: str, by: str = "", only_if_changed: bool = False
) -> int | None:
    """Keep a new version of a board's doc (``doc_json``, its text as stored): its number, or None
    when ``only_if_changed`` and the doc equals the latest version's. The authors are who drew
    live since the last version, then ``by``. Call in the transaction that holds the board's row
    lock (so numbers never clash). One indexed read, one insert, one Redis read (and a delete on
    commit); O(size of the doc) to hash and compress it."""
    latest = BoardVersion.objects.filter(board_id=board_id).order_by("-n").values_list("n", "digest").first()
    digest = _digest(doc_json)
    if only_if_changed and latest is not None and bytes(latest[1]) == digest:
        return None
    names, upto = _authors_pending(author_id, board_id)
    if by:
        names = [name for name in names if name != by] + [by]
    n = latest[0] + 1 if latest is not None else 1
    BoardVersion.objects.create(
        board_id=board_id,
        n=n,
        created_at=timezone.now(),
        authors=names,
        elements=_element_count(doc_json),
        doc_z=doc_compress(doc_json),
        digest=digest,
    )
    if upto is not None:
        transaction.on_commit(lambda: _authors_clear(author_id, board_id, upto))
    return n


def _element_count(doc_json: str) -> int:
    """How many elements a stored doc holds, without parsing it: every element is an object
    with an ``"id"`` (feeds.validation.doc_with_ids), and ids never hold a quote."""
    start = doc_json.find('"elements":[')
    return doc_json.count('"id":', start) if start >= 0 else 0


def version_due(board_id: int, *, now: datetime | None = None) -> bool:
    """Whether a live board's doc should be kept now: its latest version is VERSION_EVERY_SECONDS
    old or more (or it has none). One indexed read."""
    created = BoardVersion.objects.filter(board_id=board_id).order_by("-n").values_list("created_at", flat=True).first()
    now = now or timezone.now()
    return created is None or (now - created).total_seconds() >= settings.VERSION_EVERY_SECONDS


def version_latest(board_id: int) -> int | None:
    """The number of a board's latest version (None: none kept). One indexed read."""
    return BoardVersion.objects.filter(board_id=board_id).order_by("-n").values_list("n", flat=True).first()


class VersionHead(TypedDict):
    n: Annotated[int, Field(ge=1, description="the version's number, from 1 on each board")]
    created_at: IsoTime
    authors: Annotated[
        list[str], Field(description="who changed the board since the version before, the last to change it last")
    ]


class VersionItem(VersionHead):
    elements: Annotated[int, Field(description="elements in its drawing")]


class VersionsPage(TypedDict):
    items: list[VersionItem]
    next: Annotated[int | None, Field(description="pass as before= for the next page; null at the end")]


class Version(VersionHead):
    """One version with its drawing (the API splices the stored doc in as text: version_get)."""

    doc: Doc


def versions_page(board_id: int, *, before: int | None, limit: int) -> VersionsPage:
    """A page of a board's versions, newest first: ``{"items": [{n, created_at, authors,
    elements}], "next"}`` (``next``: the ``before`` of the following page, or None). The docs are
    not read. One query on the (board, n) index, O(log versions + limit)."""
    rows = BoardVersion.objects.filter(board_id=board_id)
    if before is not None:
        rows = rows.filter(n__lt=before)
    found = list(rows.order_by("-n").values("n", "created_at", "authors", "elements")[: limit + 1])
    more = len(found) > limit
    items: list[VersionItem] = [
        {
            "n": row["n"],
            "created_at": row["created_at"].isoformat(),
            "authors": row["authors"],
            "elements": row["elements"],
        }
        for row in found[:limit]
    ]
    return {"items": items, "next": items[-1]["n"] if more else None}


def version_get(board_id: int, n: int) -> tuple[VersionHead, str]:
    """(``{n, created_at, authors}``, the doc's JSON text) of one version, or VersionNotFound.
    One query on the (board, n) index, then one inflate: O(size of the doc)."""
    row = BoardVersion.objects.filter(board_id=board_id, n=n).values("n", "created_at", "authors", "doc_z").first()
    if row is None:
        raise VersionNotFound(board_id, n)
    head = VersionHead(n=row["n"], created_at=row["created_at"].isoformat(), authors=row["authors"])
    return head, doc_inflate(bytes(row["doc_z"]))


# The prune looks back this many days past the keep-all line each run: a beat stopped for longer
# leaves its extra versions until an operator runs ``versions_prune`` with a wider window.
PRUNE_WINDOW_DAYS = 7


def versions_prune(*, keep_all_days: int, now: datetime | None = None, window_days: int = PRUNE_WINDOW_DAYS) -> int:
    """Delete the versions older than ``keep_all_days`` that are not the last of their board's UTC
    day (nor their board's latest); how many went. Only versions from the ``window_days`` days
    before the line are looked at, through the created_at index: a run costs O(versions made in
    that window), never O(all history), and deletes in one statement."""
    now = now or timezone.now()
    line = now - timedelta(days=keep_all_days)
    start = line - timedelta(days=window_days)
    table = BoardVersion._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            DELETE FROM {table} WHERE id IN (
                SELECT id FROM (
                    SELECT id, n, board_id,
                           row_number() OVER (
                               PARTITION BY board_id, date_trunc('day', created_at AT TIME ZONE 'UTC')
                               ORDER BY n DESC) AS rank
                    FROM {table} WHERE created_at >= %s AND created_at < %s
                ) candidates
                WHERE rank > 1
                  AND n < (SELECT max(n) FROM {table} latest WHERE latest.board_id = candidates.board_id)
            )
            """,
            [start, line],
        )
        return cursor.rowcount
