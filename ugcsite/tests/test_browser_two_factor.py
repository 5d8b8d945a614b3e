"""Two-factor sign-in and sessions in a real browser (issue 41): enrolment from the settings page
with its QR code (drawn server-side, no script, under the page's CSP), the recovery codes shown
once, the log-in's code step, and another session ended from the list. Live server, Chromium."""

import pytest
from django.db import transaction

from social import services as people_services, two_factor
from social.models import Passkey, TwoFactor, User
from social.rules import RECOVERY_CODES
from ugcsite.testing import unused_code, with_second_factor
from ugcsite.tests.support import PASSWORD, axe_run, log_in

pytestmark = [pytest.mark.worker, pytest.mark.browser]

BOB_SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXQ"


def test_enrol_with_the_qr_code_then_log_in_with_a_code_and_end_the_other_session(celery_worker, people):
    with transaction.atomic():
        people_services.user_create(username="alice", password=PASSWORD)
    laptop = people("laptop")
    log_in(laptop, "alice", "/settings")
    laptop.page.get_by_role("button", name="Set up two-factor sign-in").click()
    qr = laptop.page.locator("[data-testid=two-factor-qr]")
    qr.wait_for(state="visible")
    assert qr.evaluate("img => img.complete && img.naturalWidth > 0")  # the SVG decoded: a real picture
    assert qr.get_attribute("src").startswith("data:image/svg+xml")
    laptop.shot("two-factor-qr")
    assert axe_run(laptop.page) == []
    secret = laptop.page.locator("[data-testid=two-factor-secret]").inner_text()
    assert secret == TwoFactor.objects.get(user__username="alice").secret
    laptop.page.fill("#id_2fa_code", two_factor.current_code(secret))
    laptop.page.get_by_role("button", name="Turn two-factor sign-in on").click()
    codes = laptop.page.locator("[data-testid=recovery-codes] li")
    codes.first.wait_for(state="visible")
    assert codes.count() == RECOVERY_CODES
    laptop.shot("recovery-codes")
    assert two_factor.is_on(TwoFactor.objects.get(user__username="alice").user_id)

    phone = people("phone")
    log_in(phone, "alice", "/settings", otp_secret=secret)  # the password, then the code
    assert phone.page.locator("[data-testid=two-factor-state]").is_visible()
    assert phone.page.locator("[data-testid=sessions] li").count() == 2

    laptop.visit("/settings", "sessions")
    laptop.page.locator("[data-testid=sessions] li:not(:has(strong))").get_by_role("button", name="End").click()
    laptop.page.locator(".message.success").wait_for(state="visible")
    assert laptop.page.locator("[data-testid=sessions] li").count() == 1
    phone.visit("/settings", "ended")
    assert "/login" in phone.page.url  # signed out at once
    assert unused_code(secret)  # the key still gives codes: only the session ended
    for person in (laptop, phone):
        person.check_clean()


def test_a_passkey_made_in_settings_signs_in_with_no_password(celery_worker, people):
    """Chromium's virtual authenticator (the DevTools protocol's WebAuthn domain) stands in for
    a phone or a security key."""
    with transaction.atomic():
        people_services.user_create(username="bob", password=PASSWORD)
    bob = people("bob")
    cdp = bob.page.context.new_cdp_session(bob.page)
    cdp.send("WebAuthn.enable")
    cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )
    log_in(bob, "bob", "/settings")
    bob.page.get_by_role("button", name="Add a passkey").click()
    bob.page.locator("[data-testid=passkeys] li").first.wait_for(state="visible")
    assert Passkey.objects.filter(user__username="bob").count() == 1
    bob.shot("passkey-added")
    bob.page.context.clear_cookies()  # signed out: the passkey alone signs in now

    bob.visit("/login?next=/settings", "passkey-login")
    bob.page.get_by_role("button", name="Sign in with a passkey").click()
    bob.page.wait_for_url(lambda url: url.endswith("/settings") and "/login" not in url)
    assert bob.page.locator("[data-testid=passkeys] li").count() == 1
    assert Passkey.objects.get(user__username="bob").last_used_at is not None

    # With two-factor on, the passkey also stands for the code after a password.
    with_second_factor(User.objects.get(username="bob"), BOB_SECRET)
    bob.page.context.clear_cookies()
    bob.visit("/login?next=/settings", "password-then-passkey")
    bob.page.fill("#id_username", "bob")
    bob.page.fill("#id_password", PASSWORD)
    bob.page.click("form.stacked button[type=submit]")
    bob.page.wait_for_url("**/login/code**")
    bob.page.get_by_role("button", name="Use a passkey instead").click()
    bob.page.wait_for_url(lambda url: url.endswith("/settings") and "/login" not in url)
    assert bob.page.locator("[data-testid=two-factor-state]").is_visible()
    bob.check_clean()
