"""Writes about people: accounts, the follow graph's edges, the sign-in throttle.

What a follow does to feeds (the back-fill, the clean-up) is added on top by
``feeds.services.follows``, which calls the edge functions here (Zulip's actions: one library
call, then the side effects on commit).
"""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.functions import Greatest  # counts never go below 0, even over bulk-loaded data

from social import graph
from social.models import Follow
from ugcsite.errors import Conflict, Invalid
from ugcsite.ratelimits import attempt

User = get_user_model()


class UsernameTaken(Conflict):
    def __init__(self, username: str):
        super().__init__(f"The username {username!r} is taken; choose another.")


class FollowSelf(Invalid):
    def __init__(self):
        super().__init__("You cannot follow yourself.")


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


def auth_attempt(*, address: str) -> None:
    """Count a sign-up or log-in attempt from a client address: at most
    RATE_LIMIT_AUTH_PER_MINUTE a minute, else ``RateLimited``. API and pages spend the same
    budget. O(1)."""
    attempt("auth", address, per_minute=settings.RATE_LIMIT_AUTH_PER_MINUTE, what="attempts from this address")


def login_attempt(*, account: str) -> None:
    """Count a log-in to one account (any letter case), from wherever it comes: at most
    RATE_LIMIT_AUTH_PER_MINUTE a minute, so guessing one person's password from many addresses
    is slowed too. O(1)."""
    attempt("login", account.lower(), per_minute=settings.RATE_LIMIT_AUTH_PER_MINUTE, what="log-ins to this account")


def follow_create(*, follower: User, followee: User) -> tuple[Follow, bool]:
    """Add a follow edge (idempotent): PostgreSQL and the stored counts now, F and following
    on commit (even when the edge existed: a repeated follow repairs a Redis that lost it).
    Returns the edge and whether it is new."""
    if follower.pk == followee.pk:
        raise FollowSelf()
    with transaction.atomic():
        edge, created = Follow.objects.get_or_create(follower=follower, followee=followee)
        if created:
            User.objects.filter(pk=followee.pk).update(followers_count=F("followers_count") + 1)
            User.objects.filter(pk=follower.pk).update(following_count=F("following_count") + 1)
    transaction.on_commit(lambda: graph.follow_add(
        follower_id=follower.pk, followee_id=followee.pk, at=edge.created_at.timestamp()))
    return edge, created


def follow_delete(*, follower: User, followee: User) -> bool:
    """Remove a follow edge (idempotent): PostgreSQL now, F and following on commit.
    True if there was an edge."""
    with transaction.atomic():
        deleted, _ = Follow.objects.filter(follower=follower, followee=followee).delete()
        if deleted:
            User.objects.filter(pk=followee.pk).update(followers_count=Greatest(F("followers_count") - 1, 0))
            User.objects.filter(pk=follower.pk).update(following_count=Greatest(F("following_count") - 1, 0))
    transaction.on_commit(lambda: graph.follow_remove(follower_id=follower.pk, followee_id=followee.pk))
    return bool(deleted)
