"""Two-factor sign-in (docs/api.md, "Two-factor sign-in and sessions"; issue 41): enrolment and
its QR code, codes accepted once, recovery codes single-use, wrong codes spending the sign-in
throttle, the log-in page's code step, staff refused at /admin/ without it, the notices mailed."""

import time

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from social import services, two_factor
from social.models import RecoveryCode, TwoFactor
from social.rules import OTP_PERIOD_SECONDS, RECOVERY_CODE_PATTERN, RECOVERY_CODES
from ugcsite.testing import ApiClient, assert_problem

pytestmark = pytest.mark.django_db

User = get_user_model()
PASSWORD = "password123"
TWO_FACTOR = "/api/v1/me/2fa"
CONFIRM = "/api/v1/me/2fa/confirm"
TOKENS = "/api/v1/tokens"


def enrolled(api, username: str) -> tuple[ApiClient, str, list[str]]:
    """A person with two-factor on through the API: their client, secret and recovery codes."""
    client = api.as_user(username)
    started = client.post(TWO_FACTOR, {})
    assert started.status_code == 201, started.content
    secret = started.json()["secret"]
    confirmed = client.post(CONFIRM, {"code": two_factor.current_code(secret)})
    assert confirmed.status_code == 200, confirmed.content
    return client, secret, confirmed.json()["recovery_codes"]


def next_step_code(secret: str) -> str:
    """The code of the next time step (taken too: a phone's clock drifts), one not used yet."""
    return two_factor.current_code(secret, at=time.time() + OTP_PERIOD_SECONDS)


def test_enrolment_starts_off_and_a_right_code_turns_it_on_with_ten_hashed_recovery_codes(api):
    client = api.as_user("alice")
    started = client.post(TWO_FACTOR, {})
    assert started.status_code == 201
    body = started.json()
    assert set(body) == {"secret", "otpauth_uri"}
    assert body["otpauth_uri"].startswith("otpauth://totp/") and body["secret"] in body["otpauth_uri"]
    user = User.objects.get(username="alice")
    assert not two_factor.is_on(user.pk)  # enrolment started, not on yet
    assert api.post(TOKENS, {"username": "alice", "password": PASSWORD}).status_code == 201

    wrong = str((int(two_factor.current_code(body["secret"])) + 1) % 10**6).zfill(6)
    assert "wrong" in assert_problem(client.post(CONFIRM, {"code": wrong}), 400)["detail"]
    assert not two_factor.is_on(user.pk)

    confirmed = client.post(CONFIRM, {"code": two_factor.current_code(body["secret"])})
    assert confirmed.status_code == 200
    codes = confirmed.json()["recovery_codes"]
    assert len(codes) == RECOVERY_CODES == len(set(codes))
    assert all(__import__("re").match(RECOVERY_CODE_PATTERN, code) for code in codes)
    assert two_factor.is_on(user.pk)
    stored = set(RecoveryCode.objects.filter(user=user).values_list("code_hash", flat=True))
    assert len(stored) == RECOVERY_CODES and not stored & set(codes)  # hashes only
    assert_problem(client.post(TWO_FACTOR, {}), 409)  # already on
    assert_problem(client.post(CONFIRM, {"code": "123456"}), 409)


def test_confirm_without_an_enrolment_is_409_and_bad_bodies_are_400s(api):
    client = api.as_user("bob")
    assert "POST /api/v1/me/2fa" in assert_problem(client.post(CONFIRM, {"code": "123456"}), 409)["detail"]
    assert_problem(client.post(CONFIRM, {"code": 123456}), 400)
    assert_problem(client.post(CONFIRM, {"code": "1" * 100}), 400)
    assert_problem(client.post(CONFIRM, {}), 400)
    # Off already: the right password is enough (nothing changes), a wrong one is refused.
    assert client.delete(TWO_FACTOR, {"password": PASSWORD, "code": "123456"}).status_code == 204
    assert_problem(client.delete(TWO_FACTOR, {"password": "wrong-password", "code": "123456"}), 403)
    assert_problem(api.post(TWO_FACTOR, {}), 401)


