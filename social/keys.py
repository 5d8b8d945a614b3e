"""Every Redis key of the follow graph and the per-user counters.

Each per-user key carries the owner's hash tag ``{u:<id>}`` so that all of one user's keys sit
in one Redis Cluster slot. Nothing outside this module spells a key.
"""


def user_tag(user_id: int) -> str:
    """The hash tag of everything a user owns: ``{u:42}`` (one Redis Cluster slot per user)."""
    return f"{{u:{int(user_id)}}}"


_user_tag = user_tag


def followers(user_id: int) -> str:
    """Sorted set F: follower ids scored by follow time (epoch seconds). Example: ``f:{u:42}``."""
    return f"f:{_user_tag(user_id)}"


def following(user_id: int) -> str:
    """Sorted set, the mirror of F: followee ids scored by follow time. Example: ``fg:{u:42}``."""
    return f"fg:{_user_tag(user_id)}"


def hidden(user_id: int) -> str:
    """Sorted set of the people a user does not see, each scored by why, a sum of bits
    (social.hiding: 1 they block them, 2 they are blocked by them, 4 they mute them); a person
    with no bit left leaves the set. Example: ``hx:{u:42}``."""
    return f"hx:{_user_tag(user_id)}"


def user_keys(user_id: int) -> list[str]:
    """Every key of social that belongs to one user alone (deleting an account deletes them)."""
    return [
        followers(user_id),
        following(user_id),
        counts(user_id),
        reads(user_id),
        read_ids(user_id),
        reads_query(user_id),
        hidden(user_id),
    ]


def counts(user_id: int) -> str:
    """Hash of the profile counters: ``followers``, ``following``, ``boards``. Example: ``c:{u:42}``."""
    return f"c:{_user_tag(user_id)}"


def reads(user_id: int) -> str:
    """Sorted set of the boards a user read, scored by read time (epoch seconds), trimmed to
    READ_RETENTION on every write and expiring with it (RockMelt's user -> items model: a very
    popular board never becomes one giant hot key). Example: ``r:{u:42}``."""
    return f"r:{_user_tag(user_id)}"


# Reads waiting to be written to PostgreSQL are buffered in buckets, each its own hash tag, so
# the writes of every signed-in read spread over a cluster's nodes instead of one key.
READS_PENDING_BUCKETS = 64


def read_ids(user_id: int) -> str:
    """Set of the same board ids as ``reads`` (an intset: 8 bytes an id up to 512 of them),
    kept with it by every write, expiring with it: social reading intersects it with the asked
    ids in C (SINTER) instead of walking the reads in Lua. Example: ``rs:{u:42}``."""
    return f"rs:{_user_tag(user_id)}"


def reads_query(user_id: int) -> str:
    """Set of the board ids one social-reading call asks about, made and deleted inside that
    call (social/scripts/readers_of.lua), in the slot of the call's first reader so that it lies
    on the node the call runs on. Never outlives the script. Example: ``rq:{u:42}``."""
    return f"rq:{_user_tag(user_id)}"


def reads_pending(reader_id: int) -> str:
    """Hash ``<reader>:<board>`` -> read time (epoch seconds): reads not yet written to
    PostgreSQL, one bucket of them (the reader's id modulo READS_PENDING_BUCKETS); beat moves
    them into the Read table. Example: ``rp:{rp:42}``."""
    return reads_pending_bucket(int(reader_id) % READS_PENDING_BUCKETS)


def reads_pending_bucket(bucket: int) -> str:
    """One bucket of the read buffer by its number (0 .. READS_PENDING_BUCKETS - 1)."""
    return f"rp:{{rp:{int(bucket)}}}"


def reads_flushing_bucket(bucket: int) -> str:
    """A bucket of the read buffer renamed aside while a flush writes it (same slot). ``rpf:{rp:42}``."""
    return f"rpf:{{rp:{int(bucket)}}}"


def read_field(reader_id: int, board_id: int) -> str:
    """The field of one read in the buffer: ``"7:1234"``."""
    return f"{int(reader_id)}:{int(board_id)}"


def parse_read_field(field: str) -> tuple[int, int]:
    """``"7:1234"`` -> ``(7, 1234)``: (reader id, board id) of a read_field."""
    reader_id, _, board_id = field.partition(":")
    return int(reader_id), int(board_id)


def board_readers(board_id: int) -> str:
    """Sorted set reader id -> read time of one board: the board -> readers model RockMelt
    rejected, built only by the benchmark to compare with reads(). ``br:{b:1234}``."""
    return f"br:{{b:{int(board_id)}}}"


def token_user(key_hash: str, owner: int | None = None) -> str:
    """String: the user id and expiry of a bearer token (by its SHA-256), cached with a short TTL
    so an authenticated request needs no PostgreSQL query. A token that names its owner
    (social.tokens: ``<user id>.<secret>``) is cached in its owner's slot, beside what a read of
    theirs touches (their read limit, their feed), so one script call checks all of it:
    ``tok:{u:42}:9f86d0...``; a token of the older form, which names no one, in a slot of its
    own: ``tok:{t:9f86d0...}``."""
    if owner is not None:
        return f"tok:{_user_tag(owner)}:{key_hash}"
    return f"tok:{{t:{key_hash}}}"


def read_limit(user_id: int, per_minute: int) -> str:
    """Hash slice number -> reads: the API reads of one signed-in person over the sliding
    window (ugcsite.platform.ratelimits; a changed limit counts afresh), in their slot, so a
    feed read counts it in the page's own script call. Example: ``rl:reads:1200:{u:42}``."""
    return f"rl:reads:{int(per_minute)}:{_user_tag(user_id)}"


def address_read_limit(address: str, per_minute: int) -> str:
    """Hash slice number -> reads: the API reads from one client address, signed in or not, in
    the address's own slot (on a plain server the feed's script counts it too). Example:
    ``rl:reads-address:12000:{a:192.0.2.7}``."""
    return f"rl:reads-address:{int(per_minute)}:{{a:{address}}}"
