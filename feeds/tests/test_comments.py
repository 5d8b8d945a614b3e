"""Comments on boards (docs/api.md, "Comments"): each rule through the API against real
PostgreSQL and Redis: threads and replies, paging, edit and delete, who may comment, the count in
G, plain text, limits, block, mute, reports, mentions and notifications, account deletion and
export."""

import io
import json
import zipfile

import pytest
from django.core.management import call_command
from django.db import connection

from feeds import comments, keys, selectors
from feeds.models import Board, Comment, Notification, ReportCase
from feeds.rules import COMMENT_MENTIONS_MAX, COMMENT_TEXT_MAX
from feeds.services import comments as comment_services, moderation
from feeds.services.reports import case_close
from social.models import User
from ugcsite.testing import assert_problem

pytestmark = pytest.mark.django_db

DOC = {"width": 100, "height": 80, "background": "#ffffff", "elements": []}


def post_board(run, client, title="Sunset") -> int:
    response = run(client.post, "/api/v1/boards", {"title": title, "kind": "note", "doc": DOC})
    assert response.status_code == 201, response.content
    return response.json()["id"]


def say(run, client, board_id: int, text: str, reply_to=None, status: int = 201) -> dict:
    body = {"text": text} if reply_to is None else {"text": text, "reply_to": reply_to}
    response = run(client.post, f"/api/v1/boards/{board_id}/comments", body)
    assert response.status_code == status, response.content
    return response.json()


def thread(client, board_id: int, **query) -> dict:
    response = client.get(f"/api/v1/boards/{board_id}/comments", **query)
    assert response.status_code == 200, response.content
    return response.json()


def texts(answer: dict) -> list[str]:
    return [item["text"] for item in answer["items"]]


def board_count(client, board_id: int) -> int:
    return client.get(f"/api/v1/boards/{board_id}").json()["comments"]


def notes(user: str, kind: str) -> list[Notification]:
    return list(Notification.objects.filter(recipient__username=user, kind=kind))


def test_a_comment_has_its_shape_and_the_count_moves_in_postgres_and_g(api, run, redis_data):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    board_id = post_board(run, alice)
    assert board_count(api, board_id) == 0  # G holds the board now
    made = say(run, bob, board_id, "  Lovely colours  ")
    assert made["text"] == "Lovely colours" and made["board"] == board_id and made["reply_to"] is None
    assert made["author"]["username"] == "bob" and made["author"]["display_name"] == ""
    assert made["author"]["avatar"].startswith("/u/bob/avatar")
    assert made["edited_at"] is None and made["created_at"] and made["deleted"] is False
    assert Board.objects.get(pk=board_id).comments == 1
    assert int(redis_data.hget(keys.board(board_id), "comments")) == 1
    assert board_count(api, board_id) == 1
    assert alice.get("/api/v1/users/alice/boards").json()["items"][0]["comments"] == 1  # summaries carry it
    assert api.get(f"/api/v1/comments/{made['id']}").json() == made
    answer = thread(api, board_id)
    assert answer == {"items": [made], "next": None, "total": 1}


def test_replies_are_one_level_deep_and_a_reply_to_a_reply_names_who_it_answers(api, run):
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    board_id = post_board(run, alice)
    top = say(run, bob, board_id, "first")
    other = say(run, alice, board_id, "second")
    reply = say(run, carol, board_id, "agreed", reply_to=top["id"])
    assert reply["reply_to"] == top["id"]
    deeper = say(run, alice, board_id, "thanks", reply_to=reply["id"])
    assert deeper["reply_to"] == top["id"]  # attached to the top comment
    assert deeper["text"] == "@carol thanks"
    assert '<a href="/u/carol" class="mention">@carol</a>' in deeper["html"]
    # thread order: each top comment followed by its replies, oldest first
    assert [item["id"] for item in thread(api, board_id)["items"]] == [
        top["id"],
        reply["id"],
        deeper["id"],
        other["id"],
    ]
    # a reply to a comment of another board, or to none, is a 404 (as a report of nothing)
    elsewhere = post_board(run, alice, "Other")
    assert_problem(run(bob.post, f"/api/v1/boards/{elsewhere}/comments", {"text": "x", "reply_to": top["id"]}), 404)
    assert_problem(run(bob.post, f"/api/v1/boards/{board_id}/comments", {"text": "x", "reply_to": 10**15}), 404)
    # an id may be written 3.0 (JSON Schema's integer), never true, "3" or 3.5
    assert say(run, carol, board_id, "whole", reply_to=float(top["id"]))["reply_to"] == top["id"]


