"""Signing up (social's account, plus its feed made ready) and deleting an account (social's
online step, then feeds.erasure's in Celery)."""

from django.db import transaction

from feeds import tasks
from feeds.federation import services as federation
from feeds.rules import Timeline
from feeds.services.activity import user_seen
from feeds.timelines import archive
from social import services as people


def account_create(*, username: str, password: str, is_staff: bool = False, email: str = ""):
    """A new account (social.services.user_create; ``UsernameTaken`` if the name is used in any
    letter case), whose timelines say they have archived nothing (so its reads never ask
    PostgreSQL) and who is active (fan-out reaches them). O(1) in Redis.
    All or nothing: the Redis writes happen before the account commits, so a Redis that fails
    leaves no account behind (the name stays free; the caller answers 503 and the person tries
    again). A commit that fails after them leaves only the marks of an id never used again."""
    with transaction.atomic():
        user = people.user_create(username=username, password=password, is_staff=is_staff, email=email)
        archive.marks_put(user.pk, dict.fromkeys(Timeline, 0))
        user_seen(user_id=user.pk)
    return user


def account_delete(*, user, password: str) -> None:
    """Delete ``user``'s account, confirmed by their password (social.services.WrongPassword,
    a 403, otherwise; nothing changes). Now: no sign-in, every token and session ended, the
    username kept from others for a while (social.services.account_close). Then, in Celery
    (feeds.tasks.account_erase): its boards 404 and out of G, M and the indexes, out of every
    follower's feed through the board retraction's walk, and finally every row and key of it,
    and what others keep that names it (feeds.erasure). O(tokens + sessions) online."""
    people.account_close(user=user, password=password)
    federation.person_gone(user)
    transaction.on_commit(lambda: tasks.account_erase.delay(user.pk))
