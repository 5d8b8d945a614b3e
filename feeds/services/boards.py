"""Writes about boards: create, edit, delete (and the moderation's hide), views.

What must reach the followers' feeds (a fan-out, a retraction) is written to the outbox in the
change's own transaction (feeds.timelines.outbox): if the broker is down when the change commits, or loses
its queue, beat sends it again, so the change answers at once and reaches every follower once the
broker is back.
"""

import json
import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.functions import Greatest  # counts never go below 0, even over bulk-loaded data
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnreachable

from feeds import keys, tasks, versions
from feeds.discovery import counters, indexes
from feeds.federation import services as federation
from feeds.live import broadcast, oplog
from feeds.models import Board, Outbox
from feeds.rules import MAX_TITLE, Timeline
from feeds.services.notifications import notify_remix
from feeds.timelines import boardcache, store
from feeds.timelines.ids import board_id_time, next_board_id
from feeds.timelines.outbox import outbox_add
from feeds.timelines.visibility import board_show, board_unshow
from feeds.validation import doc_with_ids
from social import reading
from ugcsite.platform.errors import NotAllowed, NotFound
from ugcsite.platform.redis import REDIS_FAILURES, get_redis

logger = logging.getLogger(__name__)
User = get_user_model()
_ID_ATTEMPTS = 5


def enqueue(task, *args, countdown: int | None = None) -> None:
    """Send a task (``countdown``: run it that many seconds from now); with the broker
    unreachable, leave it to the outbox (beat sends it again)."""
    try:
        task.apply_async(args, countdown=countdown)
    except BrokerUnreachable as error:
        logger.warning(
            "%s%s not sent (the broker is unreachable: %s); the outbox sends it again", task.name, args, error
        )


def _doc_text(doc: dict) -> str:
    doc = doc_with_ids(doc)  # every stored element has an id (docs/api.md, "Shared boards, live")
    # ASCII with escapes: any JSON string (NUL, lone surrogates) survives PostgreSQL and reads back as sent.
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def board_create(
    *,
    author: User,
    title: str,
    kind: str,
    tags: list[str],
    doc: dict,
    remixable: bool = True,
    remixed_from: Board | None = None,
) -> Board:
    """Insert a board; on commit one pipeline writes G and M[author], then a task fans it out.
    A remix (``remixed_from``, its direct source) tells the source's author in the same
    transaction. O(log |M|) online; the fan-out, proportional to followers, runs in Celery."""
    for attempt in range(_ID_ATTEMPTS):
        board_id = next_board_id()
        created = board_id_time(board_id)
        board = Board(
            id=board_id,
            author=author,
            title=title,
            kind=kind,
            tags=list(tags),
            doc_json=_doc_text(doc),
            created_at=created,
            updated_at=created,
            remixable=remixable,
            remixed_from_id=remixed_from.pk if remixed_from is not None else None,
        )
        try:
            with transaction.atomic():
                board.save(force_insert=True)
                versions.version_keep(
                    board_id=board_id, author_id=author.pk, doc_json=board.doc_json, by=author.username
                )
                User.objects.filter(pk=author.pk).update(boards_count=F("boards_count") + 1)
                outbox_add(board_id, Outbox.Action.FANOUT)
                federation.board_created(board)
                if remixed_from is not None:
                    notify_remix(remixer_id=author.pk, author_id=remixed_from.author_id, source_id=remixed_from.pk)
            break
        except IntegrityError:
            # Only an id collision between two generators sharing a number lands here.
            if attempt + 1 == _ID_ATTEMPTS or not Board.objects.filter(pk=board_id).exists():
                raise
    transaction.on_commit(lambda: _board_publish_new(board))
    return board


class RemixingOff(NotAllowed):
    def __init__(self):
        super().__init__("Its author turned remixing off for this board.")


def remix_title(source: Board) -> str:
    """A remix's title when its author gives none: "Remix of <source's title>", cut to MAX_TITLE."""
    title = f"Remix of {source.title}"
    return title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 1].rstrip() + "…"


