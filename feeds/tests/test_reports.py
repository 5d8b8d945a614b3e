"""Reports and the moderation queue (docs/api.md, "Safety"): reporting a board or a person, the
answers to bad reports, a target hidden once enough distinct people report it, staff deciding in
the admin, and each reporter told of the outcome."""

import pytest
from django.test import Client, override_settings

from feeds.models import Board, ReportCase
from feeds.services import reports
from social.models import User
from ugcsite.testing import assert_problem, with_second_factor

pytestmark = pytest.mark.django_db

DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}
REPORTS = "/api/v1/reports"


@pytest.fixture
def board(api, run):
    author = api.as_user("author")
    response = run(author.post, "/api/v1/boards", {"title": "reported", "kind": "note", "doc": DOC})
    assert response.status_code == 201
    return response.json()["id"]


def test_a_report_makes_one_case_per_target_and_one_report_per_person(api, run, board):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    first = run(alice.post, REPORTS, {"board": board, "reason": "spam", "text": "buy now"})
    assert first.status_code == 201 and isinstance(first.json()["id"], int)
    again = run(alice.post, REPORTS, {"board": board, "reason": "abuse"})  # replaces her reason
    assert again.json()["id"] == first.json()["id"]
    run(bob.post, REPORTS, {"board": board, "reason": "spam"})
    [case] = ReportCase.objects.all()
    assert case.board_id == board and case.reporters == 2 and not case.auto_hidden
    assert sorted(case.reports.values_list("reason", flat=True)) == ["abuse", "spam"]
    assert run(alice.post, REPORTS, {"user": "author", "reason": "other"}).status_code == 201
    assert ReportCase.objects.filter(person__username="author").count() == 1


def test_bad_reports_get_a_sentence(api, run, board):
    alice = api.as_user("alice")
    author = api.as_user("author")
    for body, status in (
        ({"reason": "spam"}, 400),
        ({"board": board, "user": "author", "reason": "spam"}, 400),
        ({"board": board, "reason": "boring"}, 400),
        ({"board": board, "reason": "spam", "text": "x" * 1001}, 400),
        ({"board": board, "reason": "spam", "extra": 1}, 400),
        ({"board": 2**53, "reason": "spam"}, 400),
        ({"board": 123456789, "reason": "spam"}, 404),
        ({"user": "nobody_at_all", "reason": "spam"}, 404),
        ({"user": "alice", "reason": "spam"}, 400),
    ):
        assert assert_problem(run(alice.post, REPORTS, body), status)["detail"], body
    assert (
        "your own board" in assert_problem(run(author.post, REPORTS, {"board": board, "reason": "spam"}), 400)["detail"]
    )
    assert_problem(run(api.post, REPORTS, {"board": board, "reason": "spam"}), 401)
    assert not ReportCase.objects.exists()


@override_settings(RATE_LIMIT_REPORTS_PER_MINUTE=2)
def test_reports_are_rate_limited(api, run, board):
    alice = api.as_user("alice")
    for _ in range(2):
        assert run(alice.post, REPORTS, {"board": board, "reason": "spam"}).status_code == 201
    response = run(alice.post, REPORTS, {"board": board, "reason": "spam"})
    assert_problem(response, 429)
    assert int(response["Retry-After"]) >= 1


