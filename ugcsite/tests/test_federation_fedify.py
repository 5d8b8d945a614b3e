"""Federation against a real peer: Fedify 2.3.6 under Node 22 (ugcsite/tests/fedify/peer.mjs,
driven through ugcsite/tests/fedify_peer.py), talking to the site served by pytest-django's live
server on the test database and Redis, over loopback HTTP.

Fedify does everything here its own way, as a fediverse server would: it looks our actor and
Notes up and parses them as JSON-LD, signs what it sends (one peer signs draft-cavage first, as
Mastodon does; the other RFC 9421 first, Fedify's default, falling back to cavage after a 401),
and verifies every delivery we make by fetching our key. What it received comes back with its
verdict (``verified``) and the key that signed it. Deliveries run as the Celery tasks' own code
in this process (deliver_all), so each test sees them at once; feeds/tests/test_federation.py
runs the same path through a real worker."""

import json
import re
import urllib.error
import urllib.request

import pytest

from feeds.federation import delivery, services as federation
from feeds.models import Board, Comment, FederationActivity, FederationDelivery, RemoteFollow, RemoteReaction
from feeds.services.accounts import account_create
from feeds.services.boards import board_create, board_delete, board_update
from ugcsite.serving import free_port
from ugcsite.testing import federation_tasks_held
from ugcsite.tests.fedify_peer import CAVAGE, RFC9421, FedifyPeer, PeerError

DOC = {
    "width": 320,
    "height": 200,
    "background": "#ffffff",
    "elements": [
        {"type": "rect", "color": "#ff0000", "width": 2, "x": 100, "y": 60, "w": 120, "h": 80, "fill": "#ff0000"},
        {"type": "text", "x": 10, "y": 30, "text": "Hello Fedify", "color": "#000000", "size": 16},
    ],
}


@pytest.fixture(scope="session", params=[CAVAGE, RFC9421], ids=["cavage-first", "rfc9421-first"])
def fedify_process(request, tmp_path_factory):
    """One Fedify peer process a first knock, for the whole session (Node starts in seconds)."""
    peer = FedifyPeer(free_port(), first_knock=request.param, log_path=tmp_path_factory.mktemp("fedify") / "peer.log")
    try:
        peer.start()
    except RuntimeError as error:
        pytest.fail(str(error))
    yield peer
    peer.stop()


@pytest.fixture
def fedify(fedify_process):
    fedify_process.clear()
    return fedify_process


@pytest.fixture
def site(live_server, settings, transactional_db):
    settings.SITE_URL = live_server.url
    settings.FEDERATION_ALLOW_PRIVATE = True
    settings.FEDERATION_ENABLED = True
    with federation_tasks_held():
        yield live_server.url


def deliver_all() -> int:
    """What the Celery tasks do, here and now: every activity walked, every delivery tried once."""
    done = 0
    for activity_id in FederationActivity.objects.filter(walked=False).values_list("pk", flat=True):
        ids, more = delivery.walk_batch(activity_id)
        assert more is None
        for delivery_id in ids:
            delivery.deliver(delivery_id)
            done += 1
    return done


def of_type(kind: str):
    return lambda item: item.get("type") == kind


def followed(fedify: FedifyPeer, site: str, username: str = "alice") -> dict:
    """The peer follows ``username`` and receives our Accept: the Accept as it received it."""
    sent = fedify.follow(f"{site}/u/{username}")
    assert RemoteFollow.objects.filter(followee__username=username, actor__uri=fedify.actor).exists()
    assert deliver_all() == 1
    accept = fedify.wait_for(of_type("Accept"))
    assert accept["verified"] is True, accept
    obj = accept["activity"]["object"]
    assert (obj if isinstance(obj, str) else obj["id"]) == sent["id"]
    return accept


