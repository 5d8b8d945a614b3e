"""The API of a person's blocks of remote (fediverse) actors (docs/api.md, "Federation"): list,
block, unblock, by the actor's ``user@host`` handle. An actor is known here once it has followed,
liked, boosted or replied."""

import re

from django.http import HttpResponse
from typing_extensions import TypedDict

from feeds.federation import services
from feeds.models import RemoteActor, RemoteBlock
from ugcsite.platform.apidoc import documented, parameter
from ugcsite.platform.http import ApiError, client_address, endpoint, login_required
from ugcsite.platform.ratelimits import write_attempt

HANDLE_MAX = 512
# user@host (OpenAPI reads it from here). The spaces are spelled out: Python's \s also takes
# \x1c-\x1f, JSON Schema's (ECMA 262) does not, and the two must agree (the fuzz found one).
HANDLE_PATTERN = r"^@?[^@/ \t\n\r\f\v]+@[^@/ \t\n\r\f\v]+$"
HANDLE_RE = re.compile(HANDLE_PATTERN.removesuffix("$") + r"\Z")
HANDLE = parameter(
    "handle",
    "path",
    {"type": "string", "pattern": HANDLE_PATTERN, "maxLength": HANDLE_MAX},
    "user@host of an account of another server known here",
)


class RemoteAccount(TypedDict):
    handle: str
    uri: str


class RemoteAccounts(TypedDict):
    items: list[RemoteAccount]


def _actor(handle: str) -> RemoteActor:
    if len(handle) > HANDLE_MAX or not HANDLE_RE.match(handle):
        raise ApiError(400, "Name the remote account by its handle, user@host.")
    handle = handle.removeprefix("@")
    actor = RemoteActor.objects.filter(handle__iexact=handle).first()
    if actor is None:
        raise ApiError(404, f"No account {handle[:100]!r} from another server is known here.")
    return actor


@login_required
@documented(
    "The accounts of other servers (fediverse) the caller blocks, the latest first",
    {200: ("remote accounts", RemoteAccounts)},
    errors=(401,),
)
def remote_blocks(request):
    rows = RemoteBlock.objects.filter(blocker=request.api_user).select_related("actor").order_by("-created_at", "-pk")
    items: list[RemoteAccount] = [{"handle": row.actor.handle, "uri": row.actor.uri} for row in rows[:1000]]
    return RemoteAccounts(items=items)


@login_required
@documented(
    "Block a remote account (idempotent): it stops following you, its likes, boosts and replies on your boards go, "
    "and what it sends about you is dropped",
    {204: "blocked"},
    errors=(400, 401, 404, 429),
)
def remote_block_put(request, handle: str):
    actor = _actor(handle)
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    services.remote_block(blocker=request.api_user, actor=actor)
    return HttpResponse(status=204)


@login_required
@documented(
    "Unblock a remote account (idempotent); nothing removed comes back",
    {204: "not blocked"},
    errors=(400, 401, 404, 429),
)
def remote_block_delete(request, handle: str):
    actor = _actor(handle)
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    services.remote_unblock(blocker=request.api_user, actor=actor)
    return HttpResponse(status=204)


remote_blocks_view = endpoint(GET=remote_blocks)
remote_block_view = endpoint(PUT=remote_block_put, DELETE=remote_block_delete, parameters=(HANDLE,))
