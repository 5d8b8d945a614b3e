"""API: boards (docs/api.md, "Boards")."""

from django.http import HttpResponse

from feeds import images, selectors
from feeds.services import boards as services, editors as editor_services
from feeds.svg import render_svg
from feeds.timelines.boardcache import Board
from feeds.validation import BoardCreate, BoardPatch, doc_with_ids
from social.api import USERNAME
from social.selectors import People, user_get_by_name
from ugcsite.platform.apidoc import documented, id_path
from ugcsite.platform.http import client_address, endpoint, login_required, parse_json_object, validate, visitor
from ugcsite.platform.ratelimits import write_attempt

# The preview is a standalone document: no script may run in it even when opened directly.
# Its pictures are data: URIs inside it (feeds.svg).
SVG_POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; frame-ancestors 'self'"
BOARD_ID = id_path("board_id", "ids are below 2^53; any other number is no board (404)")


def _json(text: str, status: int = 200) -> HttpResponse:
    return HttpResponse(text, status=status, content_type="application/json")


def board_json(board, status: int = 200) -> HttpResponse:
    """The full form of a board (boardcache.Board, selectors.board_full_json) as an answer."""
    return _json(selectors.board_full_json(board), status=status)


@login_required
@documented("Publish a board", {201: ("the new board", Board)}, body=BoardCreate, errors=(400, 401, 413))
def board_create(request):
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    raw = parse_json_object(request)
    data = validate(BoardCreate, raw)
    images.images_check_placeable(images.doc_image_ids(raw["doc"]), author_id=request.api_user.pk, board_id=None)
    board = services.board_create(
        author=request.api_user,
        title=data.title,
        kind=data.kind,
        tags=data.tags,
        doc=doc_with_ids(raw["doc"]),
        remixable=data.remixable,
    )
    board.author = request.api_user
    return board_json(board, status=201)


@documented("Read a board (counts a view)", {200: ("the board", Board)}, errors=(401, 404))
def board_read(request, board_id: int):
    board = selectors.board_get_for(board_id, request.api_user)
    services.board_record_view(board=board, reader=request.api_user, visitor=visitor(request))
    return board_json(board)


@login_required
@documented(
    "Change a board (the author; its editors may change the doc alone)",
    {200: ("the board", Board)},
    body=BoardPatch,
    errors=(400, 401, 403, 404, 413),
)
def board_update(request, board_id: int):
    board = selectors.board_get_drawable(board_id, request.api_user)
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    raw = parse_json_object(request)
    if board.author_id != request.api_user.pk and raw.keys() - {"doc"}:
        raise selectors.NotBoardAuthor()  # an editor changes the drawing only
    data = validate(BoardPatch, raw)
    changes = {field: getattr(data, field) for field in data.model_fields_set}
    if "doc" in changes:
        changes["doc"] = doc_with_ids(raw["doc"])  # stored as sent, each element with an id
        placed = images.doc_image_ids(changes["doc"]) - images.doc_image_ids(board.doc)  # those kept stay
        images.images_check_placeable(placed, author_id=board.author_id, board_id=board.pk)
    if "comments" in changes:
        changes["commenting"] = changes.pop("comments")  # the API's name; the count is "comments"
    board = services.board_update(board=board, changes=changes, by=request.api_user.username)
    return board_json(board)


@login_required
@documented("Delete a board (author or staff)", {204: "deleted"}, errors=(401, 403, 404))
def board_delete(request, board_id: int):
    board = selectors.board_get_own(board_id, request.api_user, staff_may=True)
    services.board_delete(board=board)
    return HttpResponse(status=204)


@documented("The people invited to draw on a board", {200: ("editors", People)}, errors=(401, 404))
def editors_list(request, board_id: int):
    board = selectors.board_get_for(board_id, request.api_user)
    return People(items=selectors.board_editors(board.pk))


@login_required
@documented(
    "Invite someone to draw on the board (author only; idempotent); 403 when either blocks the other",
    {204: "they may draw"},
    errors=(400, 401, 403, 404, 429),
)
def editor_put(request, board_id: int, username: str):
    board = selectors.board_get_visible(board_id)
    user = user_get_by_name(username)
    if board.author_id != request.api_user.pk:
        raise selectors.NotBoardAuthor()
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    editor_services.editor_invite(board=board, user=user, invited_by=request.api_user)
    return HttpResponse(status=204)


@login_required
@documented(
    "Remove an editor (the author, or the editor leaving; idempotent)",
    {204: "they no longer draw"},
    errors=(401, 403, 404),
)
def editor_delete(request, board_id: int, username: str):
    board = selectors.board_get_visible(board_id)
    user = user_get_by_name(username)
    if request.api_user.pk not in (board.author_id, user.pk):
        raise selectors.NotBoardAuthorOrEditor()
    editor_services.editor_remove(board=board, user=user)
    return HttpResponse(status=204)


@documented("The drawing rendered as SVG", {200: ("SVG", {"type": "string"}, "image/svg+xml")}, errors=(401, 404))
def board_preview(request, board_id: int):
    board = selectors.board_get_for(board_id, request.api_user)
    doc = board.doc
    svg = render_svg(doc, title=board.title, images=images.image_data_uris(images.doc_image_ids(doc)))
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    response["Content-Security-Policy"] = SVG_POLICY
    response["Cache-Control"] = "public, max-age=60"
    return response


boards = endpoint(POST=board_create)
board = endpoint(GET=board_read, PATCH=board_update, DELETE=board_delete, parameters=(BOARD_ID,))
preview = endpoint(GET=board_preview, parameters=(BOARD_ID,))
editors = endpoint(GET=editors_list, parameters=(BOARD_ID,))
editor = endpoint(PUT=editor_put, DELETE=editor_delete, parameters=(BOARD_ID, USERNAME))
