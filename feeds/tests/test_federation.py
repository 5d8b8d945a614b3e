"""Federation end to end against the real Django server (pytest-django's live server, on the
test database and Redis) and a peer server on loopback holding its own RSA key
(feeds.tests.federation_peer): discovery, the actor and the Note, a signed Follow answered
with a signed Accept, a board delivered with the peer checking our signature, likes, boosts,
replies and their Undos, refusals (unsigned, tampered, blocked), the retry model and malformed
bodies that must never make a 5xx."""

import json
import os
import re
import socket
import subprocess
import time
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import transaction
from django.utils import timezone

from feeds import keys
from feeds.federation import delivery, documents, remote, services as federation
from feeds.federation.api import HANDLE_PATTERN
from feeds.models import (
    Board,
    Comment,
    FederatedHost,
    FederationActivity,
    FederationDelivery,
    RemoteFollow,
    RemoteReaction,
)
from feeds.services import moderation
from feeds.services.accounts import account_create, account_delete
from feeds.services.boards import board_create, board_delete, board_update
from feeds.tests.federation_peer import AVATAR, Peer
from social.models import User
from social.services import avatar_set, profile_update
from ugcsite.platform.redis import get_redis
from ugcsite.serving import worker_command
from ugcsite.testing import federation_tasks_held, tasks_routed

DOC = {
    "width": 100,
    "height": 100,
    "background": "#ffffff",
    "elements": [{"type": "text", "x": 10, "y": 20, "text": "Hello fediverse", "color": "#000000", "size": 12}],
}
AP = "application/activity+json"


@pytest.fixture
def site(live_server, settings, transactional_db):
    settings.SITE_URL = live_server.url
    settings.FEDERATION_ALLOW_PRIVATE = True
    settings.FEDERATION_ENABLED = True
    with federation_tasks_held():
        yield live_server.url


@pytest.fixture
def peer():
    peer = Peer()
    yield peer
    peer.stop()


def get(url: str, accept: str = AP):
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def deliver_all() -> list[int]:
    """What Celery would do: every activity walked, every delivery tried once."""
    done = []
    for activity_id in FederationActivity.objects.filter(walked=False).values_list("pk", flat=True):
        ids, more = delivery.walk_batch(activity_id)
        assert more is None
        for delivery_id in ids:
            delivery.deliver(delivery_id)
            done.append(delivery_id)
    return done


def follow(peer: Peer, site: str, username: str = "alice") -> None:
    status, _ = peer.post(f"{site}/u/{username}/inbox", peer.activity("Follow", f"{site}/u/{username}", "follow-1"))
    assert status == 202


def test_being_found_actor_and_nodeinfo(site):
    alice = account_create(username="alice", password="password123")
    status, headers, body = get(f"{site}/.well-known/webfinger?resource=acct:alice@{documents.host()}")
    assert status == 200 and headers["Content-Type"] == "application/jrd+json"
    jrd = json.loads(body)
    assert jrd["subject"] == f"acct:alice@{documents.host()}"
    self_link = next(link for link in jrd["links"] if link["rel"] == "self")
    assert self_link == {"rel": "self", "type": AP, "href": f"{site}/u/alice"}

    status, headers, body = get(self_link["href"])
    assert status == 200 and headers["Content-Type"] == AP
    actor = json.loads(body)
    assert actor["type"] == "Person" and actor["preferredUsername"] == "alice"
    assert actor["publicKey"]["owner"] == actor["id"] and "BEGIN PUBLIC KEY" in actor["publicKey"]["publicKeyPem"]
    assert actor["endpoints"]["sharedInbox"] == f"{site}/inbox"
    assert actor["manuallyApprovesFollowers"] is False
    # the same address is still the page for a browser
    status, headers, body = get(f"{site}/u/alice", accept="text/html")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert json.loads(get(f"{site}/u/alice")[2])["publicKey"] == actor["publicKey"]  # one key, kept

    status, _, body = get(f"{site}/.well-known/nodeinfo", accept="application/json")
    href = json.loads(body)["links"][0]["href"]
    info = json.loads(get(href, accept="application/json")[2])
    assert info["version"] == "2.1" and info["protocols"] == ["activitypub"] and info["usage"]["users"]["total"] >= 1
    assert get(f"{site}/.well-known/webfinger?resource=acct:nobody@{documents.host()}")[0] == 404
    assert get(f"{site}/.well-known/webfinger")[0] == 400
    assert alice.pk


