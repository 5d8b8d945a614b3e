"""Signing up: social's account, plus its feed made ready."""

from feeds import archive
from feeds.rules import Timeline
from feeds.services.activity import user_seen
from social import services as people


def account_create(*, username: str, password: str, is_staff: bool = False):
    """A new account (social.services.user_create; ``UsernameTaken`` if the name is used in any
    letter case), whose timelines say they have archived nothing (so its reads never ask
    PostgreSQL) and who is active (fan-out reaches them). O(1) in Redis."""
    user = people.user_create(username=username, password=password, is_staff=is_staff)
    archive.marks_put(user.pk, dict.fromkeys(Timeline, 0))
    user_seen(user_id=user.pk)
    return user
