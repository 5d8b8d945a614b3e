"""One-time codes (TOTP, RFC 6238, through pyotp) and recovery codes: storage only, PostgreSQL.

A code is accepted once: ``TwoFactor.last_step`` holds the time step of the last code taken,
and taking one is a single conditional UPDATE (``last_step < step``), so two requests racing
with the same code cannot both pass. Recovery codes are single-use the same way (``used_at IS
NULL`` in the UPDATE) and kept as SHA-256 digests only.
"""

import hashlib
import secrets
import string
import time

import pyotp
import segno
from django.db import transaction
from django.utils import timezone

from social.models import RecoveryCode, TwoFactor
from social.rules import OTP_DIGITS, OTP_DRIFT_STEPS, OTP_ISSUER, OTP_PERIOD_SECONDS, RECOVERY_CODES

_RECOVERY_ALPHABET = string.ascii_lowercase + string.digits


def totp(secret: str) -> pyotp.TOTP:
    return pyotp.TOTP(secret, digits=OTP_DIGITS, interval=OTP_PERIOD_SECONDS, issuer=OTP_ISSUER)


def provisioning_uri(secret: str, *, username: str) -> str:
    """The otpauth:// address an authenticator app reads (from the QR code or typed in)."""
    return totp(secret).provisioning_uri(name=username, issuer_name=OTP_ISSUER)


def qr_data_uri(uri: str) -> str:
    """The QR code of an otpauth:// address as an SVG data: URL (drawn here: the page loads
    nothing from elsewhere, and its CSP allows data: images)."""
    return segno.make(uri, error="m").svg_data_uri(scale=5, border=2)


def enrolment(user_id: int) -> TwoFactor | None:
    """A person's enrolment under way (not yet on), or None. One query."""
    return TwoFactor.objects.filter(user_id=user_id, confirmed_at__isnull=True).first()


def current_code(secret: str, *, at: float | None = None) -> str:
    """The code an authenticator shows now (``make otp``; the tests)."""
    return totp(secret).at(time.time() if at is None else at)


def is_on(user_id: int) -> bool:
    """Whether a person signs in with a second factor. One indexed query."""
    return TwoFactor.objects.filter(user_id=user_id, confirmed_at__isnull=False).exists()


def enrolment_start(*, user_id: int, secret: str | None = None) -> str:
    """A new secret for a person whose two-factor is not on (any earlier unconfirmed one is
    replaced); the caller checks it is not on. One upsert."""
    secret = secret or pyotp.random_base32()
    TwoFactor.objects.update_or_create(
        user_id=user_id, defaults={"secret": secret, "confirmed_at": None, "last_step": 0}
    )
    return secret


def _normalise(code: str) -> str:
    return "".join(code.split()).lower()


def _matching_step(secret: str, code: str, *, now: float) -> int | None:
    """The time step (of now, or OTP_DRIFT_STEPS either side) whose code ``code`` is, or None."""
    if len(code) != OTP_DIGITS or not code.isascii() or not code.isdigit():
        return None
    step = int(now // OTP_PERIOD_SECONDS)
    for candidate in range(step - OTP_DRIFT_STEPS, step + OTP_DRIFT_STEPS + 1):
        if secrets.compare_digest(totp(secret).generate_otp(candidate), code):
            return candidate
    return None


def code_take(*, user_id: int, code: str, confirmed: bool = True, now: float | None = None) -> bool:
    """Accept ``code`` for a person once: True if it is the TOTP code of a step later than the
    last one taken (and the step is recorded in the same UPDATE). ``confirmed`` False checks
    the secret of an enrolment not yet on. Two queries at most."""
    row = TwoFactor.objects.filter(user_id=user_id, confirmed_at__isnull=not confirmed).first()
    if row is None:
        return False
    step = _matching_step(row.secret, _normalise(code), now=time.time() if now is None else now)
    if step is None:
        return False
    return bool(TwoFactor.objects.filter(user_id=user_id, secret=row.secret, last_step__lt=step).update(last_step=step))


def _recovery_hash(code: str) -> str:
    return hashlib.sha256(_normalise(code).encode()).hexdigest()


def recovery_take(*, user_id: int, code: str) -> bool:
    """Spend one recovery code: True once for each of a person's codes, never again. One UPDATE."""
    return bool(
        RecoveryCode.objects.filter(user_id=user_id, code_hash=_recovery_hash(code), used_at__isnull=True).update(
            used_at=timezone.now()
        )
    )


def confirm(*, user_id: int) -> list[str]:
    """Turn two-factor on and give RECOVERY_CODES new recovery codes (any old ones go); only
    their hashes are kept, so these are the one time they are seen. One transaction."""
    codes = [
        "-".join("".join(secrets.choice(_RECOVERY_ALPHABET) for _ in range(5)) for _ in range(2))
        for _ in range(RECOVERY_CODES)
    ]
    with transaction.atomic():
        TwoFactor.objects.filter(user_id=user_id).update(confirmed_at=timezone.now())
        RecoveryCode.objects.filter(user_id=user_id).delete()
        RecoveryCode.objects.bulk_create(RecoveryCode(user_id=user_id, code_hash=_recovery_hash(c)) for c in codes)
    return codes


def remove(*, user_id: int) -> None:
    """Two-factor off: the secret and every recovery code go. One transaction."""
    with transaction.atomic():
        TwoFactor.objects.filter(user_id=user_id).delete()
        RecoveryCode.objects.filter(user_id=user_id).delete()


def recovery_left(user_id: int) -> int:
    """How many recovery codes a person has not used. One query."""
    return RecoveryCode.objects.filter(user_id=user_id, used_at__isnull=True).count()
