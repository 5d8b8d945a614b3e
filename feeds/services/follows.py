"""Following: social's follow edge, plus what it does to the follower's feed (Zulip's
``zerver/actions/followed_users.py``: one library call, then the side effects on commit).

Hybrid fan-out (feeds.timelines.hybrid): every follow and unfollow recounts the followee's followers,
which may flip them to big (a task then marks every follower) or back. A follow of a big
author needs no back-fill and an unfollow of one no clean-up of their pulled boards: the
reader's pages merge the author's M while the follow holds.
"""

from django.db import transaction

from feeds import tasks
from feeds.services.activity import user_seen
from feeds.services.notifications import notify_follow
from feeds.timelines import hybrid
from social import services as people


def follow_create(*, follower, followee) -> bool:
    """Follow someone (idempotent). The edge goes into PostgreSQL and, on commit, into F and
    following at once; then the followee's mode is recounted, and a big followee goes into the
    follower's big-following set at once, or a task back-fills a pushed followee's recent
    boards. The followee is notified of a new follow. True if it is new."""
    user_seen(user_id=follower.pk)  # a follower is an active reader: fan-out reaches them
    _, created = people.follow_create(follower=follower, followee=followee)
    if created:
        notify_follow(follower_id=follower.pk, followee_id=followee.pk)  # one row, gathered with the day's others
    # after social's own on-commit work, which writes F and following
    transaction.on_commit(lambda: _followed(follower.pk, followee.pk, created=created))
    return created


def _followed(follower_id: int, followee_id: int, *, created: bool) -> None:
    if _recount(followee_id):
        hybrid.followers_mark(followee_id, [follower_id])  # also repairs a lost entry on a repeated follow
    elif created:
        tasks.follow_backfill.delay(follower_id, followee_id)


def follow_delete(*, follower, followee) -> bool:
    """Unfollow (idempotent). The edge leaves PostgreSQL and F/following at once, the followee
    leaves the follower's big-following set after it (so a marking walk in flight cannot bring
    it back) and is recounted; then a task takes the followee's boards out of the follower's P.
    True if there was an edge."""
    deleted = people.follow_delete(follower=follower, followee=followee)
    transaction.on_commit(lambda: _unfollowed(follower.pk, followee.pk, deleted=deleted))
    return deleted


def _unfollowed(follower_id: int, followee_id: int, *, deleted: bool) -> None:
    hybrid.reader_unmark(follower_id, followee_id)
    _recount(followee_id)
    if deleted:
        tasks.unfollow_cleanup.delay(follower_id, followee_id)


def _recount(author_id: int) -> bool:
    """Recount an author's followers after a change of F; when they just became big, a task
    marks every follower. Whether they are big now. O(1)."""
    mode = hybrid.author_recount(author_id)
    if mode.changed and mode.big:
        tasks.big_author_walk.delay(author_id, since=mode.since)
    return mode.big
