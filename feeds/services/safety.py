"""Block and mute (docs/api.md, "Safety"): social's relation, plus what it does to follows,
invitations and feeds.

A block ends the follows between the two people both ways, each through the unfollow path
(feeds.services.follows: the P clean-up runs in Celery), and the invitations between them to
draw on each other's boards; while it holds, neither can follow or invite the other
(social.services.follow_create, feeds.services.editors), the blocked person gets 404 for the
blocker's profile and boards, and neither sees the other's boards in any list (social.hiding,
read at each list: feeds.selectors). Unblocking brings back no follow.
A mute only hides: the muted person's boards and notifications leave the muter's lists, at read
time, so unmuting brings back everything, what they made meanwhile included.
Online cost: O(1) writes and two unfollows; the walks are Celery's.
"""

from django.db import transaction
from django.db.models import Q

from feeds.models import BoardEditor
from feeds.services import editors, follows
from social import services as people


def block_create(*, blocker, blocked) -> bool:
    """``blocker`` blocks ``blocked`` (idempotent; 400 for oneself). In one transaction: the
    block (both rows locked), both follows ended through the unfollow path, and every
    invitation between them withdrawn (at most the boards of the two of them that carry the
    other as an editor). True if it is new."""
    with transaction.atomic():
        created = people.block_create(blocker=blocker, blocked=blocked)
        follows.follow_delete(follower=blocker, followee=blocked)
        follows.follow_delete(follower=blocked, followee=blocker)
        rows = BoardEditor.objects.select_related("board").filter(
            Q(board__author=blocker, user=blocked) | Q(board__author=blocked, user=blocker)
        )
        for row in rows:
            editors.editor_remove(board=row.board, user=blocker if row.user_id == blocker.pk else blocked)
    return created


def block_delete(*, blocker, blocked) -> bool:
    """Lift a block (idempotent); no follow or invitation comes back. True if there was one."""
    return people.block_delete(blocker=blocker, blocked=blocked)


def mute_create(*, muter, muted) -> bool:
    """``muter`` mutes ``muted`` (idempotent; 400 for oneself). True if it is new."""
    return people.mute_create(muter=muter, muted=muted)


def mute_delete(*, muter, muted) -> bool:
    """Unmute (idempotent). True if there was a mute."""
    return people.mute_delete(muter=muter, muted=muted)


# What a person does to another, by the word the API's path and the page's form use: the
# service and the names of its two people. One table for both.
ACTIONS = {
    "block": (block_create, "blocker", "blocked"),
    "unblock": (block_delete, "blocker", "blocked"),
    "mute": (mute_create, "muter", "muted"),
    "unmute": (mute_delete, "muter", "muted"),
}


def act(action: str, *, actor, other) -> bool:
    """Do ``action`` (a key of ACTIONS) of ``actor`` toward ``other``; what its service answers."""
    service, me, them = ACTIONS[action]
    return service(**{me: actor, them: other})
