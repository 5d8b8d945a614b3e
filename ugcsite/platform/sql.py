"""Batched writes to PostgreSQL that every app uses: many rows in one statement through
``unnest`` of one array per column, ROWS_PER_STATEMENT rows at a time (Django's bulk_update
writes a CASE per row; this is one plan whatever the count)."""

from collections.abc import Callable, Sequence

# Rows per statement of a batched write: large enough that a flush of a busy minute is a few
# statements, small enough that one statement's arrays stay a few hundred KiB.
ROWS_PER_STATEMENT = 10_000


def execute_columns(cursor, sql: str, rows: Sequence[tuple], *, arrange: Callable[..., list] | None = None) -> None:
    """Run ``sql`` once per ROWS_PER_STATEMENT ``rows``, its parameters each column of those
    rows as a list (for ``unnest(%s::bigint[], %s::float8[])``), in column order, or as
    ``arrange(*columns)`` puts them. Nothing runs for no rows. O(rows)."""
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        columns = [list(column) for column in zip(*rows[start : start + ROWS_PER_STATEMENT])]
        cursor.execute(sql, arrange(*columns) if arrange else columns)
