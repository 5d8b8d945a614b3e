"""Likes (docs/api.md, "Likes and remixes"). Storage only: feeds.services.likes decides who may
like what and who is told.

PostgreSQL is the truth: a Like row per person and board, and ``Board.likes``, the likes that
count, changed in the like's own transaction. A like is one increment: a storm of likes on one
board is a run of one-row updates, with nothing fanned out per like. Redis keeps what pages read
hot, written on commit:
- the count in G (``likes``) and the ``likes`` sort order, moved by the same increment;
- the likes of each hour, which beat rolls into the ``likes-trending`` order (the last 24 hours);
- each person's liked boards, user -> boards as social reading keeps reads (a board liked by
  millions is no hot key): ``lk`` (board -> when) and its twin set ``lks``, so "liked by people
  you follow" is social reading's N x M question (social.reading.holders_of).
A like counts while its person may use the site: a suspension, or a closing account, marks their
likes uncounted and takes them off every count (``likes_uncount``, in Celery); lifting it counts
them again (``likes_recount``). A rebuild restores all of it from the rows (``likes_recount_all``,
``likes_stored``, ``liked_replace``, ``liked_hours``).
"""

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from itertools import groupby

from django.db import connection, transaction
from django.db.models import F
from django.db.models.functions import Greatest

from feeds import keys
from feeds.discovery import indexes
from feeds.discovery.trending import TRENDING_HOURS, current_hour, hour_expiry, window_keys
from feeds.models import Board, Like
from feeds.scripts import scripts
from social import reading
from ugcsite.platform.redis import get_redis

_LIKES, _BOARDS = Like._meta.db_table, Board._meta.db_table
BATCH = 1_000  # likes a statement when a person's likes are counted or uncounted


def like_add(board_id: int, user_id: int, at: datetime) -> bool:
    """Insert a like and count it in Board.likes, in the caller's transaction. False (and
    nothing written) when the person likes the board already. O(log n)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {_LIKES} (board_id, user_id, created_at, counted) VALUES (%s, %s, %s, true) "
            "ON CONFLICT (board_id, user_id) DO NOTHING RETURNING id",
            [board_id, user_id, at],
        )
        if cursor.fetchone() is None:
            return False
    Board.objects.filter(pk=board_id).update(likes=F("likes") + 1)
    return True


def like_remove(board_id: int, user_id: int) -> tuple[datetime, bool] | None:
    """Delete a like and, if it counted, take it off Board.likes, in the caller's transaction:
    (when it was made, whether it counted), or None when there was none. O(log n)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {_LIKES} WHERE board_id = %s AND user_id = %s RETURNING created_at, counted",
            [board_id, user_id],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    if row[1]:
        Board.objects.filter(pk=board_id).update(likes=Greatest(F("likes") - 1, 0))
    return row[0], row[1]


def liked_put(user_id: int, board_id: int, at: float, *, pipe) -> None:
    """The board into the person's liked sets (lk, lks: their slot). O(log n), inside ``pipe``."""
    pipe.zadd(keys.likes(user_id), {board_id: at})
    pipe.sadd(keys.like_ids(user_id), board_id)


def liked_remove(user_id: int, board_id: int, *, pipe) -> None:
    """The board out of the person's liked sets. O(log n), inside ``pipe``."""
    pipe.zrem(keys.likes(user_id), board_id)
    pipe.srem(keys.like_ids(user_id), board_id)


def counts_move(changes: Iterable[tuple[int, float]], delta: int, *, pipe, now: float | None = None) -> None:
    """Move the counts of each (board id, when liked) of ``changes`` by ``delta`` (1 or -1): G's
    ``likes`` (if the board is cached), the likes order (if indexed) and, for a like made within
    the trending window, its hour's count. O(k log n) for k changes, inside ``pipe``."""
    first = current_hour(now) - TRENDING_HOURS + 1
    for board_id, at in changes:
        scripts.hincrby_if_exists(keys=[keys.board(board_id)], field="likes", increment=delta, client=pipe)
        indexes.likes_add(board_id, delta, pipe=pipe)
        hour = current_hour(at)
        if hour >= first:
            pipe.zincrby(keys.likes_hour(hour), delta, board_id)
            pipe.expireat(keys.likes_hour(hour), hour_expiry(hour))


