"""View counters: live in Redis, flushed to PostgreSQL on a schedule.

A view increments, in one pipeline: the board's pending count and its pending count for the
hour (both flushed by beat, every VIEWS_FLUSH_SECONDS, into ``Board.views`` and the
BoardViewHour rows, so losing Redis loses at most one flush interval of views), its hour's
count (trending is rolled up from the last 24 hours), the popular order and its cached G
entry. No PostgreSQL write per view. The live figure is PostgreSQL's count plus what is pending.
Storage only.
"""

import time
import uuid
from collections.abc import Iterable
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from feeds import keys
from feeds.discovery.indexes import popular_add_view
from feeds.discovery.trending import TRENDING_HOURS, current_hour, hour_expiry, window_keys
from feeds.models import Board, BoardViewHour, ViewFlush
from feeds.scripts import scripts
from ugcsite.platform.redis import get_redis, rename_aside
from ugcsite.platform.sql import execute_columns

SEEN_KEEP_SECONDS = 2 * 24 * 3600  # a day's viewers are kept past the day's end, then go
DAY = 24 * 3600


def view_seen(board_id: int, viewer: str, *, now: float | None = None) -> bool:
    """Whether this is ``viewer``'s first view of the board today (UTC), recording it: one SADD
    and EXPIRE in the board's slot, O(1)."""
    moment = time.time() if now is None else now
    key = keys.views_seen(board_id, int(moment // DAY))
    pipe = get_redis().pipeline(transaction=False)
    pipe.sadd(key, viewer)
    pipe.expire(key, SEEN_KEEP_SECONDS)
    return bool(pipe.execute()[0])


def view_record(board_id: int, *, now: float | None = None) -> None:
    """Count one view of a board. One pipeline, O(log n)."""
    hour = current_hour(now)
    hour_key = keys.views_hour(hour)
    pipe = get_redis().pipeline(transaction=False)
    pipe.hincrby(keys.views_pending(), board_id, 1)
    pipe.hincrby(keys.views_pending(), keys.views_pending_hour(board_id, hour), 1)
    pipe.zincrby(hour_key, 1, board_id)
    pipe.expireat(hour_key, hour_expiry(hour))
    popular_add_view(board_id, pipe=pipe)
    scripts.hincrby_if_exists(keys=[keys.board(board_id)], field="views", increment=1, client=pipe)
    pipe.execute()


def pending_views(board_ids: Iterable[int]) -> dict[int, int]:
    """Views counted in Redis but not yet in PostgreSQL, per board (pending and mid-flush).
    One pipeline, O(k)."""
    board_ids = list(board_ids)
    if not board_ids:
        return {}
    pipe = get_redis().pipeline(transaction=False)
    pipe.hmget(keys.views_pending(), board_ids)
    pipe.hmget(keys.views_flushing(), board_ids)
    pending, flushing = pipe.execute()
    return {board_id: int(a or 0) + int(b or 0) for board_id, a, b in zip(board_ids, pending, flushing)}


def views_flush() -> int:
    """Move the pending counts into ``Board.views`` and the hourly BoardViewHour rows: the
    hash is renamed aside and given a batch token, written to PostgreSQL in one transaction
    that also records the token, then deleted. A flush that died before the delete is finished
    by the next one, and its token keeps a committed batch from being counted twice. Returns
    the number of boards updated. Offline, O(boards viewed since the last flush)."""
    client = get_redis()
    batch = keys.views_flushing()
    if not rename_aside(client, keys.views_pending(), batch):
        return 0
    client.hsetnx(batch, keys.VIEWS_BATCH_FIELD, uuid.uuid4().hex)
    fields = client.hgetall(batch)
    totals: dict[int, int] = {}
    hourly: dict[tuple[int, int], int] = {}
    for field, count in fields.items():
        parsed = keys.parse_views_pending_field(field)
        if parsed is None:
            continue
        board_id, hour = parsed
        if hour is None:
            totals[board_id] = int(count)
        else:
            hourly[(board_id, hour)] = int(count)
    with transaction.atomic():
        _, first_time = ViewFlush.objects.get_or_create(token=fields[keys.VIEWS_BATCH_FIELD])
        if first_time:
            _views_write(totals, hourly)
    client.delete(batch)
    return len(totals)


def _views_write(totals: dict[int, int], hourly: dict[tuple[int, int], int]) -> None:
    """Add the counts to PostgreSQL (inside the caller's transaction). O(rows)."""
    with connection.cursor() as cursor:
        execute_columns(
            cursor,
            f"UPDATE {Board._meta.db_table} AS b SET views = b.views + d.n "
            "FROM unnest(%s::bigint[], %s::bigint[]) AS d(id, n) WHERE b.id = d.id",
            list(totals.items()),
        )
        execute_columns(
            cursor,
            f"INSERT INTO {BoardViewHour._meta.db_table} AS h (hour, board_id, views) "
            "SELECT * FROM unnest(%s::int[], %s::bigint[], %s::bigint[]) "
            "ON CONFLICT (hour, board_id) DO UPDATE SET views = h.views + EXCLUDED.views",
            [(hour, board_id, n) for (board_id, hour), n in hourly.items()],
        )


def view_hours_recent(*, now: float | None = None) -> dict[int, dict[int, int]]:
    """The views of the trending window, {hour: {board id: views}}: the stored hourly counts
    plus those still pending (rebuild). One indexed query and one pipeline, O(boards viewed in
    the window)."""
    found: dict[int, dict[int, int]] = {}
    first = current_hour(now) - TRENDING_HOURS + 1
    rows = BoardViewHour.objects.filter(hour__gte=first).values_list("hour", "board_id", "views")
    for hour, board_id, views in rows.iterator(chunk_size=10_000):
        found.setdefault(hour, {})[board_id] = views
    pipe = get_redis().pipeline(transaction=False)
    pipe.hgetall(keys.views_pending())
    pipe.hgetall(keys.views_flushing())
    for pending in pipe.execute():
        for field, count in pending.items():
            parsed = keys.parse_views_pending_field(field)
            if parsed is not None and parsed[1] is not None and parsed[1] >= first:
                board_id, hour = parsed
                by_board = found.setdefault(hour, {})
                by_board[board_id] = by_board.get(board_id, 0) + int(count)
    return found


def view_history_prune(*, now: float | None = None) -> int:
    """Delete the hourly counts older than the trending window (and a spare hour) and the
    batch tokens older than a day. Offline, O(rows deleted). Returns the hourly rows deleted."""
    deleted, _ = BoardViewHour.objects.filter(hour__lt=current_hour(now) - TRENDING_HOURS - 1).delete()
    ViewFlush.objects.filter(applied_at__lt=timezone.now() - timedelta(days=1)).delete()
    return deleted


def views_forget(board_ids: list[int], *, now: float | None = None) -> None:
    """Boards that will never be counted again (their author's account is deleted) out of the
    pending counts (waiting or being flushed) and the hourly counts of the trending window.
    Offline: O(pending fields + window hours x boards), one pipeline."""
    if not board_ids:
        return
    client, gone = get_redis(), set(board_ids)
    pipe = client.pipeline(transaction=False)
    for key in (keys.views_pending(), keys.views_flushing()):
        fields = []
        for field, _ in client.hscan_iter(key, count=1000):
            parsed = keys.parse_views_pending_field(field)
            if parsed is not None and parsed[0] in gone:
                fields.append(field)
        if fields:
            pipe.hdel(key, *fields)
    for key in window_keys(now):
        pipe.zrem(key, *board_ids)
    pipe.execute()
