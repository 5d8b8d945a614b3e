"""`make bench-partition`: one step of the plan to 10^8 users shown on one machine. TimelineChunk
(the timelines' archive) and Read (social reading's rows) hash-partitioned by their owner
(PostgreSQL's declarative partitioning, PARTITION BY HASH (owner), 16 partitions) against
today's single tables, at 10,000,000 rows each, in this benchmark's own database.

Each table gets two twins beside the real one: ``bench_<name>_single``, with the real table's
columns and every one of its indexes (read from pg_indexes, so they stay what the migrations
make), and ``bench_<name>_hash``, the same partitioned by the owner (a unique index that lacks
the owner gets it first, as PostgreSQL demands). Both are loaded with COPY (binary, the same
rows generated twice from one seed), then their indexes built, then VACUUM (ANALYZE), each timed.
Then the real statements, called on one twin and the other in turn, each call on a random owner:
- the archive's write of a chunk (feeds.timelines.archive: one row, ON CONFLICT DO NOTHING);
- the archive's read of one owner's newest chunks: a page just below the hot head (2 rows) and
  the page at offset 2,000 (22 rows), as archive.archived_newest reads them; A from PostgreSQL
  (archive.archived_max on a Redis miss);
- the read flush's upsert (social.reading.reads_flush: 10,000 rows a statement, half of them
  already stored) and the look-up by the whole key its conflict check makes.
And the bytes a row, table and indexes, of TimelineChunk, Read and BoardViewHour (the last loaded
alone, 1,000,000 rows), which the capacity plan (docs/capacity.md) multiplies out.

    make bench-partition                             # 10^7 rows each (about five minutes, ~25 GB of disk)
    make bench-partition ARGS="--rows 200000 --calls 200"   # a quick look

Writes bench/results/partition.md (--rows below 10^7: partition-small.md, not kept in git).
"""

import argparse
import os
import platform
import re
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import django
import numpy as np
from django.db import connection, transaction

from bench.harness import measure
from bench.harness.report import RESULTS
from ugcsite.platform.sql import ROWS_PER_STATEMENT

PARTITIONS = 16
CHUNKS_PER_OWNER = 50  # 5,000 archived ids an owner: months of a busy home timeline
READS_PER_DAY_READERS = 1_000_000  # readers a day of reads spreads over
READ_DAYS = 30  # settings.READ_RETENTION
BLOCK_ROWS = 20_000  # rows a COPY block (a TimelineChunk block is 25 MB)
PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)  # binary COPY counts dates and times from here
ID_STEP = 1 << 22  # snowflake ids of boards a few milliseconds apart


def _copy_header() -> bytes:
    return b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")


def chunk_blocks(rows: int, owners: int, ids_per_chunk: int, now_us: int):
    """COPY ... (owner_id, timeline, first_id, last_id, ids, archived_at) FROM STDIN (FORMAT
    binary) blocks: row r is chunk r // owners of owner r % owners + 1 (archival goes through
    every timeline over time, so one owner's chunks lie far apart in the heap), a home timeline's
    ``ids_per_chunk`` ids newest first. Deterministic: the same bytes each time."""
    dtype = np.dtype(
        [
            ("fields", ">i2"),
            ("owner_len", ">i4"),
            ("owner", ">i8"),
            ("timeline_len", ">i4"),
            ("timeline", "S1"),
            ("first_len", ">i4"),
            ("first", ">i8"),
            ("last_len", ">i4"),
            ("last", ">i8"),
            ("ids_len", ">i4"),
            ("ndim", ">i4"),
            ("has_null", ">i4"),
            ("element_oid", ">i4"),
            ("dim", ">i4"),
            ("lower_bound", ">i4"),
            ("ids", [("length", ">i4"), ("value", ">i8")], (ids_per_chunk,)),
            ("at_len", ">i4"),
            ("at", ">i8"),
        ]
    )
    steps = np.arange(ids_per_chunk, dtype=np.int64) * ID_STEP
    for start in range(0, rows, BLOCK_ROWS):
        r = np.arange(start, min(start + BLOCK_ROWS, rows), dtype=np.int64)
        block = np.zeros(len(r), dtype=dtype)
        owner, chunk = r % owners + 1, r // owners
        last = (1 << 60) + (chunk * ids_per_chunk + ids_per_chunk) * ID_STEP + owner
        block["fields"] = 6
        block["owner_len"], block["owner"] = 8, owner
        block["timeline_len"], block["timeline"] = 1, b"p"
        block["first_len"], block["first"] = 8, last - steps[-1]
        block["last_len"], block["last"] = 8, last
        block["ids_len"] = 20 + 12 * ids_per_chunk
        block["ndim"], block["element_oid"], block["dim"], block["lower_bound"] = 1, 20, ids_per_chunk, 1
        block["ids"]["length"] = 8
        block["ids"]["value"] = last[:, None] - steps[None, :]
        block["at_len"], block["at"] = 8, now_us - (rows - r) * 1000
        yield block.tobytes()


