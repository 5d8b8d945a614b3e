"""Writes about boards: the only place that combines PostgreSQL, Redis and task enqueues."""

import json

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.functions import Greatest  # counts never go below 0, even over bulk-loaded data
from django.utils import timezone

from feeds import boardcache, tasks, timelines
from ugcsite.redis import get_redis
from feeds.ids import board_id_time, next_board_id
from feeds.models import Board

User = get_user_model()
_ID_ATTEMPTS = 5


def _doc_text(doc: dict) -> str:
    # ASCII with escapes: any JSON string (NUL, lone surrogates) survives PostgreSQL and reads back as sent.
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def board_create(*, author: User, title: str, kind: str, tags: list[str], doc: dict) -> Board:
    """Insert a board; on commit one pipeline writes G and M[author], then a task fans it out.
    O(log |M|) online; the fan-out, proportional to followers, runs in Celery."""
    for attempt in range(_ID_ATTEMPTS):
        board_id = next_board_id()
        created = board_id_time(board_id)
        board = Board(
            id=board_id, author=author, title=title, kind=kind, tags=list(tags), doc_json=_doc_text(doc),
            created_at=created, updated_at=created,
        )
        try:
            with transaction.atomic():
                board.save(force_insert=True)
                User.objects.filter(pk=author.pk).update(boards_count=F("boards_count") + 1)
            break
        except IntegrityError:
            # Only an id collision between two generators sharing a number lands here.
            if attempt + 1 == _ID_ATTEMPTS or not Board.objects.filter(pk=board_id).exists():
                raise
    transaction.on_commit(lambda: _board_published(board))
    return board


def _board_indexed(board: Board) -> None:
    from feeds import discovery

    discovery.board_index(board.id, kind=board.kind, tags=board.tags, author=board.author.username, views=board.views)


def _board_published(board: Board) -> None:
    from social import counters

    board.views += counters.pending_views([board.id])[board.id]  # the live figure for G
    _board_indexed(board)
    pipe = get_redis().pipeline(transaction=False)
    boardcache.board_cache_put(board, pipe=pipe)
    timelines.profile_add_and_size(board.author_id, board.id, pipe=pipe)
    profile_size = pipe.execute()[-1]
    tasks.board_fanout.delay(board.id)
    if profile_size >= settings.PROFILE_TIMELINE_HOT + settings.TIMELINE_CHUNK:
        tasks.archive_soon("m", [board.author_id])


_SEEN_EVERY = 60.0  # seconds: activity is recorded at most this often per user and process
_seen: dict[int, float] = {}


def user_seen(*, user_id: int) -> None:
    """Record activity (any authenticated call), at most once a minute per user in a process:
    idleness is measured in days. A user back from being idle is flagged, and
    home_feed_ready refills their P before the first page. O(1)."""
    import time

    now = time.monotonic()
    if now - _seen.get(user_id, -_SEEN_EVERY) < _SEEN_EVERY:
        return
    if len(_seen) > 100_000:
        _seen.clear()
    _seen[user_id] = now
    timelines.home_touch(user_id)


def home_feed_ready(*, user_id: int) -> None:
    """Make sure a returning idle user's P is whole before it is read: their followees' newest
    boards join it at once (O(followees) pipelined), and a task archives the stretch between
    those and the older history. A no-op (one HGET) for everyone else."""
    from feeds import fanout

    if not timelines.home_needs_regeneration(user_id):
        return
    gap = fanout.home_regenerate(user_id)
    if gap is not None:
        tasks.home_gap_fill.delay(user_id, *gap)


class BoardGone(Exception):
    """The board stopped being published (deleted, hidden) between its read and this write."""


def board_update(*, board: Board, changes: dict, unpublished_ok: bool = False) -> Board:
    """Apply validated changes (any of title, kind, tags, doc) at once; G is rewritten on commit.
    The write holds only while the board is published, so an edit racing a delete or a hide
    cannot bring the board back into G or the indexes: it raises BoardGone instead. With
    ``unpublished_ok`` (staff editing a hidden board) such a board is changed in PostgreSQL
    alone: nothing of it is in Redis, and unhiding it publishes the new values."""
    if not changes:
        return board
    for field, value in changes.items():
        if field == "doc":
            board.doc_json = _doc_text(value)
        else:
            setattr(board, field, value)
    board.updated_at = timezone.now()
    fields = ["doc_json" if f == "doc" else f for f in changes] + ["updated_at"]
    values = {field: getattr(board, field) for field in fields}
    updated = Board.objects.filter(pk=board.pk, state=Board.State.PUBLISHED).update(**values)
    if not updated:
        if unpublished_ok:
            Board.objects.filter(pk=board.pk).update(**values)
            return board
        raise BoardGone(board.pk)

    def publish():
        from social import counters

        live = Board(**{f.attname: getattr(board, f.attname) for f in Board._meta.concrete_fields})
        live.author = board.author
        live.views += counters.pending_views([board.id])[board.id]
        boardcache.board_cache_put(live)
        if {"kind", "tags"} & changes.keys():
            _board_indexed(live)  # only the indexes that changed are written

    transaction.on_commit(publish)
    return board


