"""Rebuilding the Redis structures from PostgreSQL (``manage.py rebuild_redis``).

Everything a person sees comes back: the follow sets, every timeline whole (head and archive,
however much the archiver had not moved yet), the archive marks, profile counts, discovery
indexes with the popular and trending orders and the view counts, the reads of the retention
window and the activity marks. Redis keeps nothing else that an answer shows: board cache
entries refill on first read, and cached queries are recomputed.

Every function here is offline work, proportional to the data it rebuilds.
"""

import threading
import time
import uuid
from datetime import UTC, datetime
from itertools import chain, groupby

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Max

from feeds import comments, keys, likes
from feeds.discovery import counters, indexes, trending
from feeds.models import Board, TimelineChunk
from feeds.rules import Timeline
from feeds.timelines import activity, archive, hybrid, store
from feeds.timelines.ids import max_board_id_at
from social import graph, hiding, reading
from social.graph import FollowerCursor
from social.models import Follow
from ugcsite.platform.errors import Unavailable
from ugcsite.platform.redis import REDIS_FAILURES, get_redis

# While rebuild_redis runs, its mark lives in Redis with this TTL, refreshed as it goes (a
# rebuild that dies leaves no mark behind for longer), and checked at most every
# MARK_CHECK_SECONDS: a mark gone mid-way means the data Redis was emptied again meanwhile.
MARK_SECONDS = 30
# People a step writes at once (a query, a pipeline, a commit): round trips and commits a person
# were most of a rebuild's time (bench/results/rebuild.md); a batch takes a fraction of a second,
# so a flush meanwhile is still noticed within one.
REBUILD_BATCH = 100
MARK_CHECK_SECONDS = 0.1
REBUILD_RETRY_AFTER = 10


class RedisEmptied(Exception):
    """The rebuild's mark vanished: the data Redis was emptied (or replaced) while rebuilding."""


