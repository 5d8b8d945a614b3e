"""Likes and remixes (docs/api.md, "Likes and remixes"): each rule through the API, the counts
in PostgreSQL and Redis, suspension and deletion, and a rebuild that gives the same answers."""

import pytest
from django.core.management import call_command

from feeds import keys, likes
from feeds.discovery import trending
from feeds.models import Board, Like, Notification
from feeds.services.likes import like as like_service
from feeds.services.moderation import user_suspend, user_unsuspend
from social.models import User

pytestmark = pytest.mark.django_db

DOC = {"width": 100, "height": 80, "background": "#ffffff", "elements": []}
LINE = {"type": "path", "color": "#1d2330", "width": 3, "points": [[1, 1], [20, 30]]}


def post(run, client, title="b", **more) -> int:
    response = run(client.post, "/api/v1/boards", {"title": title, "kind": "note", "doc": DOC, **more})
    assert response.status_code == 201, response.content
    return response.json()["id"]


def like(run, client, board_id: int, method: str = "put"):
    return run(getattr(client, method), f"/api/v1/boards/{board_id}/like")


def remix(client, board_id: int, body=None):
    """POST .../remix, with no body at all unless one is given (a real client sends none)."""
    return client.post(f"/api/v1/boards/{board_id}/remix", body, raw="" if body is None else None)


def count(client, board_id: int) -> int:
    return client.get(f"/api/v1/boards/{board_id}").json()["likes"]


def test_a_like_is_idempotent_counts_once_and_shows_everywhere(api, run, redis_data):
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    board_id = post(run, alice)
    for _ in range(2):
        assert like(run, bob, board_id).status_code == 204
    assert like(run, carol, board_id).status_code == 204
    assert count(api, board_id) == 2
    assert Board.objects.get(pk=board_id).likes == 2 == Like.objects.filter(board_id=board_id).count()
    assert int(redis_data.hget(keys.board(board_id), "likes")) == 2  # G, the cards' count
    assert redis_data.zscore(keys.board_sort(board_id, "likes"), board_id) == 2
    # cards: the profile list and discovery carry the count in the summary form
    assert alice.get("/api/v1/users/alice/boards").json()["items"][0]["likes"] == 2
    assert api.get("/api/v1/discover", sort="likes").json()["items"][0]["likes"] == 2
    for _ in range(2):
        assert like(run, bob, board_id, "delete").status_code == 204
    assert count(api, board_id) == 1
    assert redis_data.zscore(keys.board_sort(board_id, "likes"), board_id) == 1
    likers = api.get(f"/api/v1/boards/{board_id}/likes").json()
    assert likers == {"total": 1, "items": [{"id": User.objects.get(username="carol").pk, "username": "carol"}]}


def test_like_rules_401_404_and_the_write_limit(api, run, settings):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    board_id = post(run, alice)
    assert api.put(f"/api/v1/boards/{board_id}/like").status_code == 401
    for path in (f"/api/v1/boards/{board_id + 1}/like", "/api/v1/boards/99999999999999999/like"):
        response = bob.put(path)
        assert response.status_code == 404 and response.json()["detail"]
    run(alice.put, "/api/v1/users/bob/block")  # a board whose author blocks you is no board to you
    for method in ("put", "delete"):
        response = getattr(bob, method)(f"/api/v1/boards/{board_id}/like")
        assert response.status_code == 404 and response.json()["detail"]
    assert bob.get(f"/api/v1/boards/{board_id}/likes").status_code == 404
    run(alice.delete, f"/api/v1/boards/{board_id}")
    assert api.as_user("carol").put(f"/api/v1/boards/{board_id}/like").status_code == 404
    # likes count against the write rate limit
    settings.RATE_LIMIT_WRITES_PER_MINUTE = 2
    other = post(run, api.as_user("dave"))
    carol = api.as_user("carol")
    answers = [carol.put(f"/api/v1/boards/{other}/like").status_code for _ in range(3)]
    assert answers[:2] == [204, 204] and answers[2] == 429


