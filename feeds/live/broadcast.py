"""Telling a board's open live connections that something changed outside them (an editor
invited or removed, the board deleted or hidden), through the Channels layer on the plain Redis.

A message lost here (the plain Redis unreachable) costs little: each connection checks its rights
again whenever it is told and when it reconnects, and a gone board refuses every op anyway.
"""

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from feeds import keys

logger = logging.getLogger(__name__)


def _send(board_id: int, message: dict) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    send = async_to_sync(layer.group_send)
    try:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            send(keys.live_group(board_id), message)
        else:  # a thread whose own loop runs (a test's browser driver): send from another thread
            with ThreadPoolExecutor(max_workers=1) as pool:
                pool.submit(send, keys.live_group(board_id), message).result()
    except Exception as error:  # a notice, never the reason a request fails
        logger.warning("could not tell board %s's live connections (%s): %s", board_id, message["type"], error)


def board_access_changed(board_id: int) -> None:
    """Editors of the board changed: each connection re-reads whether it may send ops."""
    _send(board_id, {"type": "board.access"})


def board_gone(board_id: int) -> None:
    """The board was deleted or hidden: every connection is closed with 4404."""
    _send(board_id, {"type": "board.gone"})


def board_reset(board_id: int) -> None:
    """The doc was replaced whole (an API edit): every connection gets a fresh hello."""
    _send(board_id, {"type": "board.reset"})
