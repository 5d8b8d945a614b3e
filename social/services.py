"""Writes about people: accounts and tokens (the follow graph joins in the feed engine)."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.functions import Greatest  # counts never go below 0, even over bulk-loaded data
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
    from feeds.archive import marks_init
    from feeds.services import user_seen

    marks_init(user.pk)
    user_seen(user_id=user.pk)  # a new user is an active one (fan-out reaches them)
    return user


TOKEN_CACHE_SECONDS = 300


def token_user_id(*, key_hash: str) -> int | None:
    """The active user a token belongs to, or None: from Redis when cached (O(1)), else one
    indexed query, cached for TOKEN_CACHE_SECONDS (never past the token's expiry). A
    suspension deletes the user's tokens and their cache entries."""
    from social import keys
    from ugcsite.redis import get_redis

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


def tokens_revoke(*, user: User) -> int:
    """Delete every token of a user, and their cache entries, at once. Returns how many."""
    from social import keys
    from ugcsite.redis import get_redis

    hashes = list(ApiToken.objects.filter(user=user).values_list("key_hash", flat=True))
    if hashes:
        get_redis().delete(*(keys.token_user(h) for h in hashes))
    ApiToken.objects.filter(user=user).delete()
    return len(hashes)


def token_create(*, user: User) -> str:
    """A new bearer token for ``user``; only its hash is stored. Expired tokens of the user go."""
    now = timezone.now()
    ApiToken.objects.filter(user=user, expires_at__lte=now).delete()
    key = ApiToken.new_key()
    ApiToken.objects.create(user=user, key_hash=ApiToken.hash_key(key), expires_at=now + settings.API_TOKEN_LIFETIME)
    return key


class FollowSelf(Exception):
    pass


def follow_create(*, follower: User, followee: User) -> bool:
    """Follow someone (idempotent). The edge goes into PostgreSQL and, on commit, into F and
    following at once; a task back-fills the followee's recent boards. True if it is new."""
    from feeds import tasks
    from social import graph
    from social.models import Follow

    if follower.pk == followee.pk:
        raise FollowSelf()
    from feeds.services import user_seen

    user_seen(user_id=follower.pk)
    with transaction.atomic():
        edge, created = Follow.objects.get_or_create(follower=follower, followee=followee)
        if created:
            User.objects.filter(pk=followee.pk).update(followers_count=F("followers_count") + 1)
            User.objects.filter(pk=follower.pk).update(following_count=F("following_count") + 1)

    def publish():
        # Written even when the edge existed: a repeated PUT repairs a Redis that lost it.
        graph.follow_add(follower_id=follower.pk, followee_id=followee.pk, at=edge.created_at.timestamp())
        if created:
            tasks.follow_backfill.delay(follower.pk, followee.pk)

    transaction.on_commit(publish)
    return created


def follow_delete(*, follower: User, followee: User) -> bool:
    """Unfollow (idempotent). The edge leaves PostgreSQL and F/following at once; a task takes
    the followee's boards out of the follower's P. True if there was an edge."""
    from feeds import tasks
    from social import graph
    from social.models import Follow

    with transaction.atomic():
        deleted, _ = Follow.objects.filter(follower=follower, followee=followee).delete()
        if deleted:
            User.objects.filter(pk=followee.pk).update(followers_count=Greatest(F("followers_count") - 1, 0))
            User.objects.filter(pk=follower.pk).update(following_count=Greatest(F("following_count") - 1, 0))

    def publish():
        graph.follow_remove(follower_id=follower.pk, followee_id=followee.pk)
        if deleted:
            tasks.unfollow_cleanup.delay(follower.pk, followee.pk)

    transaction.on_commit(publish)
    return bool(deleted)
