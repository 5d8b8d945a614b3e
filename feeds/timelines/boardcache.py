"""G, the board cache: one Redis hash per board with what a list shows (the summary form), and
the API's two forms of a board (``BoardSummary``, ``Board``: ugcsite.platform.apidoc).

Filled from PostgreSQL on a miss, rewritten on update, removed on delete. Entries expire
``BOARD_CACHE_TTL_SECONDS`` after their last fill, so boards nobody lists leave Redis.
"""

import json
from collections.abc import Iterable
from typing import Annotated, Literal

import orjson
from django.conf import settings
from pydantic import Field
from typing_extensions import TypedDict

from feeds import keys
from feeds.rules import BOARD_KINDS, CommentPolicy
from feeds.validation import Doc
from ugcsite.platform.apidoc import IsoTime
from ugcsite.platform.redis import get_redis


class BoardSummary(TypedDict):
    """A board as every list shows it (docs/api.md, "Boards"): what G holds."""

    id: int
    author: str
    title: str
    kind: Literal[BOARD_KINDS]  # type: ignore[valid-type]
    tags: list[str]
    created_at: IsoTime
    updated_at: IsoTime
    views: int
    likes: Annotated[int, Field(description="the likes that count (of people who may use the site)")]
    comments: Annotated[
        int, Field(description="the published comments (it counts those of people the caller does not see)")
    ]
    preview_url: str


class RemixSource(TypedDict):
    id: int
    username: str | None
    title: str | None


class Board(BoardSummary):
    """The full form of a board (feeds.selectors.board_full_json): the summary, its settings and
    its drawing."""

    remixable: Annotated[bool, Field(description="others may remix it")]
    remixed_from: Annotated[
        RemixSource | None,
        Field(description="the board this one is a remix of (username and title null once it is gone), or null"),
    ]
    commenting: Annotated[
        Literal[tuple(CommentPolicy.values)],  # type: ignore[valid-type]
        Field(description='who may comment (set by PATCH {"comments": ...})'),
    ]
    doc: Doc


def fields_of(board) -> dict:
    """The G hash of a board (strings and numbers, as Redis stores them)."""
    return {
        "id": board.id,
        "author": board.author.username,
        "author_id": board.author_id,
        "title": board.title,
        "kind": board.kind,
        "tags": json.dumps(board.tags),
        "created_at": board.created_at.isoformat(),
        "updated_at": board.updated_at.isoformat(),
        "views": board.views,
        "likes": board.likes,
        "comments": board.comments,
    }


def summary_from_fields(fields: dict) -> BoardSummary:
    """The API's summary form of a board from its G hash."""
    board_id = int(fields["id"])
    return {
        "id": board_id,
        "author": fields["author"],
        "title": fields["title"],
        "kind": fields["kind"],
        "tags": orjson.loads(fields["tags"]),
        "created_at": fields["created_at"],
        "updated_at": fields["updated_at"],
        "views": int(fields["views"]),
        "likes": int(fields.get("likes", 0)),  # G entries cached before likes existed lack it
        "comments": int(fields.get("comments", 0)),  # the published comments (feeds.comments), as likes
        "preview_url": f"/api/v1/boards/{board_id}/preview.svg",
    }


def board_cache_put(board, *, pipe=None) -> None:
    """Write one board's G hash (replacing it whole). O(fields); one round trip, or none inside ``pipe``."""
    client = pipe if pipe is not None else get_redis().pipeline(transaction=False)
    key = keys.board(board.id)
    client.delete(key)
    client.hset(key, mapping=fields_of(board))
    client.expire(key, settings.BOARD_CACHE_TTL_SECONDS)
    if pipe is None:
        client.execute()


def board_cache_delete(board_id: int, *, pipe=None) -> None:
    """Drop one board's G hash. O(1)."""
    (pipe if pipe is not None else get_redis()).delete(keys.board(board_id))


def board_cache_get_many(board_ids: Iterable[int]) -> dict[int, dict]:
    """The cached G hashes of the given boards, by id; misses are left out.

    One pipelined round trip: O(k) for k ids (per-board keys span slots; on a cluster the
    client groups the pipeline by node).
    """
    board_ids = list(board_ids)
    if not board_ids:
        return {}
    pipe = get_redis().pipeline(transaction=False)
    for board_id in board_ids:
        pipe.hgetall(keys.board(board_id))
    return {board_id: fields for board_id, fields in zip(board_ids, pipe.execute()) if fields}