def test_follow_accept_create_update_delete(site, peer):
    alice = account_create(username="alice", password="password123")
    follow(peer, site)
    assert RemoteFollow.objects.filter(followee=alice, actor__uri=peer.uri).count() == 1
    follow(peer, site)  # a repeated delivery changes nothing
    assert RemoteFollow.objects.filter(followee=alice).count() == 1
    deliver_all()
    accepts = [r for r in peer.received if r["activity"]["type"] == "Accept"]
    assert accepts and accepts[-1]["verified"] == "ok", accepts
    assert accepts[-1]["activity"]["object"]["type"] == "Follow"
    assert accepts[-1]["path"] == "/users/bob/inbox"
    status, _, body = get(f"{site}/u/alice/followers")
    assert json.loads(body)["totalItems"] == 1
    page = get(f"{site}/u/alice", accept="text/html")[2].decode()
    assert 'data-count="followers">1<' in page  # the remote follower counts
    assert "Follow from another server" in page and f'data-copy="@alice@{documents.host()}"' in page

    board = board_create(author=alice, title="A house", kind="sketch", tags=["house", "blue"], doc=DOC)
    deliver_all()
    create = next(r for r in peer.received if r["activity"]["type"] == "Create")
    assert create["verified"] == "ok", create
    assert create["path"] == "/inbox"  # the shared inbox, once
    note = create["activity"]["object"]
    assert note["id"] == f"{site}/b/{board.pk}" and note["type"] == "Note"
    picture = note["attachment"][0]
    assert picture["type"] == "Document" and picture["mediaType"] == "image/png"
    assert picture["width"] > 0 and picture["height"] > 0 and len(picture["blurhash"]) >= 6
    status, headers, png = get(picture["url"], accept="image/png")
    assert status == 200 and headers["Content-Type"] == "image/png" and png.startswith(b"\x89PNG")
    assert "Hello fediverse" in note["attachment"][0]["name"]
    assert {t["name"] for t in note["tag"]} == {"#house", "#blue"}
    assert note["to"] == [documents.PUBLIC] and note["cc"] == [f"{site}/u/alice/followers"]
    # the Note at the board's own address
    fetched = json.loads(get(f"{site}/b/{board.pk}")[2])
    assert fetched["id"] == note["id"] and fetched["attachment"][0] == picture
    outbox = json.loads(get(f"{site}/u/alice/outbox")[2])
    assert outbox["type"] == "OrderedCollection" and outbox["totalItems"] == 1
    page = json.loads(get(outbox["first"])[2])
    assert page["orderedItems"][0]["object"]["id"] == note["id"]

    board_update(board=board, changes={"title": "A blue house"})
    board_update(board=Board.objects.get(pk=board.pk), changes={"title": "A bluer house"})  # inside the window
    deliver_all()
    updates = [r for r in peer.received if r["activity"]["type"] == "Update"]
    assert len(updates) == 1 and updates[0]["verified"] == "ok"
    # built by the walk from the board as it then stands: the latest title
    assert "A bluer house" in updates[0]["activity"]["object"]["content"]
    assert updates[0]["activity"]["object"]["attachment"][0]["url"] != picture["url"]  # the new version's PNG

    board_delete(board=Board.objects.select_related("author").get(pk=board.pk))
    deliver_all()
    deletes = [r for r in peer.received if r["activity"]["type"] == "Delete"]
    assert deletes and deletes[0]["activity"]["object"]["id"] == note["id"] and deletes[0]["verified"] == "ok"
    status, _, body = get(f"{site}/b/{board.pk}")
    assert status == 410 and json.loads(body)["type"] == "Tombstone"

    status, _ = peer.post(
        f"{site}/inbox", peer.activity("Undo", peer.activity("Follow", f"{site}/u/alice", "follow-1"), "undo-1")
    )
    assert status == 202
    assert not RemoteFollow.objects.filter(followee=alice).exists()