def test_likes_answer_for_a_page_of_boards(api, run):
    alice, bob, carol, dave = (api.as_user(name) for name in ("alice", "bob", "carol", "dave"))
    boards = [post(run, dave, f"b{i}") for i in range(3)]
    run(alice.put, "/api/v1/users/bob/follow")
    run(alice.put, "/api/v1/users/carol/follow")
    like(run, bob, boards[0])
    like(run, carol, boards[0])
    like(run, carol, boards[1])
    like(run, alice, boards[2])
    like(run, dave, boards[2])  # dave is not followed: he counts, but is no followee
    asked = ",".join(str(b) for b in [*boards, 999])
    answer = alice.get("/api/v1/likes", board_ids=asked).json()
    assert answer == {
        "boards": {
            str(boards[0]): {"count": 2, "liked": False, "by_followees": ["bob", "carol"]},
            str(boards[1]): {"count": 1, "liked": False, "by_followees": ["carol"]},
            str(boards[2]): {"count": 2, "liked": True, "by_followees": []},
        }
    }
    assert api.get("/api/v1/likes", board_ids=str(boards[0])).status_code == 401
    for bad in ("", "x", ",".join(["1"] * 101), "1,-2", "1.5"):
        response = alice.get("/api/v1/likes", board_ids=bad)
        assert response.status_code == 400 and response.json()["detail"], bad
    response = alice.get("/api/v1/likes", ids=str(boards[0]))
    assert response.status_code == 400 and "board_ids" in response.json()["detail"]
    # a suspended followee's like stops counting, and they leave by_followees; lifting it restores both
    bob_user = User.objects.get(username="bob")
    run(user_suspend, user=bob_user)
    assert alice.get("/api/v1/likes", board_ids=str(boards[0])).json()["boards"][str(boards[0])] == {
        "count": 1,
        "liked": False,
        "by_followees": ["carol"],
    }
    assert [item["username"] for item in api.get(f"/api/v1/boards/{boards[0]}/likes").json()["items"]] == ["carol"]
    run(user_unsuspend, user=bob_user)
    assert alice.get("/api/v1/likes", board_ids=str(boards[0])).json()["boards"][str(boards[0])]["count"] == 2
    assert Board.objects.get(pk=boards[0]).likes == 2


def test_the_author_hears_of_likes_gathered_and_never_from_whom_they_block(api, run):
    author = api.as_user("alice")
    board_id = post(run, author)
    fans = [api.as_user(f"fan{i}") for i in range(5)]
    for fan in fans:
        like(run, fan, board_id)
    like(run, author, board_id)  # liking your own board tells nobody
    rows = Notification.objects.filter(kind=Notification.Kind.LIKE)
    assert rows.count() == 1 and rows.get().actor_count == 5
    item = author.get("/api/v1/notifications").json()["items"][0]
    assert item["kind"] == "like" and item["actor_count"] == 5 and item["board"]["id"] == board_id
    assert item["actors"][0] == "fan4"
    mallory = api.as_user("mallory")
    run(author.put, "/api/v1/users/mallory/block")
    other = post(run, api.as_user("zed"))  # mallory, blocked by alice, likes a board of zed's: zed hears
    like(run, mallory, other)
    assert Notification.objects.filter(kind="like", board_id=other).count() == 1
    second = post(run, author, "second")
    assert mallory.put(f"/api/v1/boards/{second}/like").status_code == 404  # blocked: no board to her


def test_a_like_storm_is_one_increment_each_and_one_notification(api, run, redis_data):
    author = api.as_user("alice")
    board_id = post(run, author)
    people = [User.objects.create_user(username=f"p{i}", password="x") for i in range(300)]
    board = Board.objects.get(pk=board_id)
    for person in people:
        run(like_service, user=person, board=board)
    assert Board.objects.get(pk=board_id).likes == 300
    assert int(redis_data.hget(keys.board(board_id), "likes")) == 300
    row = Notification.objects.get(kind="like", board_id=board_id)
    assert row.actor_count == 300 and len(row.actors) < 300  # one row, the names kept bounded


