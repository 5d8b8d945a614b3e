"""Compaction: a live board's doc from Redis into PostgreSQL's ``Board.doc_json`` (with the seq
it holds in ``Board.live_seq``), through the one board update service, so G, the preview, the
feed cards and discovery's ``updated`` follow the compacted doc, never each stroke.

Run by beat every LIVE_COMPACT_SECONDS for the boards dirty that long (feeds.tasks), and by a
task when the last editor leaves a board. Idempotent: the doc written is the live state at a
seq, written only over an older one; a crash before the mark leaves the board dirty, and the
next run writes the same doc again or a later one.
"""

import logging

from feeds.live import oplog
from feeds.live.oplog import BoardRef
from feeds.models import Board
from feeds.services.boards import board_update

logger = logging.getLogger(__name__)


def board_compact(board_id: int) -> int | None:
    """Write a live board's doc to PostgreSQL if it is ahead of it: the seq written, or None
    when there was nothing to write. O(elements) in Redis, one UPDATE of one row."""
    board = Board.objects.select_related("author").filter(pk=board_id).first()
    if board is None:
        return None
    ref = BoardRef.of(board)
    snapshot = oplog.live_snapshot(ref)
    if snapshot is None:
        oplog.dirty_clear(ref, 0)
        return None
    if snapshot.seq > board.live_seq and board.state == Board.State.PUBLISHED:
        board_update(board=board, changes={"doc": snapshot.doc()}, live_seq=snapshot.seq)
        written = snapshot.seq
    else:
        written = None
    oplog.live_mark_compacted(ref, snapshot.seq)
    oplog.dirty_clear(ref, snapshot.seq)
    return written


def compact_due(*, older_than: float, limit: int = 100) -> int:
    """Compact the boards dirty since before ``older_than``; how many were written."""
    written = 0
    for ref in oplog.dirty_due(older_than=older_than, limit=limit):
        try:
            written += board_compact(ref.board_id) is not None
        except Exception:  # one board's failure must not stop the others; it stays dirty
            logger.exception("compacting board %s failed; the next run tries again", ref.board_id)
    return written