def test_paging_walks_the_thread_with_the_cursor_in_one_query(api, run, django_assert_num_queries):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    board_id = post_board(run, alice)
    made = []
    for n in range(7):
        made.append(say(run, bob, board_id, f"c{n}")["id"])
        if n % 3 == 0:
            made.append(say(run, alice, board_id, f"r{n}", reply_to=made[-1])["id"])
    expected = [c.pk for c in Comment.objects.filter(board_id=board_id).order_by("thread", "id")]
    seen, after = [], None
    while True:
        query = {"limit": 3} if after is None else {"limit": 3, "after": after}
        page = thread(api, board_id, **query)
        assert page["total"] == len(made)
        seen += [item["id"] for item in page["items"]]
        after = page["next"]
        if after is None:
            break
    assert seen == expected
    # a page is one query for the board and one for the comments, whatever their number
    board = Board.objects.select_related("author").get(pk=board_id)
    with django_assert_num_queries(1):
        selectors.board_comments(board, None, after=None, limit=100)
    run(alice.put, "/api/v1/users/bob/mute")  # a reader who hides someone: one count more, exact
    reader = User.objects.get(username="alice")
    with django_assert_num_queries(2):
        answer = selectors.board_comments(board, reader, after=None, limit=100)
    assert (
        answer["total"]
        == len(answer["items"])
        == Comment.objects.filter(board_id=board_id).exclude(author__username="bob").count()
    )
    for bad in ("x", "1", "1.2.3", "-1.2", "1." + "9" * 20):
        assert_problem(api.get(f"/api/v1/boards/{board_id}/comments", after=bad), 400)
    for bad in ("0", "101", "a"):
        assert_problem(api.get(f"/api/v1/boards/{board_id}/comments", limit=bad), 400)


def test_edit_is_the_authors_alone_and_sets_edited_at(api, run):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    board_id = post_board(run, alice)
    made = say(run, bob, board_id, "tpyo")
    assert_problem(run(alice.patch, f"/api/v1/comments/{made['id']}", {"text": "mine now"}), 403)
    assert_problem(run(api.patch, f"/api/v1/comments/{made['id']}", {"text": "x"}), 401)
    assert_problem(run(bob.patch, f"/api/v1/comments/{10**15}", {"text": "x"}), 404)
    assert_problem(run(bob.patch, f"/api/v1/comments/{made['id']}", {"text": ""}), 400)
    assert_problem(run(bob.patch, f"/api/v1/comments/{made['id']}", {"text": "x", "more": 1}), 400)
    edited = run(bob.patch, f"/api/v1/comments/{made['id']}", {"text": "typo"}).json()
    assert edited["text"] == "typo" and edited["edited_at"] is not None
    assert texts(thread(api, board_id)) == ["typo"]


