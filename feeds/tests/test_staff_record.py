"""Staff actions on the record (issue 41 item 6): every hide, unhide, suspension, lifted
suspension, take-down, dismissal and server (domain) block or unblock by staff is kept with who, what, when and why, listed
read-only in the admin; only the retention setting deletes one. Reports' automatic hiding is no
staff action and is not recorded."""

from datetime import timedelta

import pytest
from django.test import Client, override_settings
from django.utils import timezone

from feeds import staff_record
from feeds.models import Board, FederatedHost, ReportCase, StaffAction
from feeds.services import reports
from feeds.tasks import staff_actions_prune
from social.models import User
from ugcsite.testing import with_second_factor

pytestmark = pytest.mark.django_db

DOC = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}
REPORTS = "/api/v1/reports"


@pytest.fixture
def staff_page():
    staff = with_second_factor(User.objects.create_superuser("mod", password="password123"))
    page = Client()
    page.force_login(staff)
    return page


def published(api, run, title="A cat") -> int:
    author = api.as_user("author")
    response = run(author.post, "/api/v1/boards", {"title": title, "kind": "note", "doc": DOC})
    assert response.status_code == 201
    return response.json()["id"]


def test_admin_actions_go_on_the_record_with_who_what_and_when(api, run, staff_page):
    board = published(api, run)
    before = timezone.now()
    for action in ("hide_boards", "unhide_boards"):
        response = run(staff_page.post, "/admin/feeds/board/", {"action": action, "_selected_action": [board]})
        assert response.status_code == 302
    target = User.objects.get(username="author")
    run(staff_page.post, "/admin/social/user/", {"action": "suspend_users", "_selected_action": [target.pk]})
    run(staff_page.post, "/admin/social/user/", {"action": "unsuspend_users", "_selected_action": [target.pk]})
    rows = list(StaffAction.objects.order_by("id").values_list("staff_name", "action", "target"))
    assert rows == [
        ("mod", "hide", f"board {board} (A cat) by author"),
        ("mod", "unhide", f"board {board} (A cat) by author"),
        ("mod", "suspend", "person author"),
        ("mod", "unsuspend", "person author"),
    ]
    assert all(row.created_at >= before for row in StaffAction.objects.all())
    # Hiding what is hidden already changes nothing and records nothing.
    run(staff_page.post, "/admin/feeds/board/", {"action": "unhide_boards", "_selected_action": [board]})
    assert StaffAction.objects.count() == 4


def test_blocking_and_unblocking_a_server_go_on_the_record_with_the_reason(run, staff_page):
    """A federation domain block, from the host's form or the list's actions, is a staff action."""
    form = {"host": "spam.example", "blocked": "on", "reason": "floods of spam"}
    assert run(staff_page.post, "/admin/feeds/federatedhost/add/", form).status_code == 302
    assert FederatedHost.objects.get(host="spam.example").blocked
    unblock = {"action": "unblock", "_selected_action": ["spam.example"]}
    assert run(staff_page.post, "/admin/feeds/federatedhost/", unblock).status_code == 302
    assert not FederatedHost.objects.get(host="spam.example").blocked
    block = {"action": "block", "_selected_action": ["spam.example"]}
    assert run(staff_page.post, "/admin/feeds/federatedhost/", block).status_code == 302
    edit = {"host": "spam.example", "reason": "they stopped"}  # "blocked" unticked
    assert run(staff_page.post, "/admin/feeds/federatedhost/spam.example/change/", edit).status_code == 302
    rows = list(StaffAction.objects.order_by("id").values_list("staff_name", "action", "target", "why"))
    assert rows == [
        ("mod", "block_server", "server spam.example", "floods of spam"),
        ("mod", "unblock_server", "server spam.example", ""),
        ("mod", "block_server", "server spam.example", "floods of spam"),
        ("mod", "unblock_server", "server spam.example", "they stopped"),
    ]
    # Unblocking a server that is not blocked changes nothing and records nothing.
    run(staff_page.post, "/admin/feeds/federatedhost/", unblock)
    assert StaffAction.objects.count() == 4


@override_settings(REPORTS_AUTO_HIDE=2)
def test_decided_reports_are_recorded_with_their_reasons_and_automatic_hiding_is_not(api, run):
    board = published(api, run, "Spammy")
    for name, text in (("alice", "buy now"), ("bob", "")):
        run(api.as_user(name).post, REPORTS, {"board": board, "reason": "spam", "text": text})
    assert Board.objects.get(pk=board).state == Board.State.HIDDEN  # hidden by the reports alone
    assert not StaffAction.objects.exists()
    staff = User.objects.create_user("mod", password="password123", is_staff=True)
    run(reports.case_close, case=ReportCase.objects.get(), outcome=ReportCase.Outcome.DISMISSED, staff=staff)
    [record] = StaffAction.objects.all()
    assert (record.staff_id, record.action, record.target) == (staff.pk, "dismiss", f"board {board} (Spammy) by author")
    assert "alice: buy now" in record.why and "bob" in record.why and "Spam" in record.why


def test_the_record_is_read_only_in_the_admin(api, run, staff_page):
    board = published(api, run)
    run(staff_page.post, "/admin/feeds/board/", {"action": "hide_boards", "_selected_action": [board]})
    record = StaffAction.objects.get()
    listing = staff_page.get("/admin/feeds/staffaction/")
    assert listing.status_code == 200 and "board" in listing.content.decode()
    assert staff_page.get("/admin/feeds/staffaction/add/").status_code == 403
    assert staff_page.post(f"/admin/feeds/staffaction/{record.pk}/delete/", {"post": "yes"}).status_code == 403
    staff_page.post(f"/admin/feeds/staffaction/{record.pk}/change/", {"why": "rewritten", "target": "x"})
    staff_page.post(
        "/admin/feeds/staffaction/", {"action": "delete_selected", "_selected_action": [record.pk], "post": "yes"}
    )
    record.refresh_from_db()
    assert record.why == "" and record.target.startswith("board")


def test_only_the_retention_setting_deletes_records(api, run, settings):
    staff = User.objects.create_user("mod", password="password123", is_staff=True)
    old = staff_record.staff_action_record(staff=staff, action="hide", target="board 1")
    new = staff_record.staff_action_record(staff=staff, action="hide", target="board 2")
    StaffAction.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=31))
    settings.STAFF_ACTIONS_RETENTION_DAYS = 0  # the default: kept for ever
    assert staff_actions_prune() == 0 and StaffAction.objects.count() == 2
    settings.STAFF_ACTIONS_RETENTION_DAYS = 30
    assert staff_actions_prune() == 1
    assert list(StaffAction.objects.values_list("pk", flat=True)) == [new.pk]
    # The record outlives the staff member's account.
    User.objects.filter(pk=staff.pk).delete()
    assert StaffAction.objects.get().staff_name == "mod"