class RebuildMark:
    """The mark of one rebuild: ``start()``, ``check()`` from its progress (raises RedisEmptied),
    ``finish()``. Each call one round trip at most."""

    def __init__(self):
        self.token = uuid.uuid4().hex
        self._checked = 0.0
        self._done = threading.Event()

    def start(self) -> None:
        get_redis().set(keys.rebuilding(), self.token, ex=MARK_SECONDS)
        threading.Thread(target=self._keep, name="rebuild-mark", daemon=True).start()

    def _keep(self) -> None:
        """Keep the mark alive while this process rebuilds, between progress calls too: one step's
        first query can outlast MARK_SECONDS (10^6 boards or follows read before the first user).
        Only our own mark's TTL is renewed: a flush's missing mark, or a newer rebuild's, ends it."""
        while not self._done.wait(MARK_SECONDS / 3):
            try:
                if get_redis().get(keys.rebuilding()) != self.token:
                    return
                get_redis().expire(keys.rebuilding(), MARK_SECONDS)
            except REDIS_FAILURES:
                pass  # check() reports an unreachable Redis to the rebuild itself

    def check(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._checked < MARK_CHECK_SECONDS:
            return
        self._checked = now
        pipe = get_redis().pipeline(transaction=False)
        pipe.get(keys.rebuilding())
        pipe.expire(keys.rebuilding(), MARK_SECONDS)
        if pipe.execute()[0] != self.token:
            raise RedisEmptied("the data Redis was emptied while rebuilding")

    def finish(self) -> None:
        self._done.set()
        self.check(force=True)
        get_redis().delete(keys.rebuilding())


def refuse_regeneration_while_rebuilding() -> None:
    """A returning reader's P is regenerated from their followees' M: while rebuild_redis runs,
    those may be half rebuilt, and the P made from them would be a wrong list (until the
    rebuild's own P replaced it). So a 503 (Unavailable, with Retry-After) instead, until the
    rebuild is done. One EXISTS, on regeneration only (rare: readers back from idle)."""
    if get_redis().exists(keys.rebuilding()):
        raise Unavailable(
            "The site's data is being rebuilt after a loss; your feed is not back yet. "
            f"Try again in {REBUILD_RETRY_AFTER} seconds.",
            retry_after=REBUILD_RETRY_AFTER,
        )


def refuse_while_rebuilding(answer: dict) -> dict:
    """A page with no items while rebuild_redis runs may be a timeline not rebuilt yet: a 503
    (Unavailable, with Retry-After) rather than an empty list that is wrong. Pages with items
    are whole already (each timeline is written in one transaction). One EXISTS, on empty
    pages only."""
    if not answer["items"] and get_redis().exists(keys.rebuilding()):
        raise Unavailable(
            "The site's data is being rebuilt after a loss; this list is not back yet. "
            f"Try again in {REBUILD_RETRY_AFTER} seconds.",
            retry_after=REBUILD_RETRY_AFTER,
        )
    return answer


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


def _edges_by(field: str) -> dict[int, list[tuple[int, float]]]:
    """{user id: [(other id, follow time)]}, grouped on ``field``, the other side active only
    (social.graph: suspended people are in no one's sets). One streaming query, the times read
    as epoch seconds (no datetime a row: a rebuild reads every edge twice)."""
    other = "follower_id" if field == "followee_id" else "followee_id"
    follows, users = Follow._meta.db_table, get_user_model()._meta.db_table
    with transaction.atomic(), connection.chunked_cursor() as cursor:  # a server-side cursor
        cursor.execute(
            f"SELECT f.{field}, f.{other}, extract(epoch FROM f.created_at)::float8 FROM {follows} f"
            f" JOIN {users} u ON u.id = f.{other} WHERE u.is_active ORDER BY f.{field}"
        )
        rows = chain.from_iterable(iter(lambda: cursor.fetchmany(10_000), []))
        return {uid: [(o, at) for _, o, at in group] for uid, group in groupby(rows, key=lambda r: r[0])}


def rebuild_graph(user_ids, progress) -> None:
    """Every F and following set from the follow edges (two streaming queries), written a
    batch of REBUILD_BATCH people a pipeline. O(users + follows)."""
    followers, following = _edges_by("followee_id"), _edges_by("follower_id")
    for part in _batches(user_ids):
        graph.graphs_replace({user_id: (followers.get(user_id, ()), following.get(user_id, ())) for user_id in part})
        progress(len(part))


def rebuild_big_authors(user_ids, progress) -> None:
    """Each author's fan-out mode from their follower count (after rebuild_graph), and every
    follower of a big author marked so their pages merge the author's M (feeds.timelines.hybrid), F walked
    in batches as the marking task does. O(users + followers of big authors)."""
    for user_id in user_ids:
        if hybrid.author_recount(user_id).big:
            cursor = FollowerCursor()
            while cursor is not None:
                followers, cursor = graph.followers_batch(user_id, cursor, settings.FANOUT_BATCH_SIZE)
                hybrid.followers_mark(user_id, followers)
        progress()


def rebuild_profiles(user_ids, progress) -> None:
    """Each M from its author's published boards newer than what M's archive holds (run after
    rebuild_archive_marks); an M past its window is flagged for the archiver."""
    rows = (
        Board.objects.filter(state=Board.State.PUBLISHED)
        .order_by("author_id", "-id")
        .values_list("author_id", "id")
        .iterator(chunk_size=10_000)
    )
    by_author = {uid: [board_id for _, board_id in group] for uid, group in groupby(rows, key=lambda r: r[0])}
    due = settings.PROFILE_TIMELINE_HOT + settings.TIMELINE_CHUNK
    for user_id in user_ids:
        mark = archive.archived_max(user_id, Timeline.PROFILE)
        ids = [board_id for board_id in by_author.get(user_id, ()) if board_id > mark]
        store.timeline_replace(Timeline.PROFILE, user_id, ids)
        if len(ids) >= due:
            archive.flag_waiting(Timeline.PROFILE, [user_id])
        progress()


def _idle_users() -> set[int]:
    """Users last seen longer than IDLE_AFTER ago: their P stays out of Redis, as the idle
    sweep left it, and is regenerated when they come back. One query."""
    cutoff = datetime.fromtimestamp(time.time() - settings.IDLE_AFTER.total_seconds(), tz=UTC)
    return set(get_user_model().objects.filter(last_seen__lt=cutoff).values_list("id", flat=True))


def home_ids(follows: dict[int, list[tuple[int, float]]], marks: dict[int, int]) -> dict[int, list[int]]:
    """The ids of each user's P that Redis alone held, newest first, from the boards
    themselves, for the users of ``follows`` ({user: [(followee, follow time)]}, ``marks`` their
    archived max A): the published boards above A of each followee made since the follow
    (fan-out brought them) and of its back-fill (the newest FOLLOW_BACKFILL_COUNT made before
    it). Back-filled ids at or below A are kept only where no chunk holds them. One query for
    them all, a LATERAL pair per edge on the (author, -id) index: O(edges x (log n + back-fill)
    + the boards since each A); one more a user whose back-filled ids lie below A."""
    edges = [(user_id, author, at) for user_id, pairs in follows.items() for author, at in pairs]
    found: dict[int, set[int]] = {user_id: set() for user_id in follows}
    if edges:
        board = Board._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT DISTINCT f.user_id, b.id"
                f" FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[]) AS f(user_id, author_id, upto, mark)"
                f" CROSS JOIN LATERAL ("
                f"  (SELECT id FROM {board} WHERE author_id = f.author_id AND state = %s AND id > GREATEST(f.upto, f.mark))"
                f"  UNION ALL"
                f"  (SELECT id FROM {board} WHERE author_id = f.author_id AND state = %s AND id <= f.upto"
                f"   ORDER BY id DESC LIMIT %s)"
                f") b",
                [
                    [user_id for user_id, _, _ in edges],
                    [author for _, author, _ in edges],
                    [max_board_id_at(datetime.fromtimestamp(at, tz=UTC)) for _, _, at in edges],
                    [marks.get(user_id, 0) for user_id, _, _ in edges],
                    Board.State.PUBLISHED,
                    Board.State.PUBLISHED,
                    settings.FOLLOW_BACKFILL_COUNT,
                ],
            )
            for user_id, board_id in cursor.fetchall():
                found[user_id].add(board_id)
    answer = {}
    for user_id, ids in found.items():
        mark = marks.get(user_id, 0)
        below = [board_id for board_id in ids if board_id <= mark]
        if below:
            ids -= archive.archived_among(user_id, Timeline.HOME, below)
        answer[user_id] = sorted(ids, reverse=True)
    return answer


