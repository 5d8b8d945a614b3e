"""Rebuilding the Redis structures from PostgreSQL (``manage.py rebuild_redis``).

Every function here is offline work, proportional to the data it rebuilds.
"""

from itertools import groupby

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Max

from feeds import archive, keys, timelines
from feeds.discovery import counters, indexes, trending
from feeds.models import Board, TimelineChunk
from feeds.rules import Timeline
from social import graph
from social.models import Follow


def recount_profiles() -> None:
    """Recompute every user's followers/following/boards counts in one statement each."""
    User = get_user_model()
    table, follow, board = User._meta.db_table, Follow._meta.db_table, Board._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} u SET "
            f"followers_count = (SELECT count(*) FROM {follow} f WHERE f.followee_id = u.id), "
            f"following_count = (SELECT count(*) FROM {follow} f WHERE f.follower_id = u.id), "
            f"boards_count = (SELECT count(*) FROM {board} b WHERE b.author_id = u.id AND b.state = %s)",
            [Board.State.PUBLISHED],
        )


def _edges_by(field: str):
    """{user id: [(other id, follow time)]}, grouped on ``field``, the other side active only
    (social.graph: suspended people are in no one's sets). One streaming query."""
    other = "follower_id" if field == "followee_id" else "followee_id"
    rows = (
        Follow.objects.filter(**{f"{other.removesuffix('_id')}__is_active": True}).order_by(field)
        .values_list(field, other, "created_at").iterator(chunk_size=10_000)
    )
    return {uid: [(o, at.timestamp()) for _, o, at in group] for uid, group in groupby(rows, key=lambda r: r[0])}


def rebuild_graph(user_ids, progress) -> None:
    followers, following = _edges_by("followee_id"), _edges_by("follower_id")
    for user_id in user_ids:
        graph.graph_replace(user_id, followers=followers.get(user_id, ()), following=following.get(user_id, ()))
        progress()


def rebuild_profiles(user_ids, progress) -> None:
    """Each M from its author's published boards newer than what M's archive holds (run after
    rebuild_archive_marks); an M past its window is flagged for the archiver."""
    rows = (
        Board.objects.filter(state=Board.State.PUBLISHED).order_by("author_id", "-id")
        .values_list("author_id", "id").iterator(chunk_size=10_000)
    )
    by_author = {uid: [board_id for _, board_id in group] for uid, group in groupby(rows, key=lambda r: r[0])}
    due = settings.PROFILE_TIMELINE_HOT + settings.TIMELINE_CHUNK
    for user_id in user_ids:
        mark = archive.archived_max(user_id, Timeline.PROFILE)
        ids = [board_id for board_id in by_author.get(user_id, ()) if board_id > mark]
        timelines.timeline_replace(keys.profile_timeline(user_id), ids)
        if len(ids) >= due:
            archive.flag_waiting(Timeline.PROFILE, [user_id])
        progress()


def rebuild_home(user_ids, progress) -> None:
    """Each P from the newest boards of the user's followees. One query per user, a LATERAL
    top-N per followee on the (author, -id) index, so it costs O(followees x hot), not a scan
    of the site's boards for readers of rare authors."""
    hot = settings.HOME_TIMELINE_HOT
    sql = (
        f"SELECT b.id FROM {Follow._meta.db_table} f CROSS JOIN LATERAL ("
        f"  SELECT id FROM {Board._meta.db_table} WHERE author_id = f.followee_id AND state = %s"
        f"  ORDER BY id DESC LIMIT %s) b "
        f"WHERE f.follower_id = %s ORDER BY b.id DESC LIMIT %s"
    )
    with connection.cursor() as cursor:
        for user_id in user_ids:
            cursor.execute(sql, [Board.State.PUBLISHED, hot, user_id, hot])
            timelines.timeline_replace(keys.home_timeline(user_id), [row[0] for row in cursor.fetchall()])
            progress()


def rebuild_archive_marks(user_ids, progress) -> None:
    """The archived max of every timeline, from PostgreSQL (one grouped query)."""
    marks = {
        (owner, kind): last
        for owner, kind, last in TimelineChunk.objects.values_list("owner_id", "timeline")
        .annotate(last=Max("last_id")).values_list("owner_id", "timeline", "last")
    }
    for user_id in user_ids:
        archive.marks_put(user_id, {kind: marks.get((user_id, kind), 0) for kind in Timeline})
        progress()


def rebuild_discovery(progress) -> int:
    """Every index, sort order and facet from the published boards (views: PostgreSQL's count
    plus what is pending), then the trending roll-up. Returns the number of boards indexed."""
    indexes.index_clear()
    boards = (
        Board.objects.filter(state=Board.State.PUBLISHED).order_by("id")
        .values_list("id", "kind", "tags", "author__username", "views")
    )
    count, batch = 0, []
    for row in boards.iterator(chunk_size=5000):
        batch.append(row)
        if len(batch) == 5000:
            count += _index_batch(batch, progress)
            batch = []
    if batch:
        count += _index_batch(batch, progress)
    trending.trending_rollup()
    return count


def _index_batch(batch, progress) -> int:
    pending = counters.pending_views([row[0] for row in batch])
    indexes.index_bulk((board_id, kind, tags, author, views + pending[board_id])
                         for board_id, kind, tags, author, views in batch)
    progress(len(batch))
    return len(batch)
