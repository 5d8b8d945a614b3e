"""Reads about boards for views and the API."""

import json

from feeds import boardcache, keys, timelines
from feeds.boardcache import summary_from_fields
from feeds.models import Board
from ugcsite.api import not_found
from ugcsite.redis import get_redis


def board_get_visible(board_id: int) -> Board:
    """A published board with its author (one query), or a 404."""
    board = Board.objects.select_related("author").filter(pk=board_id, state=Board.State.PUBLISHED).first()
    if board is None:
        raise not_found(f"board {board_id}")
    return board


def board_summary(board: Board) -> dict:
    """The summary form of API.md."""
    return summary_from_fields(boardcache.fields_of(board))


def board_full_json(board: Board) -> str:
    """The full form as JSON text, with the stored drawing spliced in as it is (no re-encoding)."""
    summary = json.dumps(board_summary(board), ensure_ascii=False)
    return f'{summary[:-1]}, "doc": {board.doc_json}}}'


def boards_hydrate(board_ids: list[int]) -> tuple[list[dict], list[int]]:
    """Summaries of the given boards in the given order, and the ids that are not visible.

    One pipelined round trip to G; only the misses touch PostgreSQL (one query), and they are
    written back to G. Cost O(k) for k ids.
    """
    cached = boardcache.board_cache_get_many(board_ids)
    missing = [board_id for board_id in board_ids if board_id not in cached]
    if missing:
        found = Board.objects.select_related("author").filter(pk__in=missing, state=Board.State.PUBLISHED)
        pipe = get_redis().pipeline(transaction=False)
        for board in found:
            fields = boardcache.fields_of(board)
            cached[board.id] = fields
            boardcache.board_cache_put(board, pipe=pipe)
        pipe.execute()
    summaries = [summary_from_fields(cached[board_id]) for board_id in board_ids if board_id in cached]
    gone = [board_id for board_id in board_ids if board_id not in cached]
    return summaries, gone


def _timeline_answer(key: str, *, offset, before, limit) -> dict:
    page = timelines.page(key, offset=offset, before=before, limit=limit)
    items, gone = boards_hydrate(page.ids)
    if gone:  # deleted or hidden boards a retraction has not reached yet: drop them now
        get_redis().zrem(key, *gone)
    return {"items": items, "next": str(page.ids[-1]) if page.has_more else None}


def profile_boards(user_id: int, *, offset: int | None, before: int | None, limit: int) -> dict:
    """A user's boards, newest first (list_recent). O(log |M| + limit) plus hydration."""
    return _timeline_answer(keys.profile_timeline(user_id), offset=offset, before=before, limit=limit)


def home_feed(user_id: int, *, offset: int | None, before: int | None, limit: int) -> dict:
    """A user's home feed, newest first (list_public_feed). O(log |P| + limit) plus hydration."""
    return _timeline_answer(keys.home_timeline(user_id), offset=offset, before=before, limit=limit)
