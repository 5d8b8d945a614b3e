"""Writes about a board's versions (docs/api.md, "Versions"): a restore."""

import json

from feeds import versions
from feeds.models import Board
from feeds.services.boards import board_update


def version_restore(*, board: Board, n: int, by: str) -> Board:
    """Make version ``n`` of ``board`` its drawing again, as a new version (nothing is lost: every
    version stays, the one before the restore too). Through the one board update service, so a
    live board's doc is replaced in its log and every connection gets it at once (a fresh hello).
    ``board.version`` is the new version's number. VersionNotFound if there is no version ``n``.
    O(size of the doc)."""
    _, doc_json = versions.version_get(board.pk, n)
    return board_update(board=board, changes={"doc": json.loads(doc_json)}, by=by)
