"""The mail an account gets (through Django's SMTP backend: settings EMAIL_*): the link that
confirms an address. Password resets are Django's own views and mail (social.views).

The link carries the user id and the address it confirms, signed (django.core.signing) and
good for EMAIL_LINK_HOURS; it confirms nothing once the address has changed."""

import logging

from django.conf import settings
from django.core import signing
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse

SALT = "ugcsite.email-check"
logger = logging.getLogger(__name__)


def address_check_send(user, *, base_url: str) -> None:
    """Send ``user`` the link that confirms their current address. One SMTP exchange."""
    token = signing.dumps({"u": user.pk, "e": user.email.lower()}, salt=SALT, compress=True)
    link = base_url.rstrip("/") + reverse("people:email-check", args=[token])
    send_mail(
        subject="Confirm your address on ugcsite",
        message=(
            f"Hello {user.username},\n\nOpen this link to confirm that {user.email} is yours; it works "
            f"for {settings.EMAIL_LINK_HOURS} hours:\n\n{link}\n\nOnce it is confirmed, a forgotten password "
            "can be reset through it. If you did not give this address, ignore this mail.\n"
        ),
        from_email=None,
        recipient_list=[user.email],
    )


def address_check_read(token: str) -> tuple[int, str] | None:
    """(user id, address) of a link's token, or None when it is forged, spoilt or too old."""
    try:
        data = signing.loads(token, salt=SALT, max_age=settings.EMAIL_LINK_HOURS * 3600)
    except signing.BadSignature:
        return None
    return int(data["u"]), str(data["e"])


def security_notice_send(user, *, subject: str, what: str) -> None:
    """Tell ``user`` that something happened to their account's security (a sign-in from a new
    device, a new password, two-factor on or off), through the same SMTP path as password
    resets. One SMTP exchange; the caller sends only to a confirmed address."""
    send_mail(
        subject=f"{subject} on ugcsite",
        message=(
            f"Hello {user.username},\n\n{what}\n\nIf this was you, there is nothing to do. If it was not, "
            "reset your password now (the log-in page's 'Forgot your password?'), then end the sessions "
            "you do not know on your settings page.\n"
        ),
        from_email=None,
        recipient_list=[user.email],
    )


def security_notice(*, user, subject: str, what: str) -> None:
    """After the commit, send ``user`` a security notice if their address is confirmed; a mail
    server that does not answer is logged, and what happened stands. (Here rather than in
    social.services: ``User.save`` sends the new-password one, however the password changed.)"""

    def send():
        try:
            security_notice_send(user, subject=subject, what=what)
        except OSError as error:  # SMTP refused or unreachable
            logger.warning("the notice %r to user %s was not sent: %s", subject, user.pk, error)

    if user.email and user.email_verified:
        transaction.on_commit(send)
