"""The benchmark world: a reproducible site (fixed seed) grown in steps, 10,000 -> 100,000 ->
1,000,000 boards, over 20,000 users whose follower counts are heavy-tailed.

PostgreSQL is bulk-loaded with COPY (the source of truth is just rows); every Redis structure
is then built by the site's own code, the rebuild path (feeds.timelines.rebuild) and the archival
(feeds.timelines.archive), so the benchmark measures what the site really serves.
"""

import math
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from tqdm import tqdm

from feeds.models import Board
from feeds.timelines.ids import EPOCH_MS, GENERATOR_BITS, SEQUENCE_BITS
from social.models import Follow

KINDS = ["sketch", "diagram", "note", "comic", "map"]
TAGS = [f"tag{i}" for i in range(400)]  # tag i is used with weight ~ 1/(i+1): a few common, many rare
DOC = '{"width":800,"height":600,"background":"#ffffff","elements":[{"type":"path","color":"#1d2330","width":3,"points":[[100,100],[700,500]]}]}'
BACKFILL = 20  # boards of each followee a rebuilt feed starts from (see build_redis)
SPECIAL = {"reader50": 50, "reader500": 500, "reader450": 450, "reader5000": 5000}
# Words of board titles, for search (bench/search/shapes.py): 4,005 made-up words of two or three
# syllables, word i used with weight ~ 1/(i+1) like the tags: a few in a tenth of all titles,
# most in a handful.
_SYLLABLES = ["ka", "lo", "mi", "ren", "tor", "vel", "sun", "dar", "pi", "ne", "sol", "gar", "den", "bri", "mu", "zo"]
WORDS = sorted({"".join(random.Random(i).choices(_SYLLABLES, k=2 + i % 2)) for i in range(20_000)})
random.Random(7).shuffle(WORDS)


@dataclass
class World:
    seed: int
    users: int
    user_ids: list[int] = field(default_factory=list)
    special: dict[str, int] = field(default_factory=dict)  # name -> user id
    boards: int = 0
    last_ms: int = 0


def _copy(table: str, columns: list[str], rows) -> None:
    with (
        connection.cursor() as cursor,
        cursor.connection.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy,
    ):
        for row in rows:
            copy.write_row(row)


def copy_users(names: list[str], *, now, password_of=lambda index: "!") -> None:
    """People by COPY, one a name, each with the password hash ``password_of(its index)`` ("!":
    no password login), active, joined ``now``, with no counts yet (the world and the soak)."""
    User = get_user_model()
    _copy(
        User._meta.db_table,
        [
            "password",
            "is_superuser",
            "username",
            "first_name",
            "last_name",
            "email",
            "is_staff",
            "is_active",
            "date_joined",
            "followers_count",
            "following_count",
            "boards_count",
        ],
        ((password_of(i), False, name, "", "", "", False, True, now, 0, 0, 0) for i, name in enumerate(names)),
    )


def build_people(world: World, progress=tqdm) -> None:
    """20,000 users (or ``world.users``) and a heavy-tailed follow graph: out-degrees log-normal
    around 40, followees chosen with Zipf weights, so most users have under 200 followers and
    a few have thousands; plus readers following exactly 50, 450, 500 and 5,000 people."""
    rng = random.Random(world.seed)
    User = get_user_model()
    now = datetime.now(UTC)
    names = [f"user{i:05d}" for i in range(world.users - len(SPECIAL))] + list(SPECIAL)
    copy_users(names, now=now)
    ids = dict(User.objects.filter(username__in=names).values_list("username", "id"))
    world.user_ids = [ids[name] for name in names]
    world.special = {name: ids[name] for name in SPECIAL}
    authors = world.user_ids[: world.users - len(SPECIAL)]
    weights = [1 / (rank + 1) ** 0.9 for rank in range(len(authors))]
    cumulative = list(_accumulate(weights))
    edges = []
    for user_id in tqdm(world.user_ids, desc="follow graph", unit="user", disable=None):
        name_count = SPECIAL.get(next((n for n, i in world.special.items() if i == user_id), ""))
        want = name_count or min(int(rng.lognormvariate(math.log(40), 1.0)), 3000)
        chosen: set[int] = set()
        while len(chosen) < min(want, len(authors) - 1):
            for author in rng.choices(authors, cum_weights=cumulative, k=want - len(chosen)):
                if author != user_id:
                    chosen.add(author)
        edges.extend((user_id, author) for author in chosen)
    _copy(Follow._meta.db_table, ["follower_id", "followee_id", "created_at"], ((a, b, now) for a, b in edges))
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {User._meta.db_table}, {Follow._meta.db_table}")