def like_cached(user_id: int, board_id: int, at: float, delta: int, *, counted: bool = True) -> None:
    """The Redis side of one like (``delta`` 1) or unlike (-1), run on commit: the person's
    liked sets, and the counts when the like counts. One pipeline, O(log n)."""
    pipe = get_redis().pipeline(transaction=False)
    if delta > 0:
        liked_put(user_id, board_id, at, pipe=pipe)
    else:
        liked_remove(user_id, board_id, pipe=pipe)
    if counted:
        counts_move([(board_id, at)], delta, pipe=pipe)
    pipe.execute()


def liked_among(user_id: int, board_ids: list[int]) -> set[int]:
    """Which of ``board_ids`` the person likes: one SMISMEMBER in their slot, O(k)."""
    if not board_ids:
        return set()
    answer = get_redis().smismember(keys.like_ids(user_id), board_ids)
    return {board_id for board_id, member in zip(board_ids, answer, strict=True) if member}


def likers_of(board_ids: list[int], person_ids: Iterable[int]) -> dict[int, list[int]]:
    """For each board, which of ``person_ids`` like it: social reading's N x M question over
    the liked sets (social.reading.holders_of): one round trip per Redis node,
    O(min(likes, N) log N) a person."""
    return reading.holders_of(
        board_ids, person_ids, ranked=keys.likes, ids=keys.like_ids, scratch=keys.likes_query, cutoff=0
    )


def liked_counts(person_ids: Iterable[int], *, since: float):
    """How many of ``person_ids`` liked each board since ``since`` (epoch seconds): a Counter.
    One pipeline, O(their likes since then)."""
    return reading.held_counts(person_ids, ranked=keys.likes, cutoff=since)


def _count_batch(user_id: int, *, counted: bool) -> list[tuple[int, float]]:
    """Mark up to BATCH of a person's likes ``counted`` (those not so yet) and move Board.likes
    with them, in one statement: the (board id, when liked) changed. O(BATCH log n)."""
    delta = "+ 1" if counted else "- 1"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"WITH changed AS ("
            f"  UPDATE {_LIKES} SET counted = %s WHERE id IN ("
            f"    SELECT id FROM {_LIKES} WHERE user_id = %s AND counted = %s ORDER BY board_id LIMIT %s FOR UPDATE"
            f"  ) RETURNING board_id, created_at"
            f"), moved AS ("
            f"  UPDATE {_BOARDS} b SET likes = GREATEST(b.likes {delta}, 0) FROM changed c WHERE b.id = c.board_id"
            f") SELECT board_id, extract(epoch FROM created_at)::float8 FROM changed",
            [counted, user_id, not counted, BATCH],
        )
        changes = [(int(board_id), at) for board_id, at in cursor.fetchall()]
    if changes:
        pipe = get_redis().pipeline(transaction=False)
        counts_move(changes, 1 if counted else -1, pipe=pipe)
        pipe.execute()
    return changes


def likes_uncount(user_id: int) -> int:
    """Stop counting a person's likes (suspended, or their account closing): every like of
    theirs marked uncounted and taken off its board's count, BATCH a transaction. Idempotent.
    Offline (Celery), O(their likes). Returns how many stopped counting."""
    total = 0
    while changes := _count_batch(user_id, counted=False):
        total += len(changes)
    return total


def likes_recount(user_id: int) -> int:
    """Count a person's likes again (their suspension lifted): likes_uncount undone. Idempotent.
    Offline (Celery), O(their likes). Returns how many count again."""
    total = 0
    while changes := _count_batch(user_id, counted=True):
        total += len(changes)
    return total


