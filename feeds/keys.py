"""Every Redis key of boards, timelines and discovery.

Per-user keys carry the owner's hash tag ``{u:<id>}``; per-board keys the board's ``{b:<id>}``,
so each lands on one Redis Cluster slot and no online command spans two owners. Nothing outside
this module spells a key (Mastodon's FeedManager#key is the model).
"""

import hashlib
from functools import lru_cache

from redis.crc import key_slot

from feeds.rules import DISCOVERY_SHARDS, Timeline
from social.keys import user_tag as _user_tag


def board(board_id: int) -> str:
    """Hash G, the board cache: title, kind, tags, author, times, views. Example: ``g:{b:1234}``."""
    return f"g:{{b:{int(board_id)}}}"


def parts(key_of) -> tuple[str, str]:
    """The text of a key before and after its owner's id (``key_of`` one of this module's key
    functions), for a script that reads keys of ids it found itself, on a plain Redis only
    (feeds/scripts/timeline_page.lua): the same spelling as ``key_of``."""
    before, _, after = key_of(0).partition("0")
    return before, after


def spelling(name: str, key_of) -> dict[str, str]:
    """``parts(key_of)`` as a script's named arguments ``<name>_before`` and ``<name>_after``."""
    before, after = parts(key_of)
    return {f"{name}_before": before, f"{name}_after": after}


def profile_timeline(user_id: int) -> str:
    """Sorted set M: the user's own board ids, score = id. Example: ``m:{u:42}``."""
    return f"m:{_user_tag(user_id)}"


def home_timeline(user_id: int) -> str:
    """Sorted set P: board ids of the user's followees, score = id. Example: ``p:{u:42}``."""
    return f"p:{_user_tag(user_id)}"


def rebuilding() -> str:
    """String: the token of the ``rebuild_redis`` under way, with a TTL it keeps refreshing;
    absent otherwise. Its own tag. ``rb:{rebuild}``."""
    return "rb:{rebuild}"


def id_generator_lease() -> str:
    """String counter handing each process one of the 32 snowflake generator numbers. ``idgen:lease``."""
    return "idgen:lease"


def timeline_meta(user_id: int) -> str:
    """Hash of per-user timeline facts: ``m_archived_max`` / ``p_archived_max``, the largest
    id archived to PostgreSQL from M / P (0 when none), ``regenerate`` while a returning
    idle user's P waits to be refilled, the user's fan-out mode as an author,
    ``pull_below`` / ``pull_since`` (feeds.timelines.hybrid), and ``m_revision`` / ``p_revision``,
    counters bumped by every change of which ids M / P hold but fan-out's deliveries into P
    (feeds.timelines.store; a feed snapshot is valid only at the revisions it was made at).
    Example: ``tm:{u:42}``."""
    return f"tm:{_user_tag(user_id)}"


def feed_snapshot(user_id: int) -> str:
    """String: the newest ids of a reader's merged home feed (P and their big followees' M, each
    id once), newest first, each in 8 bytes (feeds.timelines.snapshot.WIDTH), as a deep page by
    offset found them, so the next deep pages read a range of it; with a TTL. ``fs:{u:42}``."""
    return f"fs:{_user_tag(user_id)}"


def feed_snapshot_facts(user_id: int) -> str:
    """Hash beside feed_snapshot: what the merge was made from (P's size, oldest id, revision and
    archived max, the big followees with their M's revisions and pull_below), its length, whether
    it holds the whole feed and where it starts; the snapshot is read only while every fact still
    holds (feeds.timelines.snapshot). The same TTL. Example: ``fsf:{u:42}``."""
    return f"fsf:{_user_tag(user_id)}"


def big_following(user_id: int) -> str:
    """Sorted set of the followees whose M the user's feed merges at read time (hybrid fan-out,
    feeds.timelines.hybrid): followee id -> when it was added (epoch seconds). Example: ``fb:{u:42}``."""
    return f"fb:{_user_tag(user_id)}"


def user_keys(user_id: int) -> list[str]:
    """Every key of feeds that belongs to one user alone: M, P, their timeline facts, their
    big-following set, their feed snapshot and their active mark (deleting an account deletes them)."""
    return [
        profile_timeline(user_id),
        home_timeline(user_id),
        timeline_meta(user_id),
        big_following(user_id),
        feed_snapshot(user_id),
        feed_snapshot_facts(user_id),
        active(user_id),
        likes(user_id),
        like_ids(user_id),
        likes_query(user_id),
    ]