def _accumulate(values):
    total = 0.0
    for value in values:
        total += value
        yield total


def grow_boards(world: World, target: int, authors: list[int] | None = None) -> None:
    """Add boards until the world has ``target``: authors by Zipf activity (``authors`` in rank
    order; default every user but the special readers), kinds uniform, 0-3 tags by Zipf
    popularity, views heavy-tailed, times spread from the id epoch to now, ids snowflake-shaped
    and increasing."""
    rng = random.Random(world.seed * 1000 + target)
    authors = authors or world.user_ids[: world.users - len(SPECIAL)]
    author_weights = list(_accumulate(1 / (rank + 1) ** 0.8 for rank in range(len(authors))))
    tag_weights = list(_accumulate(1 / (rank + 1) for rank in range(len(TAGS))))
    word_weights = list(_accumulate(1 / (rank + 1) for rank in range(len(WORDS))))
    start_ms = max(world.last_ms, 1)
    end_ms = int(datetime.now(UTC).timestamp() * 1000) - EPOCH_MS - 1000
    count = target - world.boards
    step = max((end_ms - start_ms) // max(count, 1), 1) if world.boards == 0 else 0
    rows = []
    ms = start_ms
    for n in range(count):
        if world.boards == 0:
            ms = start_ms + n * step
        else:  # later growth interleaves with history: spread over the whole span again
            ms = rng.randint(1, end_ms)
        board_id = (ms << (GENERATOR_BITS + SEQUENCE_BITS)) | (31 << SEQUENCE_BITS) | (n % 128)
        created = datetime.fromtimestamp((ms + EPOCH_MS) / 1000, tz=UTC)
        tags = sorted(set(rng.choices(TAGS, cum_weights=tag_weights, k=rng.choice((0, 1, 2, 3)))))
        views = int(rng.paretovariate(1.2)) - 1
        rows.append(
            (
                board_id,
                rng.choices(authors, cum_weights=author_weights)[0],
                f"board {target}-{n} {' '.join(rng.choices(WORDS, cum_weights=word_weights, k=2))}",
                rng.choice(KINDS),
                "{" + ",".join(tags) + "}",
                DOC,
                created,
                created,
                views,
                "published",
            )
        )
    world.last_ms = max(world.last_ms, ms)
    rows.sort()
    seen = set()
    unique = [row for row in rows if not (row[0] in seen or seen.add(row[0]))]
    existing = set(Board.objects.filter(id__in=[r[0] for r in unique]).values_list("id", flat=True))
    _copy(
        Board._meta.db_table,
        ["id", "author_id", "title", "kind", "tags", "doc_json", "created_at", "updated_at", "views", "state"],
        tqdm([r for r in unique if r[0] not in existing], desc=f"boards to {target:,}", unit="board", disable=None),
    )
    world.boards = Board.objects.count()
    with connection.cursor() as cursor:  # fresh planner statistics, as any DBA would after a bulk load
        cursor.execute(f"ANALYZE {Board._meta.db_table}, {Follow._meta.db_table}")


def build_redis(world: World) -> dict:
    """Every Redis structure from PostgreSQL by the site's own rebuild path, then the
    archival of every timeline past its window. Returns the archival's figures."""
    import time

    from feeds.timelines import archive, rebuild

    rebuild.recount_profiles()
    users = world.user_ids
    # The rebuild makes each P from the follow edges: the boards made since each follow and the
    # follow's back-fill before it. This world's edges are made after nearly all its boards, so
    # its feeds are back-fills: at BACKFILL boards a followee, a median reader's (40 followees)
    # holds about the 800 ids of a hot P, as in the worlds measured before.
    backfill = settings.FOLLOW_BACKFILL_COUNT
    settings.FOLLOW_BACKFILL_COUNT = BACKFILL
    try:
        for label, step in rebuild.USER_STEPS:
            with tqdm(total=len(users), desc=label, unit="user", disable=None) as bar:
                step(users, bar.update)
    finally:
        settings.FOLLOW_BACKFILL_COUNT = backfill
    with tqdm(total=world.boards, desc="discovery indexes", unit="board", disable=None) as bar:
        rebuild.rebuild_discovery(bar.update)
    waiting = archive.waiting_count()
    started = time.perf_counter()
    with tqdm(total=waiting, desc="archival", unit="timeline", disable=None) as bar:
        run = archive.archive_waiting(trigger="bench", progress=bar.update)
    seconds = time.perf_counter() - started
    return {"timelines": run.timelines, "chunks": run.chunks, "ids": run.ids, "seconds": seconds}


def activate(user_ids) -> None:
    """Mark users active (as a recent request would) without dropping the P the rebuild made."""
    from feeds import keys
    from ugcsite.platform.redis import get_redis

    pipe = get_redis().pipeline(transaction=False)
    for user_id in user_ids:
        pipe.set(keys.active(user_id), 1, ex=int(settings.IDLE_AFTER.total_seconds()))
    pipe.execute()


def feed_history(user_id: int, depth: int) -> int:
    """Give a reader's feed an archived history (as months of fan-out and archival would have):
    the followees' boards older than the head, written as P chunks by the archive's own code."""
    from feeds import keys
    from feeds.timelines import archive
    from ugcsite.platform.redis import get_redis

    oldest = get_redis().zrange(keys.home_timeline(user_id), 0, 0)
    if not oldest:
        return 0
    ids = list(
        Board.objects.filter(author__follower_edges__follower_id=user_id, state="published", id__lt=int(oldest[0]))
        .order_by("-id")
        .values_list("id", flat=True)[:depth]
    )
    archive.chunks_write(user_id, "p", ids)
    return len(ids)


def give_likes(world: World, likes_per_user: int, now: float) -> None:
    """Every user likes ``likes_per_user`` boards within the last 30 days (recent boards more
    likely), in their liked sets through the site's own feeds.likes.liked_put: the Redis side
    that "liked by people you follow" asks (the Like rows are not written: no answer reads them)."""
    from feeds.likes import liked_put
    from ugcsite.platform.redis import get_redis

    rng = random.Random(world.seed + 11)
    ids = list(Board.objects.order_by("-id").values_list("id", flat=True)[:20000])
    weights = list(_accumulate(1 / (rank + 1) ** 0.7 for rank in range(len(ids))))
    for user_id in tqdm(world.user_ids, desc="likes", unit="user", disable=None):
        pipe = get_redis().pipeline(transaction=False)
        for board_id in set(rng.choices(ids, cum_weights=weights, k=likes_per_user)):
            liked_put(user_id, board_id, now - rng.uniform(0, 29 * 86400), pipe=pipe)
        pipe.execute()


def give_reads(world: World, reads_per_user: int, now: float) -> None:
    """Every user reads ``reads_per_user`` boards within the last 30 days (recent boards more
    likely), through the site's own read_record."""
    from social.reading import read_record
    from ugcsite.platform.redis import get_redis

    rng = random.Random(world.seed + 7)
    ids = list(Board.objects.order_by("-id").values_list("id", flat=True)[:20000])
    weights = list(_accumulate(1 / (rank + 1) ** 0.7 for rank in range(len(ids))))
    for user_id in tqdm(world.user_ids, desc="reads", unit="user", disable=None):
        pipe = get_redis().pipeline(transaction=False)
        for at, board_id in sorted(
            (now - rng.uniform(0, 29 * 86400), b) for b in rng.choices(ids, cum_weights=weights, k=reads_per_user)
        ):
            read_record(user_id, board_id, now=at, pipe=pipe)
        pipe.execute()
