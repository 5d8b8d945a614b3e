"""API: a board's versions (docs/api.md, "Versions")."""

import json
from typing import Annotated

from django.http import HttpResponse
from pydantic import Field

from feeds import selectors, versions
from feeds.api.boards import BOARD_ID
from feeds.services import versions as services
from feeds.timelines.boardcache import Board
from ugcsite.platform.apidoc import LIMIT_PARAM, documented, parameter, query_param
from ugcsite.platform.http import ID_LIMIT, client_address, endpoint, login_required, paging
from ugcsite.platform.ratelimits import write_attempt

VERSION_MAX = 2**31 - 1  # BoardVersion.n is a PostgreSQL integer: a larger n names no version
VERSION_N = parameter(
    "n",
    "path",
    {"type": "integer", "minimum": 0},
    "a version's number (from 1); a number the board has no version of is a 404",
)
VERSION_BEFORE = query_param(
    "before",
    {
        "type": "integer",
        "minimum": 1,
        "maximum": ID_LIMIT,
        "description": "only versions numbered below this (the next of the page before)",
    },
    "only versions numbered below this (the next of the page before)",
)


class Restored(Board):
    """The board at its new version."""

    version: Annotated[int, Field(description="the new version's number")]


def _version_number(board_id: int, n: int) -> int:
    if not 1 <= n <= VERSION_MAX:
        raise versions.VersionNotFound(board_id, n)
    return n


@documented(
    "A board's kept versions, newest first (who may read the board may read them)",
    {200: ("a page of versions", versions.VersionsPage)},
    parameters=(LIMIT_PARAM, VERSION_BEFORE),
    errors=(400, 401, 404),
)
def versions_list(request, board_id: int):
    # who may read the board may read its versions; its drawing is not read
    board = selectors.board_get_for(board_id, request.api_user, with_doc=False)
    page = paging(request, allow_before=True)
    before = min(page["before"], VERSION_MAX + 1) if page["before"] is not None else None
    return versions.versions_page(board.pk, before=before, limit=page["limit"])


@documented("One version of a board, with its drawing", {200: ("the version", versions.Version)}, errors=(401, 404))
def version_read(request, board_id: int, n: int):
    board = selectors.board_get_for(board_id, request.api_user, with_doc=False)
    head, doc_json = versions.version_get(board.pk, _version_number(board_id, n))
    text = json.dumps(head, ensure_ascii=False)
    # The stored doc is spliced in as it is: opening a version never parses or encodes it again.
    return HttpResponse(f'{text[:-1]}, "doc": {doc_json}}}', content_type="application/json")


@login_required
@documented(
    "Make this version the board's drawing again, as a new version (the author and editors; nothing is lost); a "
    "live board's people get it at once",
    {200: ("the board at its new version", Restored)},
    errors=(401, 403, 404, 429),
)
def version_restore(request, board_id: int, n: int):
    board = selectors.board_get_drawable(board_id, request.api_user)  # 404, then 403: the author and editors
    _version_number(board_id, n)
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    board = services.version_restore(board=board, n=n, by=request.api_user.username)
    text = selectors.board_full_json(board)  # a Restored: the board and its version
    return HttpResponse(f'{text[:-1]}, "version": {int(board.version)}}}', content_type="application/json")


versions_view = endpoint(GET=versions_list, parameters=(BOARD_ID,))
version_view = endpoint(GET=version_read, parameters=(BOARD_ID, VERSION_N))
restore_view = endpoint(POST=version_restore, parameters=(BOARD_ID, VERSION_N))
