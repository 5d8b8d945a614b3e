"""View counters: live in Redis, flushed to PostgreSQL on a schedule.

A view increments, in one pipeline: the board's pending count (flushed to ``Board.views`` by
beat, so losing Redis loses at most one flush interval of counts), its hour's count (trending
is rolled up from the last 24 hours), the popular order and its cached G entry. No
PostgreSQL write per view. The live figure is PostgreSQL's count plus what is pending.
Storage only.
"""

from collections.abc import Iterable

from django.db import connection, transaction
from redis.exceptions import ResponseError

from feeds import keys
from feeds.discovery.indexes import popular_add_view
from feeds.discovery.trending import HOUR, TRENDING_HOURS, current_hour
from feeds.models import Board
from feeds.scripts import scripts
from ugcsite.redis import get_redis


def view_record(board_id: int, *, now: float | None = None) -> None:
    """Count one view of a board. One pipeline, O(log n)."""
    hour_key = keys.views_hour(current_hour(now))
    pipe = get_redis().pipeline(transaction=False)
    pipe.hincrby(keys.views_pending(), board_id, 1)
    pipe.zincrby(hour_key, 1, board_id)
    pipe.expire(hour_key, (TRENDING_HOURS + 2) * HOUR)
    popular_add_view(board_id, pipe=pipe)
    scripts.hincrby_if_exists(keys=[keys.board(board_id)], args=["views", 1], client=pipe)
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
    return {
        board_id: int(a or 0) + int(b or 0)
        for board_id, a, b in zip(board_ids, pending, flushing)
    }


def views_flush() -> int:
    """Move the pending counts into ``Board.views``: the hash is renamed aside, written to
    PostgreSQL in one statement, then deleted. A flush that died before the delete is finished
    first by the next one. Returns the number of boards updated. Offline, O(boards viewed)."""
    client = get_redis()
    if not client.exists(keys.views_flushing()):
        try:
            client.rename(keys.views_pending(), keys.views_flushing())
        except ResponseError as error:  # no such key: nothing viewed since the last flush
            if "no such key" not in str(error).lower():
                raise
            return 0
    counts = {int(k): int(v) for k, v in client.hgetall(keys.views_flushing()).items()}
    if counts:
        ids, deltas = zip(*counts.items())
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {Board._meta.db_table} AS b SET views = b.views + d.n "
                "FROM unnest(%s::bigint[], %s::bigint[]) AS d(id, n) WHERE b.id = d.id",
                [list(ids), list(deltas)],
            )
    client.delete(keys.views_flushing())
    return len(counts)