def test_a_token_needs_the_code_once_two_factor_is_on_and_a_code_works_once(api):
    _, secret, _ = enrolled(api, "carol")
    for body in ({}, {"otp": "000000"}, {"otp": "not a code"}):
        refused = assert_problem(api.post(TOKENS, {"username": "carol", "password": PASSWORD, **body}), 401)
        assert "one-time code" in refused["detail"]
    code = next_step_code(secret)
    assert api.post(TOKENS, {"username": "carol", "password": PASSWORD, "otp": code}).status_code == 201
    # The same code again, still inside its window: refused (replay).
    replay = api.post(TOKENS, {"username": "carol", "password": PASSWORD, "otp": code})
    assert "one-time code" in assert_problem(replay, 401)["detail"]
    # A code of an earlier step than the one taken is refused too.
    assert_problem(
        api.post(TOKENS, {"username": "carol", "password": PASSWORD, "otp": two_factor.current_code(secret)}), 401
    )
    # A wrong password says nothing about codes.
    wrong = assert_problem(api.post(TOKENS, {"username": "carol", "password": "nope-nope", "otp": code}), 401)
    assert "one-time code" not in wrong["detail"]


def test_recovery_codes_work_once_each(api):
    _, _, codes = enrolled(api, "dave")
    first = {"username": "dave", "password": PASSWORD, "otp": codes[0].upper()}  # any letter case
    assert api.post(TOKENS, first).status_code == 201
    assert_problem(api.post(TOKENS, first), 401)  # spent
    assert api.post(TOKENS, {**first, "otp": codes[1]}).status_code == 201
    assert RecoveryCode.objects.filter(user__username="dave", used_at__isnull=True).count() == RECOVERY_CODES - 2


def test_wrong_codes_count_against_the_sign_in_throttle(api, settings):
    enrolled(api, "erin")
    settings.RATE_LIMIT_AUTH_PER_MINUTE = 6
    answers = [
        api.post(TOKENS, {"username": "erin", "password": PASSWORD, "otp": "000000"}).status_code for _ in range(4)
    ]
    # Each request counts once and each wrong code once more: the 4th is past 6 (without the
    # codes' count it would be the 7th).
    assert answers == [401, 401, 401, 429]


def test_turning_it_off_needs_the_password_and_a_code(api, run, mailbox):
    client, secret, codes = enrolled(api, "frank")
    refused = assert_problem(
        client.delete(TWO_FACTOR, {"password": "wrong-password", "code": next_step_code(secret)}), 403
    )
    assert "password or the one-time code" in refused["detail"]
    assert_problem(client.delete(TWO_FACTOR, {"password": PASSWORD, "code": "000000"}), 403)
    assert two_factor.is_on(User.objects.get(username="frank").pk)
    User.objects.filter(username="frank").update(email="frank@example.org", email_verified=True)
    client_user = ApiClient(Client(), client.token)
    assert run(client_user.delete, TWO_FACTOR, {"password": PASSWORD, "code": codes[3]}).status_code == 204
    assert not TwoFactor.objects.filter(user__username="frank").exists()
    assert not RecoveryCode.objects.filter(user__username="frank").exists()
    assert api.post(TOKENS, {"username": "frank", "password": PASSWORD}).status_code == 201
    [notice] = mailbox.new()
    assert notice["to"] == "frank@example.org" and "Two-factor sign-in is off" in notice["subject"]


def test_the_log_in_page_asks_for_the_code_after_the_password(api):
    _, secret, _ = enrolled(api, "grace")
    page = Client()
    step = page.post("/login", {"username": "grace", "password": PASSWORD, "next": "/settings"})
    assert step.status_code == 302 and step["Location"].startswith("/login/code")
    assert page.get("/settings").status_code == 302  # not signed in yet
    form = page.get(step["Location"])
    assert form.status_code == 200 and 'autocomplete="one-time-code"' in form.content.decode()
    wrong = page.post("/login/code", {"code": "000000", "next": "/settings"})
    assert wrong.status_code == 400 and "wrong" in wrong.content.decode()
    done = page.post("/login/code", {"code": next_step_code(secret), "next": "/settings"})
    assert done.status_code == 302 and done["Location"] == "/settings"
    assert page.get("/settings").status_code == 200
    # Without a password step first, the code page sends you back to it.
    assert Client().get("/login/code")["Location"] == "/login"


