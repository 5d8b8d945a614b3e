"""The live hub (feeds.live.hub) on its own, against the real plain Redis it subscribes on: the
joins of a process's first moments, which come together (a class opening its boards at once),
and a join that never finishes. Each receiver is the hub's side of a socket: it keeps what the
hub hands it, in order."""

import asyncio
import secrets
import threading
import time

import pytest

from feeds import keys
from feeds.live import hub as hubs


class Receiver:
    def __init__(self, board_id: int, n: int):
        self.board_id, self.sid = board_id, f"r{n}"
        self.ops: list[tuple[int, str]] = []

    def on_op(self, seq: int, text: str) -> None:
        self.ops.append((seq, text))

    def on_frame(self, kind: str, sender: str, text: str) -> None:
        pass

    def on_notice(self, word: str) -> None:
        pass

    def catch_up(self) -> None:
        pass

    def check_stuck(self) -> None:
        pass

    def refresh(self, pipe) -> None:
        pass


def boards(count: int) -> list[int]:
    """Board ids no other test's socket is on."""
    return [secrets.randbelow(2**50) + 2**52 for _ in range(count)]


async def until(condition, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not delivered in time"
        await asyncio.sleep(0.01)


def run_in_a_loop_of_its_own(scenario) -> None:
    """asyncio.run on a thread of its own: the browser tests leave an event loop running on the
    main one. Whatever the scenario raised is raised here."""
    failure: list[BaseException] = []

    def target():
        try:
            asyncio.run(scenario())
        except BaseException as error:  # raised again on the test's thread
            failure.append(error)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


async def closed(hub: hubs.Hub) -> None:
    for task in (hub.reader, hub.ticker):
        if task is not None:
            task.cancel()
    await hub.pubsub.aclose()
    await hub.client.aclose()


def test_joins_that_come_together_to_a_new_hub_all_get_every_op():
    """A hundred sockets on twenty boards join a hub that has no connection yet, all at once:
    every join returns, on the one subscription connection, and an op to each board reaches
    each of its sockets once."""

    async def scenario():
        hub = hubs.Hub()
        ids = boards(20)
        receivers = [Receiver(board, n) for n, board in enumerate(ids * 5)]
        await asyncio.gather(*(hub.join(receiver) for receiver in receivers))
        assert set(hub.rooms) == {keys.live_channel(board) for board in ids}
        for seq, board in enumerate(ids, start=1):
            await hub.publish(board, hubs.OP, f'{{"n":{seq}}}', seq=seq)
        await until(lambda: all(receiver.ops for receiver in receivers))
        await asyncio.sleep(0.1)  # nothing more comes
        for receiver in receivers:
            seq = ids.index(receiver.board_id) + 1
            assert receiver.ops == [(seq, f'{{"n":{seq}}}')]
        await closed(hub)

    run_in_a_loop_of_its_own(scenario)


def test_a_join_cancelled_before_redis_confirmed_leaves_its_room_and_the_next_one_subscribes():
    """A socket that goes while its join waits (the client left, the server stopped it) takes
    itself out of the room: the board's next join subscribes afresh and gets its ops."""

    async def scenario():
        hub = hubs.Hub()
        [board] = boards(1)
        gone = Receiver(board, 0)
        joining = asyncio.get_running_loop().create_task(hub.join(gone))
        await asyncio.sleep(0)  # in its room, connecting
        assert gone in hub.rooms[keys.live_channel(board)]
        joining.cancel()
        with pytest.raises(asyncio.CancelledError):
            await joining
        assert keys.live_channel(board) not in hub.rooms
        here = Receiver(board, 1)
        await asyncio.wait_for(hub.join(here), hubs.SUBSCRIBE_TIMEOUT * 2)
        await hub.publish(board, hubs.OP, '{"n":1}', seq=1)
        await until(lambda: here.ops)
        assert here.ops == [(1, '{"n":1}')] and gone.ops == []
        await closed(hub)

    run_in_a_loop_of_its_own(scenario)
