"""Addresses and forgotten passwords (docs/api.md, "Safety"): an optional address, confirmed by
a link; a reset link only to a confirmed address, the same answer for any address, single-use,
rate limited; the mail read back from the real SMTP catcher the tests start (MAIL_DIR)."""

import pytest
from django.test import Client, override_settings

from social.models import ApiToken, User
from ugcsite.testing import with_second_factor

pytestmark = pytest.mark.django_db

PASSWORD = "password123"


def sign_up(client: Client, username: str, email: str = "") -> None:
    response = client.post(
        "/signup", {"username": username, "password": PASSWORD, "password_again": PASSWORD, "email": email}
    )
    assert response.status_code == 302, response.content


def test_an_address_given_at_sign_up_is_confirmed_by_its_link(run, mailbox):
    page = Client()
    run(sign_up, page, "alice", "Alice@Example.org")
    [mail] = mailbox.new()
    assert mail["to"] == "Alice@Example.org" and "Confirm your address" in mail["subject"]
    assert not User.objects.get(username="alice").email_verified
    path = mailbox.link(mail).split("://", 1)[1].split("/", 1)[1]
    assert page.get("/" + path).status_code == 302
    assert User.objects.get(username="alice").email_verified
    assert "is confirmed" in page.get("/settings").content.decode()
    assert Client().get("/settings/email/forged-token").status_code == 302  # no harm, a message
    assert User.objects.get(username="alice").email_verified


def test_a_new_address_in_settings_is_unconfirmed_until_its_link(run, mailbox):
    page = Client()
    run(sign_up, page, "bob")
    assert mailbox.none_new()  # no address, no mail
    run(page.post, "/settings", {"display_name": "", "bio": "", "email": "bob@example.org"})
    [mail] = mailbox.new()
    old_link = mailbox.link(mail)
    run(page.post, "/settings", {"display_name": "", "bio": "", "email": "bob@elsewhere.org"})
    # the first link no longer confirms anything: its address is not the account's any more
    page.get("/" + old_link.split("://", 1)[1].split("/", 1)[1])
    assert not User.objects.get(username="bob").email_verified
    assert run(page.post, "/settings/email").status_code == 302  # send again
    assert len(mailbox.new()) == 3


def test_a_forgotten_password_is_reset_through_a_confirmed_address_once(run, mailbox, api):
    run(sign_up, Client(), "carol", "carol@example.org")
    User.objects.filter(username="carol").update(email_verified=True)
    token_client = api.as_user("carol")
    mailbox.before |= set(mailbox.folder.glob("*.eml"))
    stranger = Client()
    response = stranger.post("/password/reset", {"email": "CAROL@example.org"})
    assert response.status_code == 302 and response["Location"] == "/password/reset/sent"
    [mail] = mailbox.new()
    assert mail["to"] == "carol@example.org" and "new password" in mail["subject"]
    path = "/" + mailbox.link(mail).split("://", 1)[1].split("/", 1)[1]
    form = stranger.get(path, follow=True)
    assert "Choose a new password" in form.content.decode()
    done = stranger.post(
        form.redirect_chain[-1][0], {"new_password1": "brand-new-pass", "new_password2": "brand-new-pass"}
    )
    assert done.status_code == 302 and done["Location"] == "/password/reset/done"
    assert User.objects.get(username="carol").check_password("brand-new-pass")
    assert not ApiToken.objects.filter(user__username="carol").exists()  # every token ended
    assert token_client.get("/api/v1/me").status_code == 401
    # single-use: the link died with the old password
    assert "no longer works" in Client().get(path, follow=True).content.decode()
    assert Client().post("/login", {"username": "carol", "password": "brand-new-pass"}).status_code == 302


def test_unknown_and_unconfirmed_addresses_get_the_same_answer_and_no_mail(run, mailbox):
    run(sign_up, Client(), "dave", "dave@example.org")  # unconfirmed
    mailbox.before |= set(mailbox.folder.glob("*.eml"))
    answers = {
        email: Client().post("/password/reset", {"email": email})
        for email in ("dave@example.org", "nobody@example.org")
    }
    assert {(r.status_code, r["Location"]) for r in answers.values()} == {(302, "/password/reset/sent")}
    assert mailbox.none_new()
    assert Client().post("/password/reset", {"email": "not an address"}).status_code == 200  # the form says so


@override_settings(RATE_LIMIT_RESETS_PER_MINUTE=2)
def test_reset_requests_are_rate_limited():
    page = Client()
    for _ in range(2):
        assert page.post("/password/reset", {"email": "someone@example.org"}).status_code == 302
    response = page.post("/password/reset", {"email": "someone@example.org"})
    assert response.status_code == 429 and int(response["Retry-After"]) >= 1
    assert "password resets from this address" in response.content.decode()


def test_staff_read_the_kept_mail(run, mailbox):
    run(sign_up, Client(), "erin", "erin@example.org")
    [mail] = mailbox.new()
    staff = Client()
    staff.force_login(with_second_factor(User.objects.create_superuser("mod", password=PASSWORD)))
    listing = staff.get("/admin/mail/").content.decode()
    assert "Confirm your address on ugcsite" in listing
    name = sorted(mailbox.folder.glob("*.eml"))[-1].name
    assert "erin@example.org" in staff.get(f"/admin/mail/?m={name}").content.decode()
    person = Client()
    person.force_login(User.objects.get(username="erin"))
    assert person.get("/admin/mail/").status_code == 302  # to the admin's log-in
    assert mail["to"] == "erin@example.org"


def test_the_api_takes_an_address_at_sign_up_and_in_settings(api, run, mailbox):
    assert (
        run(
            api.post, "/api/v1/users", {"username": "fay", "password": PASSWORD, "email": "fay@example.org"}
        ).status_code
        == 201
    )
    assert [m["to"] for m in mailbox.new()] == ["fay@example.org"]
    fay = api.as_user("fay")
    me = fay.get("/api/v1/me").json()
    assert me["email"] == "fay@example.org" and me["email_verified"] is False
    problem = run(fay.patch, "/api/v1/me", {"email": "not an address"})
    assert problem.status_code == 400 and "email" in problem.json()["detail"]
    assert run(api.post, "/api/v1/users", {"username": "gil", "password": PASSWORD, "email": "@"}).status_code == 400
    changed = run(fay.patch, "/api/v1/me", {"email": "fay@elsewhere.org"}).json()
    assert changed["email"] == "fay@elsewhere.org" and changed["email_verified"] is False
    assert run(fay.patch, "/api/v1/me", {"email": ""}).json()["email"] == ""
    assert len(mailbox.new()) == 2  # the sign-up's and the new address's; none for no address
