"""Comments on boards (docs/api.md, "Comments"). Storage only: feeds.services.comments decides
who may write what, who is told and what goes live.

PostgreSQL is the truth: a Comment row each, and ``Board.comments``, the published comments,
moved by one increment in the comment's own transaction (never a recount). A board's thread in
order is its rows by (thread, id) (feeds.models.Comment): one range of the index
``comment_thread_idx``, so a page is one query of O(log n + limit) however long the thread.
Redis keeps the count where lists read it, in G (``comments``), moved by the same increment on
commit (only when the board is cached: a miss refills it from the row).
"""

from collections import Counter
from collections.abc import Iterable
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Count, F
from django.db.models.functions import Greatest, Lower
from django.utils.html import escape

from feeds import keys, notifications
from feeds.models import Board, Comment, Notification, RemoteNote
from feeds.rules import COMMENT_MENTIONS_MAX, LINK_RE, MENTION_RE
from feeds.scripts import scripts
from ugcsite.platform.redis import get_redis

_COMMENTS, _USERS = Comment._meta.db_table, get_user_model()._meta.db_table
_REMOTE_NOTES = RemoteNote._meta.db_table  # a fediverse author's reply: its actor (feeds.federation)
SHOWN = (Comment.State.PUBLISHED, Comment.State.DELETED)  # what a thread lists (placeholders included)


def mentioned_names(text: str) -> list[str]:
    """The distinct @names of ``text`` in order, lower case, at most COMMENT_MENTIONS_MAX."""
    names: list[str] = []
    for match in MENTION_RE.finditer(text):
        name = match.group(1).lower()
        if name not in names:
            names.append(name)
            if len(names) == COMMENT_MENTIONS_MAX:
                break
    return names


def people_named(names: Iterable[str]) -> dict[str, int]:
    """{lower-case username: id} of the active people among ``names`` (at most
    COMMENT_MENTIONS_MAX): one query on the case-insensitive unique index."""
    names = list(names)
    if not names:
        return {}
    rows = (
        get_user_model()
        .objects.annotate(name=Lower("username"))
        .filter(name__in=names, is_active=True)
        .values_list("name", "id")
    )
    return dict(rows)


def comment_html(text: str, mentions: Iterable[str]) -> str:
    """A comment's text as HTML: escaped, links made ``rel="nofollow ugc"`` links, and the @names
    of ``mentions`` (lower case: the people it named when written) made links to their profiles.
    O(len(text))."""
    linked = set(mentions)
    spans = [(m.start(), m.end(), "link", m.group(0)) for m in LINK_RE.finditer(text)]
    for match in MENTION_RE.finditer(text):
        if match.group(1).lower() in linked and not any(a <= match.start() < b for a, b, *_ in spans):
            spans.append((match.start(), match.end(), "mention", match.group(1)))
    spans.sort()
    out, at = [], 0
    for start, end, kind, value in spans:
        out.append(escape(text[at:start]))
        if kind == "link":
            out.append(f'<a href="{escape(value)}" rel="nofollow ugc">{escape(value)}</a>')
        else:
            out.append(f'<a href="/u/{escape(value)}" class="mention">@{escape(value)}</a>')
        at = end
    out.append(escape(text[at:]))
    return "".join(out)


def comment_mentions_notify(comment_id: int) -> int:
    """Tell the people a comment names (its ``mentions``, at most COMMENT_MENTIONS_MAX) that its
    author mentioned them, but the board's author and the top comment's author (told already), and
    nobody across a block (feeds.notifications). Offline (Celery): one query, one upsert.
    Returns how many were named (0 when the comment is gone)."""
    comment = Comment.objects.select_related("board", "reply_to").filter(pk=comment_id).first()
    if comment is None or comment.state != Comment.State.PUBLISHED or comment.author_id is None:
        return 0
    people = people_named(comment.mentions)
    told = {comment.board.author_id, comment.reply_to.author_id if comment.reply_to else None}
    recipients = sorted(set(people.values()) - told)
    notifications.notifications_add(
        kind=Notification.Kind.MENTION,
        recipient_ids=recipients,
        actor_id=comment.author_id,
        board_id=comment.board_id,
        at=comment.created_at,
    )
    return len(people)