@pytest.mark.parametrize("kind", ["cavage", "rfc9421"])
def test_likes_boosts_replies_and_their_undos(site, peer, kind, api):
    alice = account_create(username="alice", password="password123")
    board = board_create(author=alice, title="A map", kind="map", tags=[], doc=DOC)
    note_url = f"{site}/b/{board.pk}"
    like = peer.activity("Like", note_url, "like-1")
    assert peer.post(f"{site}/inbox", like, kind=kind)[0] == 202
    assert peer.post(f"{site}/inbox", like, kind=kind)[0] == 202  # idempotent
    boost = peer.activity("Announce", note_url, "boost-1")
    assert peer.post(f"{site}/u/alice/inbox", boost, kind=kind)[0] == 202
    board.refresh_from_db()
    assert (board.likes, board.boosts) == (1, 1)
    assert (
        '<span class="boosts" title="boosts from the fediverse">1 boost</span>'
        in get(note_url, accept="text/html")[2].decode()
    )
    reply = {
        "id": f"{peer.uri}/notes/1",
        "type": "Note",
        "attributedTo": peer.uri,
        "inReplyTo": note_url,
        "content": "<p>Lovely <b>map</b>!</p>",
        "to": [documents.PUBLIC],
    }
    assert peer.post(f"{site}/inbox", peer.activity("Create", reply, "create-1"), kind=kind)[0] == 202
    comment = Comment.objects.get(board=board)
    assert comment.text == "Lovely map!" and comment.remote_handle == f"bob@{peer.host}" and comment.author is None
    board.refresh_from_db()
    assert board.comments == 1
    page = get(note_url, accept="text/html")[2].decode()
    assert "Lovely map!" in page and f"@bob@{peer.host}" in page
    listed = json.loads(get(f"{site}/api/v1/boards/{board.pk}/comments", accept="application/json")[2])
    author = listed["items"][0]["author"]
    assert author["username"] == f"bob@{peer.host}" and author["avatar"].startswith("/fediverse/avatars/")
    assert f'src="{author["avatar"]}"' in page  # served from here: the page loads nothing from other hosts
    status, headers, picture = get(site + author["avatar"], accept="image/*")
    assert status == 200 and headers["Content-Type"] == "image/png" and picture == AVATAR

    told = api.as_user("alice").get("/api/v1/notifications").json()["items"]
    assert {(n["kind"], tuple(n["actors"])) for n in told} == {
        (kind_, (f"bob@{peer.host}",)) for kind_ in ("like", "boost", "comment")
    }
    api.client.force_login(alice)
    shown = api.client.get("/notifications").content.decode()
    assert f'<span class="remote-actor">@bob@{peer.host}</span>' in shown and "boosted" in shown
    assert peer.post(f"{site}/inbox", peer.activity("Undo", like, "undo-like"), kind=kind)[0] == 202
    assert peer.post(f"{site}/inbox", peer.activity("Undo", boost, "undo-boost"), kind=kind)[0] == 202
    assert peer.post(f"{site}/inbox", peer.activity("Delete", reply["id"], "delete-1"), kind=kind)[0] == 202
    board.refresh_from_db()
    assert (board.likes, board.boosts, board.comments) == (0, 0, 0)
    assert not Comment.objects.filter(board=board).exists() and not RemoteReaction.objects.exists()


