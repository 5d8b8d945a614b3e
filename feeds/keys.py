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