def test_delete_by_author_board_author_or_staff_leaves_a_placeholder_where_replied(api, run, redis_data):
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    board_id = post_board(run, alice)
    lone = say(run, bob, board_id, "lone")
    top = say(run, bob, board_id, "top")
    reply = say(run, carol, board_id, "reply", reply_to=top["id"])
    assert_problem(run(carol.delete, f"/api/v1/comments/{lone['id']}"), 403)
    assert run(bob.delete, f"/api/v1/comments/{lone['id']}").status_code == 204
    assert not Comment.objects.filter(pk=lone["id"]).exists()
    assert run(alice.delete, f"/api/v1/comments/{top['id']}").status_code == 204  # the board's author
    items = thread(api, board_id)["items"]
    assert [(i["id"], i["deleted"], i["author"], i["text"]) for i in items] == [
        (top["id"], True, None, ""),
        (reply["id"], False, items[1]["author"], "reply"),
    ]
    assert board_count(api, board_id) == 1 == int(redis_data.hget(keys.board(board_id), "comments"))
    assert_problem(run(bob.delete, f"/api/v1/comments/{top['id']}"), 404)  # deleted already
    dave = api.as_user("dave")
    User.objects.filter(username="dave").update(is_staff=True)
    assert run(dave.delete, f"/api/v1/comments/{reply['id']}").status_code == 204
    # the placeholder goes with its last reply
    assert thread(api, board_id) == {"items": [], "next": None, "total": 0}
    assert not Comment.objects.filter(board_id=board_id).exists()


def test_who_may_comment_follows_the_boards_setting(api, run):
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    board_id = post_board(run, alice)
    assert api.get(f"/api/v1/boards/{board_id}").json()["commenting"] == "everyone"
    assert_problem(run(bob.patch, f"/api/v1/boards/{board_id}", {"comments": "off"}), 403)
    assert_problem(run(alice.patch, f"/api/v1/boards/{board_id}", {"comments": "friends"}), 400)
    assert_problem(run(alice.patch, f"/api/v1/boards/{board_id}", {"comments": None}), 400)
    board = run(alice.patch, f"/api/v1/boards/{board_id}", {"comments": "followers"}).json()
    assert board["commenting"] == "followers"
    run(bob.put, "/api/v1/users/alice/follow")
    say(run, bob, board_id, "I follow her")
    assert (
        "follow alice"
        in assert_problem(run(carol.post, f"/api/v1/boards/{board_id}/comments", {"text": "me too"}), 403)["detail"]
    )
    say(run, alice, board_id, "the author may")
    run(alice.patch, f"/api/v1/boards/{board_id}", {"comments": "off"})
    for who in (bob, alice):
        assert_problem(run(who.post, f"/api/v1/boards/{board_id}/comments", {"text": "x"}), 403)
    assert len(thread(api, board_id)["items"]) == 2  # what was said stays
    # 401 before 404 before 403 before 400
    assert_problem(api.post(f"/api/v1/boards/{board_id}/comments", {"text": "x"}), 401)
    assert_problem(bob.post(f"/api/v1/boards/{10**15}/comments", {"text": ""}), 404)
    assert_problem(bob.post(f"/api/v1/boards/{board_id}/comments", {"text": ""}), 403)


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"text": ""},
        {"text": "   "},
        {"text": "x" * (COMMENT_TEXT_MAX + 1)},
        {"text": 5},
        {"text": "a\x00b"},
        {"text": "x", "reply_to": "1"},
        {"text": "x", "reply_to": 0},
        {"text": "x", "reply_to": True},
        {"text": "x", "reply_to": 1.5},
        {"text": "x", "reply_to": 2**53},
        {"text": "x", "extra": True},
        [],
    ],
)
def test_bad_bodies_are_a_400_with_a_sentence(api, run, body):
    board_id = post_board(run, api.as_user("alice"))
    response = run(api.as_user("bob").post, f"/api/v1/boards/{board_id}/comments", body)
    assert_problem(response, 400)


def test_lone_surrogates_are_a_400_and_the_longest_text_passes(api, run):
    board_id = post_board(run, api.as_user("alice"))
    bob = api.as_user("bob")
    raw = '{"text": "a\\ud800b"}'
    assert_problem(bob.post(f"/api/v1/boards/{board_id}/comments", raw=raw), 400)
    say(run, bob, board_id, "x" * COMMENT_TEXT_MAX)