def likes_forget(board_ids: list[int], *, now: float | None = None) -> None:
    """Boards that go for good (their author's account is purged) out of their likers' liked
    sets and the hourly counts. Offline: O(their likes), one pipeline per BATCH likers."""
    if not board_ids:
        return
    rows = Like.objects.filter(board_id__in=board_ids).values_list("user_id", "board_id").iterator(chunk_size=BATCH)
    pipe = get_redis().pipeline(transaction=False)
    for done, (user_id, board_id) in enumerate(rows, start=1):
        liked_remove(user_id, board_id, pipe=pipe)
        if done % BATCH == 0:
            pipe.execute()
    for key in window_keys(now, hour_key=keys.likes_hour):
        pipe.zrem(key, *board_ids)
    pipe.execute()


# --- rebuild -------------------------------------------------------------------------------------


def likes_recount_all() -> int:
    """Set every Board.likes from its counted Like rows, where the two differ (rebuild: the
    rows are the truth). Offline: one statement over the likes and boards. Returns the boards fixed."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_BOARDS} b SET likes = c.n FROM ("
            f"  SELECT b2.id, count(l.id) AS n FROM {_BOARDS} b2"
            f"  LEFT JOIN {_LIKES} l ON l.board_id = b2.id AND l.counted GROUP BY b2.id"
            f") c WHERE b.id = c.id AND b.likes <> c.n"
        )
        return cursor.rowcount


def likes_stored(user_ids: Iterable[int]) -> Iterator[tuple[int, dict[int, float]]]:
    """Each person's likes as stored in PostgreSQL, (user id, {board id: when}), by user id, for
    the people of ``user_ids`` (rebuild). One streaming query: O(their likes)."""
    rows = (
        Like.objects.filter(user_id__in=list(user_ids))
        .order_by("user_id")
        .values_list("user_id", "board_id", "created_at")
        .iterator(chunk_size=10_000)
    )
    for user_id, group in groupby(rows, key=lambda row: row[0]):
        yield user_id, {board_id: at.timestamp() for _, board_id, at in group}


def liked_replace(liked: Iterable[tuple[int, dict[int, float]]], user_ids: Iterable[int]) -> int:
    """Rewrite the liked sets of ``user_ids``, those of ``liked`` from its (user id, {board id:
    when}), the others emptied (rebuild). One pipeline per 1,000 people, O(n log n) for n likes.
    Returns the people written."""
    found = dict(liked)
    pipe, written = get_redis().pipeline(transaction=False), 0
    for user_id in user_ids:
        pipe.delete(keys.likes(user_id))
        pipe.delete(keys.like_ids(user_id))  # one key a DEL: a cluster pipeline takes no other
        if boards := found.get(user_id):
            pipe.zadd(keys.likes(user_id), boards)
            pipe.sadd(keys.like_ids(user_id), *boards)
        written += 1
        if written % 1000 == 0:
            pipe.execute()
    pipe.execute()
    return written


def liked_hours(*, now: float | None = None) -> dict[int, dict[int, int]]:
    """The counted likes of the trending window, {hour: {board id: likes}} (rebuild). One query
    over the window's likes (a scan of the table: offline only)."""
    first = current_hour(now) - TRENDING_HOURS + 1
    since = datetime.fromtimestamp(first * 3600, tz=UTC)
    found: dict[int, dict[int, int]] = {}
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT floor(extract(epoch FROM created_at) / 3600)::int, board_id, count(*) FROM {_LIKES} "
            "WHERE counted AND created_at >= %s GROUP BY 1, 2",
            [since],
        )
        for hour, board_id, count in cursor.fetchall():
            found.setdefault(hour, {})[board_id] = count
    return found


def hours_clear(*, now: float | None = None) -> None:
    """Delete the hourly like counts of the trending window (rebuild, before liked_hours go in)."""
    client = get_redis()
    for key in window_keys(now, hour_key=keys.likes_hour):
        client.delete(key)
