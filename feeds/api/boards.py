"""API: boards (API.md, "Boards")."""

from django.http import HttpResponse

from feeds import selectors
from feeds.services import boards as services
from feeds.svg import render_svg
from feeds.validation import BoardCreate, BoardPatch
from ugcsite.http import client_address, endpoint, login_required, parse_json_object, validate
from ugcsite.ratelimits import write_attempt

# The preview is a standalone document: no script may run in it even when opened directly.
SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'self'"


def _json(text: str, status: int = 200) -> HttpResponse:
    return HttpResponse(text, status=status, content_type="application/json")


@login_required
def board_create(request):
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
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
    board = selectors.board_get_own(board_id, request.api_user)
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    raw = parse_json_object(request)
    data = validate(BoardPatch, raw)
    changes = {field: getattr(data, field) for field in data.model_fields_set}
    if "doc" in changes:
        changes["doc"] = raw["doc"]  # stored as sent
    board = services.board_update(board=board, changes=changes)
    return _json(selectors.board_full_json(board))


@login_required
def board_delete(request, board_id: int):
    board = selectors.board_get_own(board_id, request.api_user, staff_may=True)
    services.board_delete(board=board)
    return HttpResponse(status=204)


def board_preview(request, board_id: int):
    board = selectors.board_get_visible(board_id)
    response = HttpResponse(render_svg(board.doc, title=board.title), content_type="image/svg+xml; charset=utf-8")
    response["Content-Security-Policy"] = SVG_POLICY
    response["Cache-Control"] = "public, max-age=60"
    return response


boards = endpoint(POST=board_create)
board = endpoint(GET=board_read, PATCH=board_update, DELETE=board_delete)
preview = endpoint(GET=board_preview)