def test_text_is_plain_html_escaped_and_links_are_nofollow_ugc(api, run):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    board_id = post_board(run, alice)
    made = say(run, bob, board_id, '<script>alert(1)</script> see https://example.org/a?b=1&c="2". @alice @nobody_here')
    assert made["text"].startswith("<script>")  # the text is as written
    html = made["html"]
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert '<a href="https://example.org/a?b=1&amp;c=" rel="nofollow ugc">' in html
    assert '<a href="/u/alice" class="mention">@alice</a>' in html
    assert "@nobody_here" in html and "/u/nobody_here" not in html  # nobody by that name: plain text
    page = api.get(f"/b/{board_id}")
    body = page.content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "<script>alert(1)" not in body
    assert 'rel="nofollow ugc"' in body


def test_comments_count_against_the_write_limit_and_their_own(api, run, settings):
    alice = api.as_user("alice")
    board_id = post_board(run, alice)
    bob = api.as_user("bob")
    settings.RATE_LIMIT_COMMENTS_PER_MINUTE = 2
    answers = [run(bob.post, f"/api/v1/boards/{board_id}/comments", {"text": "x"}) for _ in range(3)]
    assert [a.status_code for a in answers] == [201, 201, 429]
    assert "comments" in answers[2].json()["detail"] and int(answers[2]["Retry-After"]) >= 1
    settings.RATE_LIMIT_COMMENTS_PER_MINUTE = 0
    settings.RATE_LIMIT_WRITES_PER_MINUTE = 2
    carol = api.as_user("carol")
    answers = [run(carol.post, f"/api/v1/boards/{board_id}/comments", {"text": "x"}) for _ in range(3)]
    assert [a.status_code for a in answers] == [201, 201, 429]


def test_block_either_way_and_mute_hide_comments_and_stop_commenting(api, run):
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    board_id = post_board(run, alice)
    by_bob = say(run, bob, board_id, "from bob")
    by_carol = say(run, carol, board_id, "from carol")
    run(alice.put, "/api/v1/users/bob/block")
    # the blocked person: the board is no board to them (404, as every board call), so no comment
    assert_problem(run(bob.post, f"/api/v1/boards/{board_id}/comments", {"text": "hi"}), 404)
    assert_problem(bob.get(f"/api/v1/boards/{board_id}/comments"), 404)
    assert texts(thread(alice, board_id)) == ["from carol"]  # the blocker no longer sees theirs
    assert thread(alice, board_id)["total"] == 1 and thread(carol, board_id)["total"] == 2  # totals agree
    assert_problem(alice.get(f"/api/v1/comments/{by_bob['id']}"), 404)
    assert texts(thread(carol, board_id)) == ["from bob", "from carol"]  # others do
    # the one who blocks cannot comment on the boards of whom they block (403)
    other = post_board(run, bob, "Bob's")
    assert (
        "unblock" in assert_problem(run(alice.post, f"/api/v1/boards/{other}/comments", {"text": "hi"}), 403)["detail"]
    )
    # nor answer someone who blocks them, or whom they block, on a third board
    third = post_board(run, carol, "Carol's")
    bobs = say(run, bob, third, "bob on carol's")
    assert_problem(run(alice.post, f"/api/v1/boards/{third}/comments", {"text": "x", "reply_to": bobs["id"]}), 404)
    assert texts(thread(bob, third)) == ["bob on carol's"]
    say(run, alice, third, "alice on carol's")
    assert texts(thread(bob, third)) == ["bob on carol's"]  # neither sees the other's
    # mute: hidden from the muter alone, and back on unmute
    run(alice.put, "/api/v1/users/carol/mute")
    assert thread(alice, board_id) == {"items": [], "next": None, "total": 0}
    assert_problem(alice.get(f"/api/v1/comments/{by_carol['id']}"), 404)
    run(alice.delete, "/api/v1/users/carol/mute")
    assert texts(thread(alice, board_id)) == ["from carol"]