def comment_insert(
    *, board_id: int, author_id: int, text: str, reply_to: Comment | None, mentions: list[str], at: datetime
) -> Comment:
    """Insert a published comment (a reply when ``reply_to``, a top comment) and count it in
    Board.comments, in the caller's transaction. Two statements and one more for a top comment's
    thread: O(log n)."""
    comment = Comment.objects.create(
        board_id=board_id,
        author_id=author_id,
        text=text,
        reply_to=reply_to,
        thread=reply_to.pk if reply_to is not None else 0,
        mentions=mentions,
        created_at=at,
    )
    if reply_to is None:  # a top comment is its own thread: its id is known only now
        Comment.objects.filter(pk=comment.pk).update(thread=comment.pk)
        comment.thread = comment.pk
    Board.objects.filter(pk=board_id).update(comments=F("comments") + 1)
    return comment


def comment_remove(comment: Comment) -> str:
    """Take a comment away, in the caller's transaction: a top comment with replies becomes a
    placeholder (no author, no text), any other row goes, and a placeholder left with no reply
    goes with its last one. Board.comments is lowered when it was published. Returns
    "placeholder" or "deleted". O(log n): EXISTS on the thread index."""
    counted = comment.state == Comment.State.PUBLISHED
    has_replies = (
        comment.reply_to_id is None
        and Comment.objects.filter(board_id=comment.board_id, thread=comment.pk).exclude(pk=comment.pk).exists()
    )
    if has_replies:
        Comment.objects.filter(pk=comment.pk).update(
            state=Comment.State.DELETED, author=None, remote_handle="", text="", mentions=[]
        )
        outcome = "placeholder"
    else:
        Comment.objects.filter(pk=comment.pk).delete()
        outcome = "deleted"
        if comment.reply_to_id is not None:  # the last reply of a placeholder takes it along
            top = Comment.objects.filter(pk=comment.reply_to_id, state=Comment.State.DELETED)
            if (
                not Comment.objects.filter(board_id=comment.board_id, thread=comment.reply_to_id)
                .exclude(pk=comment.reply_to_id)
                .exists()
            ):
                top.delete()
    if counted:
        Board.objects.filter(pk=comment.board_id).update(comments=Greatest(F("comments") - 1, 0))
    return outcome


def comment_set_state(comment_id: int, *, hidden: bool) -> Comment | None:
    """Hide a published comment (staff, or enough reports) or publish a hidden one again, moving
    Board.comments with it, in the caller's transaction. The comment as it is now, or None when
    nothing changed. O(log n)."""
    before, after = (
        (Comment.State.PUBLISHED, Comment.State.HIDDEN) if hidden else (Comment.State.HIDDEN, Comment.State.PUBLISHED)
    )
    if not Comment.objects.filter(pk=comment_id, state=before).update(state=after):
        return None
    comment = Comment.objects.get(pk=comment_id)
    Board.objects.filter(pk=comment.board_id).update(comments=Greatest(F("comments") + (-1 if hidden else 1), 0))
    return comment


def count_move(board_id: int, delta: int, *, pipe=None) -> None:
    """Move the count in G by ``delta`` when the board is cached (a miss refills it from
    Board.comments). O(1); one round trip, or none inside ``pipe``."""
    client = pipe if pipe is not None else get_redis()
    scripts.hincrby_if_exists(keys=[keys.board(board_id)], field="comments", increment=delta, client=client)


