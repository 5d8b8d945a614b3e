"""Bearer tokens of the API: made, looked up (cached in Redis, social.token_cache) and revoked.

A token stops working on the next request however it goes (docs/api.md, "Operations"): deleted
(here, in the admin, by any ORM delete: the post_delete signal in social.models), expired (its
cache entry never outlives it, and carries its expiry), or its user suspended or given a new
password (``User.save`` deletes the user's tokens). Storage only.
"""

import time

from django.conf import settings
from django.utils import timezone

from social import token_cache
from social.models import ApiToken
from ugcsite.platform import replicas

# A token is ``<owner's user id>.<secret>`` (secrets.token_urlsafe: no dot): its owner's id lets
# its cache entry share the owner's Redis slot (social.keys.token_user), so a feed read checks
# the token, counts the reader's limit and reads the page in one script call. The id is no
# secret (the API shows it) and proves nothing by itself: the entry is found by the hash of the
# whole token and filled only from its row. Tokens made before carry no id and still work.
OWNER_DIGITS = 16  # ids are below 2^53 (ugcsite.platform.http.ID_DIGITS)


def token_owner(key: str) -> int | None:
    """The user id a token names, or None for a token of the older form (or junk). O(1)."""
    owner, dot, secret = key.partition(".")
    if dot and secret and owner.isascii() and owner.isdigit() and len(owner) <= OWNER_DIGITS:
        return int(owner)
    return None


def token_user_id(key: str, *, now: float | None = None) -> int | None:
    """The active user a token belongs to, or None: from Redis when cached (O(1)), else one
    indexed query, cached for token_cache.CACHE_SECONDS at most and never past the token's expiry
    (in its owner's slot when it names one). A token that names another person than its row's
    is refused. (``API_TOKEN_USER``.)"""
    now = time.time() if now is None else now
    key_hash = ApiToken.hash_key(key)
    owner = token_owner(key)
    hit, user_id = token_cache.lookup(key_hash, now=now, owner=owner)
    if hit:
        return user_id
    row = (
        ApiToken.objects.filter(key_hash=key_hash, expires_at__gt=timezone.now(), user__is_active=True)
        .values_list("user_id", "expires_at")
        .first()
    )
    if row is None or (owner is not None and owner != row[0]):
        return None
    user_id, expires = row
    # Its last use, written only here (a cache fill, at most every token_cache.CACHE_SECONDS).
    with replicas.bookkeeping():  # no write a reader reads back: its person keeps the replica
        ApiToken.objects.filter(key_hash=key_hash).update(last_used_at=timezone.now())
    token_cache.remember(key_hash, user_id=user_id, expires=expires.timestamp(), now=now, owner=owner)
    return user_id


def token_delete(*, key: str) -> bool:
    """Revoke one token (DELETE /api/v1/tokens/current): its row goes, and its cache entry with
    it (the post_delete signal; revoked here too, in case the row was already gone). O(1)."""
    key_hash = ApiToken.hash_key(key)
    deleted, _ = ApiToken.objects.filter(key_hash=key_hash).delete()
    token_cache.revoke([key_hash], owner=token_owner(key))
    return bool(deleted)


def tokens_revoke(*, user) -> int:
    """Delete every token of a user; each stops at once (the post_delete signal revokes its
    cache entry). Returns how many. O(tokens of the user)."""
    deleted, _ = ApiToken.objects.filter(user=user).delete()
    return deleted


def tokens_end(*, user) -> None:
    """End every token of a user whose account closes: each is refused at once (its cache entry
    revoked; the closed account fails every lookup after) while its row stays for the purge,
    which deletes the rows and then their cache entries, the account's last keys. O(tokens of
    the user)."""
    token_cache.revoke(ApiToken.objects.filter(user=user).values_list("key_hash", flat=True), owner=user.pk)


def token_create(*, user, user_agent: str = "") -> str:
    """A new bearer token for ``user`` (``<user id>.<secret>``), noting the client that asked
    (``user_agent``, cut to its column); only its hash is stored. Expired tokens of the user go."""
    now = timezone.now()
    ApiToken.objects.filter(user=user, expires_at__lte=now).delete()
    key = f"{user.pk}.{ApiToken.new_key()}"
    ApiToken.objects.create(
        user=user,
        key_hash=ApiToken.hash_key(key),
        expires_at=now + settings.API_TOKEN_LIFETIME,
        last_used_at=now,
        user_agent=user_agent,
    )
    return key