def _board_leave(board: Board, state: str) -> bool:
    """Move a published board to ``state``: 404 at once, out of G and M on commit, out of every
    follower's P by a task. False if it was not published."""
    with transaction.atomic():
        updated = Board.objects.filter(pk=board.pk, state=Board.State.PUBLISHED).update(
            state=state, updated_at=timezone.now()
        )
        if updated:
            User.objects.filter(pk=board.author_id).update(boards_count=Greatest(F("boards_count") - 1, 0))
    if updated:
        transaction.on_commit(lambda: _board_withdrawn(board))
    return bool(updated)


def board_delete(*, board: Board) -> None:
    """Delete a board (its author, or staff): marked deleted, withdrawn everywhere."""
    _board_leave(board, Board.State.DELETED)


def board_hide(*, board: Board) -> bool:
    """Staff hide a board: it leaves every feed, list and index as a delete does."""
    return _board_leave(board, Board.State.HIDDEN)


def board_unhide(*, board: Board) -> bool:
    """Staff bring a hidden board back: G and M at once on commit, and a fan-out puts it back
    in the followers' feeds (archived chunks never lost it: reads filter by state)."""
    with transaction.atomic():
        updated = Board.objects.filter(pk=board.pk, state=Board.State.HIDDEN).update(state=Board.State.PUBLISHED)
        if updated:
            User.objects.filter(pk=board.author_id).update(boards_count=F("boards_count") + 1)
    if updated:
        board.state = Board.State.PUBLISHED
        transaction.on_commit(lambda: _board_published(Board.objects.select_related("author").get(pk=board.pk)))
    return bool(updated)


def user_suspend(*, user: User) -> int:
    """Suspend a user: no sign-in, no token, and every published board of theirs hidden (state
    'suspended', so lifting it restores exactly those). Their M and G go on commit; a task
    takes their boards out of followers' feeds. Returns how many boards were hidden."""
    with transaction.atomic():
        User.objects.filter(pk=user.pk).update(is_active=False)
        user.is_active = False
        from social.services import tokens_revoke

        tokens_revoke(user=user)
        hidden = Board.objects.filter(author=user, state=Board.State.PUBLISHED).update(
            state=Board.State.SUSPENDED, updated_at=timezone.now())
        User.objects.filter(pk=user.pk).update(boards_count=Greatest(F("boards_count") - hidden, 0))
    transaction.on_commit(lambda: _author_withdrawn(user.pk))
    return hidden


def user_unsuspend(*, user: User) -> int:
    """Lift a suspension: sign-in again, and the boards it hid come back (M rebuilt on commit,
    followers' feeds refilled by a task). Returns how many boards came back."""
    with transaction.atomic():
        User.objects.filter(pk=user.pk).update(is_active=True)
        user.is_active = True
        restored = Board.objects.filter(author=user, state=Board.State.SUSPENDED).update(state=Board.State.PUBLISHED)
        User.objects.filter(pk=user.pk).update(boards_count=F("boards_count") + restored)
    transaction.on_commit(lambda: tasks.author_restore.delay(user.pk))
    return restored


def _author_withdrawn(author_id: int) -> None:
    from feeds import keys

    from feeds import discovery

    hidden = list(Board.objects.filter(author_id=author_id, state=Board.State.SUSPENDED).values_list("id", flat=True))
    pipe = get_redis().pipeline(transaction=False)
    pipe.delete(keys.profile_timeline(author_id))
    for board_id in hidden:
        boardcache.board_cache_delete(board_id, pipe=pipe)
    pipe.execute()
    for board_id in hidden:
        discovery.board_unindex(board_id)
    tasks.author_retract.delay(author_id)


def _board_withdrawn(board: Board) -> None:
    from feeds import discovery

    discovery.board_unindex(board.pk)
    pipe = get_redis().pipeline(transaction=False)
    boardcache.board_cache_delete(board.pk, pipe=pipe)
    timelines.profile_remove(board.author_id, board.pk, pipe=pipe)
    pipe.execute()
    tasks.board_retract.delay(board.pk)


def board_record_view(*, board: Board, reader: User | None = None) -> int:
    """Count one view in Redis (flushed to PostgreSQL by beat; ``reader``'s read is recorded
    with social reading); sets ``board.views`` to the new live total."""
    from social import counters, reading

    counters.view_record(board.pk)
    if reader is not None:
        reading.read_record(reader.pk, board.pk)
    board.views += counters.pending_views([board.pk])[board.pk]
    return board.views