def test_popular_by_likes_in_every_scope(api, run):
    alice, bob, carol, dave = (api.as_user(name) for name in ("alice", "bob", "carol", "dave"))
    a, b, c = (post(run, dave, t) for t in "abc")
    for client, board_id in ((bob, a), (carol, a), (alice, a), (bob, b), (alice, c), (carol, c)):
        like(run, client, board_id)
    like(run, alice, c, "delete")
    trending.trending_rollup()
    run(alice.put, "/api/v1/users/bob/follow")

    def shape(answer):
        return [(item["board"]["id"], item["likes"]) for item in answer["items"]]

    assert shape(api.get("/api/v1/popular", sort="likes").json()) == [(a, 3), (c, 1), (b, 1)]
    assert shape(api.get("/api/v1/popular", sort="likes", scope="trending").json()) == [(a, 3), (c, 1), (b, 1)]
    assert shape(alice.get("/api/v1/popular", sort="likes", scope="following").json()) == [(b, 1), (a, 1)]
    assert "reads" in api.get("/api/v1/popular").json()["items"][0]  # views stay the default
    response = api.get("/api/v1/popular", sort="hearts")
    assert response.status_code == 400 and response.json()["detail"]


def test_remix_credits_its_source_and_follows_the_rules(api, run):
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    source = post(run, alice, "House", tags=["home"])
    response = run(remix, bob, source)
    assert response.status_code == 201, response.content
    made = response.json()
    assert made["author"] == "bob" and made["title"] == "Remix of House" and made["tags"] == ["home"]
    assert made["remixed_from"] == {"id": source, "username": "alice", "title": "House"}
    assert made["remixable"] is True
    assert api.get(f"/api/v1/boards/{source}").json()["remixed_from"] is None
    # a body changes the copy before it is made
    drawn = {**DOC, "elements": [LINE]}
    response = run(remix, carol, made["id"], {"title": "Mine", "doc": drawn})
    assert response.status_code == 201
    second = response.json()
    assert second["title"] == "Mine" and len(second["doc"]["elements"]) == 1 and second["doc"]["elements"][0]["id"]
    assert second["remixed_from"]["id"] == made["id"]  # the direct source
    # the source lists its remixes, newest first, with the total
    listed = api.get(f"/api/v1/boards/{source}/remixes").json()
    assert listed["total"] == 1 and [item["id"] for item in listed["items"]] == [made["id"]]
    run(remix, api.as_user("dave"), source)
    listed = api.get(f"/api/v1/boards/{source}/remixes", limit=1).json()
    assert listed["total"] == 2 and len(listed["items"]) == 1 and listed["items"][0]["author"] == "dave"
    # the author hears of them gathered
    row = Notification.objects.get(kind="remix", board_id=source)
    assert row.actor_count == 2
    # bad input, invisible boards, remixing turned off
    response = bob.post(f"/api/v1/boards/{source}/remix", {"title": ""})
    assert response.status_code == 400 and response.json()["detail"]
    response = bob.post(f"/api/v1/boards/{source}/remix", {"doc": {**DOC, "elements": [{"type": "blob"}]}})
    assert response.status_code == 400 and response.json()["detail"]
    assert remix(api, source).status_code == 401
    assert remix(bob, source + 7).status_code == 404
    assert run(alice.patch, f"/api/v1/boards/{source}", {"remixable": False}).json()["remixable"] is False
    response = remix(bob, source)
    assert response.status_code == 403 and "remix" in response.json()["detail"]
    assert run(remix, alice, source).status_code == 201  # its author may copy it
    response = bob.patch(f"/api/v1/boards/{source}", {"remixable": True})
    assert response.status_code == 403
    # once the source is gone, the remix credits "a deleted board"
    run(alice.delete, f"/api/v1/boards/{source}")
    assert api.get(f"/api/v1/boards/{made['id']}").json()["remixed_from"] == {
        "id": source,
        "username": None,
        "title": None,
    }
    assert api.get(f"/api/v1/boards/{source}/remixes").status_code == 404