def test_refusals_unsigned_tampered_wrong_actor_blocked(site, peer):
    alice = account_create(username="alice", password="password123")
    board = board_create(author=alice, title="A comic", kind="comic", tags=[], doc=DOC)
    like = peer.activity("Like", f"{site}/b/{board.pk}", "like-x")
    status, body = peer.post(f"{site}/inbox", like, sign=False)
    assert status == 401 and json.loads(body)["detail"]
    status, body = peer.post(f"{site}/inbox", like, tamper=True)
    assert status == 401 and "Digest" in json.loads(body)["detail"]
    status, body = peer.post(f"{site}/inbox", like, kind="rfc9421", tamper=True)
    assert status == 401
    forged = {**like, "actor": "https://elsewhere.example/users/mallory"}
    assert peer.post(f"{site}/inbox", forged)[0] == 401
    assert Board.objects.get(pk=board.pk).likes == 0

    follow(peer, site)
    assert peer.post(f"{site}/inbox", like)[0] == 202
    assert Board.objects.get(pk=board.pk).likes == 1
    federation.host_block(peer.host, reason="spam")
    assert Board.objects.get(pk=board.pk).likes == 0 and not RemoteFollow.objects.exists()
    status, body = peer.post(f"{site}/inbox", peer.activity("Like", f"{site}/b/{board.pk}", "like-y"))
    assert status == 403 and json.loads(body)["detail"]
    before = len(peer.received)
    board_create(author=alice, title="After the block", kind="sketch", tags=[], doc=DOC)
    deliver_all()
    assert len(peer.received) == before  # nothing delivered to a blocked host


def test_retry_model_against_a_peer_answering_500_then_200(site, peer, settings):
    alice = account_create(username="alice", password="password123")
    follow(peer, site)
    deliver_all()
    peer.received.clear()
    peer.answers = [500]  # then 202
    board_create(author=alice, title="Retried", kind="sketch", tags=[], doc=DOC)
    activity = FederationActivity.objects.get(walked=False)
    ids, _ = delivery.walk_batch(activity.pk)
    assert len(ids) == 1
    wait = delivery.deliver(ids[0])
    assert 16 <= wait <= 16 + 20  # 1^4 + 15 s and jitter
    row = FederationDelivery.objects.get(pk=ids[0])
    assert row.attempts == 1 and row.last_error == "answered 500"
    assert delivery.deliver(ids[0]) is None  # the second try is answered 202: done
    assert not FederationDelivery.objects.filter(pk=ids[0]).exists()
    assert len(peer.received) == 2 and all(r["verified"] == "ok" for r in peer.received)
    assert peer.received[0]["activity"] == peer.received[1]["activity"]  # the same activity again
    # a 404 is not tried again: dropped at once
    peer.answers = [404]
    board_create(author=alice, title="Dropped", kind="sketch", tags=[], doc=DOC)
    ids, _ = delivery.walk_batch(FederationActivity.objects.get(walked=False).pk)
    assert delivery.deliver(ids[0]) is None and not FederationDelivery.objects.exists()
    assert [delivery.retryable(s) for s in (500, 502, 429, 408, 401, 404, 410, 501, 400)] == [
        True,
        True,
        True,
        True,
        True,
        False,
        False,
        False,
        False,
    ]
    assert [round(delivery.retry_after(n) - 10 * (n + 1) / 2, -3) for n in (15,)] == [51000.0]


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        b"[]",
        b"null",
        b'"x"',
        b"{",
        b'{"type": "Like"}',
        b'{"type": ["Like"], "actor": {}}',
        b'{"type": "Undo", "object": [1, 2]}',
        b'{"type": "Create", "object": {"type": "Note", "inReplyTo": 5}}',
        b"[" * 5000 + b"]" * 5000,
        b'{"@context": {"@id": null}, "actor": 1e999}',
    ],
)
def test_malformed_bodies_never_make_a_5xx(site, peer, body):
    account_create(username="alice", password="password123")
    for signed in (False, True):
        status, answer = peer.post(f"{site}/inbox", body, sign=signed)
        assert status < 500, (body[:50], status)
        assert status in (202, 400, 401) and (status == 202 or json.loads(answer)["detail"])


