"""API: boards (API.md, "Boards")."""

import re

from django.http import HttpResponse

from feeds import selectors, services
from feeds.svg import render_svg
from feeds.validation import BoardCreate, BoardPatch
from ugcsite.api import ApiError, endpoint, get_user_by_name, login_required, paging, parse_json_object, validate

# The preview is a standalone document: no script may run in it even when opened directly.
SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'self'"


def _json(text: str, status: int = 200) -> HttpResponse:
    return HttpResponse(text, status=status, content_type="application/json")


def _owned(request, board_id: int, *, staff_may: bool = False):
    board = selectors.board_get_visible(board_id)
    user = request.api_user
    if board.author_id != user.pk and not (staff_may and user.is_staff):
        raise ApiError(403, "This board is someone else's; only its author can change it.")
    return board


@login_required
def board_create(request):
    raw = parse_json_object(request)
    data = validate(BoardCreate, raw)
    board = services.board_create(
        author=request.api_user, title=data.title, kind=data.kind, tags=data.tags, doc=raw["doc"]
    )
    board.author = request.api_user
    return _json(selectors.board_full_json(board), status=201)


def board_read(request, board_id: int):
    board = selectors.board_get_visible(board_id)
    services.board_record_view(board=board, reader=request.api_user)
    return _json(selectors.board_full_json(board))


@login_required
def board_update(request, board_id: int):
    board = _owned(request, board_id)
    raw = parse_json_object(request)
    data = validate(BoardPatch, raw)
    changes = {field: getattr(data, field) for field in data.model_fields_set}
    if "doc" in changes:
        changes["doc"] = raw["doc"]  # stored as sent
    try:
        board = services.board_update(board=board, changes=changes)
    except services.BoardGone:
        raise ApiError(404, f"There is no board {board_id}.") from None
    return _json(selectors.board_full_json(board))


@login_required
def board_delete(request, board_id: int):
    board = _owned(request, board_id, staff_may=True)
    services.board_delete(board=board)
    return HttpResponse(status=204)


def board_preview(request, board_id: int):
    board = selectors.board_get_visible(board_id)
    response = HttpResponse(render_svg(board.doc, title=board.title), content_type="image/svg+xml; charset=utf-8")
    response["Content-Security-Policy"] = SVG_POLICY
    response["Cache-Control"] = "public, max-age=60"
    return response


def user_boards(request, username: str):
    author = get_user_by_name(username)
    return selectors.profile_boards(author.pk, **paging(request, allow_before=True))


KINDS = {"sketch", "diagram", "note", "comic", "map"}
TAG_RE = re.compile(r"^[a-z0-9-]{1,32}\Z")
USERNAME_RE = re.compile(r"^[A-Za-z0-9_]{3,30}\Z")


def _filters(request, *, allow_author: bool):
    """kind=, tag= (repeatable) and author= of a discovery query, or a 400."""
    from feeds.discovery import Query

    kind = request.GET.get("kind")
    if kind is not None and kind not in KINDS:
        raise ApiError(400, f"kind must be one of {', '.join(sorted(KINDS))}; it was {kind[:40]!r}.")
    tags = request.GET.getlist("tag")
    for tag in tags:
        if not TAG_RE.match(tag):
            raise ApiError(400, f"tag {tag[:40]!r} is not a tag: use 1-32 characters of a-z, 0-9 and -.")
    author = request.GET.get("author") if allow_author else None
    return Query(kind=kind or None, tags=tuple(tags), author=author)


@login_required
def feed(request):
    page = paging(request, allow_before=True)
    query = _filters(request, allow_author=False)
    services.home_feed_ready(user_id=request.api_user.pk)
    if query.filter_keys():
        return selectors.home_feed_filtered(request.api_user.pk, query, **page)
    return selectors.home_feed(request.api_user.pk, **page)


def discover(request):
    from dataclasses import replace

    page = paging(request)
    query = _filters(request, allow_author=True)
    sort = request.GET.get("sort", "recent")
    if sort not in ("recent", "popular", "trending"):
        raise ApiError(400, f"sort must be recent, popular or trending; it was {sort[:40]!r}.")
    if query.author is not None and not USERNAME_RE.match(query.author):
        return {"total": 0, "items": []}  # no such user can exist
    return selectors.discover(replace(query, sort=sort), offset=page["offset"], limit=page["limit"])



boards = endpoint(POST=board_create)
profile_boards = endpoint(GET=user_boards)
home_feed = endpoint(GET=feed)
discover_view = endpoint(GET=discover)
board = endpoint(GET=board_read, PATCH=board_update, DELETE=board_delete)
preview = endpoint(GET=board_preview)