def chunk_last(owner: int, chunk: int, ids_per_chunk: int) -> int:
    """The last_id chunk_blocks gives chunk ``chunk`` of ``owner`` (and any later chunk number)."""
    return (1 << 60) + (chunk * ids_per_chunk + ids_per_chunk) * ID_STEP + owner


def read_blocks(rows: int, today: int):
    """COPY ... (day, reader_id, board_id, read_at) FROM STDIN (FORMAT binary) blocks: READ_DAYS
    days of reads (day ``today`` - READ_DAYS + 1 .. today, days since 2000-01-01), in the order
    the flush writes them (by day); read j of a day is reader read_reader(j) reading board
    read_board(j): the key (day, reader, board) is unique."""
    dtype = np.dtype(
        [
            ("fields", ">i2"),
            ("day_len", ">i4"),
            ("day", ">i4"),
            ("reader_len", ">i4"),
            ("reader", ">i8"),
            ("board_len", ">i4"),
            ("board", ">i8"),
            ("at_len", ">i4"),
            ("at", ">i8"),
        ]
    )
    per_day = -(-rows // READ_DAYS)
    for start in range(0, rows, BLOCK_ROWS):
        r = np.arange(start, min(start + BLOCK_ROWS, rows), dtype=np.int64)
        block = np.zeros(len(r), dtype=dtype)
        day, j = today - READ_DAYS + 1 + r // per_day, r % per_day
        block["fields"] = 4
        block["day_len"], block["day"] = 4, day
        block["reader_len"], block["reader"] = 8, read_reader(j)
        block["board_len"], block["board"] = 8, read_board(j)
        block["at_len"], block["at"] = 8, day * 86_400_000_000 + j * 86_400_000_000 // per_day
        yield block.tobytes()


def read_reader(j):
    """The reader of a day's read j: 7,919 is prime to READS_PER_DAY_READERS, so readers spread."""
    return j * 7_919 % READS_PER_DAY_READERS + 1


def read_board(j):
    return (1 << 60) + j * ID_STEP


def view_hour_blocks(rows: int, hour: int):
    """COPY ... (hour, board_id, views) FROM STDIN (FORMAT binary): 24 hours of views."""
    dtype = np.dtype(
        [
            ("fields", ">i2"),
            ("hour_len", ">i4"),
            ("hour", ">i4"),
            ("board_len", ">i4"),
            ("board", ">i8"),
            ("views_len", ">i4"),
            ("views", ">i8"),
        ]
    )
    for start in range(0, rows, BLOCK_ROWS):
        r = np.arange(start, min(start + BLOCK_ROWS, rows), dtype=np.int64)
        block = np.zeros(len(r), dtype=dtype)
        block["fields"] = 3
        block["hour_len"], block["hour"] = 4, hour - r % 24
        block["board_len"], block["board"] = 8, (1 << 60) + r // 24 * ID_STEP
        block["views_len"], block["views"] = 8, 1 + r % 7
        yield block.tobytes()


class Twins:
    """A real table's single twin and its twin partitioned by HASH (``key``), in this database."""

    def __init__(self, model, name: str, key: str):
        self.real = model._meta.db_table
        self.single = f"bench_{name}_single"
        self.hash = f"bench_{name}_hash"
        self.key = key

    def create(self) -> None:
        """Both twins, empty and without indexes (they are built after the load, as after a
        restore): columns, defaults (an identity becomes a sequence's default on the partitioned
        one) and check constraints as the real table's."""
        sql = [
            f"DROP TABLE IF EXISTS {self.single}, {self.hash} CASCADE",
            f"DROP SEQUENCE IF EXISTS {self.hash}_seq",
            f"CREATE TABLE {self.single} (LIKE {self.real} INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING CONSTRAINTS)",
            f"CREATE TABLE {self.hash} (LIKE {self.real} INCLUDING DEFAULTS INCLUDING CONSTRAINTS) "
            f"PARTITION BY HASH ({self.key})",
        ]
        sql += [
            f"CREATE TABLE {self.hash}_{n:02d} PARTITION OF {self.hash} "
            f"FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {n})"
            for n in range(PARTITIONS)
        ]
        if self.identity():
            sql += [
                f"CREATE SEQUENCE {self.hash}_seq",
                f"ALTER TABLE {self.hash} ALTER COLUMN {self.identity()} SET DEFAULT nextval('{self.hash}_seq')",
            ]
        _run(sql)

    def identity(self) -> str | None:
        found = _one(
            "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attidentity <> ''", [self.real]
        )
        return found and found[0]

    def index_sql(self, table: str) -> list[str]:
        """The real table's indexes (pg_indexes), made on ``table``; on the partitioned twin a
        unique index without the partition key gets it first (PostgreSQL demands it there)."""
        statements = []
        for name, definition in _all(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s ORDER BY indexname", [self.real]
        ):
            made = definition.replace(f" ON public.{self.real} ", f" ON public.{table} ").replace(
                f"INDEX {name} ", f"INDEX {table}_{name} "
            )
            if table == self.hash:
                columns = re.search(r"USING btree \((.*)\)$", made).group(1)
                if "UNIQUE" in made and self.key not in re.findall(r"\w+", columns):
                    made = made.replace(f"({columns})", f"({self.key}, {columns})")
            statements.append(made)
        return statements

    def sizes(self, table: str) -> dict:
        """Bytes of the heap (with TOAST) and of the indexes of ``table``, every partition's added
        up, and of its largest partition."""
        parts = [table, *partitions(table)]
        figures = [
            _one(
                "SELECT pg_table_size(%s::regclass), pg_indexes_size(%s::regclass), "
                "(SELECT reltuples FROM pg_class WHERE oid = %s::regclass)",
                [p, p, p],
            )
            for p in parts
        ]
        heap, indexes = sum(f[0] for f in figures), sum(f[1] for f in figures)
        rows = max(sum(f[2] for f in figures[1:]) if len(figures) > 1 else figures[0][2], 1)
        largest = max(f[0] + f[1] for f in figures[1:]) if len(figures) > 1 else heap + indexes
        return {"heap": heap, "indexes": indexes, "rows": rows, "largest": largest}


def partitions(table: str) -> list[str]:
    """The partitions of ``table`` (none for a plain table)."""
    return [
        row[0]
        for row in _all("SELECT inhrelid::regclass::text FROM pg_inherits WHERE inhparent = %s::regclass", [table])
    ]


def prune_check(table: str, today: int) -> dict:
    """social.reading.reads_prune's statement, once, on ``table``, deleting the oldest day: how
    many rows it deleted, and how many of those were of days it must keep. On a partitioned
    table a ctid names a row only within its partition, so the statement's ``ctid IN (...)``
    matches rows of other partitions that share a ctid with an old row."""
    cutoff = PG_EPOCH.date() + timedelta(days=today - READ_DAYS + 2)  # only the oldest day is past it
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM {table} WHERE day < %s LIMIT %s) RETURNING day",
            [cutoff, ROWS_PER_STATEMENT],
        )
        days = [row[0] for row in cursor.fetchall()]
        transaction.set_rollback(True)  # the tables stay as loaded
    return {"deleted": len(days), "wrong": sum(day >= cutoff for day in days)}