def test_rebuild_gives_back_the_same_likes_and_remixes(api, run, redis_data):
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    boards = [post(run, alice, f"b{i}") for i in range(4)]
    remixed = run(remix, bob, boards[0]).json()["id"]
    run(carol.put, "/api/v1/users/bob/follow")
    for client, board_id in ((bob, boards[0]), (carol, boards[0]), (bob, boards[1]), (carol, remixed)):
        like(run, client, board_id)
    trending.trending_rollup()
    asked = ",".join(str(b) for b in [*boards, remixed])

    def snapshot():
        return {
            "likes": carol.get("/api/v1/likes", board_ids=asked).json(),
            "popular": [api.get("/api/v1/popular", sort="likes", scope=s).json() for s in ("all", "trending")],
            "following": carol.get("/api/v1/popular", sort="likes", scope="following").json(),
            "remixes": api.get(f"/api/v1/boards/{boards[0]}/remixes").json(),
            "credit": api.get(f"/api/v1/boards/{remixed}").json()["remixed_from"],
            "likers": api.get(f"/api/v1/boards/{boards[0]}/likes").json(),
        }

    before = snapshot()
    assert before["likes"]["boards"][str(boards[0])] == {"count": 2, "liked": True, "by_followees": ["bob"]}
    Board.objects.filter(pk=boards[1]).update(likes=40)  # a count that drifted: the rows are the truth
    redis_data.flushdb()
    call_command("rebuild_redis", verbosity=0)
    assert snapshot() == before
    assert Board.objects.get(pk=boards[1]).likes == 1


def test_a_deleted_account_stops_counting_and_its_boards_leave_likers_sets(api, run, redis_data, settings):
    settings.ACCOUNT_PURGE_DELAY_SECONDS = 0
    alice, bob = api.as_user("alice"), api.as_user("bob")
    board_id = post(run, alice)
    theirs = post(run, bob)
    like(run, bob, board_id)
    like(run, alice, theirs)
    assert count(api, board_id) == 1
    bob_id = User.objects.get(username="bob").pk
    assert run(bob.delete, "/api/v1/me", {"password": "password123"}).status_code == 204
    assert count(api, board_id) == 0
    assert Board.objects.get(pk=board_id).likes == 0
    alice_id = User.objects.get(username="alice").pk
    assert str(theirs) not in redis_data.smembers(keys.like_ids(alice_id))
    assert not redis_data.exists(keys.likes(bob_id))
    assert likes.liked_among(alice_id, [theirs]) == set()


def test_the_pages_of_remixes_and_likes(api, run, client, settings):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    source = post(run, alice, "Tree")
    remixes = [run(remix, bob, source, {"title": f"Tree {i}"}).json()["id"] for i in range(3)]
    like(run, bob, source)
    client.force_login(User.objects.get(username="bob"))
    page = client.get(f"/b/{source}")
    assert page.status_code == 200
    text = page.content.decode()
    assert "3 remixes" in text and "Tree 2" in text and 'href="/new?remix=' in text
    assert f'data-like data-board-id="{source}"' in text
    credit = client.get(f"/b/{remixes[0]}").content.decode()
    assert "Remix of" in credit and f'href="/b/{source}"' in credit
    listed = client.get(f"/b/{source}/remixes").content.decode()
    assert all(f"Tree {i}" in listed for i in range(3))
    editor = client.get(f"/new?remix={source}")
    assert editor.status_code == 200 and 'value="Remix of Tree"' in editor.content.decode()
    assert f'data-save-url="/api/v1/boards/{source}/remix"' in editor.content.decode()
    assert client.get("/new?remix=12345").status_code == 404
    assert client.get("/new?remix=x").status_code == 404
    run(alice.patch, f"/api/v1/boards/{source}", {"remixable": False})
    refused = client.get(f"/new?remix={source}")
    assert refused.status_code == 403 and "turned remixing off" in refused.content.decode()
    assert 'href="/new?remix=' not in client.get(f"/b/{source}").content.decode()
    popular = client.get("/popular?sort=likes").content.decode()
    assert "Tree" in popular and "1 like here" in popular
    # the notifications page says what happened
    client.force_login(User.objects.get(username="alice"))
    told = client.get("/notifications").content.decode()
    assert "liked" in told and "remixed" in told
