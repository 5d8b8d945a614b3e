"""Every Redis key of boards, timelines and discovery.

Per-user keys carry the owner's hash tag ``{u:<id>}``; per-board keys the board's ``{b:<id>}``,
so each lands on one Redis Cluster slot and no online command spans two owners. Nothing outside
this module spells a key (Mastodon's FeedManager#key is the model).
"""


def _user_tag(user_id: int) -> str:
    return f"{{u:{int(user_id)}}}"


def board(board_id: int) -> str:
    """Hash G, the board cache: title, kind, tags, author, times, views. Example: ``g:{b:1234}``."""
    return f"g:{{b:{int(board_id)}}}"


def profile_timeline(user_id: int) -> str:
    """Sorted set M: the user's own board ids, score = id. Example: ``m:{u:42}``."""
    return f"m:{_user_tag(user_id)}"


def home_timeline(user_id: int) -> str:
    """Sorted set P: board ids of the user's followees, score = id. Example: ``p:{u:42}``."""
    return f"p:{_user_tag(user_id)}"


def id_generator_lease() -> str:
    """String counter handing each process one of the 32 snowflake generator numbers. ``idgen:lease``."""
    return "idgen:lease"


def timeline_meta(user_id: int) -> str:
    """Hash of per-user timeline facts, e.g. ``m_archived_max`` / ``p_archived_max``: the largest
    id archived to PostgreSQL from M / P (0 when none). Example: ``tm:{u:42}``."""
    return f"tm:{_user_tag(user_id)}"


def active(user_id: int) -> str:
    """String with a TTL: present while the user has been active within IDLE_AFTER. ``a:{u:42}``."""
    return f"a:{_user_tag(user_id)}"


def archive_waiting() -> str:
    """Sorted set of timelines past their hot window, ``m:42`` / ``p:42``, scored by when they
    were flagged. One key for the site (written by its own command, never inside a per-user
    script). Example: ``archive:waiting``."""
    return "archive:waiting"


def timeline_key(kind: str, user_id: int) -> str:
    """The key of timeline ``kind`` ("m" or "p") of a user."""
    return profile_timeline(user_id) if kind == "m" else home_timeline(user_id)


def parse_waiting(member: str) -> tuple[str, int]:
    """``"p:42"`` -> ``("p", 42)``: a member of archive_waiting."""
    kind, _, user_id = member.partition(":")
    return kind, int(user_id)


def waiting_member(kind: str, user_id: int) -> str:
    """The member of archive_waiting for a timeline."""
    return f"{kind}:{int(user_id)}"
