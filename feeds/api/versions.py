"""API: a board's versions (docs/api.md, "Versions")."""

import json

from django.http import HttpResponse

from feeds import selectors, versions
from feeds.services import versions as services
from ugcsite.platform.http import client_address, endpoint, login_required, paging
from ugcsite.platform.ratelimits import write_attempt

VERSION_MAX = 2**31 - 1  # BoardVersion.n is a PostgreSQL integer: a larger n names no version


def _version_number(board_id: int, n: int) -> int:
    if not 1 <= n <= VERSION_MAX:
        raise versions.VersionNotFound(board_id, n)
    return n


def versions_list(request, board_id: int):
    # who may read the board may read its versions; its drawing is not read
    board = selectors.board_get_for(board_id, request.api_user, with_doc=False)
    page = paging(request, allow_before=True)
    before = min(page["before"], VERSION_MAX + 1) if page["before"] is not None else None
    return versions.versions_page(board.pk, before=before, limit=page["limit"])


def version_read(request, board_id: int, n: int):
    board = selectors.board_get_for(board_id, request.api_user, with_doc=False)
    head, doc_json = versions.version_get(board.pk, _version_number(board_id, n))
    text = json.dumps(head, ensure_ascii=False)
    # The stored doc is spliced in as it is: opening a version never parses or encodes it again.
    return HttpResponse(f'{text[:-1]}, "doc": {doc_json}}}', content_type="application/json")


@login_required
def version_restore(request, board_id: int, n: int):
    board = selectors.board_get_drawable(board_id, request.api_user)  # 404, then 403: the author and editors
    _version_number(board_id, n)
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    board = services.version_restore(board=board, n=n, by=request.api_user.username)
    text = selectors.board_full_json(board)
    return HttpResponse(f'{text[:-1]}, "version": {int(board.version)}}}', content_type="application/json")


versions_view = endpoint(GET=versions_list)
version_view = endpoint(GET=version_read)
restore_view = endpoint(POST=version_restore)