def likes(user_id: int) -> str:
    """Sorted set of the boards a user likes, scored by when (epoch seconds; feeds.likes): the
    user -> boards side, as social reading keeps reads, so a board liked by millions is no hot
    key. Example: ``lk:{u:42}``."""
    return f"lk:{_user_tag(user_id)}"


def like_ids(user_id: int) -> str:
    """Set of the same board ids as ``likes``, kept with it: "liked by people you follow"
    intersects it with the asked ids in C (social/scripts/readers_of.lua). ``lks:{u:42}``."""
    return f"lks:{_user_tag(user_id)}"


def likes_query(user_id: int) -> str:
    """Set of the board ids one "liked by people you follow" call asks about, made and deleted
    inside that call, in the slot of its first person. Never outlives the script. ``lq:{u:42}``."""
    return f"lq:{_user_tag(user_id)}"


def active(user_id: int) -> str:
    """String with a TTL: present while the user has been active within IDLE_AFTER. ``a:{u:42}``."""
    return f"a:{_user_tag(user_id)}"


# The last-seen index is split in buckets, each its own hash tag, so the writes of every
# active user's requests spread over a cluster's nodes instead of one key on one node.
LAST_SEEN_BUCKETS = 64


def last_seen(user_id: int) -> str:
    """Sorted set user id -> when they were last active (epoch seconds), one bucket of them
    (the user's id modulo LAST_SEEN_BUCKETS): the idle sweeper finds idle users here without
    scanning the keyspace. Example: ``seen:{seen:42}``."""
    return last_seen_bucket(int(user_id) % LAST_SEEN_BUCKETS)


def last_seen_bucket(bucket: int) -> str:
    """One bucket of the last-seen index by its number (0 .. LAST_SEEN_BUCKETS - 1)."""
    return f"seen:{{seen:{int(bucket)}}}"


def last_seen_flushed() -> str:
    """String: the time (epoch seconds) up to which the last-seen index has been copied to
    User.last_seen (feeds.timelines.activity). One key for the site, written once a flush. ``seen:flushed``."""
    return "seen:flushed"


def archive_waiting() -> str:
    """Sorted set of timelines past their hot window, ``m:42`` / ``p:42``, scored by when they
    were flagged. One key for the site (written by its own command, never inside a per-user
    script). Example: ``archive:waiting``."""
    return "archive:waiting"


def timeline_key(kind: Timeline, user_id: int) -> str:
    """The key of a user's timeline of ``kind`` (M or P)."""
    return profile_timeline(user_id) if kind == Timeline.PROFILE else home_timeline(user_id)


def parse_waiting(member: str) -> tuple[str, int]:
    """``"p:42"`` -> ``("p", 42)``: a member of archive_waiting."""
    kind, _, user_id = member.partition(":")
    return kind, int(user_id)


def waiting_member(kind: str, user_id: int) -> str:
    """The member of archive_waiting for a timeline."""
    return f"{kind}:{int(user_id)}"


# --- discovery (Viki's set-index engine) --------------------------------------------------------
# The indexes are split by board into DISCOVERY_SHARDS shards. Every key of one shard carries that
# shard's tag ({d3.41}), so a query intersects a shard's sets in one Lua call; a query runs on every
# shard and merges (feeds.discovery.queries). The facet counts, the view counts and the hourly
# counts of the trending window stay under the one tag {d}: they are written per view or per
# board change, never read by a query's intersection.


@lru_cache(maxsize=1)
def discovery_shard_tags() -> tuple[str, ...]:
    """The hash tag of each shard: ``d<shard>.<n>``, n the first whose slot lies in the middle half
    of the shard's own share of the 16,384 slots, so that any number of nodes that divides
    DISCOVERY_SHARDS, each given an even run of slots, holds the same number of shards.
    Computed once a process (about 1,200 CRC16s)."""
    width = SLOTS / DISCOVERY_SHARDS
    tags = []
    for shard in range(DISCOVERY_SHARDS):
        low, high = shard * width + width / 4, shard * width + 3 * width / 4
        n = 0
        while not low <= key_slot(f"d{shard}.{n}".encode()) < high:
            n += 1
        tags.append(f"d{shard}.{n}")
    return tuple(tags)


