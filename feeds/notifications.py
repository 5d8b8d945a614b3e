"""Notifications in PostgreSQL (feeds.models.Notification): one row per recipient, kind, board
and day while unread, gathering its actors ("alice and 41 others followed you"). Storage only:
feeds.services.notifications decides who is told what."""

from datetime import datetime

from django.db import connection, transaction
from django.db.models import F, Func, IntegerField

from feeds.live import online
from feeds.models import Notification
from feeds.rules import NOTIFICATION_ACTORS_KEPT, NOTIFICATION_BUCKET_SECONDS
from social import hiding

_TABLE = Notification._meta.db_table
# One row per recipient: a new actor joins the unread row of its (kind, board, day) at the
# front of the names kept, and counts once (a repeat among the names kept does not count again).
_UPSERT = f"""
    INSERT INTO {_TABLE} (recipient_id, kind, board_id, bucket, actors, actor_count, created_at, read)
    SELECT recipient, %(kind)s, %(board_id)s, %(bucket)s, ARRAY[%(actor)s]::bigint[], 1, %(at)s, false
    FROM unnest(%(recipients)s::bigint[]) AS recipient
    ON CONFLICT (recipient_id, kind, board_id, bucket) WHERE NOT read DO UPDATE SET
        actor_count = {_TABLE}.actor_count + (CASE WHEN %(actor)s = ANY({_TABLE}.actors) THEN 0 ELSE 1 END),
        actors = (ARRAY[%(actor)s]::bigint[] || array_remove({_TABLE}.actors, %(actor)s))[1:{NOTIFICATION_ACTORS_KEPT}],
        created_at = GREATEST({_TABLE}.created_at, EXCLUDED.created_at)
"""


def notification_bucket(at: datetime) -> int:
    return int(at.timestamp()) // NOTIFICATION_BUCKET_SECONDS


def notifications_add(
    *, kind: str, recipient_ids: list[int], actor_id: int, board_id: int | None, at: datetime
) -> None:
    """Tell each of ``recipient_ids`` that ``actor_id`` did ``kind`` (about ``board_id``) at
    ``at``: one upsert, one row per recipient at most. O(k log n) for k recipients; callers
    keep k bounded (one follow: k = 1; a board's editors: at most MAX_EDITORS + 1). On commit, one
    ZMSCORE on the plain Redis and a live count to each recipient online."""
    recipients = sorted({r for r in recipient_ids if r != actor_id})  # sorted: concurrent batches lock rows alike
    if recipients:  # nobody is told what someone they block, or who blocks them, did (one ZMSCORE)
        blocked = hiding.hidden_among(actor_id, recipients, bits=hiding.BLOCKED_EITHER_WAY)
        recipients = [r for r in recipients if r not in blocked]
    if not recipients:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            _UPSERT,
            {
                "kind": kind,
                "board_id": board_id or 0,
                "bucket": notification_bucket(at),
                "actor": actor_id,
                "at": at,
                "recipients": recipients,
            },
        )
    # After the commit, the online recipients get their new unread count (feeds.live.online).
    transaction.on_commit(lambda: online.unread_changed(recipients, notifications_unread))


def notices_add(*, kind: str, recipient_ids: list[int], board_id: int | None, at: datetime) -> None:
    """Tell each of ``recipient_ids`` something no person did (staff's decision on a report):
    a row with no actor, one per recipient, kind, board and day while unread (a second the same
    day is the same row, moved to the top). One statement, O(k log n)."""
    recipients = sorted(set(recipient_ids))
    if not recipients:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {_TABLE} (recipient_id, kind, board_id, bucket, actors, actor_count, created_at, read) "
            "SELECT recipient, %(kind)s, %(board_id)s, %(bucket)s, '{}'::bigint[], 0, %(at)s, false "
            "FROM unnest(%(recipients)s::bigint[]) AS recipient "
            "ON CONFLICT (recipient_id, kind, board_id, bucket) WHERE NOT read DO UPDATE SET created_at = EXCLUDED.created_at",
            {
                "kind": kind,
                "board_id": board_id or 0,
                "bucket": notification_bucket(at),
                "at": at,
                "recipients": recipients,
            },
        )
    transaction.on_commit(lambda: online.unread_changed(recipients, notifications_unread))


def _shown(rows, hidden: list[int]):
    """``rows`` without those whose every actor the recipient does not see (blocked or muted:
    every actor kept is hidden, and no other acted). Left in place: an unmute shows them again."""
    if not hidden:
        return rows
    return rows.exclude(
        actors__contained_by=hidden,
        actor_count__gt=0,  # a notice with no actor always shows
        actor_count__lte=Func(F("actors"), function="cardinality", output_field=IntegerField()),
    )


def notifications_page(recipient_id: int, *, offset: int, limit: int, hidden: list[int]) -> list[Notification]:
    """A page of someone's notifications, latest first, without those only people in ``hidden``
    caused (social.hiding.hidden_all). O(log n + offset + limit) on its index."""
    rows = _shown(Notification.objects.filter(recipient_id=recipient_id), hidden)
    return list(rows.order_by("-created_at", "-id")[offset : offset + limit])


def notifications_unread(recipient_id: int, *, hidden: list[int] | None = None) -> int:
    """How many of someone's notifications are unread, leaving out those only people they do
    not see caused (``hidden``, when the caller read social.hiding.hidden_all already; else one
    Redis read): O(unread) on a partial index (rows, not actions: a thousand follows in a day
    are one)."""
    rows = Notification.objects.filter(recipient_id=recipient_id, read=False)
    return _shown(rows, hiding.hidden_all(recipient_id) if hidden is None else hidden).count()


def notifications_mark_read(recipient_id: int, *, ids: list[int] | None = None) -> int:
    """Mark someone's notifications read: those of ``ids`` that are theirs (others' are ignored),
    or all of them. One UPDATE; how many changed. On commit, the new count to their sockets."""
    rows = Notification.objects.filter(recipient_id=recipient_id, read=False)
    if ids is not None:
        rows = rows.filter(pk__in=ids)
    changed = rows.update(read=True)
    if changed:  # the person's other pages show the new count (feeds.live.online)
        transaction.on_commit(lambda: online.unread_changed([recipient_id], notifications_unread))
    return changed
