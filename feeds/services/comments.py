"""Commenting on boards (docs/api.md, "Comments"); feeds.comments stores them.

A comment is one row, one increment of the board's count and at most two notification upserts
(the board's author; the top comment's author, for a reply), in one transaction; on
commit, one increment of G's count, one message to the board's open pages and, when it names
people, one Celery task that tells them (up to COMMENT_MENTIONS_MAX). Nothing online grows with
the board's comments or anyone's followers.
"""

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from feeds import comments, tasks
from feeds.live import broadcast
from feeds.models import Board, Comment, Notification
from feeds.notifications import notifications_add
from feeds.rules import COMMENT_TEXT_MAX, CommentPolicy
from social import graph, hiding
from ugcsite.platform.errors import NotAllowed, NotFound
from ugcsite.platform.ratelimits import attempt


class CommentsOff(NotAllowed):
    def __init__(self, why: str):
        super().__init__(why)


class NotCommentAuthor(NotAllowed):
    def __init__(self, what: str):
        super().__init__(f"Only the comment's author can {what} it.")


class MayNotDelete(NotAllowed):
    def __init__(self):
        super().__init__("Only the comment's author, the board's author or staff can delete a comment.")


class NoSuchParent(NotFound):
    def __init__(self, comment_id: int):
        super().__init__(f"reply_to: there is no comment {comment_id} on this board that you can answer.")


def may_comment(*, user, board: Board) -> str | None:
    """Why ``user`` may not comment on ``board`` (a sentence), or None when they may: the
    board's setting, and blocks either way (the caller found the board visible to them, so its
    author does not block them). O(1) Redis reads."""
    if board.commenting == CommentPolicy.OFF:
        return "Its author turned comments off for this board."
    if user.pk == board.author_id:
        return None
    if hiding.bits_of(user.pk, board.author_id) & hiding.BLOCKED_EITHER_WAY:
        return "You block this board's author; unblock them to comment."
    if board.commenting == CommentPolicy.FOLLOWERS and not graph.is_following(
        follower_id=user.pk, followee_id=board.author_id
    ):
        return f"Only people who follow {board.author.username} may comment on this board."
    return None


def comment_check_allowed(*, user, board: Board) -> None:
    """CommentsOff (403) unless ``user`` may comment on ``board`` (may_comment)."""
    why = may_comment(user=user, board=board)
    if why is not None:
        raise CommentsOff(why)


def _parent(board: Board, reply_to: int, user) -> Comment:
    """The comment a reply answers: published, on this board, by someone the writer sees."""
    parent = Comment.objects.select_related("author").filter(pk=reply_to, board_id=board.pk).first()
    if parent is None or parent.state != Comment.State.PUBLISHED:
        raise NoSuchParent(reply_to)
    if parent.author_id is not None and hiding.bits_of(user.pk, parent.author_id) & hiding.BLOCKED_EITHER_WAY:
        raise NoSuchParent(reply_to)
    return parent


def comment_create(*, author, board: Board, text: str, reply_to: int | None = None) -> Comment:
    """``author`` comments on ``board`` (visible to them; comment_check_allowed passed), or answers
    the comment ``reply_to``: a reply to a reply joins the top comment's thread and names the
    person answered (``@name`` put in front unless the text names them). At most
    RATE_LIMIT_COMMENTS_PER_MINUTE a person. O(log n) rows; on commit one pipeline, one publish
    and, for mentions, one task."""
    attempt(
        "comments",
        str(author.pk),
        per_minute=settings.RATE_LIMIT_COMMENTS_PER_MINUTE,
        what="comments from your account",
    )
    parent = top = None
    if reply_to is not None:
        parent = _parent(board, reply_to, author)
        top = parent if parent.reply_to_id is None else Comment.objects.select_related("author").get(pk=parent.thread)
        if parent is not top and parent.author is not None:
            name = parent.author.username
            if name.lower() not in comments.mentioned_names(text) and len(text) + len(name) + 2 <= COMMENT_TEXT_MAX:
                text = f"@{name} {text}"
    names = comments.mentioned_names(text)
    mentions = sorted(comments.people_named(names))
    at = timezone.now()
    with transaction.atomic():
        comment = comments.comment_insert(
            board_id=board.pk, author_id=author.pk, text=text, reply_to=top, mentions=mentions, at=at
        )
        notifications_add(
            kind=Notification.Kind.COMMENT,
            recipient_ids=[board.author_id],
            actor_id=author.pk,
            board_id=board.pk,
            at=at,
        )
        # The top comment's author hears of a reply; someone answered in its thread is named
        # (@name) and hears through the mention.
        if top is not None and top.author_id is not None and top.author_id != board.author_id:
            notifications_add(
                kind=Notification.Kind.REPLY,
                recipient_ids=[top.author_id],
                actor_id=author.pk,
                board_id=board.pk,
                at=at,
            )
    _on_commit_published(comment, "posted", delta=1, mentions=bool(mentions))
    return comment


def _on_commit_published(comment: Comment, action: str, *, delta: int = 0, mentions: bool = False) -> None:
    def publish():
        if delta:
            comments.count_move(comment.board_id, delta)
        broadcast.board_comment(comment.board_id, action, comment.pk)
        if mentions:
            tasks.comment_mentions_notify.delay(comment.pk)

    transaction.on_commit(publish)


def comment_edit(*, comment: Comment, user, text: str) -> Comment:
    """The comment's author changes its text (``edited_at`` set). The people it newly names are
    linked, not told. O(log n); on commit, one publish."""
    if comment.author_id != user.pk:
        raise NotCommentAuthor("change")
    comment.text = text
    comment.mentions = sorted(comments.people_named(comments.mentioned_names(text)))
    comment.edited_at = timezone.now()
    comment.save(update_fields=["text", "mentions", "edited_at"])
    _on_commit_published(comment, "edited")
    return comment


def comment_check_delete(*, comment: Comment, user) -> None:
    """MayNotDelete (403) unless ``user`` is the comment's author, the board's author or staff."""
    if user.pk not in (comment.author_id, comment.board.author_id) and not user.is_staff:
        raise MayNotDelete()


def comment_delete(*, comment: Comment, user) -> str:
    """Its author, the board's author or staff delete a comment: a placeholder stays where it
    has replies (feeds.comments.comment_remove). O(log n); on commit, the count in G and one
    publish. Returns "placeholder" or "deleted"."""
    comment_check_delete(comment=comment, user=user)
    with transaction.atomic():
        outcome = comments.comment_remove(comment)
    _on_commit_published(comment, "deleted", delta=-1 if comment.state == Comment.State.PUBLISHED else 0)
    return outcome


def comment_hide(*, comment_id: int, hidden: bool = True) -> bool:
    """Staff (or enough reports) hide a comment everywhere, or publish it again: its state, the
    board's count in PostgreSQL and G, and every open page of the board. False when nothing
    changed. O(log n)."""
    with transaction.atomic():
        comment = comments.comment_set_state(comment_id, hidden=hidden)
    if comment is None:
        return False
    _on_commit_published(comment, "hidden" if hidden else "posted", delta=-1 if hidden else 1)
    return True