SLOTS = 16384  # a Redis Cluster's hash slots
_FIBONACCI = 0x9E3779B97F4A7C15  # 2^64 / the golden ratio: spreads consecutive ids evenly


def discovery_shard(board_id: int) -> int:
    """The shard of a board's index entries (0 .. DISCOVERY_SHARDS - 1): a multiplicative hash of
    its id, so each shard holds a uniform sample of every filter and every order (what the
    merge's windows count on: feeds.discovery.queries)."""
    return ((int(board_id) * _FIBONACCI) & 0xFFFFFFFFFFFFFFFF) * DISCOVERY_SHARDS >> 64


def index(shard: int, field: str, value: str) -> str:
    """Set of one shard's board ids whose ``field`` has ``value`` (kind, tag, author).
    Example: ``ix:{d3.41}:tag:cats``."""
    return f"ix:{{{discovery_shard_tags()[shard]}}}:{field}:{value}"


def index_tracker(board_id: int) -> str:
    """Set of the index keys a board is in (in its shard), so removal need not know the index
    types. Example: ``ixt:{d3.41}:1234``."""
    return f"ixt:{{{discovery_shard_tags()[discovery_shard(board_id)]}}}:{int(board_id)}"


def sort(shard: int, order: str) -> str:
    """Sorted set of one shard's visible board ids by an order: ``recent`` (score = id), ``popular``
    (all-time views), ``trending`` (views in the last 24 hours), ``likes`` (likes that count),
    ``likes-trending`` (likes in the last 24 hours). Example: ``ixs:{d3.41}:popular``."""
    return f"ixs:{{{discovery_shard_tags()[shard]}}}:{order}"


def board_sort(board_id: int, order: str) -> str:
    """The sort order of ``order`` that holds a board: ``sort`` of its shard."""
    return sort(discovery_shard(board_id), order)


def sort_scratch(name: str) -> str:
    """A scratch sorted set of the roll-ups, beside the hourly counts, deleted after use.
    ``ixs:{d}:scratch:trending-union``."""
    return f"ixs:{{d}}:scratch:{name}"


def tag_counts() -> str:
    """Sorted set tag -> number of visible boards with it, every shard's (facets). ``ixc:{d}:tags``."""
    return "ixc:{d}:tags"


def kind_counts() -> str:
    """Hash kind -> number of visible boards of it, every shard's (facets). ``ixc:{d}:kinds``."""
    return "ixc:{d}:kinds"


def index_generation(shard: int) -> str:
    """Counter bumped on every membership change of one shard's indexes; a cached query of the
    shard is valid only for the generation it was computed at. ``ixg:{d3.41}``."""
    return f"ixg:{{{discovery_shard_tags()[shard]}}}"


def query_cache(shard: int, digest: str) -> str:
    """Sorted set: one shard's cached query intersection, with a TTL. ``ixq:{d3.41}:<digest>``."""
    return f"ixq:{{{discovery_shard_tags()[shard]}}}:{digest}"


def query_cache_generation(shard: int, digest: str) -> str:
    """String: the shard's index generation its query_cache twin was computed at.
    ``ixqg:{d3.41}:<digest>``."""
    return f"ixqg:{{{discovery_shard_tags()[shard]}}}:{digest}"


def query_pages_generation() -> str:
    """Counter bumped after every membership change of any shard (the sum of the shards'
    index_generation moves, in one key): a cached page of a query (query_page) is valid only for
    the generation it was computed at. ``ixpg:{d}``."""
    return "ixpg:{d}"


def query_page(digest: str, offset: int, limit: int) -> str:
    """String: one merged page of a filtered query (its exact total, then the page's entries),
    headed by the query_pages_generation it was computed at, with a TTL. Beside that counter
    under {d}, so a cached page is one read of one slot. ``ixp:{d}:<digest>:<offset>:<limit>``."""
    return f"ixp:{{d}}:{digest}:{int(offset)}:{int(limit)}"


def views_pending() -> str:
    """Hash of the views not yet flushed to PostgreSQL: field ``<board id>`` -> views (the
    live count adds it), and ``<board id>@<hour>`` (views_pending_hour) -> those views by hour,
    for the trending history; ``batch`` names a batch renamed aside for its flush. ``vp:{d}``."""
    return "vp:{d}"