def remix_check(*, author: User, source: Board) -> None:
    """RemixingOff unless ``author`` may remix ``source``: its author turned remixing off for it
    (they may still copy their own). Callers ask before reading a body, as the 403 comes before
    the 400 (docs/api.md)."""
    if not source.remixable and source.author_id != author.pk:
        raise RemixingOff()


def board_remix(*, author: User, source: Board, changes: dict) -> Board:
    """A new board of ``author``'s, a copy of ``source`` (visible to them: the caller checked)
    with ``changes`` (any of title, kind, tags, doc, remixable) applied, crediting ``source``
    as its direct source; a board like any other from then on. RemixingOff as remix_check.
    As board_create."""
    remix_check(author=author, source=source)
    return board_create(
        author=author,
        title=changes.get("title") or remix_title(source),
        kind=changes.get("kind") or source.kind,
        tags=changes["tags"] if changes.get("tags") is not None else list(source.tags),
        doc=changes["doc"] if changes.get("doc") is not None else source.doc,
        remixable=changes.get("remixable", True) is not False,
        remixed_from=source,
    )


def _board_publish_new(board: Board) -> None:
    """Publish a board just created, or, if the data Redis fails meanwhile (a node down, a
    failover under way), undo the create and raise: the request fails whole, with no board
    left in PostgreSQL that no list shows until a rebuild. The caller may post it again."""
    try:
        board_publish(board)
    except REDIS_FAILURES:
        _board_unpublish_quietly(board)
        with transaction.atomic():
            Board.objects.filter(pk=board.pk).delete()
            User.objects.filter(pk=board.author_id).update(boards_count=Greatest(F("boards_count") - 1, 0))
            Outbox.objects.filter(board_id=board.pk).delete()
        raise


def _board_unpublish_quietly(board: Board) -> None:
    """Take back whatever of a board's publishing reached Redis, each part on its own: a part
    on a node that does not answer is skipped. An id left behind (in a follower's P, or on
    such a node) has no row in PostgreSQL, so hydration drops it once its G is gone too."""
    for undo in (
        lambda: indexes.board_unindex(board.pk),
        lambda: boardcache.board_cache_delete(board.pk),
        lambda: store.profile_remove(board.author_id, board.pk),
    ):
        try:
            undo()
        except REDIS_FAILURES:
            pass


def _board_indexed(board: Board) -> None:
    indexes.board_index(
        board.id, kind=board.kind, tags=board.tags, author=board.author.username, views=board.views, likes=board.likes
    )


def board_publish(board: Board) -> None:
    """The Redis side of a board becoming visible (run on commit): G, M[author] and the
    indexes in one round trip or two, then a task fans it out (its outbox row was written with
    the change) and one renders its picture. O(log |M|)."""
    profile_size = board_show(board)
    enqueue(tasks.board_fanout, board.id)
    enqueue(tasks.board_picture_render, board.id)  # its PNG (feeds.pictures), rendered once
    if profile_size >= settings.PROFILE_TIMELINE_HOT + settings.TIMELINE_CHUNK:
        try:
            tasks.archive_soon(Timeline.PROFILE, [board.author_id])
        except BrokerUnreachable:
            pass  # flagged in Redis: beat's archival run takes it


class BoardGone(NotFound):
    """The board stopped being published (deleted, hidden) between its read and this write."""

    def __init__(self, board_id: int):
        super().__init__(f"There is no board {board_id}.")