def test_the_settings_page_enrols_with_a_qr_code_and_shows_the_recovery_codes_once():
    services.user_create(username="heidi", password=PASSWORD)
    page = Client()
    assert page.post("/login", {"username": "heidi", "password": PASSWORD}).status_code == 302
    assert page.post("/settings/2fa", {"action": "start"}).status_code == 302
    shown = page.get("/settings").content.decode()
    assert 'src="data:image/svg+xml' in shown and 'data-testid="two-factor-qr"' in shown
    secret = TwoFactor.objects.get(user__username="heidi").secret
    assert secret in shown
    assert page.post("/settings/2fa", {"action": "confirm", "code": "000000"}).status_code == 400
    confirmed = page.post("/settings/2fa", {"action": "confirm", "code": two_factor.current_code(secret)})
    assert confirmed.status_code == 200 and confirmed.content.decode().count("<li><code>") == RECOVERY_CODES
    again = page.get("/settings").content.decode()
    assert "recovery-codes" not in again and f"{RECOVERY_CODES} recovery codes left" in again


def test_staff_without_two_factor_are_refused_at_admin_with_how_to_turn_it_on():
    staff = services.user_create(username="boss", password=PASSWORD, is_staff=True)
    page = Client()
    assert page.post("/login", {"username": "boss", "password": PASSWORD}).status_code == 302
    for path in ("/admin/", "/admin/social/user/", "/admin/mail/"):
        refused = page.get(path)
        assert refused.status_code == 403 and "Set up two-factor sign-in" in refused.content.decode(), path
    # The admin's own password-only log-in is not served: it leads to the one that asks for the code.
    assert Client().get("/admin/login/?next=/admin/")["Location"] == "/login?next=/admin/"

    services.two_factor_seed(user=staff, secret="JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP")
    assert page.get("/admin/").status_code == 200
    # And signing in again now takes the code.
    fresh = Client()
    assert fresh.post("/login", {"username": "boss", "password": PASSWORD})["Location"].startswith("/login/code")
    assert fresh.get("/admin/").status_code == 302  # to the log-in


def test_make_otp_prints_the_current_code(capsys):
    staff = services.user_create(username="admin", password=PASSWORD, is_staff=True)
    services.two_factor_seed(user=staff, secret="UGCSITEDEMOADMINTWOFACTORSECRETX")
    call_command("otp_code", "admin")
    printed = capsys.readouterr().out.strip()
    assert printed in {two_factor.current_code("UGCSITEDEMOADMINTWOFACTORSECRETX", at=time.time() - d) for d in (0, 2)}


def test_two_factor_on_and_a_password_change_are_mailed_to_a_confirmed_address(api, run, mailbox):
    client = api.as_user("ivan")
    User.objects.filter(username="ivan").update(email="ivan@example.org", email_verified=True)
    secret = client.post(TWO_FACTOR, {}).json()["secret"]
    assert run(client.post, CONFIRM, {"code": two_factor.current_code(secret)}).status_code == 200
    [on] = mailbox.new()
    assert on["to"] == "ivan@example.org" and "Two-factor sign-in is on" in on["subject"]
    mailbox.before |= set(mailbox.folder.glob("*.eml"))
    user = User.objects.get(username="ivan")
    user.set_password("a-new-password")
    run(user.save)
    [changed] = mailbox.new()
    assert "Your password was changed" in changed["subject"]
    # An unconfirmed address is told nothing.
    mailbox.before |= set(mailbox.folder.glob("*.eml"))
    User.objects.filter(username="ivan").update(email_verified=False)
    user.refresh_from_db()
    user.set_password("another-password")
    run(user.save)
    assert mailbox.none_new()


def test_a_sign_in_from_a_new_device_is_mailed_and_a_known_one_is_not(api, run, mailbox):
    services.user_create(username="judy", password=PASSWORD, email="judy@example.org")
    User.objects.filter(username="judy").update(email_verified=True)
    laptop = {"User-Agent": "Firefox on the laptop"}
    body = {"username": "judy", "password": PASSWORD}
    assert run(api.post, TOKENS, body, headers=laptop).status_code == 201
    [first] = mailbox.new()
    assert "new device" in first["subject"] and "Firefox on the laptop" in first.get_content()
    mailbox.before |= set(mailbox.folder.glob("*.eml"))
    assert run(api.post, TOKENS, body, headers=laptop).status_code == 201
    assert mailbox.none_new()
    page = Client(headers={"User-Agent": "Safari on the phone"})
    assert run(page.post, "/login", body).status_code == 302
    [second] = mailbox.new()
    assert "Safari on the phone" in second.get_content()