def _batches(user_ids):
    users = list(user_ids)
    for start in range(0, len(users), REBUILD_BATCH):
        yield users[start : start + REBUILD_BATCH]


def rebuild_home(user_ids, progress) -> None:
    """Each P whole, and its archived max A (run after rebuild_archive_marks, rebuild_activity
    and rebuild_big_authors): home_ids of every user not idle, over the followees their pages do
    not merge whole. Up to the hot size + slack they all go to the head (flagged for the
    archiver past hot + one chunk, as fan-out flags it); a longer stretch keeps the newest
    HOME_TIMELINE_HOT in the head and goes to the archive below them, as the archiver would
    have moved it. Idle users get A alone. REBUILD_BATCH people at a time: for each batch, one
    query for every P, one pipeline for the heads, one INSERT (one commit) for what goes
    below, one pipeline for the marks. O(followees x back-fill + boards since A) per user."""
    following = _edges_by("follower_id")
    idle = _idle_users()
    marks = _chunk_marks()
    hot = settings.HOME_TIMELINE_HOT
    for part in _batches(user_ids):
        busy = [user_id for user_id in part if user_id not in idle]
        merged = hybrid.merged_whole_many(busy) if busy else {}
        found = home_ids(
            {
                user_id: [(author, at) for author, at in following.get(user_id, []) if author not in merged[user_id]]
                for user_id in busy
            },
            {user_id: marks.get((user_id, Timeline.HOME), 0) for user_id in busy},
        )
        heads, below = {}, {}
        for user_id, ids in found.items():
            split = len(ids) > hot + settings.HOME_TIMELINE_SLACK
            heads[user_id], below[user_id] = (ids[:hot], ids[hot:]) if split else (ids, [])
        # P's head first, then what goes below it, then A: while a rebuild runs, a reader whose
        # A is in Redis already has their head too (a page never comes from the archive alone).
        store.timelines_replace(Timeline.HOME, heads)
        with transaction.atomic():
            archive.chunks_write_many(Timeline.HOME, below)
        archive.marks_raise(Timeline.HOME, {user_id: marks.get((user_id, Timeline.HOME), 0) for user_id in part})
        archive.flag_waiting(
            Timeline.HOME, [user_id for user_id, head in heads.items() if len(head) >= hot + settings.TIMELINE_CHUNK]
        )
        progress(len(part))


def rebuild_activity(user_ids, progress) -> None:
    """The active marks and the last-seen index from ``User.last_seen`` (users within
    IDLE_AFTER only), after copying what the index holds now into it (a rebuild over a Redis
    that was not lost keeps the newest activity). One query, O(users)."""
    activity.last_seen_flush()
    cutoff = datetime.fromtimestamp(time.time() - settings.IDLE_AFTER.total_seconds(), tz=UTC)
    wanted = set(user_ids)
    seen = get_user_model().objects.filter(last_seen__gte=cutoff).values_list("id", "last_seen")
    activity.activity_restore(
        (user_id, at.timestamp()) for user_id, at in seen.iterator(chunk_size=10_000) if user_id in wanted
    )
    progress(len(user_ids))


