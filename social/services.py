"""Writes about people: accounts and tokens (the follow graph joins in the feed engine)."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from social.models import ApiToken

User = get_user_model()


class UsernameTaken(Exception):
    pass


def user_create(*, username: str, password: str, is_staff: bool = False) -> User:
    """A new account; ``UsernameTaken`` if the name is used in any letter case."""
    if User.objects.filter(username__iexact=username).exists():
        raise UsernameTaken(username)
    try:
        with transaction.atomic():
            user = User(username=username, is_staff=is_staff, is_superuser=is_staff)
            user.set_password(password)
            user.save()
    except IntegrityError:  # a concurrent sign-up took it between the check and the insert
        raise UsernameTaken(username) from None
    return user


def token_create(*, user: User) -> str:
    """A new bearer token for ``user``; only its hash is stored. Expired tokens of the user go."""
    now = timezone.now()
    ApiToken.objects.filter(user=user, expires_at__lte=now).delete()
    key = ApiToken.new_key()
    ApiToken.objects.create(user=user, key_hash=ApiToken.hash_key(key), expires_at=now + settings.API_TOKEN_LIFETIME)
    return key