def test_a_persons_block_of_a_remote_actor(site, peer):
    alice = account_create(username="alice", password="password123")
    board = board_create(author=alice, title="Blocked", kind="sketch", tags=[], doc=DOC)
    follow(peer, site)
    assert peer.post(f"{site}/inbox", peer.activity("Like", f"{site}/b/{board.pk}", "like-b"))[0] == 202
    actor = RemoteFollow.objects.get(followee=alice).actor
    assert federation.remote_block(blocker=alice, actor=actor) is True
    assert not RemoteFollow.objects.filter(followee=alice).exists()
    assert Board.objects.get(pk=board.pk).likes == 0
    follow(peer, site)  # a follow from a blocked actor is dropped
    assert peer.post(f"{site}/inbox", peer.activity("Like", f"{site}/b/{board.pk}", "like-c"))[0] == 202
    assert not RemoteFollow.objects.filter(followee=alice).exists() and Board.objects.get(pk=board.pk).likes == 0
    federation.remote_unblock(blocker=alice, actor=actor)
    follow(peer, site)
    assert RemoteFollow.objects.filter(followee=alice).exists()


@pytest.fixture
def federation_worker(site, transactional_db, tmp_path):
    """A real Celery worker process serving federation's tasks on a queue of its own (the
    FEDERATION_QUEUE setting, as a deployment may run it), with this test's SITE_URL, allowed to
    deliver to loopback; this process sends federation's tasks there."""
    from ugcsite.celery import app

    queue = f"federation-test-{os.getpid()}"
    db = django_settings.DATABASES["default"]
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "SITE_URL": site,
        "FEDERATION_ALLOW_PRIVATE": "1",
        "FEDERATION_QUEUE": queue,
    }
    log = open(tmp_path / "worker.log", "w")
    process_log[:] = [tmp_path / "worker.log"]
    process = subprocess.Popen(
        worker_command(f"{queue}@%h", "--pool=solo", "-Q", queue, loglevel="info"),
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while not app.control.ping(destination=[f"{queue}@{socket.gethostname()}"], timeout=0.5):
        assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "worker.log").read_text()
    with tasks_routed({"feeds.federation.tasks.*": {"queue": queue}}):
        yield process
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
    log.close()


process_log: list[Path] = []  # the worker's log, read when a wait times out


def wait_for(condition, seconds: float = 30):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out; the worker's log:\n" + process_log[0].read_text()[-3000:]
        time.sleep(0.1)


def test_deliveries_through_a_real_celery_worker(site, peer, federation_worker):
    """The whole path as it runs in production: the inbox's Accept and a new board's Create
    leave through the outbox on commit, a worker process walks and delivers them, signed."""
    alice = account_create(username="alice", password="password123")
    follow(peer, site)  # the live server's commit sends the walk of the Accept to the worker
    wait_for(lambda: any(r["activity"]["type"] == "Accept" for r in peer.received))
    with transaction.atomic():
        board = board_create(author=alice, title="Through Celery", kind="sketch", tags=["worker"], doc=DOC)
    wait_for(lambda: any(r["activity"]["type"] == "Create" for r in peer.received))
    create = next(r for r in peer.received if r["activity"]["type"] == "Create")
    assert create["verified"] == "ok" and create["activity"]["object"]["id"] == f"{site}/b/{board.pk}"
    assert create["activity"]["object"]["attachment"][0]["width"] > 0  # rendered by the worker's walk
    wait_for(lambda: not FederationActivity.objects.exists())  # every row done
    assert not FederationDelivery.objects.exists()


