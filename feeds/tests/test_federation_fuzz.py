"""The inbox under fuzz (issue 39 item 7): any body, signed by a real peer or not, shaped like an
activity or not, gets a 202, 400 or 401 with a sentence, never a 5xx, and leaves the database
consistent (no count below zero). Through Django's test client, against a peer on loopback whose
actor and key the inbox fetches for real."""

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings as hypothesis_settings, strategies as st

from feeds.federation import signatures
from feeds.models import Board
from feeds.services.accounts import account_create
from feeds.services.boards import board_create
from feeds.tests.federation_peer import Peer

DOC = {"width": 100, "height": 100, "background": "#ffffff", "elements": []}
# Examples per test: 150 in make test, FUZZ_EXAMPLES (1,000) in make fuzz.
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "150"))
TYPES = [
    "Follow",
    "Undo",
    "Like",
    "Announce",
    "Create",
    "Update",
    "Delete",
    "Accept",
    "Reject",
    "Note",
    "Person",
    "Tombstone",
    "Flag",
    "Move",
    "Block",
    "",
]


@pytest.fixture
def world(settings, db):
    settings.SITE_URL = "http://testserver"
    settings.FEDERATION_ALLOW_PRIVATE = True
    settings.RATE_LIMIT_INBOX_PER_HOST_PER_MINUTE = 0
    peer = Peer()
    alice = account_create(username="alice", password="password123")
    board = board_create(author=alice, title="Fuzzed", kind="sketch", tags=[], doc=DOC)
    yield peer, board
    peer.stop()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


def _activity(peer: Peer, board: Board):
    ours = st.sampled_from(
        [
            "http://testserver/u/alice",
            f"http://testserver/b/{board.pk}",
            "http://testserver/b/1",
            "http://testserver/u/nobody",
        ]
    )
    theirs = st.sampled_from([peer.uri, f"{peer.uri}/notes/1", "https://elsewhere.example/x", ""])
    obj = st.one_of(
        ours,
        theirs,
        JSON,
        st.fixed_dictionaries(
            {"type": st.sampled_from(TYPES), "id": st.one_of(ours, theirs), "object": st.one_of(ours, theirs, JSON)},
            optional={
                "inReplyTo": st.one_of(ours, JSON),
                "content": st.one_of(st.text(max_size=50), JSON),
                "actor": theirs,
            },
        ),
    )
    return st.fixed_dictionaries(
        {"type": st.sampled_from(TYPES), "actor": st.one_of(st.just(peer.uri), theirs, JSON), "object": obj},
        optional={
            "id": st.one_of(st.builds(lambda n: f"{peer.uri}/activities/{n}", st.integers(0, 5)), theirs, JSON),
            "@context": st.one_of(st.just("https://www.w3.org/ns/activitystreams"), JSON),
        },
    )


def _post(client, peer: Peer, body: bytes, *, sign: bool, path: str = "/inbox"):
    headers = {"content_type": "application/activity+json"}
    if sign:
        signed = signatures.cavage_sign(
            private_pem=peer.private,
            key_id=f"{peer.uri}#main-key",
            method="POST",
            url=f"http://testserver{path}",
            body=body,
        )
        headers.update({f"HTTP_{name.upper().replace('-', '_')}": value for name, value in signed.items()})
    return client.generic("POST", path, data=body, **headers)


def _check(answer, seen: set | None = None) -> None:
    if seen is not None:
        seen.add(answer.status_code)
    assert answer.status_code in (202, 400, 401), (answer.status_code, answer.content[:300])
    if answer.status_code != 202:
        assert json.loads(answer.content)["detail"]


def test_fuzzed_activities_signed_and_not(client, world):
    peer, board = world
    seen: set[int] = set()

    @hypothesis_settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(activity=_activity(peer, board), sign=st.booleans(), path=st.sampled_from(["/inbox", "/u/alice/inbox"]))
    def run(activity, sign, path):
        _check(_post(client, peer, json.dumps(activity).encode(), sign=sign, path=path), seen)
        counts = Board.objects.filter(pk=board.pk).values("likes", "boosts", "comments").first()
        assert min(counts.values()) >= 0

    run()
    assert {202, 401} <= seen  # signed activities got through to the handlers, unsigned did not


def test_fuzzed_bytes_signed_and_not(client, world):
    peer, _ = world

    @hypothesis_settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(body=st.binary(max_size=300) | st.text(max_size=200).map(str.encode), sign=st.booleans())
    def run(body, sign):
        _check(_post(client, peer, body, sign=sign))

    run()


def test_a_key_id_no_row_can_hold_is_refused(client, world):
    peer, _ = world
    body = b'{"type": "Like"}'
    for key_id in ("https://" + "a" * 300 + ".example/k", f"{peer.uri}/{'k' * 3000}#main-key", "not a url"):
        signed = signatures.cavage_sign(
            private_pem=peer.private, key_id=key_id, method="POST", url="http://testserver/inbox", body=body
        )
        headers = {f"HTTP_{name.upper().replace('-', '_')}": value for name, value in signed.items()}
        answer = client.generic("POST", "/inbox", data=body, content_type="application/activity+json", **headers)
        assert answer.status_code == 401 and json.loads(answer.content)["detail"]


def test_rate_limit_per_host_and_body_size(client, world, settings):
    peer, board = world
    settings.RATE_LIMIT_INBOX_PER_HOST_PER_MINUTE = 3
    like = json.dumps(
        {"type": "Like", "actor": peer.uri, "id": f"{peer.uri}/l/1", "object": f"http://testserver/b/{board.pk}"}
    )
    answers = [_post(client, peer, like.encode(), sign=True) for _ in range(4)]
    assert [a.status_code for a in answers] == [202, 202, 202, 429]
    assert answers[-1]["Retry-After"] and json.loads(answers[-1].content)["detail"]
    settings.FEDERATION_MAX_INBOX_BYTES = 100
    answer = _post(client, peer, b'{"type": "Note", "content": "' + b"x" * 200 + b'"}', sign=False)
    assert answer.status_code == 413 and json.loads(answer.content)["detail"]
