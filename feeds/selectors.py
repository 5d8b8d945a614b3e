"""Reads about boards for views and the API."""

from feeds.boardcache import summary_from_fields
from feeds.models import Board
from ugcsite.api import not_found


def board_get_visible(board_id: int) -> Board:
    """A published board with its author (one query), or a 404."""
    board = Board.objects.select_related("author").filter(pk=board_id, state=Board.State.PUBLISHED).first()
    if board is None:
        raise not_found(f"board {board_id}")
    return board


def board_summary(board: Board) -> dict:
    """The summary form of API.md."""
    return {
        "id": board.id,
        "author": board.author.username,
        "title": board.title,
        "kind": board.kind,
        "tags": list(board.tags),
        "created_at": board.created_at.isoformat(),
        "updated_at": board.updated_at.isoformat(),
        "views": board.views,
        "preview_url": f"/api/v1/boards/{board.id}/preview.svg",
    }


def board_full_json(board: Board) -> str:
    """The full form as JSON text, with the stored drawing spliced in as it is (no re-encoding)."""
    import json

    summary = json.dumps(board_summary(board), ensure_ascii=False)
    return f'{summary[:-1]}, "doc": {board.doc_json}}}'