def test_remote_blocks_through_the_api(site, peer, api):
    alice = account_create(username="alice", password="password123")
    board = board_create(author=alice, title="Mine", kind="sketch", tags=[], doc=DOC)
    follow(peer, site)
    assert peer.post(f"{site}/inbox", peer.activity("Like", f"{site}/b/{board.pk}", "like-api"))[0] == 202
    me = api.as_user("alice")
    handle = f"bob@{peer.host}"
    assert me.put(f"/api/v1/me/remote-blocks/{handle}").status_code == 204
    assert me.put(f"/api/v1/me/remote-blocks/{handle}").status_code == 204  # idempotent
    assert me.get("/api/v1/me/remote-blocks").json()["items"] == [{"handle": handle, "uri": peer.uri}]
    assert not RemoteFollow.objects.exists() and Board.objects.get(pk=board.pk).likes == 0
    answer = me.put("/api/v1/me/remote-blocks/nobody@nowhere.example")
    assert answer.status_code == 404 and answer.json()["detail"]
    assert me.put("/api/v1/me/remote-blocks/not-a-handle").status_code == 400
    assert me.put("/api/v1/me/remote-blocks/a%20b@example.com").status_code == 400
    # What the document's pattern takes, the server takes: \x1c is no space to JSON Schema.
    assert re.fullmatch(HANDLE_PATTERN.strip("^$"), "a\x1c@b.example")
    assert me.put("/api/v1/me/remote-blocks/a%1C@b.example").status_code == 404
    assert me.delete(f"/api/v1/me/remote-blocks/{handle}").status_code == 204
    assert me.get("/api/v1/me/remote-blocks").json()["items"] == []
    assert api.get("/api/v1/me/remote-blocks").status_code == 401


def test_a_domain_block_covers_its_subdomains(db):
    federation.host_block("Spam.Example", reason="spam")
    assert remote.host_blocked("spam.example") and remote.host_blocked("a.b.spam.example")
    assert not remote.host_blocked("notspam.example") and not remote.host_blocked("example")
    federation.host_unblock("spam.example")
    assert not remote.host_blocked("a.spam.example")


def test_a_profile_change_sends_the_actors_update(site, peer):
    alice = account_create(username="alice", password="password123")
    follow(peer, site)
    deliver_all()
    profile_update(user=alice, changes={"display_name": "Alice A.", "bio": "I draw maps"})
    avatar_set(user=alice, data=AVATAR)
    deliver_all()
    updates = [r["activity"] for r in peer.received if r["activity"]["type"] == "Update"]
    assert len(updates) == 2 and all(u["object"]["type"] == "Person" for u in updates)
    assert updates[0]["object"]["name"] == "Alice A." and "I draw maps" in updates[0]["object"]["summary"]
    assert "/u/alice/avatar?v=1" in updates[1]["object"]["icon"]["url"]
    assert all(r["verified"] == "ok" for r in peer.received)