def rebuild_hidden(user_ids, progress) -> None:
    """Everyone's hidden set (social.hiding: blocks both ways, mutes) from PostgreSQL, a
    pipeline per 1,000 people. O(users + blocks + mutes)."""
    stored, users = hiding.hidden_stored(), list(user_ids)
    for start in range(0, len(users), 1000):
        part = users[start : start + 1000]
        hiding.hidden_replace({user_id: stored.get(user_id, {}) for user_id in part})
        progress(len(part))


def rebuild_reads(user_ids, progress) -> None:
    """Every reader's read set from the reads stored in PostgreSQL within the retention
    window, after writing the buffered ones there (a rebuild over a Redis that was not lost
    keeps them). O(reads in the window)."""
    reading.reads_flush()
    wanted = set(user_ids)
    reading.reads_replace((reader, latest) for reader, latest in reading.reads_stored() if reader in wanted)
    progress(len(user_ids))


def rebuild_likes(user_ids, progress) -> None:
    """Every person's liked sets from their Like rows (feeds.likes). O(likes)."""
    user_ids = list(user_ids)
    for start in range(0, len(user_ids), 1000):
        part = user_ids[start : start + 1000]
        likes.liked_replace(likes.likes_stored(part), part)
        progress(len(part))


def _chunk_marks() -> dict[tuple[int, str], int]:
    """(owner, timeline kind) -> the newest archived id, from PostgreSQL (one grouped query)."""
    return {
        (owner, kind): last
        for owner, kind, last in TimelineChunk.objects.values_list("owner_id", "timeline")
        .annotate(last=Max("last_id"))
        .values_list("owner_id", "timeline", "last")
    }


def rebuild_archive_marks(user_ids, progress) -> None:
    """The archived max of every timeline but P, from PostgreSQL (one grouped query). P's is
    written by rebuild_home with P itself, so that while a rebuild runs no reader has an A
    without a head (their page would come from the archive alone, a wrong list)."""
    marks = _chunk_marks()
    for user_id in user_ids:
        archive.marks_put(user_id, {kind: marks.get((user_id, kind), 0) for kind in Timeline if kind != Timeline.HOME})
        progress()


def rebuild_discovery(progress) -> int:
    """Every index, sort order and facet from the published boards (views: PostgreSQL's count
    plus what is pending, after a flush of the pending counts; likes and comments: recounted
    from their rows), the hourly view and like counts of the trending window, then the trending roll-ups. Returns the number of boards indexed."""
    counters.views_flush()  # finishes a batch a crash left half done, so nothing counts twice
    likes.likes_recount_all()  # the Like rows are the truth of every count
    comments.comments_recount_all()  # and the Comment rows of the comment counts G reads
    indexes.index_clear()
    boards = (
        Board.objects.filter(state=Board.State.PUBLISHED)
        .order_by("id")
        .values_list("id", "kind", "tags", "author__username", "views", "likes")
    )
    count, batch = 0, []
    for row in boards.iterator(chunk_size=5000):
        batch.append(row)
        if len(batch) == 5000:
            count += _index_batch(batch, progress)
            batch = []
    if batch:
        count += _index_batch(batch, progress)
    trending.hours_put(counters.view_hours_recent())
    likes.hours_clear()
    trending.hours_put(likes.liked_hours(), hour_key=keys.likes_hour)
    trending.trending_rollup()
    return count


def _index_batch(batch, progress) -> int:
    pending = counters.pending_views([row[0] for row in batch])
    indexes.index_bulk(
        (board_id, kind, tags, author, views + pending[board_id], board_likes)
        for board_id, kind, tags, author, views, board_likes in batch
    )
    progress(len(batch))
    return len(batch)


# The per-user steps of a rebuild, in order: the archive marks before the timelines that read
# them, activity before the home timelines (idle users get none), reads and likes last.
USER_STEPS = (
    ("archive marks", rebuild_archive_marks),
    ("activity", rebuild_activity),
    ("follow graph", rebuild_graph),
    ("blocks and mutes", rebuild_hidden),
    ("big authors", rebuild_big_authors),
    ("profile timelines", rebuild_profiles),
    ("home timelines", rebuild_home),
    ("reads", rebuild_reads),
    ("likes", rebuild_likes),
)