def board_update(
    *, board: Board, changes: dict, unpublished_ok: bool = False, live_seq: int | None = None, by: str = ""
) -> Board:
    """Apply validated changes (any of title, kind, tags, doc) at once; G is rewritten on commit.
    A compaction gives ``doc_json`` instead of ``doc``: the text of a doc the live state holds,
    written as it is (with ``live_seq``).
    The write holds only while the board is published, so an edit racing a delete or a hide
    cannot bring the board back into G or the indexes: it raises BoardGone instead. With
    ``unpublished_ok`` (staff editing a hidden board) such a board is changed in PostgreSQL
    alone: nothing of it is in Redis, and unhiding it publishes the new values.

    A new doc replaces the live board's doc too (feeds.live: an entry of its op log, under the
    board's row lock, so people drawing get it in order), and a new title reaches them as a
    ``board`` op of the log, after it. ``live_seq`` is a compaction's: the doc as it stood at
    that seq of the log, written only over an older one (else nothing). A new ``doc`` is kept as
    a version too (feeds.versions), its number in ``board.version``."""
    if not changes:
        return board
    if live_seq is not None or not {"doc", "title"} & changes.keys():
        return _board_write(
            board, changes, unpublished_ok=unpublished_ok, live_seq=live_seq, only_newer=live_seq is not None
        )
    with transaction.atomic():
        title = Board.objects.select_for_update().filter(pk=board.pk).values_list("title", flat=True).first()
        seq = None
        if "doc" in changes:
            changes = {**changes, "doc": doc_with_ids(changes["doc"])}
            seq = oplog.live_reset(board, changes["doc"], by=by)
            if seq is not None:
                transaction.on_commit(lambda: broadcast.board_reset(board.pk))
        board = _board_write(board, changes, unpublished_ok=unpublished_ok, live_seq=seq)
        if "doc" in changes:  # every API change of the drawing is a version (docs/api.md, "Versions")
            board.version = versions.version_keep(
                board_id=board.pk, author_id=board.author_id, doc_json=board.doc_json, by=by
            )
        if changes.get("title", title) != title:
            _title_live(board, changes["title"], by=by)
        return board


def _title_live(board: Board, title: str, *, by: str) -> None:
    """A new title of a board that may be live: a ``board`` op in its log, broadcast on commit
    (nothing when it is not live). Under the board's row lock, in the transaction of the write."""
    op = {"kind": "board", "title": title}
    try:
        seq, _ = oplog.live_board_op(oplog.BoardRef.of(board), op, by=by)
    except oplog.OpRefused:  # not live: the title reaches the next to open it with the page
        return
    message = oplog.op_message(seq, by, "", op)
    transaction.on_commit(lambda: broadcast.board_op(board.pk, seq, message))


def board_change_live(*, board_id: int, op: dict, by: str, client_op_id: str) -> tuple[int, int]:
    """A ``board`` op from the live channel that sets the title (its author's; feeds.live.consumer
    checked who sent it): the title written as a REST edit of it writes it (G, search and the
    feeds follow), and in the same transaction, under the board's row lock, the op applied to
    the live state and appended to its log, which the caller broadcasts: (its seq, the seq
    PostgreSQL's doc holds). All or nothing: an op the log refuses (oplog.OpRefused) or the data
    Redis unreachable leave the title as it was, and BoardGone when the board is not published.
    Only a failed commit after the log took the op leaves the others told of a title that was
    not stored (until they open the board again)."""
    with transaction.atomic():
        board = (
            Board.objects.select_for_update(of=("self",))
            .select_related("author")
            .filter(pk=board_id, state=Board.State.PUBLISHED)
            .first()
        )
        if board is None:
            raise BoardGone(board_id)
        _board_write(board, {"title": op["title"]}, unpublished_ok=False, live_seq=None)
        return oplog.live_board_op(oplog.BoardRef.of(board), op, by=by, client_op_id=client_op_id)


def _board_write(
    board: Board, changes: dict, *, unpublished_ok: bool, live_seq: int | None, only_newer: bool = False
) -> Board:
    for field, value in changes.items():
        if field == "doc":
            board.doc_json = _doc_text(value)
        else:
            setattr(board, field, value)
    board.updated_at = timezone.now()
    fields = ["doc_json" if f == "doc" else f for f in changes] + ["updated_at"]
    if live_seq is not None:
        board.live_seq = live_seq
        fields.append("live_seq")
    values = {field: getattr(board, field) for field in fields}
    rows = Board.objects.filter(pk=board.pk, state=Board.State.PUBLISHED)
    updated = (rows.filter(live_seq__lt=live_seq) if only_newer else rows).update(**values)
    if not updated:
        if only_newer:
            return board  # gone, or a later doc is there already: nothing to write
        if unpublished_ok:
            Board.objects.filter(pk=board.pk).update(**values)
            return board
        raise BoardGone(board.pk)
    federation.board_changed(board)

    def publish():
        live = Board(**{f.attname: getattr(board, f.attname) for f in Board._meta.concrete_fields})
        live.author = board.author
        live.views += counters.pending_views([board.id])[board.id]
        # Likes moved since this request read the row: G gets the count as it stands.
        live.likes, live.comments = Board.objects.filter(pk=board.pk).values_list("likes", "comments").first() or (0, 0)
        boardcache.board_cache_put(live)
        if {"kind", "tags"} & changes.keys():
            _board_indexed(live)  # only the indexes that changed are written
        if {"doc", "doc_json", "title"} & changes.keys():
            _picture_soon(board.id)  # the PNG of the new version (feeds.pictures)

    transaction.on_commit(publish)
    return board