def views_pending_hour(board_id: int, hour: int) -> str:
    """The field of one board's pending views in one hour: ``"1234@492000"``."""
    return f"{int(board_id)}@{int(hour)}"


def parse_views_pending_field(field: str) -> tuple[int, int | None] | None:
    """A field of views_pending -> (board id, hour, or None for the board's total); None for
    a field that counts no views (``batch``)."""
    board_id, at, hour = field.partition("@")
    if not board_id.isdigit():
        return None
    return int(board_id), (int(hour) if at else None)


VIEWS_BATCH_FIELD = "batch"


def views_seen(board_id: int, day: int) -> str:
    """Set of who viewed a board on one UTC day (``u:<user id>`` or ``a:<digest>`` of an
    anonymous visitor), kept two days: a view counts once per viewer, board and day. In the
    board's own slot, so the views of a site spread over a cluster. ``vs:{b:1234}:20517``."""
    return f"vs:{{b:{int(board_id)}}}:{int(day)}"


def views_flushing() -> str:
    """The pending hash renamed aside while a flush writes it to PostgreSQL. ``vpf:{d}``."""
    return "vpf:{d}"


def views_hour(hour: int) -> str:
    """Sorted set board id -> views in one hour (hours since the epoch), with a TTL of a day
    and a bit. Example: ``vh:{d}:492000``."""
    return f"vh:{{d}}:{int(hour)}"


def likes_hour(hour: int) -> str:
    """Sorted set board id -> likes made in one hour (hours since the epoch), less those taken
    back, with the TTL of views_hour: the likes-trending roll-up sums the last 24. ``lh:{d}:492000``."""
    return f"lh:{{d}}:{int(hour)}"


def discovery_patterns() -> list[str]:
    """SCAN patterns matching every discovery key above but the view and like counts (for a
    rebuild), in every shard and in the single {d} layout before the shards (ixg:{d}, ix:{d}:...),
    so a rebuild also clears what an older release left."""
    return ["ix:{d*", "ixt:{d*", "ixs:{d*", "ixc:{d}:*", "ixq:{d*", "ixqg:{d*", "ixg:{d*", "ixp:{d}:*", "ixpg:{d}"]


# --- shared boards, live (feeds.live) ---------------------------------------------------------
# The op log lives in the data Redis beside the board's author's keys (their hash tag), so one
# board's log, sequence and snapshot mark are one slot. The Channels group is no Redis key of
# ours: channels_redis spells its own keys on the plain Redis from this name.


def live_ops(author_id: int, board_id: int) -> str:
    """Stream of a board's accepted ops, entry id ``<seq>-1`` (the board's sequence), each with
    the fields ``op`` (JSON), ``by`` and ``cid``; trimmed below the last compaction minus
    LIVE_REPLAY_KEEP. Example: ``lo:{u:42}:1234``."""
    return f"lo:{_user_tag(author_id)}:{int(board_id)}"


def live_meta(author_id: int, board_id: int) -> str:
    """Hash of a board's live state: ``seq`` (the last op accepted), ``compacted`` (the seq the
    PostgreSQL doc holds), ``gen`` (the doc's generation: a new one when it is replaced whole),
    ``head`` (the doc's width, height and background, JSON), ``title`` (the board's, as of
    ``seq``), ``n`` and ``pts`` (its elements and points, for the limits) and ``z`` (the last
    drawing order given). Example: ``lm:{u:42}:1234``."""
    return f"lm:{_user_tag(author_id)}:{int(board_id)}"


def live_dirty() -> str:
    """Sorted set of boards with ops not yet compacted into PostgreSQL: ``<author>:<board>`` ->
    when the first such op came (epoch seconds). One key for the site, written when a board goes
    dirty (once per compaction, never per op). Example: ``live:dirty``."""
    return "live:dirty"


def live_channel(board_id: int) -> str:
    """The pub/sub channel of a board's live frames, on the plain Redis (feeds.live.hub): not a
    key, nothing stored. ``live:b:1234``."""
    return f"live:b:{int(board_id)}"


def live_elements(author_id: int, board_id: int) -> str:
    """Hash of a live board's elements: ``<element id>`` -> the element's JSON as sent, and
    ``#<element id>`` -> its point count (ids never hold ``#``). Example: ``le:{u:42}:1234``."""
    return f"le:{_user_tag(author_id)}:{int(board_id)}"


