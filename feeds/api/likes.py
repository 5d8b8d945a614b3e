"""API: likes and remixes (docs/api.md, "Likes and remixes")."""

from django.http import HttpResponse

from feeds import images, selectors
from feeds.api.boards import BOARD_ID, board_json
from feeds.rules import PAGE_IDS_MAX
from feeds.selectors import BoardsFound, LikesAnswer
from feeds.services import boards as board_services, likes as services
from feeds.timelines.boardcache import Board
from feeds.validation import BoardRemix, doc_with_ids
from social.selectors import PeoplePage
from ugcsite.platform.apidoc import PAGING, documented, ids_query
from ugcsite.platform.http import (
    ApiError,
    board_ids_param,
    client_address,
    endpoint,
    login_required,
    paging,
    parse_json_object,
    validate,
)
from ugcsite.platform.ratelimits import write_attempt

MAX_LIKES_IDS = PAGE_IDS_MAX


@login_required
@documented(
    "Remix a board: a new board of the caller's, a copy of it crediting it (body optional: what to change before "
    "it is made); 403 when its author turned remixing off",
    {201: ("the new board", Board)},
    body=BoardRemix,
    body_required=False,
    errors=(400, 401, 403, 404, 413, 429),
)
def remix_post(request, board_id: int):
    source = selectors.board_get_for(board_id, request.api_user)
    board_services.remix_check(author=request.api_user, source=source)
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    raw = parse_json_object(request) if request.body else {}
    data = validate(BoardRemix, raw)
    changes = {field: getattr(data, field) for field in data.model_fields_set}
    if "doc" in changes:
        changes["doc"] = doc_with_ids(raw["doc"])  # stored as sent, each element with an id
        # The source's pictures come with the copy (its readers saw them already); new ones are the remixer's own.
        placed = images.doc_image_ids(changes["doc"]) - images.doc_image_ids(source.doc)
        images.images_check_placeable(placed, author_id=request.api_user.pk, board_id=None)
    board = board_services.board_remix(author=request.api_user, source=source, changes=changes)
    board.author = request.api_user
    return board_json(board, status=201)


@documented(
    "The published remixes of a board, newest first",
    {200: ("a page and the total", BoardsFound)},
    parameters=PAGING,
    errors=(400, 401, 404),
)
def remixes_list(request, board_id: int):
    board = selectors.board_get_for(board_id, request.api_user)
    page = paging(request)
    return selectors.board_remixes(board, offset=page["offset"], limit=page["limit"], viewer=request.api_user)


def _liking(handler, summary: str, done: str):
    """The PUT or DELETE of /boards/{id}/like: the board visible to the caller (404), counted
    as a write, 204 (``done``) whether or not anything changed."""

    @login_required
    @documented(summary, {204: done}, errors=(401, 404, 429))
    def view(request, board_id: int):
        board = selectors.board_get_for(board_id, request.api_user)
        write_attempt(user_id=request.api_user.pk, address=client_address(request))
        handler(user=request.api_user, board=board)
        return HttpResponse(status=204)

    return view


@documented(
    "Who likes a board, latest first; the total is the count the board shows",
    {200: ("a page and the total", PeoplePage)},
    parameters=PAGING,
    errors=(400, 401, 404),
)
def likers_list(request, board_id: int):
    board = selectors.board_get_for(board_id, request.api_user)
    page = paging(request)
    return selectors.board_likers(board, offset=page["offset"], limit=page["limit"], viewer=request.api_user)


@login_required
@documented(
    "For a page of boards: the like count, whether I like it, who of the people I follow do",
    {200: ("board id -> likes (boards not visible are left out)", LikesAnswer)},
    parameters=(ids_query("board_ids", MAX_LIKES_IDS),),
    errors=(400, 401),
)
def likes_question(request):
    if "board_ids" not in request.GET:
        raise ApiError(400, f"Give board_ids=1,2,3 with 1 to {MAX_LIKES_IDS} board ids.")
    board_ids = board_ids_param(request.GET["board_ids"], name="board_ids", most=MAX_LIKES_IDS)
    return selectors.likes_answer(request.api_user, board_ids)


remix = endpoint(POST=remix_post, parameters=(BOARD_ID,))
remixes = endpoint(GET=remixes_list, parameters=(BOARD_ID,))
like = endpoint(
    PUT=_liking(services.like, "Like a board (idempotent)", "liked"),
    DELETE=_liking(services.unlike, "Take a like back (idempotent)", "not liked"),
    parameters=(BOARD_ID,),
)
likers = endpoint(GET=likers_list, parameters=(BOARD_ID,))
likes_view = endpoint(GET=likes_question)