def test_the_board_author_and_the_top_comments_author_are_told_grouped_like_likes(api, run, client):
    alice, bob, carol, dave = (api.as_user(n) for n in ("alice", "bob", "carol", "dave"))
    board_id = post_board(run, alice)
    top = say(run, bob, board_id, "first")
    say(run, carol, board_id, "second")
    say(run, dave, board_id, "third")
    say(run, alice, board_id, "my own: nobody told")
    rows = notes("alice", "comment")
    assert len(rows) == 1 and rows[0].actor_count == 3 and rows[0].board_id == board_id
    item = alice.get("/api/v1/notifications").json()["items"][0]
    assert item["kind"] == "comment" and item["actors"] == ["dave", "carol", "bob"] and item["actor_count"] == 3
    say(run, carol, board_id, "a reply", reply_to=top["id"])
    assert [r.actor_count for r in notes("bob", "reply")] == [1]
    client.force_login(User.objects.get(username="alice"))
    page = client.get("/notifications").content.decode()
    assert "commented on" in page and "Sunset" in page


def test_mentions_notify_at_most_ten_and_nobody_across_a_block(api, run):
    alice = api.as_user("alice")
    board_id = post_board(run, alice)
    names = [f"person{n:02d}" for n in range(COMMENT_MENTIONS_MAX + 2)]
    for name in names:
        api.as_user(name)
    bob = api.as_user("bob")
    run(api.as_user("person00").put, "/api/v1/users/bob/block")
    run(bob.put, "/api/v1/users/person01/block")
    made = say(run, bob, board_id, " ".join(f"@{n}" for n in names) + " @alice")
    told = set(Notification.objects.filter(kind="mention").values_list("recipient__username", flat=True))
    assert told == set(names[2:COMMENT_MENTIONS_MAX])  # the first ten, less the two blocks
    assert made["html"].count('class="mention"') == COMMENT_MENTIONS_MAX
    assert notes("alice", "mention") == []  # told as the board's author already
    assert len(notes("alice", "comment")) == 1


def test_reports_of_comments_reach_the_queue_and_hiding_hides_everywhere(api, run, settings, redis_data):
    settings.REPORTS_AUTO_HIDE = 2
    alice, bob = api.as_user("alice"), api.as_user("bob")
    board_id = post_board(run, alice)
    made = say(run, bob, board_id, "spam spam")
    assert_problem(run(bob.post, "/api/v1/reports", {"comment": made["id"], "reason": "spam"}), 400)  # own
    assert_problem(run(alice.post, "/api/v1/reports", {"comment": 10**15, "reason": "spam"}), 404)
    assert_problem(
        run(alice.post, "/api/v1/reports", {"comment": made["id"], "board": board_id, "reason": "spam"}), 400
    )
    assert run(alice.post, "/api/v1/reports", {"comment": made["id"], "reason": "spam"}).status_code == 201
    case = ReportCase.objects.get(comment_id=made["id"])
    assert case.reporters == 1 and not case.auto_hidden
    assert (
        run(api.as_user("carol").post, "/api/v1/reports", {"comment": made["id"], "reason": "abuse"}).status_code == 201
    )
    case.refresh_from_db()
    assert case.auto_hidden and Comment.objects.get(pk=made["id"]).state == Comment.State.HIDDEN
    assert thread(api, board_id) == {"items": [], "next": None, "total": 0}
    assert_problem(api.get(f"/api/v1/comments/{made['id']}"), 404)
    assert int(redis_data.hget(keys.board(board_id), "comments")) == 0
    staff = User.objects.get(username="alice")
    run(case_close, case=case, outcome=ReportCase.Outcome.DISMISSED, staff=staff)
    assert texts(thread(api, board_id)) == ["spam spam"] and board_count(api, board_id) == 1
    assert notes("carol", "report_dismissed")[0].board_id == board_id


