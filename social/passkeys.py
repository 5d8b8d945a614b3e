"""Passkeys (WebAuthn, through py_webauthn): the options a browser needs to make or use one, and
the server-side check of what it sends back. Storage only: PostgreSQL (the challenge of a
ceremony lives in the browser's session, kept by the caller).

A sign-in asks for a discoverable credential with user verification, so the passkey alone (no
username, no password) signs a person in: the authenticator checked who holds it.
"""

import json

from django.utils import timezone
from webauthn import (
    base64url_to_bytes,
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import bytes_to_base64url
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from social.models import Passkey
from social.rules import OTP_ISSUER, USER_AGENT_MAX
from ugcsite.platform.errors import Invalid


class PasskeyRefused(Invalid):
    def __init__(self, what: str):
        super().__init__(f"The passkey was not accepted: {what}. Try again, or use your password.")


def registration_options(*, user, rp_id: str) -> tuple[dict, str]:
    """The options of navigator.credentials.create() for ``user`` (their passkeys excluded, so
    one authenticator is not registered twice), and the challenge to keep. One query."""
    options = generate_registration_options(
        rp_id=rp_id,
        rp_name=OTP_ISSUER,
        user_name=user.username,
        user_id=str(user.pk).encode(),
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement.REQUIRED
        ),
        exclude_credentials=[
            PublicKeyCredentialDescriptor(id=bytes(row))
            for row in user.passkeys.values_list("credential_id", flat=True)
        ],
    )
    return json.loads(options_to_json(options)), bytes_to_base64url(options.challenge)


def register(*, user, credential: dict, challenge: str, rp_id: str, origin: str, name: str) -> Passkey:
    """Check what navigator.credentials.create() gave against the challenge kept, and keep the
    passkey; ``PasskeyRefused`` saying why otherwise. One INSERT."""
    try:
        verified = verify_registration_response(
            credential=credential,
            expected_challenge=base64url_to_bytes(challenge),
            expected_rp_id=rp_id,
            expected_origin=origin,
            require_user_verification=True,
        )
    except (WebAuthnException, ValueError, KeyError, TypeError) as error:
        raise PasskeyRefused(str(error)[:200] or "it could not be read") from None
    if Passkey.objects.filter(credential_id=verified.credential_id).exists():
        raise PasskeyRefused("it is registered already")
    return Passkey.objects.create(
        user=user,
        credential_id=verified.credential_id,
        public_key=verified.credential_public_key,
        sign_count=verified.sign_count,
        name=name[:USER_AGENT_MAX],
    )


def sign_in_options(*, rp_id: str) -> tuple[dict, str]:
    """The options of navigator.credentials.get() for a sign-in by passkey alone (any
    discoverable credential of this site), and the challenge to keep."""
    options = generate_authentication_options(rp_id=rp_id, user_verification=UserVerificationRequirement.REQUIRED)
    return json.loads(options_to_json(options)), bytes_to_base64url(options.challenge)


def sign_in(*, credential: dict, challenge: str, rp_id: str, origin: str):
    """The active person whose passkey signed the challenge (its counter and last use updated);
    ``PasskeyRefused`` otherwise. Two queries."""
    try:
        raw_id = base64url_to_bytes(str(credential.get("rawId") or credential.get("id") or ""))
    except (ValueError, TypeError):
        raise PasskeyRefused("it named no credential") from None
    passkey = Passkey.objects.select_related("user").filter(credential_id=raw_id, user__is_active=True).first()
    if passkey is None:
        raise PasskeyRefused("this site does not know it")
    try:
        verified = verify_authentication_response(
            credential=credential,
            expected_challenge=base64url_to_bytes(challenge),
            expected_rp_id=rp_id,
            expected_origin=origin,
            credential_public_key=bytes(passkey.public_key),
            credential_current_sign_count=passkey.sign_count,
            require_user_verification=True,
        )
    except (WebAuthnException, ValueError, KeyError, TypeError) as error:
        raise PasskeyRefused(str(error)[:200] or "it could not be read") from None
    Passkey.objects.filter(pk=passkey.pk).update(sign_count=verified.new_sign_count, last_used_at=timezone.now())
    return passkey.user


def remove(*, user, passkey_id: int) -> bool:
    """Forget one of a person's passkeys. One DELETE."""
    return bool(Passkey.objects.filter(user=user, pk=passkey_id).delete()[0])