@override_settings(REPORTS_AUTO_HIDE=3)
def test_enough_distinct_reporters_hide_a_board_until_staff_decide(api, run, board):
    reporters = [api.as_user(f"reporter{i}") for i in range(3)]
    for reporter in reporters[:2]:
        run(reporter.post, REPORTS, {"board": board, "reason": "abuse"})
        run(reporter.post, REPORTS, {"board": board, "reason": "abuse"})  # twice: still one person
    assert api.get(f"/api/v1/boards/{board}").status_code == 200
    run(reporters[2].post, REPORTS, {"board": board, "reason": "abuse"})
    assert_problem(api.get(f"/api/v1/boards/{board}"), 404)
    case = ReportCase.objects.get()
    assert case.auto_hidden and case.closed_at is None and Board.objects.get(pk=board).state == Board.State.HIDDEN

    staff = User.objects.create_user("mod", password="password123", is_staff=True)
    assert run(reports.case_close, case=case, outcome=ReportCase.Outcome.DISMISSED, staff=staff)
    assert api.get(f"/api/v1/boards/{board}").status_code == 200  # back: the reports alone had hidden it
    assert not run(reports.case_close, case=case, outcome=ReportCase.Outcome.ACTIONED, staff=staff)  # decided already
    for reporter in reporters:
        [item] = reporter.get("/api/v1/notifications").json()["items"]
        assert item["kind"] == "report_dismissed" and item["actors"] == [] and item["actor_count"] == 0
        assert item["board"]["id"] == board


@override_settings(REPORTS_AUTO_HIDE=2)
def test_enough_reporters_suspend_a_person_and_taking_down_keeps_it(api, run):
    target = api.as_user("target")
    for name in ("reporter1", "reporter2"):
        run(api.as_user(name).post, REPORTS, {"user": "target", "reason": "abuse"})
    assert not User.objects.get(username="target").is_active
    assert_problem(target.get("/api/v1/me"), 401)  # suspended: the token no longer works
    staff = User.objects.create_user("mod", password="password123", is_staff=True)
    run(reports.case_close, case=ReportCase.objects.get(), outcome=ReportCase.Outcome.ACTIONED, staff=staff)
    assert not User.objects.get(username="target").is_active
    assert ReportCase.objects.get().outcome == ReportCase.Outcome.ACTIONED


def test_staff_decide_from_the_admin_queue_and_reporters_are_told(api, run, board):
    alice = api.as_user("alice")
    run(alice.post, REPORTS, {"board": board, "reason": "illegal", "text": "stolen artwork"})
    staff = User.objects.create_superuser("mod", password="password123")
    admin = Client()
    admin.force_login(with_second_factor(staff))
    queue = admin.get("/admin/feeds/reportcase/").content.decode()
    assert "reported" in queue and "Illegal content (1)" in queue
    case = ReportCase.objects.get()
    detail = admin.get(f"/admin/feeds/reportcase/{case.pk}/change/").content.decode()
    assert "stolen artwork" in detail
    response = run(admin.post, "/admin/feeds/reportcase/", {"action": "take_down", "_selected_action": [case.pk]})
    assert response.status_code == 302
    case.refresh_from_db()
    assert case.outcome == ReportCase.Outcome.ACTIONED and case.closed_by == staff
    assert Board.objects.get(pk=board).state == Board.State.HIDDEN
    body = alice.get("/api/v1/notifications").json()
    assert body["unread"] == 1 and body["items"][0]["kind"] == "report_actioned"
    page = Client()
    page.force_login(User.objects.get(username="alice"))
    assert "Staff reviewed your report" in page.get("/notifications").content.decode()
    # the queue shows open cases by default: this one left it
    assert "Illegal content" not in admin.get("/admin/feeds/reportcase/").content.decode()


def test_the_report_form_reports_a_board_and_a_person(api, run, board):
    api.as_user("alice")
    page = Client()
    page.force_login(User.objects.get(username="alice"))
    assert 'href="/report?board=' in page.get(f"/b/{board}").content.decode()
    form = page.get(f"/report?board={board}")
    assert form.status_code == 200 and "Report the board" in form.content.decode()
    assert page.post("/report", {"board": board}).status_code == 400  # no reason: said, nothing sent
    response = run(page.post, "/report", {"board": board, "reason": "spam", "text": "ads"})
    assert response.status_code == 302 and response["Location"] == f"/b/{board}"
    assert run(page.post, "/report", {"user": "author", "reason": "abuse"})["Location"] == "/u/author"
    assert ReportCase.objects.count() == 2
    assert page.get("/report").status_code == 404
    assert page.get("/report?board=999999999").status_code == 404
    assert Client().get(f"/report?board={board}").status_code == 302  # to the log-in page
