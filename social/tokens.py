"""Bearer tokens of the API: made, looked up (cached in Redis) and revoked. Storage only."""

from django.conf import settings
from django.utils import timezone

from social import keys
from social.models import ApiToken
from ugcsite.redis import get_redis

TOKEN_CACHE_SECONDS = 300


def token_user_id(key: str) -> int | None:
    """The active user a token belongs to, or None: from Redis when cached (O(1)), else one
    indexed query, cached for TOKEN_CACHE_SECONDS (never past the token's expiry). A
    suspension deletes the user's tokens and their cache entries. (``API_TOKEN_USER``.)"""
    key_hash = ApiToken.hash_key(key)
    client = get_redis()
    cached = client.get(keys.token_user(key_hash))
    if cached is not None:
        return int(cached)
    row = (
        ApiToken.objects.filter(key_hash=key_hash, expires_at__gt=timezone.now(), user__is_active=True)
        .values_list("user_id", "expires_at").first()
    )
    if row is None:
        return None
    user_id, expires = row
    ttl = min(TOKEN_CACHE_SECONDS, int((expires - timezone.now()).total_seconds()))
    if ttl > 0:
        client.set(keys.token_user(key_hash), user_id, ex=ttl)
    return user_id


def tokens_revoke(*, user) -> int:
    """Delete every token of a user, and their cache entries, at once. Returns how many."""
    hashes = list(ApiToken.objects.filter(user=user).values_list("key_hash", flat=True))
    if hashes:
        get_redis().delete(*(keys.token_user(h) for h in hashes))
    ApiToken.objects.filter(user=user).delete()
    return len(hashes)


def token_create(*, user) -> str:
    """A new bearer token for ``user``; only its hash is stored. Expired tokens of the user go."""
    now = timezone.now()
    ApiToken.objects.filter(user=user, expires_at__lte=now).delete()
    key = ApiToken.new_key()
    ApiToken.objects.create(user=user, key_hash=ApiToken.hash_key(key), expires_at=now + settings.API_TOKEN_LIFETIME)
    return key
