"""Following: social's follow edge, plus what it does to the follower's feed (Zulip's
``zerver/actions/followed_users.py``: one library call, then the side effects on commit)."""

from django.db import transaction

from feeds import tasks
from feeds.services.activity import user_seen
from social import services as people


def follow_create(*, follower, followee) -> bool:
    """Follow someone (idempotent). The edge goes into PostgreSQL and, on commit, into F and
    following at once; then a task back-fills the followee's recent boards. True if it is new."""
    user_seen(user_id=follower.pk)  # a follower is an active reader: fan-out reaches them
    _, created = people.follow_create(follower=follower, followee=followee)
    if created:
        transaction.on_commit(lambda: tasks.follow_backfill.delay(follower.pk, followee.pk))
    return created


def follow_delete(*, follower, followee) -> bool:
    """Unfollow (idempotent). The edge leaves PostgreSQL and F/following at once; then a task
    takes the followee's boards out of the follower's P. True if there was an edge."""
    deleted = people.follow_delete(follower=follower, followee=followee)
    if deleted:
        transaction.on_commit(lambda: tasks.unfollow_cleanup.delay(follower.pk, followee.pk))
    return deleted