def test_the_peer_looks_up_an_actor_and_a_board(site, fedify):
    account_create(username="alice", password="password123")
    alice = fedify.lookup(f"{site}/u/alice")
    assert alice["type"] == "Person"
    actor = alice["object"]
    assert actor["id"] == f"{site}/u/alice"
    assert actor["preferredUsername"] == "alice"
    assert actor["inbox"] == f"{site}/u/alice/inbox"
    assert actor["endpoints"]["sharedInbox"] == f"{site}/inbox"
    assert actor["publicKey"]["owner"] == actor["id"]
    assert "BEGIN PUBLIC KEY" in actor["publicKey"]["publicKeyPem"]

    board = board_create(author=Board.author.field.related_model.objects.get(username="alice"), **_board("A red box"))
    note = fedify.lookup(f"{site}/b/{board.pk}")
    assert note["type"] == "Note"
    attachment = note["object"]["attachment"]
    picture = attachment[0] if isinstance(attachment, list) else attachment
    assert picture["type"] == "Document" and picture["mediaType"] == "image/png"
    assert (picture["width"], picture["height"]) == (320, 200)
    # Fedify's vocabulary has no blurhash (Mastodon's toot:blurhash): it is in the Note as served.
    request = urllib.request.Request(f"{site}/b/{board.pk}", headers={"Accept": "application/activity+json"})
    served = json.loads(urllib.request.urlopen(request, timeout=20).read())
    assert served["attachment"][0]["url"] == picture["url"] and served["attachment"][0]["blurhash"]


def test_the_peer_finds_the_actor_by_webfinger(site, fedify):
    """Fedify's WebFinger client, given the actor's URL (it would ask https://HOST for an acct:
    handle, as Mastodon does, which loopback HTTP cannot serve): the JRD names the handle and
    its self link is the actor, which the peer then looks up."""
    account_create(username="alice", password="password123")
    host = site.removeprefix("http://")
    jrd = fedify.webfinger(f"{site}/u/alice")
    assert jrd["subject"] == f"acct:alice@{host}"
    [self_link] = [link for link in jrd["links"] if link["rel"] == "self"]
    assert self_link["type"] == "application/activity+json" and self_link["href"] == f"{site}/u/alice"
    assert fedify.lookup(self_link["href"])["object"]["preferredUsername"] == "alice"


def _board(title: str) -> dict:
    return {"title": title, "kind": "sketch", "tags": ["fedify"], "doc": DOC}


def test_follow_and_the_signed_accept(site, fedify):
    account_create(username="alice", password="password123")
    accept = followed(fedify, site)
    assert accept["signedBy"].startswith(f"{site}/u/alice")  # alice's key, which Fedify fetched and checked
    assert accept["scheme"] == "draft-cavage"  # as the issue asks: Mastodon's signatures
    assert accept["actor"] == f"{site}/u/alice"


def test_create_update_and_delete_reach_the_peer_signed(site, fedify):
    alice = account_create(username="alice", password="password123")
    followed(fedify, site)
    fedify.clear()

    board = board_create(author=alice, **_board("A red box"))
    deliver_all()
    create = fedify.wait_for(of_type("Create"))
    assert create["verified"] is True, create
    assert create["signedBy"].startswith(f"{site}/u/alice")
    note = create["activity"]["object"]
    assert note["id"] == f"{site}/b/{board.pk}" and note["type"] == "Note"
    assert note["attributedTo"] == f"{site}/u/alice"
    attachment = note["attachment"]
    picture = attachment[0] if isinstance(attachment, list) else attachment
    assert picture["type"] == "Document" and picture["mediaType"] == "image/png"
    assert (picture["width"], picture["height"]) == (320, 200)
    assert create["raw"]["object"]["attachment"][0]["blurhash"]  # as posted (Fedify's vocabulary drops it)
    with urllib.request.urlopen(picture["url"], timeout=20) as answer:  # the PNG it names, as Mastodon fetches it
        assert answer.headers["Content-Type"] == "image/png"
        assert answer.read().startswith(b"\x89PNG\r\n\x1a\n")
    print("The board as the Fedify peer received it:\n" + json.dumps(create["raw"], indent=2))

    board_update(board=board, changes={"title": "A redder box"})
    deliver_all()
    update = fedify.wait_for(of_type("Update"))
    assert update["verified"] is True, update
    assert update["activity"]["object"]["id"] == note["id"]
    assert "A redder box" in update["activity"]["object"]["content"]

    board_delete(board=Board.objects.select_related("author").get(pk=board.pk))
    deliver_all()
    deleted = fedify.wait_for(of_type("Delete"))
    assert deleted["verified"] is True, deleted
    obj = deleted["activity"]["object"]
    assert (obj if isinstance(obj, str) else obj["id"]) == note["id"]


