"""Safety in a real browser: blocking from a profile's More menu (the follow ends, the blocked
person meets a 404, the settings page undoes it) and reporting a board through its form until
staff see it in the admin's queue. Live server, real Celery worker, Chromium."""

import os
import re
import zipfile
from email import policy as email_policy
from email.parser import BytesParser
from pathlib import Path

import pytest
from django.db import transaction

from feeds.models import ReportCase
from feeds.services import boards as board_services, follows
from social import services as people_services
from social.models import Block, Follow
from ugcsite.testing import STAFF_OTP_SECRET, with_second_factor
from ugcsite.tests.support import PASSWORD, axe_run, log_in

pytestmark = [pytest.mark.worker, pytest.mark.browser]

DOC = {"width": 800, "height": 600, "background": "#ffffff", "elements": []}


def test_block_from_a_profile_and_undo_it_in_settings(celery_worker, people):
    with transaction.atomic():
        alice, bob = (people_services.user_create(username=n, password=PASSWORD) for n in ("alice", "bob"))
        follows.follow_create(follower=bob, followee=alice)
    with transaction.atomic():
        board = board_services.board_create(author=alice, title="Mine", kind="note", tags=[], doc=DOC)

    blocker = people("alice")
    log_in(blocker, "alice", "/u/bob")
    menu = blocker.page.locator("[data-safety-menu]")
    menu.locator("summary").click()
    blocker.shot("more-menu")
    menu.get_by_role("button", name="Block bob").click()
    blocker.page.locator(".message.success").wait_for(state="visible")
    assert "You blocked bob" in blocker.page.locator(".message.success").inner_text()
    assert blocker.page.locator("[data-follow-button]").count() == 0
    assert not Follow.objects.exists() and Block.objects.filter(blocker=alice, blocked=bob).exists()

    blocked = people("bob")
    log_in(blocked, "bob", "/")
    assert blocked.visit("/u/alice", "blocked-profile").status == 404
    assert blocked.visit(f"/b/{board.pk}", "blocked-board").status == 404

    blocker.visit("/settings", "settings-blocks")
    assert blocker.page.locator("[data-testid=blocks]").inner_text().startswith("bob")
    assert axe_run(blocker.page) == []
    blocker.page.locator("[data-testid=blocks] button", has_text="Unblock").click()
    blocker.page.locator(".message.success").wait_for(state="visible")
    assert "/settings" in blocker.page.url and blocker.page.locator("[data-testid=blocks]").count() == 0
    assert not Block.objects.exists()
    assert blocked.visit("/u/alice", "unblocked-profile").status == 200
    for person in (blocker, blocked):
        person.check_clean()


def test_report_a_board_and_staff_see_it_in_the_queue(celery_worker, people):
    with transaction.atomic():
        author = people_services.user_create(username="author", password=PASSWORD)
        people_services.user_create(username="alice", password=PASSWORD)
        with_second_factor(people_services.user_create(username="staffer", password=PASSWORD, is_staff=True))
    with transaction.atomic():
        board = board_services.board_create(author=author, title="Spammy", kind="note", tags=[], doc=DOC)

    reporter = people("alice")
    log_in(reporter, "alice", f"/b/{board.pk}")
    reporter.page.get_by_role("link", name="Report").click()
    reporter.page.wait_for_url(f"**/report?board={board.pk}")
    assert axe_run(reporter.page) == []
    reporter.page.get_by_role("button", name="Send the report").click()  # no reason: the browser asks
    assert reporter.page.url.endswith(f"/report?board={board.pk}")
    reporter.page.get_by_label("Spam").check()
    reporter.page.fill("#id_text", "the same link on every board")
    reporter.shot("report-filled")
    reporter.page.get_by_role("button", name="Send the report").click()
    reporter.page.wait_for_url(f"**/b/{board.pk}")
    assert "staff will look at your report" in reporter.page.locator(".message.success").inner_text()
    case = ReportCase.objects.get()
    assert case.board_id == board.pk and case.reporters == 1

    staff = people("staffer")
    log_in(staff, "staffer", "/admin/feeds/reportcase/", otp_secret=STAFF_OTP_SECRET)
    queue = staff.page.locator("#result_list").inner_text()
    assert "Spammy" in queue and "Spam (1)" in queue
    reporter.check_clean()


def test_a_forgotten_password_is_reset_by_the_mailed_link(people, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"  # the real catcher, not memory
    mail_dir = Path(os.environ["MAIL_DIR"])
    before = set(mail_dir.glob("*.eml"))
    with transaction.atomic():
        user = people_services.user_create(username="forgetful", password=PASSWORD, email="me@example.org")
    user.email_verified = True
    user.save(update_fields=["email_verified"])

    person = people("forgetful")
    person.visit("/login", "login")
    person.page.get_by_role("link", name="Forgot your password?").click()
    person.page.fill("#id_email", "me@example.org")
    person.page.get_by_role("button", name="Send me a link").click()
    person.page.locator("[data-testid=reset-sent]").wait_for()
    [mail] = sorted(set(mail_dir.glob("*.eml")) - before)
    body = BytesParser(policy=email_policy.default).parsebytes(mail.read_bytes()).get_body(preferencelist=("plain",))
    link = re.search(r"https?://\S+", body.get_content()).group(0)
    person.page.goto(link)
    person.page.fill("#id_new_password1", "a-brand-new-one")
    person.page.fill("#id_new_password2", "a-brand-new-one")
    person.shot("new-password")
    person.page.get_by_role("button", name="Save the new password").click()
    person.page.wait_for_url("**/password/reset/done")
    person.page.locator("#content").get_by_role("link", name="Log in").click()
    person.page.fill("#id_username", "forgetful")
    person.page.fill("#id_password", "a-brand-new-one")
    person.page.click("form.stacked button[type=submit]")
    person.page.wait_for_url(re.compile(r"://[^/]+/$"))
    assert person.page.locator(".usernav .me").inner_text() == "forgetful"
    person.page.goto(link)  # single-use
    assert "no longer works" in person.page.locator("main").inner_text()
    person.check_clean()


def test_the_settings_page_builds_an_archive_and_shows_its_progress(celery_worker, people):
    with transaction.atomic():
        owner = people_services.user_create(username="keeper", password=PASSWORD)
    with transaction.atomic():
        board_services.board_create(author=owner, title="Keep me", kind="note", tags=[], doc=DOC)
    person = people("keeper")
    log_in(person, "keeper", "/settings")
    person.page.get_by_role("button", name="Prepare my archive").click()
    link = person.page.locator("[data-export-link]")
    link.wait_for(timeout=30_000)  # the worker builds it; the page asks once a second
    assert person.page.locator("[data-export] progress").get_attribute("value") == "100"
    with person.page.expect_download() as download:
        link.click()
    saved = download.value.path()
    names = zipfile.ZipFile(saved).namelist()
    assert "profile.json" in names and any(name.endswith(".svg") for name in names)
    person.shot("archive-ready")
    person.check_clean()