def comments_page(
    board_id: int, *, after: tuple[int, int] | None, limit: int, hidden: list[int], viewer_id: int | None = None
) -> list[dict]:
    """Up to ``limit`` comments of a board in thread order (each top comment, then its replies,
    oldest first), after the cursor (thread, id), without staff-hidden ones and without those of
    the people of ``hidden`` (whom the viewer does not see); placeholders are kept. Each row as
    a dict with its author's name, display name and avatar version. One query on
    comment_thread_idx with the authors joined: O(log n + limit + the hidden people's comments
    skipped on the way)."""
    where, params = ["c.board_id = %s", "c.state = ANY(%s)"], [board_id, list(SHOWN)]
    if after is not None:
        where.append("(c.thread, c.id) > (%s, %s)")
        params += list(after)
    if hidden:
        where.append("(c.author_id IS NULL OR NOT c.author_id = ANY(%s))")
        params.append(hidden)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.id, c.board_id, c.reply_to_id, c.thread, c.text, c.mentions, c.created_at, c.edited_at,"
            f" c.state, c.remote_handle, c.author_id, u.username, u.display_name, u.avatar_version,"
            f" rn.actor_id AS remote_actor_id"
            f" FROM {_COMMENTS} c LEFT JOIN {_USERS} u ON u.id = c.author_id"
            f" LEFT JOIN {_REMOTE_NOTES} rn ON rn.comment_id = c.id"
            f" WHERE {' AND '.join(where)} ORDER BY c.thread, c.id LIMIT %s",
            [*params, limit],
        )
        columns = [column.name for column in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def comments_hidden_count(board_id: int, hidden: list[int]) -> int:
    """How many published comments of a board the people of ``hidden`` wrote (what a reader who
    does not see them must not count). One query on comment_author_idx, a range per person:
    O(|hidden| log n + their comments on this board)."""
    if not hidden:
        return 0
    return Comment.objects.filter(author_id__in=hidden, board_id=board_id, state=Comment.State.PUBLISHED).count()


def comment_row(comment_id: int) -> dict | None:
    """One comment in the shape of comments_page's rows (any state), or None. One query."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.id, c.board_id, c.reply_to_id, c.thread, c.text, c.mentions, c.created_at, c.edited_at,"
            f" c.state, c.remote_handle, c.author_id, u.username, u.display_name, u.avatar_version,"
            f" rn.actor_id AS remote_actor_id"
            f" FROM {_COMMENTS} c LEFT JOIN {_USERS} u ON u.id = c.author_id"
            f" LEFT JOIN {_REMOTE_NOTES} rn ON rn.comment_id = c.id WHERE c.id = %s",
            [comment_id],
        )
        row = cursor.fetchone()
        return dict(zip([column.name for column in cursor.description], row, strict=True)) if row else None


def comments_erase(user_id: int) -> dict[int, int]:
    """Take away every comment of a person (their account closing): each as comment_remove does
    (placeholders where others replied), the boards' counts lowered in one statement. Idempotent.
    Offline (Celery), O(their comments). Returns {board id: published comments taken away}
    (G's counts are the caller's to move)."""
    with transaction.atomic():
        counts = dict(
            Comment.objects.filter(author_id=user_id, state=Comment.State.PUBLISHED)
            .values("board_id")
            .annotate(n=Count("id"))
            .values_list("board_id", "n")
        )
        for board_id, n in counts.items():
            Board.objects.filter(pk=board_id).update(comments=Greatest(F("comments") - n, 0))
        Comment.objects.filter(author_id=user_id, state=Comment.State.PUBLISHED).update(state=Comment.State.HIDDEN)
        for comment in list(Comment.objects.filter(author_id=user_id).order_by("-id").only("board_id", "reply_to_id")):
            comment.state = Comment.State.HIDDEN  # counted already: comment_remove lowers no count
            comment_remove(comment)
    return counts


def comments_suspend(user_id: int, *, suspended: bool) -> dict[int, int]:
    """A suspended person's published comments leave every thread and count (state
    'suspended'), and exactly those come back when the suspension is lifted
    (``suspended=False``), as their boards do. Idempotent. Offline (Celery), O(their comments).
    Returns {board id: change of its count} (G's counts are the caller's to move)."""
    before, after = (
        (Comment.State.PUBLISHED, Comment.State.SUSPENDED)
        if suspended
        else (Comment.State.SUSPENDED, Comment.State.PUBLISHED)
    )
    sign = -1 if suspended else 1
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(  # the rows moved, as they are moved: no count can miss one
            f"UPDATE {_COMMENTS} SET state = %s WHERE author_id = %s AND state = %s RETURNING board_id",
            [after, user_id, before],
        )
        counts = Counter(board_id for (board_id,) in cursor.fetchall())
        for board_id, n in counts.items():
            Board.objects.filter(pk=board_id).update(comments=Greatest(F("comments") + sign * n, 0))
    return {board_id: sign * n for board_id, n in counts.items()}


def comments_recount_all() -> int:
    """Set every Board.comments from its published Comment rows where the two differ (rebuild:
    the rows are the truth). Offline: one statement. Returns the boards fixed."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Board._meta.db_table} b SET comments = c.n FROM ("
            f"  SELECT b2.id, count(c.id) AS n FROM {Board._meta.db_table} b2"
            f"  LEFT JOIN {_COMMENTS} c ON c.board_id = b2.id AND c.state = 'published' GROUP BY b2.id"
            f") c WHERE b.id = c.id AND b.comments <> c.n"
        )
        return cursor.rowcount
