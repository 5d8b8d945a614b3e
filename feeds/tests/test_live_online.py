"""/ws/me against a real ASGI server process (uvicorn, the Channels layer on the plain Redis):
a post by someone followed reaches the socket of a reader online through the real fan-out
(board_fanout -> fanout_batch), a notification sends the new unread count, anonymous is
refused, a reader offline is told nothing, and the plain Redis down fails no fan-out."""

import json

import pytest
from websockets.sync.client import connect

from feeds import notifications
from feeds.live import online
from feeds.models import Notification
from feeds.services import boards as board_services, follows as follow_services
from feeds.timelines import store
from social import tokens
from social.services import user_create
from ugcsite.testing import socket_close_code, wait_for

pytestmark = pytest.mark.live

DOC = {"width": 400, "height": 300, "background": "#ffffff", "elements": []}


class Me:
    def __init__(self, server, token=None, headers=None):
        extra = dict(headers or {})
        if token:
            extra["Authorization"] = f"Bearer {token}"
        self.socket = connect(f"{server.ws}/ws/me", additional_headers=extra, open_timeout=10).__enter__()
        self.hello = self.recv()

    def recv(self, timeout=10):
        return json.loads(self.socket.recv(timeout=timeout))

    def close(self):
        self.socket.close()


def closed_with(server, headers=None) -> int:
    return socket_close_code(f"{server.ws}/ws/me", headers)


@pytest.fixture
def world(asgi_server, run):
    alice = user_create(username="alice", password="password123")
    bob = user_create(username="bob", password="password123")
    carol = user_create(username="carol", password="password123")
    for reader in (bob, carol):
        run(follow_services.follow_create, follower=reader, followee=alice)
    return {
        "server": asgi_server,
        "alice": alice,
        "bob": bob,
        "carol": carol,
        "tokens": {u.username: tokens.token_create(user=u) for u in (alice, bob, carol)},
    }


def test_a_post_and_a_notification_reach_the_reader_online(world, run):
    server, alice, bob = world["server"], world["alice"], world["bob"]
    me = Me(server, token=world["tokens"]["bob"])
    assert me.hello == {"type": "hello", "username": "bob", "unread": 0}
    assert online.online_of([bob.pk, world["carol"].pk]) == [bob.pk]  # carol has no socket
    board = run(board_services.board_create, author=alice, title="New", kind="sketch", tags=[], doc=dict(DOC))
    assert board.pk in store.home_ids(bob.pk)  # the real fan-out ran
    assert me.recv() == {"type": "feed", "board_id": board.pk}
    run(follow_services.follow_create, follower=alice, followee=bob)
    assert me.recv() == {"type": "unread", "unread": 1}
    world["carol"].refresh_from_db()
    run(follow_services.follow_create, follower=world["carol"], followee=bob)  # gathered: still one row
    assert me.recv() == {"type": "unread", "unread": 1}
    run(notifications.notifications_mark_read, bob.pk)  # read on another page: this one's badge goes
    assert me.recv() == {"type": "unread", "unread": 0}
    me.close()
    wait_for(lambda: online.online_of([bob.pk]) == [], what="bob's online record removed when his socket closed")


def test_a_reader_offline_is_told_nothing_and_costs_one_lookup(world, run):
    bob, carol = world["bob"], world["carol"]
    me = Me(world["server"], token=world["tokens"]["bob"])
    # carol is offline: the batch's one ZMSCORE finds only bob; nobody sends to carol's group.
    assert online.feed_delivered([bob.pk, carol.pk], 12345) == 1
    assert me.recv() == {"type": "feed", "board_id": 12345}
    assert online.feed_delivered([carol.pk], 12346) == 0
    carol_socket = Me(world["server"], token=world["tokens"]["carol"])  # online from now: gets later posts only
    with pytest.raises(TimeoutError):
        carol_socket.recv(timeout=1)  # nothing was queued for her while she was away
    carol_socket.close()
    me.close()


def test_who_may_connect(world, client):
    server = world["server"]
    assert closed_with(server) == 4401  # anonymous
    assert closed_with(server, {"Authorization": "Bearer not-a-token"}) == 4401
    client.force_login(world["bob"])
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    assert closed_with(server, {"Cookie": cookie, "Origin": "https://evil.example"}) == 4403
    host = server.url.removeprefix("http://")
    me = Me(server, headers={"Cookie": cookie, "Origin": f"http://{host}"})
    assert me.hello["username"] == "bob"
    me.close()


def test_the_plain_redis_down_fails_no_fanout_and_no_notification(world, run, settings):
    alice, bob = world["alice"], world["bob"]
    settings.CHANNEL_LAYER_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    online._plain.cache_clear()
    try:
        board = run(board_services.board_create, author=alice, title="Still", kind="sketch", tags=[], doc=dict(DOC))
        run(follow_services.follow_create, follower=alice, followee=bob)
    finally:
        online._plain.cache_clear()
    assert board.pk in store.home_ids(bob.pk)
    assert Notification.objects.filter(recipient=bob, read=False).count() == 1