def _run(statements: list[str]) -> float:
    started = time.perf_counter()
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
    return time.perf_counter() - started


def _one(sql: str, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def _all(sql: str, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def load(table: str, columns: str, blocks) -> float:
    """COPY ``table`` (``columns``) FROM STDIN (FORMAT binary) from ``blocks``; seconds taken."""
    started = time.perf_counter()
    with (
        connection.cursor() as cursor,
        cursor.connection.cursor().copy(f"COPY {table} ({columns}) FROM STDIN (FORMAT binary)") as copy,
    ):
        copy.write(_copy_header())
        for block in blocks:
            copy.write(block)
        copy.write((-1).to_bytes(2, "big", signed=True))
    return time.perf_counter() - started


def prepare(twins: Twins, columns: str, blocks, rows: int) -> dict:
    """Create, load, index and vacuum both twins; seconds of each step and the sizes."""
    twins.create()
    figures = {}
    for table in (twins.single, twins.hash):
        print(f"  {table}: COPY {rows:,} rows", flush=True)
        loaded = load(table, columns, blocks())
        print(f"  {table}: indexes", flush=True)
        indexed = _run(twins.index_sql(table))
        print(f"  {table}: VACUUM (ANALYZE)", flush=True)
        largest_vacuum = None
        if table == twins.hash:  # as autovacuum does it, a partition at a time, then the parent's statistics
            each = [_run([f"VACUUM (ANALYZE) {part}"]) for part in partitions(table)]
            vacuumed, largest_vacuum = sum(each) + _run([f"ANALYZE {table}"]), max(each)
        else:
            vacuumed = _run([f"VACUUM (ANALYZE) {table}"])
        figures[table] = {
            "copy": loaded,
            "index": indexed,
            "vacuum": vacuumed,
            "partition_vacuum": largest_vacuum,
            **twins.sizes(table),
        }
        print(f"  {table}: {figures[table]}", flush=True)
    return figures


def alternate(calls: int, make_call, tables: tuple[str, str], seed: int) -> dict[str, dict]:
    """``calls`` rounds of make_call(table, rng_value) on each table in turn (which goes first
    alternates), each call timed alone, twice over the same random owners: the first pass reads
    their pages into memory for both twins alike (the twin loaded last would otherwise be the
    warmer one), the second is timed. {table: measure.summarize of the second pass's samples}."""
    for _pass in ("warm", "timed"):  # the samples of the last pass are kept
        rng = np.random.default_rng(seed)
        samples = {table: [] for table in tables}
        for n in range(calls):
            value = int(rng.integers(1 << 62))
            for table in tables if n % 2 == 0 else tables[::-1]:
                call = make_call(table, value)
                started = time.perf_counter()
                call()
                samples[table].append((time.perf_counter() - started) * 1000)
    return {table: measure.summarize(sorted(s)) for table, s in samples.items()}


def cached_share(table: str) -> float | None:
    """The share of ``table``'s files (heap and indexes, every partition's) in the page cache,
    by fincore (util-linux), when the server's data directory is readable here; else None."""
    files = []
    for part in partitions(table) or [table]:
        relations = [part] + [
            row[0]
            for row in _all("SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = %s::regclass", [part])
        ]
        directory = Path(_one("SHOW data_directory")[0])
        for relation in relations:
            base = directory / _one("SELECT pg_relation_filepath(%s)", [relation])[0]
            files += [
                str(f) for f in base.parent.glob(base.name + "*") if re.fullmatch(base.name + r"(\.\d+)?", f.name)
            ]
    try:
        out = subprocess.run(
            ["fincore", "--bytes", "--noheadings", "--raw", "--output", "RES,SIZE", *files],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    pairs = [tuple(map(int, line.split())) for line in out.splitlines() if line.strip()]
    return sum(r for r, _ in pairs) / max(sum(size for _, size in pairs), 1)


def chunk_figures(twins: Twins, owners: int, calls: int) -> list[tuple[str, dict]]:
    """The archive's statements on each twin: what feeds.timelines.archive sends."""
    from feeds.models import TimelineChunk  # models: only once main() has set Django up

    ids_per_chunk = 100
    written = {twins.single: 0, twins.hash: 0}

    def write(table, value):
        owner = value % owners + 1
        chunk = CHUNKS_PER_OWNER + written[table]  # a new chunk, newer than any loaded
        written[table] += 1
        last = chunk_last(owner, chunk, ids_per_chunk)
        ids = [last - i * ID_STEP for i in range(ids_per_chunk)]

        def call():
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(
                    f"INSERT INTO {table} (owner_id, timeline, first_id, last_id, ids, archived_at) "
                    "VALUES (%s, %s, %s, %s, %s, now()) ON CONFLICT DO NOTHING",
                    [owner, TimelineChunk.Timeline.HOME, ids[-1], last, ids],
                )

        return call

    def page(rows):
        def make(table, value):
            owner = value % owners + 1

            def call():
                with connection.cursor() as cursor:
                    cursor.execute(
                        f"SELECT last_id, ids FROM {table} WHERE owner_id = %s AND timeline = %s "
                        "ORDER BY last_id DESC, first_id DESC LIMIT %s OFFSET %s",
                        [owner, TimelineChunk.Timeline.HOME, rows, 0],
                    )
                    assert len(cursor.fetchall()) == rows

            return call

        return make

    def archived_max(table, value):
        owner = value % owners + 1

        def call():
            with connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT max(last_id) FROM {table} WHERE owner_id = %s AND timeline = %s",
                    [owner, TimelineChunk.Timeline.HOME],
                )
                cursor.fetchone()

        return call

    tables = (twins.single, twins.hash)
    return [
        ("TimelineChunk: archive write of one chunk (a transaction)", alternate(calls, write, tables, 1)),
        ("TimelineChunk: archive read, the page below the head (2 rows)", alternate(calls, page(2), tables, 2)),
        ("TimelineChunk: archive read, the page at offset 2,000 (22 rows)", alternate(calls, page(22), tables, 3)),
        ("TimelineChunk: A from PostgreSQL (max(last_id), a Redis miss)", alternate(calls, archived_max, tables, 4)),
    ]


def read_figures(twins: Twins, rows: int, today: int, calls: int) -> list[tuple[str, dict]]:
    """The read flush's upsert (10,000 rows, half already stored) and the key look-up."""
    per_day = -(-rows // READ_DAYS)
    last_day_us = today * 86_400_000_000
    batches = {twins.single: 0, twins.hash: 0}
    epoch = PG_EPOCH.timestamp()

    def upsert(table, value):
        n = batches[table]
        batches[table] += 1
        half = ROWS_PER_STATEMENT // 2
        stored_today = rows - (READ_DAYS - 1) * per_day
        stored = np.random.default_rng(value).choice(
            stored_today, min(half, stored_today), replace=False
        )  # reads of today already written
        new = per_day + n * half + np.arange(half)  # and reads of today not yet
        j = np.concatenate([stored, new])
        readers = read_reader(j).tolist()
        boards = read_board(j).tolist()
        at = (epoch + (last_day_us / 1e6) + np.minimum(j, per_day - 1) * 86_400 / per_day).tolist()

        def call():
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(
                    f"INSERT INTO {table} AS r (day, reader_id, board_id, read_at) "
                    "SELECT (to_timestamp(d.t) AT TIME ZONE 'UTC')::date, d.reader, d.board, to_timestamp(d.t) "
                    "FROM unnest(%s::bigint[], %s::bigint[], %s::float8[]) AS d(reader, board, t) "
                    "ON CONFLICT (day, reader_id, board_id) DO UPDATE SET read_at = GREATEST(r.read_at, EXCLUDED.read_at)",
                    [readers, boards, at],
                )

        return call

    def lookup(table, value):
        back = value % (READ_DAYS - 1) + 1  # a whole day of the loaded ones (the last may be short)
        day, j = PG_EPOCH.date() + timedelta(days=today - back), value % per_day

        def call():
            with connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT read_at FROM {table} WHERE day = %s AND reader_id = %s AND board_id = %s",
                    [day, int(read_reader(j)), int(read_board(j))],
                )
                assert cursor.fetchone() is not None

        return call

    tables = (twins.single, twins.hash)
    return [
        (
            f"Read: the flush's upsert of {ROWS_PER_STATEMENT:,} reads (half stored)",
            alternate(max(calls // 50, 10), upsert, tables, 5),
        ),
        ("Read: one read by its whole key (the upsert's conflict check)", alternate(calls, lookup, tables, 6)),
    ]


def view_hour_size(rows: int, hour: int) -> dict:
    """BoardViewHour's bytes a row: a twin with its indexes, loaded with ``rows`` rows."""
    from feeds.models import BoardViewHour  # models: only once main() has set Django up

    twins = Twins(BoardViewHour, "viewhour", "board_id")
    _run([f"DROP TABLE IF EXISTS {twins.single}", f"CREATE TABLE {twins.single} (LIKE {twins.real} INCLUDING ALL)"])
    load(twins.single, "hour, board_id, views", view_hour_blocks(rows, hour))
    _run([f"VACUUM (ANALYZE) {twins.single}"])
    return twins.sizes(twins.single)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows of each table (TimelineChunk, Read)")
    parser.add_argument("--calls", type=int, default=2_000, help="calls of each statement on each twin")
    parser.add_argument("--keep", action="store_true", help="leave the twin tables in the database")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    django.setup()
    # The models and the command need Django set up first.
    from django.conf import settings
    from django.core.management import call_command

    from feeds.models import TimelineChunk
    from social.models import Read

    settings.DEBUG = False
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    now = datetime.now(UTC)
    now_us = int((now - PG_EPOCH).total_seconds() * 1e6)
    today = (now.date() - PG_EPOCH.date()).days
    owners = max(args.rows // CHUNKS_PER_OWNER, 1)
    chunk = Twins(TimelineChunk, "chunk", "owner_id")
    read = Twins(Read, "read", "reader_id")

    print(f"TimelineChunk: {args.rows:,} chunks of 100 ids, {owners:,} owners", flush=True)
    chunk_prep = prepare(
        chunk,
        "owner_id, timeline, first_id, last_id, ids, archived_at",
        lambda: chunk_blocks(args.rows, owners, 100, now_us),
        args.rows,
    )
    for table in (chunk.single, chunk.hash):
        chunk_prep[table]["cached"] = cached_share(table)
    chunk_rows = chunk_figures(chunk, owners, args.calls)
    print(f"Read: {args.rows:,} reads over {READ_DAYS} days", flush=True)
    read_prep = prepare(read, "day, reader_id, board_id, read_at", lambda: read_blocks(args.rows, today), args.rows)
    for table in (read.single, read.hash):
        read_prep[table]["cached"] = cached_share(table)
    read_rows = read_figures(read, args.rows, today, args.calls)
    pruned = {table: prune_check(table, today) for table in (read.single, read.hash)}
    print(f"  reads_prune's statement once: {pruned}", flush=True)
    print("BoardViewHour: 1,000,000 rows", flush=True)
    view_hours = view_hour_size(1_000_000, int(now.timestamp()) // 3600)
    if not args.keep:
        _run(
            [
                f"DROP TABLE IF EXISTS {t} CASCADE"
                for t in (chunk.single, chunk.hash, read.single, read.hash, "bench_viewhour_single")
            ]
        )
    write(
        args,
        owners,
        time.perf_counter() - started,
        [(chunk, chunk_prep, "TimelineChunk"), (read, read_prep, "Read")],
        chunk_rows + read_rows,
        (chunk, read),
        view_hours,
        pruned,
    )


def write(args, owners, elapsed, preps, rows, twins, view_hours, pruned) -> None:
    mb = 1024 * 1024
    lines = [
        "| statement (ms) | single p50 | single p99 | single mean | 16 partitions p50 | 16 partitions p99 | 16 partitions mean | partitions / single (mean) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (what, figures), pair in zip(rows, [twins[0]] * 4 + [twins[1]] * 2, strict=True):
        a, b = figures[pair.single], figures[pair.hash]
        lines.append(
            f"| {what} | {a['p50']:.3f} | {a['p99']:.3f} | {a['mean']:.3f} | {b['p50']:.3f} | {b['p99']:.3f} | "
            f"{b['mean']:.3f} | {b['mean'] / a['mean']:.2f}x |"
        )
    upkeep = [
        "| table | layout | COPY s | index build s | VACUUM (ANALYZE) s | heap MB | indexes MB | bytes a row (heap + indexes) | largest partition MB, its VACUUM (ANALYZE) s | in the page cache after both loads |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for pair, prep, name in preps:
        for table, layout in ((pair.single, "single"), (pair.hash, f"{PARTITIONS} partitions by hash")):
            f = prep[table]
            upkeep.append(
                f"| {name} | {layout} | {f['copy']:.1f} | {f['index']:.1f} | {f['vacuum']:.1f} | {f['heap'] / mb:,.0f} | "
                f"{f['indexes'] / mb:,.0f} | {(f['heap'] + f['indexes']) / f['rows']:.0f} | "
                + (
                    f"{f['largest'] / mb:,.0f}, {f['partition_vacuum']:.1f}"
                    if f["partition_vacuum"] is not None
                    else "—"
                )
                + (f" | {f['cached']:.0%} |" if f.get("cached") is not None else " | — |")
            )
    upkeep.append(
        f"| BoardViewHour | single | — | — | — | {view_hours['heap'] / mb:,.0f} | {view_hours['indexes'] / mb:,.0f} | "
        f"{(view_hours['heap'] + view_hours['indexes']) / view_hours['rows']:.0f} | 1,000,000 rows | — |"
    )
    command_args = "" if args.rows == 10_000_000 else f' ARGS="--rows {args.rows} --calls {args.calls}"'
    machine = f"{platform.node()}: {os.cpu_count()} cores, {platform.platform()}, Python {platform.python_version()}"
    text = (
        "# Partitioning TimelineChunk and Read by owner\n\n"
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine}; `make bench-partition`"
        f"{command_args}, {elapsed / 60:.1f} minutes, "
        f"load average {os.getloadavg()[0]:.1f} at the end. {args.rows:,} rows in each twin of each table "
        f"(TimelineChunk: {owners:,} owners, {CHUNKS_PER_OWNER} chunks of 100 ids each, in archival order; "
        f"Read: {READ_DAYS} days, {READS_PER_DAY_READERS:,} readers); "
        f"{args.calls:,} calls of each statement on each twin in turn (the upsert {max(args.calls // 50, 10)}), "
        "each on a random owner, timed on a second pass over the same owners (the first reads their pages into "
        "memory for both twins alike: the twin loaded last is otherwise the warmer, last column). PostgreSQL as scripts/with-servers.sh starts it (fsync off, default "
        "shared_buffers): the same for both layouts.\n\n"
        f"{chr(10).join(lines)}\n\n{chr(10).join(upkeep)}\n\n"
        "social.reading.reads_prune's statement (`DELETE ... WHERE ctid IN (SELECT ctid ... WHERE day < %s "
        "LIMIT 10000)`), run once on each Read twin to delete the oldest day, then rolled back: "
        + "; ".join(
            f"{layout} deleted {pruned[t]['deleted']:,} rows (a batch is 10,000), "
            f"{pruned[t]['wrong']:,} of them of days it must keep"
            for t, layout in ((twins[1].single, "single"), (twins[1].hash, "partitioned"))
        )
        + ".\n"
    )
    RESULTS.mkdir(exist_ok=True)
    name = "partition.md" if args.rows == 10_000_000 else "partition-small.md"
    (RESULTS / name).write_text(text)
    print("\n" + text)
    print(f"written: bench/results/{name}")


if __name__ == "__main__":
    main()
