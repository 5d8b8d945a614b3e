"""Telling a board's open live connections that something changed outside them (an editor
invited or removed, the board deleted or hidden, the doc replaced, the title changed), from a
request or a task: one notice, or one op of the log, on the board's channel (feeds.live.hub),
whichever process holds the sockets.

A notice lost here (the plain Redis unreachable) costs little: each connection checks its rights
again whenever it is told and when it reconnects, and a gone board refuses every op anyway. An
op lost here is in the log: each connection reads it back at the next op's gap or its reconnect.
"""

import logging

from feeds.live import oplog
from feeds.live.hub import notify, publish_comment, publish_op

logger = logging.getLogger(__name__)


def _send(board_id: int, notice: str) -> None:
    try:
        notify(board_id, notice)
    except Exception as error:  # a notice, never the reason a request fails
        logger.warning("could not tell board %s's live connections (%s): %s", board_id, notice, error)


def board_access_changed(board_id: int) -> None:
    """Editors of the board changed: each connection re-reads whether it may send ops."""
    _send(board_id, "access")


def board_gone(board_id: int) -> None:
    """The board was deleted or hidden: every connection is closed with 4404."""
    _send(board_id, "gone")


def board_reset(board_id: int) -> None:
    """The doc was replaced whole (an API edit): every connection gets a fresh hello."""
    _send(board_id, "reset")


def board_op(board_id: int, seq: int, message: dict) -> None:
    """An op appended to the board's log outside the live sockets (feeds.services.boards: the
    title changed through the API): to every connection, in its seq order."""
    try:
        publish_op(board_id, seq, oplog._json(message))
    except Exception as error:  # in the log: read back at the next gap or reconnect
        logger.warning("could not hand op %s of board %s to its live connections: %s", seq, board_id, error)


def board_comment(board_id: int, action: str, comment_id: int) -> None:
    """A comment of the board was posted, edited or removed (``action``): every open page of
    the board is told its id and reads it again through the API (which leaves out what the
    viewer does not see). A message lost here shows at the page's next load."""
    try:
        publish_comment(board_id, oplog._json({"type": "comment", "action": action, "id": comment_id}))
    except Exception as error:  # a live nicety, never the reason a comment fails
        logger.warning("could not tell board %s's live connections of comment %s: %s", board_id, comment_id, error)