def test_account_deletion_removes_the_persons_comments_and_export_includes_them(
    api, run, redis_data, settings, tmp_path
):
    settings.EXPORT_DIR = str(tmp_path)
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    board_id = post_board(run, alice)
    top = say(run, bob, board_id, "bob's top")
    say(run, carol, board_id, "carol answers", reply_to=top["id"])
    lone = say(run, bob, board_id, "bob's lone")
    say(run, bob, board_id, "bob answers himself", reply_to=lone["id"])
    # export
    started = run(bob.post, "/api/v1/me/export", {})
    assert started.status_code == 202, started.content
    response = bob.get(f"/api/v1/me/export/{started.json()['id']}/download")
    assert response.status_code == 200
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        written = json.loads(archive.read("comments.json"))["comments"]
    assert [c["text"] for c in written] == ["bob's top", "bob's lone", "bob answers himself"]
    assert written[2]["reply_to_id"] == lone["id"] and written[0]["board_id"] == board_id
    # deletion
    assert board_count(api, board_id) == 4
    assert run(bob.delete, "/api/v1/me", {"password": "password123"}).status_code == 204
    items = thread(alice, board_id)["items"]
    assert [(i["deleted"], i["text"]) for i in items] == [(True, ""), (False, "carol answers")]
    assert board_count(api, board_id) == 1 == Board.objects.get(pk=board_id).comments
    assert int(redis_data.hget(keys.board(board_id), "comments")) == 1
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {Comment._meta.db_table} WHERE text LIKE %s", ["bob%"])
        assert cursor.fetchone()[0] == 0


def test_mentioned_names_and_rendering_units():
    assert comments.mentioned_names("hi @Bob and @bob, mail a@carol.org @x @dave_2!") == ["bob", "dave_2"]
    assert comments.comment_html("a <b> @bob https://x.org/p.", ["bob"]) == (
        'a &lt;b&gt; <a href="/u/bob" class="mention">@bob</a> '
        '<a href="https://x.org/p" rel="nofollow ugc">https://x.org/p</a>.'
    )


def test_a_rebuild_recounts_comments_from_their_rows(api, run, redis_data):
    alice = api.as_user("alice")
    board_id = post_board(run, alice)
    say(run, api.as_user("bob"), board_id, "one")
    say(run, alice, board_id, "two")
    Board.objects.filter(pk=board_id).update(comments=99)  # a count gone wrong
    redis_data.flushdb()
    run(call_command, "rebuild_redis")
    assert Board.objects.get(pk=board_id).comments == 2
    assert board_count(api, board_id) == 2
    assert alice.get("/api/v1/users/alice/boards").json()["items"][0]["comments"] == 2  # through G
    assert int(redis_data.hget(keys.board(board_id), "comments")) == 2


def test_a_suspended_persons_comments_leave_every_thread_and_come_back_with_the_lifting(api, run, redis_data):
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    boards = [post_board(run, alice, "One"), post_board(run, alice, "Two")]
    for board_id in boards:
        say(run, bob, board_id, "bob was here")
        say(run, carol, board_id, "carol too")
    hidden = say(run, bob, boards[0], "hidden by staff")  # and it stays hidden through it all
    assert run(comment_services.comment_hide, comment_id=hidden["id"])
    assert [board_count(api, board_id) for board_id in boards] == [2, 2]
    bob_user = User.objects.get(username="bob")
    run(moderation.user_suspend, user=bob_user)
    for board_id in boards:
        assert thread(api, board_id) == {**thread(api, board_id), "total": 1}
        assert texts(thread(api, board_id)) == ["carol too"]
        assert board_count(api, board_id) == 1 == Board.objects.get(pk=board_id).comments
        assert int(redis_data.hget(keys.board(board_id), "comments")) == 1
    assert set(Comment.objects.filter(author=bob_user).values_list("state", flat=True)) == {"suspended", "hidden"}
    run(moderation.user_unsuspend, user=bob_user)
    for board_id in boards:
        assert texts(thread(api, board_id)) == ["bob was here", "carol too"]
        assert board_count(api, board_id) == 2 == Board.objects.get(pk=board_id).comments
    assert Comment.objects.get(pk=hidden["id"]).state == "hidden"