def _picture_soon(board_id: int) -> None:
    """Render a changed board's picture: at once on the first change in PICTURE_RENDER_SECONDS,
    and once when that window ends for every later change in it (of the version then; the task
    renders nothing if that version is kept). A board drawn live is compacted every few seconds:
    it renders twice a window, not at every compaction. With the data Redis unreachable, at once.
    One Redis SET, two in a window already open."""
    gate = keys.picture_gate(board_id)
    try:
        client = get_redis()
        if client.set(gate, "sent", nx=True, ex=settings.PICTURE_RENDER_SECONDS):
            wait = None
        elif client.set(gate, "due", xx=True, keepttl=True, get=True) == "sent":
            wait = max(client.ttl(gate), 0) + 1  # after the window: a change then opens the next one
        else:
            return  # a render at the window's end is due already (or the window just closed: see above)
    except REDIS_FAILURES as error:
        logger.warning("board %s: its picture's window unknown (%s); rendered now", board_id, error)
        wait = None
    enqueue(tasks.board_picture_render, board_id, countdown=wait)


def board_leave(board: Board, state: str) -> bool:
    """Move a published board to ``state``: 404 at once, out of G and M on commit, out of every
    follower's P by a task. False if it was not published."""
    with transaction.atomic():
        updated = Board.objects.filter(pk=board.pk, state=Board.State.PUBLISHED).update(
            state=state, updated_at=timezone.now()
        )
        if updated:
            User.objects.filter(pk=board.author_id).update(boards_count=Greatest(F("boards_count") - 1, 0))
            outbox_add(board.pk, Outbox.Action.RETRACT)
            federation.board_gone(board)
    if updated:
        transaction.on_commit(lambda: board_withdraw(board))
        transaction.on_commit(lambda: broadcast.board_gone(board.pk))
    return bool(updated)


def board_delete(*, board: Board) -> None:
    """Delete a board (its author, or staff): marked deleted, withdrawn everywhere."""
    board_leave(board, Board.State.DELETED)


def board_withdraw(board: Board) -> None:
    """The Redis side of a board leaving (run on commit): out of the indexes, G and M[author]
    at once, then a task takes it out of every follower's P. The board is already 404 in
    PostgreSQL: with the data Redis unreachable the rest is left to the outbox, which redoes it
    (feeds.tasks.board_retract with ``resend``). O(log |M| + indexes)."""
    try:
        board_unshow(board.pk, board.author_id)
    except REDIS_FAILURES as error:
        logger.warning("board %s left PostgreSQL but not yet Redis (%s); the outbox finishes it", board.pk, error)
        return
    enqueue(tasks.board_retract, board.pk)


def board_record_view(*, board: Board, reader: User | None = None, visitor: str = "") -> int:
    """Count a view in Redis (flushed to PostgreSQL by beat; ``reader``'s read is recorded with
    social reading): once per viewer (``reader``, else the anonymous ``visitor``'s digest,
    ugcsite.platform.http.visitor), board and UTC day, and never the author's own. Sets ``board.views``
    to the new live total. O(1): one set in the board's slot, then the counters."""
    viewer = f"u:{reader.pk}" if reader is not None else f"a:{visitor}"
    if (reader is None or reader.pk != board.author_id) and counters.view_seen(board.pk, viewer):
        counters.view_record(board.pk)
    if reader is not None:
        reading.read_record(reader.pk, board.pk)
    board.views += counters.pending_views([board.pk])[board.pk]
    return board.views