def test_like_announce_reply_and_their_undos_from_the_peer(site, fedify, client):
    alice = account_create(username="alice", password="password123")
    board = board_create(author=alice, **_board("A map"))
    actor, note_url = f"{site}/u/alice", f"{site}/b/{board.pk}"

    like = fedify.like(actor, note_url)
    boost = fedify.announce(actor, note_url)
    board.refresh_from_db()
    assert (board.likes, board.boosts) == (1, 1)
    assert RemoteReaction.objects.filter(board=board).count() == 2

    reply = fedify.reply(actor, note_url, "<p>Lovely <b>map</b>!</p>")
    comment = Comment.objects.get(board=board)
    assert comment.text == "Lovely map!"
    assert comment.remote_handle.startswith("peer@127.0.0.1")
    page = urllib.request.urlopen(note_url, timeout=20).read().decode()  # the board's page shows it
    assert "Lovely map!" in page and comment.remote_handle in page
    client.force_login(alice)  # and alice is told, naming the peer's actor by its handle
    told = client.get("/notifications").content.decode()
    handle = f'<span class="remote-actor">@{comment.remote_handle}</span>'
    for kind, verb in (("like", "liked"), ("boost", "boosted"), ("comment", "commented on")):
        assert re.search(f'data-kind="{kind}".*?{re.escape(handle)}\\s*{verb} <a', told, re.S), kind

    fedify.undo(actor, like["id"])
    fedify.undo(actor, boost["id"])
    fedify.delete(actor, reply["activity"]["object"]["id"])
    board.refresh_from_db()
    assert (board.likes, board.boosts, board.comments) == (0, 0, 0)
    assert not Comment.objects.filter(board=board).exists()
    assert not RemoteReaction.objects.filter(board=board).exists()


def test_the_peer_really_checks_signatures(site, fedify):
    """The verdicts above mean something: a post to the peer's inbox that no key signed is refused
    (401) and kept as unverified, with Fedify's reason."""
    account_create(username="alice", password="password123")
    forged = {
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": f"{site}/forged/1",
        "type": "Like",
        "actor": f"{site}/u/alice",
        "object": fedify.actor,
    }
    request = urllib.request.Request(
        f"{fedify.url}/inbox",
        data=json.dumps(forged).encode(),
        method="POST",
        headers={"Content-Type": "application/activity+json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=20)
    assert refused.value.code == 401
    kept = fedify.wait_for(lambda item: item.get("id") == forged["id"])
    assert kept["verified"] is False and kept["reason"]["type"] == "noSignature"


def test_a_blocked_peer_is_refused_and_sent_nothing(site, fedify):
    """Staff block the peer's host: what it left goes, its activities get 403, and a new board is
    delivered to no one there."""
    alice = account_create(username="alice", password="password123")
    followed(fedify, site)
    board = board_create(author=alice, **_board("Before the block"))
    deliver_all()
    fedify.wait_for(of_type("Create"))
    fedify.like(f"{site}/u/alice", f"{site}/b/{board.pk}")
    assert Board.objects.get(pk=board.pk).likes == 1

    federation.host_block(fedify.url.removeprefix("http://"), reason="tests")
    assert Board.objects.get(pk=board.pk).likes == 0
    assert not RemoteFollow.objects.filter(followee=alice).exists()
    with pytest.raises(PeerError) as refused:  # Fedify tells what our inbox answered
        fedify.like(f"{site}/u/alice", f"{site}/b/{board.pk}")
    assert "403" in str(refused.value.body)
    assert Board.objects.get(pk=board.pk).likes == 0

    fedify.clear()
    board_create(author=alice, **_board("After the block"))
    deliver_all()
    assert fedify.received() == []


def test_a_delivery_the_peer_answers_500_is_retried_then_taken(site, fedify):
    """Mastodon's retry model against the real peer: a 500 is tried again after 1^4 + 15 s (and
    jitter), and the second try reaches Fedify, which verifies it."""
    alice = account_create(username="alice", password="password123")
    followed(fedify, site)
    fedify.clear()
    fedify.fail(500)
    board = board_create(author=alice, **_board("Retried"))
    [activity_id] = FederationActivity.objects.filter(walked=False).values_list("pk", flat=True)
    [delivery_id], _ = delivery.walk_batch(activity_id)

    wait = delivery.deliver(delivery_id)
    assert wait is not None and 16 <= wait <= 16 + 20
    assert FederationDelivery.objects.get(pk=delivery_id).last_error == "answered 500"
    assert [item["type"] for item in fedify.received()] == ["refused"]

    assert delivery.deliver(delivery_id) is None  # taken: done
    assert not FederationDelivery.objects.filter(pk=delivery_id).exists()
    create = fedify.wait_for(of_type("Create"))
    assert create["verified"] is True and create["activity"]["object"]["id"] == f"{site}/b/{board.pk}"
