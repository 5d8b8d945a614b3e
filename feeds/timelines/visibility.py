"""The Redis side of a board becoming visible or leaving: its G entry, its place in its author's
M and the discovery indexes. Idempotent, so a change that the outbox sends again (feeds.timelines.outbox)
can redo it. Storage only: no tasks."""

from feeds.discovery import counters, indexes
from feeds.models import Board
from feeds.timelines import boardcache, store
from ugcsite.platform.redis import get_redis


def board_show(board: Board) -> int:
    """Write G, M[author] and the indexes of a published board (with its author loaded).
    Returns the size of M. O(log |M| + indexes), two round trips."""
    board.views += counters.pending_views([board.id])[board.id]  # the live figure for G
    indexes.board_index(
        board.id, kind=board.kind, tags=board.tags, author=board.author.username, views=board.views, likes=board.likes
    )
    pipe = get_redis().pipeline(transaction=False)
    boardcache.board_cache_put(board, pipe=pipe)
    store.profile_add_and_size(board.author_id, board.id, pipe=pipe)
    return pipe.execute()[-1]


def board_unshow(board_id: int, author_id: int) -> None:
    """Take a board out of the indexes, G and M[author]. O(log |M| + indexes), two round trips."""
    indexes.board_unindex(board_id)
    pipe = get_redis().pipeline(transaction=False)
    boardcache.board_cache_delete(board_id, pipe=pipe)
    store.profile_remove(author_id, board_id, pipe=pipe)
    pipe.execute()
