"""API: comments on boards (docs/api.md, "Comments")."""

import re
from typing import Annotated

from django.http import HttpResponse, JsonResponse
from pydantic import AfterValidator, Field

from feeds import selectors
from feeds.api.boards import BOARD_ID
from feeds.rules import COMMENT_MENTIONS_MAX, COMMENT_TEXT_MAX
from feeds.selectors import Comment, CommentsPage
from feeds.services import comments as services
from ugcsite.platform.apidoc import LIMIT_PARAM, documented, id_path, query_param
from ugcsite.platform.http import (
    ID_DIGITS,
    ApiError,
    ApiId,
    Strict,
    Text,
    client_address,
    endpoint,
    login_required,
    paging,
    parse_json_object,
    validate,
)
from ugcsite.platform.ratelimits import write_attempt

# ``after``: the ``next`` of the page before, "<thread>.<id>" (where the last comment sat).
CURSOR_PATTERN = rf"^[0-9]{{1,{ID_DIGITS}}}\.[0-9]{{1,{ID_DIGITS}}}$"
_CURSOR_RE = re.compile(CURSOR_PATTERN.removesuffix("$") + r"\Z")
COMMENT_ID = id_path("comment_id", "a comment the caller may see; any other number is a 404")


def _clean_text(value: str) -> str:
    value = value.strip()
    if not 1 <= len(value) <= COMMENT_TEXT_MAX:
        raise ValueError(f"a comment needs 1 to {COMMENT_TEXT_MAX:,} characters (spaces at both ends do not count)")
    return value


CommentText = Annotated[
    Text,
    AfterValidator(_clean_text),
    Field(json_schema_extra={"minLength": 1, "maxLength": COMMENT_TEXT_MAX}),
]


class CommentCreate(Strict):
    """A comment: its text, and the comment it answers (null or left out: a new thread)."""

    text: CommentText
    reply_to: ApiId | None = None


class CommentPatch(Strict):
    """A comment's new text (its author only)."""

    text: CommentText


@login_required
@documented(
    "Comment on a board, or reply (reply_to: a reply to a reply joins its top comment's thread and names the "
    f"person answered); @names notify up to {COMMENT_MENTIONS_MAX} people. 403 when the board's setting or a "
    "block keeps the caller out",
    {201: ("the comment", Comment)},
    body=CommentCreate,
    errors=(400, 401, 403, 404, 413, 429),
)
def comment_post(request, board_id: int):
    board = selectors.board_get_for(board_id, request.api_user)
    services.comment_check_allowed(user=request.api_user, board=board)
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    data = validate(CommentCreate, parse_json_object(request))
    comment = services.comment_create(author=request.api_user, board=board, text=data.text, reply_to=data.reply_to)
    return JsonResponse(selectors.comment_read(comment.pk, request.api_user), status=201)


@documented(
    "A board's comments in thread order (each top comment, then its replies, oldest first), without those of "
    "people the caller blocks, is blocked by or mutes; total counts what the caller sees",
    {200: ("a page, the cursor of the next and the count", CommentsPage)},
    parameters=(
        LIMIT_PARAM,
        query_param("after", {"type": "string", "pattern": CURSOR_PATTERN}, "the next of the page before (opaque)"),
    ),
    errors=(400, 401, 404),
)
def comments_list(request, board_id: int):
    board = selectors.board_get_for(board_id, request.api_user)
    limit = paging(request)["limit"]
    after = None
    if "after" in request.GET:
        raw = request.GET["after"]
        if not _CURSOR_RE.match(raw):
            raise ApiError(400, "after must be the 'next' of the page before (two numbers joined by a dot).")
        thread, comment_id = raw.split(".")
        after = (int(thread), int(comment_id))
    return selectors.board_comments(board, request.api_user, after=after, limit=limit)


@documented("One comment (a placeholder when deleted with replies)", {200: ("the comment", Comment)}, errors=(401, 404))
def comment_get(request, comment_id: int):
    return selectors.comment_read(comment_id, request.api_user)


@login_required
@documented(
    "Change a comment's text (its author only); sets edited_at",
    {200: ("the comment", Comment)},
    body=CommentPatch,
    errors=(400, 401, 403, 404, 413, 429),
)
def comment_patch(request, comment_id: int):
    comment = selectors.comment_get(comment_id, request.api_user)
    if comment.author_id != request.api_user.pk or comment.state != comment.State.PUBLISHED:
        raise services.NotCommentAuthor("change")
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    data = validate(CommentPatch, parse_json_object(request))
    services.comment_edit(comment=comment, user=request.api_user, text=data.text)
    return selectors.comment_read(comment.pk, request.api_user)


@login_required
@documented(
    "Delete a comment (its author, the board's author or staff); one with replies leaves a placeholder",
    {204: "deleted"},
    errors=(401, 403, 404, 429),
)
def comment_delete(request, comment_id: int):
    comment = selectors.comment_get(comment_id, request.api_user)
    if comment.state != comment.State.PUBLISHED:
        raise selectors.CommentNotFound(comment_id)  # a placeholder is deleted already
    services.comment_check_delete(comment=comment, user=request.api_user)
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    services.comment_delete(comment=comment, user=request.api_user)
    return HttpResponse(status=204)


comments = endpoint(GET=comments_list, POST=comment_post, parameters=(BOARD_ID,))
comment = endpoint(GET=comment_get, PATCH=comment_patch, DELETE=comment_delete, parameters=(COMMENT_ID,))