def test_circuit_breaker_failure_days_and_beats_resend(site, peer, settings):
    settings.FEDERATION_BREAKER_FAILURES = 2
    alice = account_create(username="alice", password="password123")
    follow(peer, site)
    deliver_all()
    peer.received.clear()
    board_create(author=alice, title="Breaker", kind="sketch", tags=[], doc=DOC)
    # beat: an activity no walk took (the broker was down) is due after OUTBOX_RESEND_AFTER_SECONDS
    FederationActivity.objects.update(queued_at=timezone.now() - timedelta(minutes=5))
    activities, deliveries = delivery.due()
    assert len(activities) == 1 and deliveries == []
    assert delivery.due() == ([], [])  # stamped: not due again at once
    ids, _ = delivery.walk_batch(activities[0])
    peer.answers = [500, 500, 500]
    assert delivery.deliver(ids[0]) is not None and delivery.deliver(ids[0]) is not None
    assert len(peer.received) == 2
    wait = delivery.deliver(ids[0])  # the breaker is open: no POST, no try spent
    assert len(peer.received) == 2 and wait >= settings.FEDERATION_BREAKER_SECONDS
    assert FederationDelivery.objects.get(pk=ids[0]).attempts == 2
    # a retry's time come: beat hands it out (leased meanwhile)
    FederationDelivery.objects.update(next_at=timezone.now() - timedelta(seconds=1))
    assert delivery.due() == ([], ids) and delivery.due() == ([], [])
    # a host failing on FEDERATION_FAILURE_DAYS distinct days is skipped until a delivery succeeds
    redis_data = get_redis()
    redis_data.delete(keys.inbox_open(f"{peer.base}/inbox"))
    days = [timezone.now().date() - timedelta(days=n) for n in range(settings.FEDERATION_FAILURE_DAYS)]
    FederatedHost.objects.filter(host=peer.host).update(failure_days=days)
    assert delivery.deliver(ids[0]) is None and len(peer.received) == 2  # dropped unsent
    FederatedHost.objects.filter(host=peer.host).update(failure_days=days[:2])
    peer.answers = []
    board_create(author=alice, title="Back", kind="sketch", tags=[], doc=DOC)
    assert deliver_all() and len(peer.received) == 3  # sent, and the success clears the days
    assert FederatedHost.objects.get(host=peer.host).failure_days == []


def test_hiding_suspending_and_deleting_the_account_send_deletes(site, peer):
    alice = account_create(username="alice", password="password123")
    staff = account_create(username="staffer", password="password123", is_staff=True)
    follow(peer, site)
    kept = board_create(author=alice, title="Kept", kind="sketch", tags=[], doc=DOC)
    hidden = board_create(author=alice, title="Hidden", kind="sketch", tags=[], doc=DOC)
    deliver_all()
    peer.received.clear()
    moderation.board_hide(board=Board.objects.select_related("author").get(pk=hidden.pk), staff=staff, why="spam")
    deliver_all()
    assert [(r["activity"]["type"], r["activity"]["object"]["id"]) for r in peer.received] == [
        ("Delete", f"{site}/b/{hidden.pk}")
    ]
    assert get(f"{site}/b/{hidden.pk}")[0] == 410
    peer.received.clear()
    moderation.user_suspend(user=alice, staff=staff, why="spam")
    federation.author_withdrawn(alice.pk)  # the task the suspension sends on commit
    deliver_all()
    assert [(r["activity"]["type"], r["activity"]["object"]["id"]) for r in peer.received] == [
        ("Delete", f"{site}/b/{kept.pk}")
    ]
    assert get(f"{site}/u/alice")[0] == 410  # a suspended person's actor is a Tombstone meanwhile
    moderation.user_unsuspend(user=alice, staff=staff)
    peer.received.clear()
    account_delete(user=User.objects.get(pk=alice.pk), password="password123")
    deliver_all()
    assert [(r["activity"]["type"], r["activity"]["object"]) for r in peer.received] == [("Delete", f"{site}/u/alice")]
    assert all(r["verified"] == "ok" or r["activity"]["type"] == "Delete" for r in peer.received)


def test_federation_turned_off(site, peer, settings):
    alice = account_create(username="alice", password="password123")
    follow(peer, site)
    deliver_all()
    settings.FEDERATION_ENABLED = False
    board = board_create(author=alice, title="Quiet", kind="sketch", tags=[], doc=DOC)
    assert not FederationActivity.objects.exists()
    assert get(f"{site}/.well-known/webfinger?resource=acct:alice@{documents.host()}")[0] == 404
    status, headers, _ = get(f"{site}/u/alice")  # the page, whatever is asked
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert get(f"{site}/b/{board.pk}")[1]["Content-Type"].startswith("text/html")
    assert peer.post(f"{site}/inbox", peer.activity("Like", f"{site}/b/{board.pk}", "off"))[0] == 404
    assert "Follow from another server" not in get(f"{site}/u/alice", accept="text/html")[2].decode()
