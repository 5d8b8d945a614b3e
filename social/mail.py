"""The mail an account gets (through Django's SMTP backend: settings EMAIL_*): the link that
confirms an address. Password resets are Django's own views and mail (social.views).

The link carries the user id and the address it confirms, signed (django.core.signing) and
good for EMAIL_LINK_HOURS; it confirms nothing once the address has changed."""

from django.conf import settings
from django.core import signing
from django.core.mail import send_mail
from django.urls import reverse

SALT = "ugcsite.email-check"


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
