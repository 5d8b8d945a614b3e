"""Compaction: a live board's doc from Redis into PostgreSQL's ``Board.doc_json`` (with the seq
it holds in ``Board.live_seq``), through the one board update service, so G, the preview, the
feed cards and discovery's ``updated`` follow the compacted doc, never each stroke.

Run by beat every LIVE_COMPACT_SECONDS for the boards dirty that long (feeds.tasks), and by a
task when the last editor leaves a board. Idempotent: the doc written is the live state at a
seq, written only over an older one; a crash before the mark leaves the board dirty, and the
next run writes the same doc again or a later one.
"""

import logging
import time

from django.contrib.auth import get_user_model
from django.db import transaction

from feeds import tasks, versions
from feeds.live import oplog
from feeds.live.oplog import BoardRef
from feeds.models import Board, BoardEditor
from feeds.services.boards import board_update, enqueue
from feeds.services.notifications import notify_board_changed

logger = logging.getLogger(__name__)


def board_compact(board_id: int, *, last_editor_left: bool = False) -> int | None:
    """Write a live board's doc to PostgreSQL if it is ahead of it: the seq written, or None
    when there was nothing to write (or another compaction wrote it first). O(elements) in
    Redis, one locked row.

    A version is kept (feeds.versions) when the doc written is VERSION_EVERY_SECONDS past the
    latest version, and when the last editor left (``last_editor_left``), unless the doc equals
    the latest version's; who drew meanwhile is noted for it, and the board's picture is
    rendered (at once, not at the end of its window). One indexed read more a run."""
    board = Board.objects.select_related("author").filter(pk=board_id).first()
    if board is None:
        return None
    ref = BoardRef.of(board)
    snapshot = oplog.live_snapshot(ref)
    if snapshot is None:
        oplog.dirty_clear(ref, 0)
        return None
    written = None
    if snapshot.seq > board.live_seq and board.state == Board.State.PUBLISHED:
        changed_by = _changed_by(ref, board.live_seq, snapshot.seq)
        with transaction.atomic():  # the doc and the notices of its change commit together
            # Under the row's lock: a compaction racing this one, or a delete, may have come first.
            stored = (
                Board.objects.select_for_update()
                .filter(pk=board.pk, state=Board.State.PUBLISHED)
                .values_list("live_seq", flat=True)
                .first()
            )
            if stored is not None and stored < snapshot.seq:
                # The doc's text as the live state holds it (each element validated and encoded
                # when its op came): written as is, never parsed and encoded again.
                doc_text = snapshot.doc_text()
                board_update(board=board, changes={"doc_json": doc_text}, live_seq=snapshot.seq)
                _tell_the_away(board, changed_by, ref)
                versions.authors_note(board.author_id, board.pk, changed_by)
                if last_editor_left or versions.version_due(board.pk):
                    versions.version_keep(
                        board_id=board.pk, author_id=board.author_id, doc_json=doc_text, only_if_changed=True
                    )
                written = snapshot.seq
    if written is None and last_editor_left and board.state == Board.State.PUBLISHED:
        _version_on_leave(board)
    if last_editor_left and board.state == Board.State.PUBLISHED:
        # The board at rest: its picture now, not at the end of its window (feeds.services.boards).
        transaction.on_commit(lambda: enqueue(tasks.board_picture_render, board.pk))
    oplog.live_mark_compacted(ref, snapshot.seq)
    oplog.dirty_clear(ref, snapshot.seq)
    return written


def _version_on_leave(board: Board) -> None:
    """The last editor left and an earlier run had already written the doc: keep it as a version
    if it differs from the latest one (under the row's lock, as every version is numbered)."""
    with transaction.atomic():
        doc_json = (
            Board.objects.select_for_update()
            .filter(pk=board.pk, state=Board.State.PUBLISHED)
            .values_list("doc_json", flat=True)
            .first()
        )
        if doc_json is not None:
            versions.version_keep(board_id=board.pk, author_id=board.author_id, doc_json=doc_json, only_if_changed=True)


def _changed_by(ref: BoardRef, since: int, upto: int) -> list[str]:
    """Who drew between two compactions, last one last (the ops in the log; none when the log no
    longer holds them all). O(ops since the last compaction)."""
    entries = oplog.live_replay(ref, since, upto) or []
    names: dict[str, None] = {}
    for entry in entries:
        if entry.by:
            names.pop(entry.by, None)
            names[entry.by] = None
    return list(names)


def _tell_the_away(board: Board, changed_by: list[str], ref: BoardRef) -> None:
    """ "X changed a board you edit while you were away": the board's author and editors who did
    not draw this time and have no connection open to it now; X is the last to draw. In the
    caller's transaction (feeds.services.notifications). O(editors), three queries."""
    if not changed_by:
        return
    users = get_user_model().objects
    ids = dict(users.filter(username__in=changed_by).values_list("username", "pk"))
    present = {entry["u"] for entry in oplog.presence_list(ref) if entry["u"]}
    people = [board.author_id, *BoardEditor.objects.filter(board_id=board.pk).values_list("user_id", flat=True)]
    names = dict(users.filter(pk__in=people).values_list("pk", "username"))
    away = [pk for pk in people if names.get(pk) not in present and names.get(pk) not in ids]
    actor = ids.get(changed_by[-1])
    if away and actor is not None:
        notify_board_changed(board_id=board.pk, actor_id=actor, recipient_ids=away)


def compact_due(*, older_than: float, limit: int = 100, budget: float | None = None) -> int:
    """Compact the boards dirty since before ``older_than``, the longest waiting first; how many
    were written. With a ``budget`` (seconds), no board is started once it is spent (the first
    always is): the rest keep their place at the head of the queue for the next run."""
    written = 0
    deadline = time.monotonic() + budget if budget is not None else None
    for ref in oplog.dirty_due(older_than=older_than, limit=limit):
        try:
            written += board_compact(ref.board_id) is not None
        except Exception:  # one board's failure must not stop the others; it stays dirty
            logger.exception("compacting board %s failed; the next run tries again", ref.board_id)
        if deadline is not None and time.monotonic() >= deadline:
            break
    return written
