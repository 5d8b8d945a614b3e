"""Who is active, kept where a lost Redis finds it again.

Activity lives in Redis: the active mark ``a:{u:N}`` (a TTL of IDLE_AFTER: fan-out reaches only
users who have it) and the last-seen index (feeds.timelines.store.home_touch writes both, at most once
a minute per user and process). Beat copies the last-seen index into ``User.last_seen`` every
ACTIVITY_FLUSH_SECONDS, reading only the entries seen since the previous copy, in batches; a
rebuild puts the marks and the index back from that column. A crash loses at most one interval
of activity (a user seen only in it counts as idle until their next call, which regenerates
their feed as for any returning user).
Storage only.
"""

import time
from collections.abc import Iterable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection

from feeds import keys
from ugcsite.platform.redis import get_redis
from ugcsite.platform.sql import execute_columns

# Entries are re-read this long after a copy: a request that took its time before writing its
# last-seen entry is still copied (writing one twice changes nothing).
FLUSH_OVERLAP_SECONDS = 60


def last_seen_flush(*, now: float | None = None) -> int:
    """Copy the last-seen index into ``User.last_seen`` (never moving it back): the entries
    seen since the previous copy, one pipeline over the buckets and one UPDATE per 10,000
    users. Offline, O(users seen since the last copy). Returns how many."""
    client = get_redis()
    now = time.time() if now is None else now
    since = client.get(keys.last_seen_flushed())
    low = "-inf" if since is None else repr(float(since) - FLUSH_OVERLAP_SECONDS)
    pipe = client.pipeline(transaction=False)
    for bucket in range(keys.LAST_SEEN_BUCKETS):
        pipe.zrangebyscore(keys.last_seen_bucket(bucket), low, "+inf", withscores=True)
    seen = sorted((int(user_id), at) for rows in pipe.execute() for user_id, at in rows)
    table = get_user_model()._meta.db_table
    with connection.cursor() as cursor:
        # The rows locked lowest id first, as a follow locks its two (social.services): an
        # UPDATE ... FROM locks in its join's order, which deadlocked with a follow.
        execute_columns(
            cursor,
            f"WITH locked AS MATERIALIZED (SELECT id FROM {table} WHERE id = ANY(%s) ORDER BY id FOR NO KEY UPDATE) "
            f"UPDATE {table} AS u SET last_seen = GREATEST(u.last_seen, to_timestamp(d.t)) "
            "FROM unnest(%s::bigint[], %s::float8[]) AS d(id, t), locked WHERE u.id = d.id AND locked.id = u.id",
            seen,
            arrange=lambda ids, times: [ids, ids, times],
        )
    client.set(keys.last_seen_flushed(), repr(now))
    return len(seen)


def activity_restore(seen: Iterable[tuple[int, float]], *, now: float | None = None) -> int:
    """Put back the active mark (for what is left of IDLE_AFTER) and the last-seen entry of
    each (user id, last seen) still within IDLE_AFTER; idle ones stay out, as the idle sweep
    leaves them (rebuild). One pipeline per 1,000 users, O(n log n). Returns how many are active."""
    now = time.time() if now is None else now
    idle_after = settings.IDLE_AFTER.total_seconds()
    pipe = get_redis().pipeline(transaction=False)
    active = 0
    for user_id, at in seen:
        left = int(at + idle_after - now)
        if left <= 0:
            continue
        pipe.set(keys.active(user_id), "1", ex=left)
        pipe.zadd(keys.last_seen(user_id), {user_id: at})
        active += 1
        if active % 1000 == 0:
            pipe.execute()
    pipe.execute()
    get_redis().set(keys.last_seen_flushed(), repr(now))  # what is back needs no copy
    return active
