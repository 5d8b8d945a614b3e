"""Signing up: social's account, plus its feed made ready."""

from django.db import transaction

from feeds.rules import Timeline
from feeds.services.activity import user_seen
from feeds.timelines import archive
from social import services as people


def account_create(*, username: str, password: str, is_staff: bool = False):
    """A new account (social.services.user_create; ``UsernameTaken`` if the name is used in any
    letter case), whose timelines say they have archived nothing (so its reads never ask
    PostgreSQL) and who is active (fan-out reaches them). O(1) in Redis.
    All or nothing: the Redis writes happen before the account commits, so a Redis that fails
    leaves no account behind (the name stays free; the caller answers 503 and the person tries
    again). A commit that fails after them leaves only the marks of an id never used again."""
    with transaction.atomic():
        user = people.user_create(username=username, password=password, is_staff=is_staff)
        archive.marks_put(user.pk, dict.fromkeys(Timeline, 0))
        user_seen(user_id=user.pk)
    return user
