"""Deleting an account, the feeds' side (docs/api.md, "Safety"; social.services has the person's
side). Storage only: the Celery tasks of feeds.tasks run it in order.

1. ``account_withdraw``: every board of the closed account is marked deleted (404 at once) and
   leaves G, M, the discovery indexes and the live state, as a deleted board does; its likes
   stop counting; its comments go (a "deleted" placeholder where others replied), the boards'
   counts with them.
2. The tasks then take the boards out of every follower's P, a batch of followers a run, with
   the retraction a board deletion uses (feeds.timelines.fanout.author_gone_batch), each
   follower's big-following entry going with them.
3. ``account_purge``: what others keep that names the account goes: notifications about its
   boards, its name in others' notifications (the count lowered), others' reads of its boards,
   its archived timeline chunks, others' likes of its boards, its pictures (the stored copies and
   the rows: others' boards that showed one draw a blank box); then its boards' rows, and
   social's purge (follow sets,
   hidden sets, its keys, its row and everything that cascades from it).
Kept: drawing others made on its boards goes with the boards; what it drew on others' boards
as an editor stays theirs (the strokes carry no name once the live log expires). Archived
chunks of other people's timelines may still hold its board ids, as they do for any deleted
board: every read drops ids with no published board, and a rebuild never brings one back.
"""

from django.db import connection, transaction

from feeds import comments, images, keys, likes
from feeds.discovery import counters, indexes
from feeds.export import export_path
from feeds.models import Board, Export, Notification, TimelineChunk
from feeds.rules import Timeline
from feeds.timelines import boardcache
from social import reading, services as people
from social.models import Read
from ugcsite.platform.redis import get_redis
from ugcsite.platform.sql import ROWS_PER_STATEMENT


def account_withdraw(user_id: int) -> list[int]:
    """Mark every board of a closed account deleted and take each out of G, M, the indexes
    and the live state. Idempotent. Returns the boards' ids (to retract from followers' P).
    O(boards of the account)."""
    with transaction.atomic():
        Board.objects.filter(author_id=user_id).exclude(state=Board.State.DELETED).update(state=Board.State.DELETED)
    likes.likes_uncount(user_id)  # its likes stop counting at once (the rows go with the purge)
    taken = comments.comments_erase(user_id)
    board_ids = list(Board.objects.filter(author_id=user_id).values_list("id", flat=True))
    pipe = get_redis().pipeline(transaction=False)
    for key in keys.user_keys(user_id):
        pipe.delete(key)  # M, P and the rest of its own keys: one key a DEL (a cluster takes no other)
    for board_id in board_ids:
        boardcache.board_cache_delete(board_id, pipe=pipe)
        for key in keys.live_keys(user_id, board_id):
            pipe.delete(key)
    if board_ids:
        pipe.zrem(keys.live_dirty(), *[keys.live_dirty_member(user_id, board_id) for board_id in board_ids])
    for board_id, n in taken.items():
        comments.count_move(board_id, -n, pipe=pipe)
    pipe.zrem(keys.last_seen(user_id), user_id)
    pipe.zrem(keys.archive_waiting(), *[keys.waiting_member(kind, user_id) for kind in Timeline])
    pipe.execute()
    for board_id in board_ids:
        indexes.board_unindex(board_id)
    return board_ids


def account_purge(user_id: int) -> bool:
    """Delete what others keep that names a closed account, then its boards and its person
    (social.services.account_purge). Idempotent; False when there is no closed account.
    O(boards + notifications naming it); the reads of its boards are found by a scan of the
    Read table, in batches of ROWS_PER_STATEMENT board ids (no index leads from a board to
    its readers: social reading asks the other way)."""
    board_ids = list(Board.objects.filter(author_id=user_id).values_list("id", flat=True))
    counters.views_forget(board_ids)
    likes.likes_forget(board_ids)  # its boards out of their likers' liked sets (the rows cascade)
    reading.reads_flush()  # the buffered reads into PostgreSQL, where the next step finds them
    for start in range(0, len(board_ids), ROWS_PER_STATEMENT):
        part = board_ids[start : start + ROWS_PER_STATEMENT]
        reading.reads_forget(Read.objects.filter(board_id__in=part).values_list("reader_id", "board_id").iterator())
    with transaction.atomic(), connection.cursor() as cursor:
        if board_ids:
            Notification.objects.filter(board_id__in=board_ids).delete()
        table = Notification._meta.db_table
        cursor.execute(f"DELETE FROM {table} WHERE actors = ARRAY[%s]::bigint[] AND actor_count <= 1", [user_id])
        cursor.execute(
            f"UPDATE {table} SET actors = array_remove(actors, %s), actor_count = GREATEST(actor_count - 1, 0) "
            "WHERE actors @> ARRAY[%s]::bigint[]",
            [user_id, user_id],
        )
        for start in range(0, len(board_ids), ROWS_PER_STATEMENT):
            Read.objects.filter(board_id__in=board_ids[start : start + ROWS_PER_STATEMENT]).delete()
        TimelineChunk.objects.filter(owner_id=user_id).delete()
        for archive in Export.objects.filter(user_id=user_id).exclude(file_name=""):
            export_path(archive).unlink(missing_ok=True)  # the rows go with the person
        Board.objects.filter(author_id=user_id).delete()
    images.images_erase(user_id)
    return people.account_purge(user_id=user_id)