def live_order(author_id: int, board_id: int) -> str:
    """Sorted set of a live board's element ids by drawing order (an add goes on top).
    Example: ``lz:{u:42}:1234``."""
    return f"lz:{_user_tag(author_id)}:{int(board_id)}"


def live_right(author_id: int, board_id: int) -> str:
    """Sorted set of a live board's element ids by the right end of each (its x extent,
    feeds.validation.element_extent): the highest is how narrow the board may be made.
    Example: ``lx:{u:42}:1234``."""
    return f"lx:{_user_tag(author_id)}:{int(board_id)}"


def live_bottom(author_id: int, board_id: int) -> str:
    """Sorted set of a live board's element ids by the bottom end of each (live_right's twin for
    the height). Example: ``ly:{u:42}:1234``."""
    return f"ly:{_user_tag(author_id)}:{int(board_id)}"


def live_version_authors(author_id: int, board_id: int) -> str:
    """Sorted set of who drew on a live board since its last kept version (feeds.versions):
    username -> when their last change reached PostgreSQL (epoch seconds), so the last to draw
    sorts last. Written once per compaction, read and deleted when a version is kept; expires
    with the live state. Example: ``lva:{u:42}:1234``."""
    return f"lva:{_user_tag(author_id)}:{int(board_id)}"


def live_presence(author_id: int, board_id: int) -> str:
    """Hash of the open connections on a board: channel name -> ``{"u": username, "e": may edit,
    "t": expires}``, refreshed by each connection while it lives (a process that dies leaves
    entries that expire). Example: ``lp:{u:42}:1234``."""
    return f"lp:{_user_tag(author_id)}:{int(board_id)}"


def live_keys(author_id: int, board_id: int) -> list[str]:
    """Every key of one board's live state (deleting its author's account deletes them)."""
    return [
        live_ops(author_id, board_id),
        live_meta(author_id, board_id),
        live_elements(author_id, board_id),
        live_order(author_id, board_id),
        live_right(author_id, board_id),
        live_bottom(author_id, board_id),
        live_presence(author_id, board_id),
        live_version_authors(author_id, board_id),
    ]


def live_dirty_member(author_id: int, board_id: int) -> str:
    """A member of live_dirty: ``<author>:<board>``."""
    return f"{int(author_id)}:{int(board_id)}"


def live_dirty_parse(member: str) -> tuple[int, int]:
    """(author id, board id) of a live_dirty member."""
    author, board = member.split(":")
    return int(author), int(board)


def live_online() -> str:
    """Sorted set on the plain Redis (the Channels layer's, never the data Redis or a cluster):
    member = the id of a person with a ``/ws/me`` socket open, score = when that record expires
    (Unix seconds). ``live:online``."""
    return "live:online"


def live_person_group(user_id: int) -> str:
    """The Channels group of one person's ``/ws/me`` sockets (on the plain Redis). ``me.42``."""
    return f"me.{int(user_id)}"


# --- federation (feeds.federation.delivery) -------------------------------------------------------


def _inbox_tag(inbox: str) -> str:
    return "{i:" + hashlib.sha256(inbox.encode()).hexdigest()[:16] + "}"


def inbox_failures(inbox: str) -> str:
    """String: deliveries to one remote inbox that failed in a row (the circuit breaker's count;
    deleted by a success). Example: ``ff:{i:9f86d081884c7d65}``."""
    return "ff:" + _inbox_tag(inbox)


def inbox_open(inbox: str) -> str:
    """String with a TTL: present while the inbox's breaker is open (no delivery tried there).
    Example: ``fo:{i:9f86d081884c7d65}``."""
    return "fo:" + _inbox_tag(inbox)


def picture_gate(board_id: int) -> str:
    """String with a TTL of PICTURE_RENDER_SECONDS: a board's picture was rendered in this window
    ("sent"), or a render waits for its end ("due"; feeds.services.boards). Example: ``pr:{b:1234}``."""
    return f"pr:{{b:{int(board_id)}}}"


def board_update_gate(board_id: int) -> str:
    """String with a TTL of FEDERATION_UPDATE_SECONDS: a board's Update was sent (or is due) in
    this window; an edit meanwhile waits for its end. Example: ``fu:{b:1234}``."""
    return f"fu:{{b:{int(board_id)}}}"
