"""The facts of a board and of a timeline, spelled once (docs/api.md, "Boards").

The validators (feeds.validation), the models, the OpenAPI document, the pages and the editor
(``static/js/editor.js``, through ``editor_config()`` embedded in its page) all read them here.
"""

import math
import re

from django.db import models

from social import rules as people_rules

BOARD_KINDS = ("sketch", "diagram", "note", "comic", "map")

TAG_PATTERN = r"^[a-z0-9-]{1,32}$"
TAG_RE = re.compile(TAG_PATTERN.removesuffix("$") + r"\Z")  # Python's $ would let a final newline through
TAG_WORDS = "1-32 characters of a-z, 0-9 and -"
MAX_TAGS = 10

# Discovery's indexes are split by board into this many shards, each under a hash tag of its own
# (feeds.keys.discovery_shard), so that a query runs on every node at once and each node does a
# share of it. 24 divides evenly among 1, 2, 3, 4, 6, 8 and 12 nodes: each shard's tag is chosen
# in its own 24th of the slot space, and a cluster made by ``redis-cli --cluster create`` gives
# each node an even run of slots. Changing it is a rebuild of discovery (docs/operations.md).
DISCOVERY_SHARDS = 24

MAX_TITLE = 120


def _char_class(chars: list[str]) -> str:
    """The inside of a regex character class matching exactly ``chars``, as \\uXXXX ranges
    (read alike by JSON Schema's ECMA-262, Python and Rust; every character here is in the BMP)."""
    points = sorted(map(ord, chars))
    runs: list[list[int]] = []
    for point in points:
        if runs and point == runs[-1][1] + 1:
            runs[-1][1] = point
        else:
            runs.append([point, point])
    return "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in runs)


# What str.strip() trims from a title's ends (feeds.validation), spelled for the OpenAPI
# document: 1 to MAX_TITLE characters once trimmed, none of them NUL. (Every white space
# character is in the BMP.)
TITLE_TRIMMED = [chr(point) for point in range(0x10000) if chr(point).isspace()]
_SPACE, _SOLID = _char_class(TITLE_TRIMMED), f"[^{_char_class(TITLE_TRIMMED)}\\u0000]"
TITLE_PATTERN = f"^[{_SPACE}]*{_SOLID}([^\\u0000]{{0,{MAX_TITLE - 2}}}{_SOLID})?[{_SPACE}]*$"
COLOR_PATTERN = r"^#[0-9a-fA-F]{6}$"
MAX_CANVAS = 4_096
MAX_ELEMENTS = 5_000
MAX_POINTS = 100_000  # in all paths of a drawing
STROKE_WIDTH = (1, 64)
TEXT_SIZE = (8, 128)
MAX_TEXT = 500
ROTATION = (0, 360)  # degrees, from the first up to (not including) the second
STICKY_FILL = "#fff3bf"  # a new sticky note's paper
# An element's id (docs/api.md, "Shared boards, live"): kept as sent, unique within a drawing; the
# server gives one of ELEMENT_ID_GENERATED characters to an element sent without.
ELEMENT_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
ELEMENT_ID_GENERATED = 12
# Pictures on the canvas (docs/api.md, "Pictures"): POST /api/v1/images takes the bytes of one of
# IMAGE_TYPES (its Content-Type names the Pillow decoder that alone runs on it) up to
# IMAGE_UPLOAD_MAX bytes and IMAGE_PIXELS_MAX pixels (read from the header before any decoding: a
# decompression bomb is a small file that decodes to gigabytes); the copy kept is re-encoded in
# the same format (no EXIF, no GPS) and at most IMAGE_SIDE_MAX pixels on its long side. An image
# element names it by its id, IMAGE_ID_LENGTH random characters (never guessed, never counted).
IMAGE_TYPES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WEBP"}
IMAGE_UPLOAD_MAX = 10 * 1024 * 1024
IMAGE_PIXELS_MAX = 40_000_000
IMAGE_SIDE_MAX = 2048
# A second, smaller copy (JPEG, or PNG with transparency, at most IMAGE_PREVIEW_SIDE px on its long side) is what the SVG
# preview embeds: a board's preview is fetched by every card that shows it, and a 2048 px PNG
# photo can weigh megabytes where this weighs tens of kilobytes.
IMAGE_PREVIEW_SIDE = 1024
IMAGE_ID_LENGTH = 16
IMAGE_ID_PATTERN = r"^[A-Za-z0-9_-]{16}$"
# Editors a board may have: each one is a row and a name in every hello, so the list stays short.
MAX_EDITORS = 50

# The live channel (feeds.live): what one connection may send. A frame holds one op, and an op
# one element, which may be a path of up to MAX_POINTS points (about 20 bytes each as JSON).
LIVE_MAX_FRAME = 2 * 1024 * 1024
LIVE_OPS_PER_SECOND = 60  # sustained, per connection; a burst of LIVE_OPS_BURST passes
LIVE_OPS_BURST = 200
# A sender's cursor moves reach the others at most this often: moves in between are coalesced
# (the latest one goes when its turn comes), on the server as in the browser.
LIVE_CURSORS_PER_SECOND = 20
LIVE_FLOOD_CLOSE_AFTER = 50  # messages refused for the rate limit before the server closes (4429)
# A stroke others see while it is drawn: the drawer's browser sends its new points as ephemeral
# "stroke" frames (never ops, never in the log), at most LIVE_STROKE_FRAMES_PER_SECOND (past that
# they are dropped, silently) and LIVE_STROKE_POINTS points each; the others' browsers drop a
# stroke that has not moved for LIVE_STROKE_IDLE seconds (its drawer vanished).
LIVE_STROKE_FRAMES_PER_SECOND = 30
LIVE_STROKE_POINTS = 1_000
LIVE_STROKE_IDLE = 5
# A connection that does not read what the board sends: past LIVE_SEND_BUFFER characters waiting
# for it (several seconds of the busiest board), or a write stuck LIVE_SEND_TIMEOUT seconds, it is
# closed (4408) and reconnects with ?since= to read the rest from the log; the others never wait.
LIVE_SEND_BUFFER = 1024 * 1024
LIVE_SEND_TIMEOUT = 10.0
# A connection that drops (no closing handshake, or not a "going away" one) is shown to the
# others as "reconnecting" for this many seconds, unless its person comes back sooner.
LIVE_RECONNECT_GRACE = 30
# A heartbeat, so that a connection the network lost is noticed within seconds (issue 40: an
# offline editor still showed "Live", and the others saw them "here", nearly a minute later). A
# client joins it with a "ping" (answered "pong"); from then on the server sends it a "ping" every
# LIVE_PING_EVERY seconds, which it answers "pong" (any frame counts). A client that hears nothing
# for LIVE_SILENCE seconds says it is offline; the server closes one that has sent nothing for
# LIVE_SILENCE seconds as dropped (the others see its person reconnecting, LIVE_RECONNECT_GRACE).
# The server pings, not the browser: a background tab's timers are slowed, its message handlers
# are not. Clients that never join are left to TCP and the ASGI server's own pings.
LIVE_PING_EVERY = 3
LIVE_SILENCE = 8


class Timeline(models.TextChoices):
    """The two timelines of a user: the value is the letter in keys, chunks and task arguments."""

    PROFILE = "m", "profile (M)"
    HOME = "p", "home (P)"


# How an arrow's head and a sticky note's text are laid out, alike by the server's preview
# (feeds.svg), the canvas and the editor's export (static/js/live.js, which reads them from the
# page's "drawing-layout" JSON: feeds.context_processors.drawing): the head's sides at an angle
# from the shaft (radians), the note's padding, its line height (times the text size), and the
# width a character is given when a note's text wraps to its box (times the text size: a wide
# sans-serif's average, so that a line of words stays inside; the server cannot measure glyphs,
# so every renderer wraps by this count and all agree on the lines).
DRAWING_LAYOUT = {"arrowHeadAngle": math.pi / 6, "stickyPad": 10, "stickyLineHeight": 1.25, "stickyCharWidth": 0.6}


def editor_config() -> dict:
    """What the whiteboard editor checks before it saves (embedded in its page as JSON)."""
    return {
        "kinds": list(BOARD_KINDS),
        "tagPattern": TAG_PATTERN,
        "tagWords": TAG_WORDS,
        "maxTags": MAX_TAGS,
        "maxTitle": MAX_TITLE,
        "colorPattern": COLOR_PATTERN,
        "maxCanvas": MAX_CANVAS,
        "maxElements": MAX_ELEMENTS,
        "maxPoints": MAX_POINTS,
        "strokeWidth": list(STROKE_WIDTH),
        "textSize": list(TEXT_SIZE),
        "maxText": MAX_TEXT,
        "rotation": list(ROTATION),
        "stickyFill": STICKY_FILL,
        "elementIdPattern": ELEMENT_ID_PATTERN,
        "elementIdLength": ELEMENT_ID_GENERATED,
        "imageTypes": list(IMAGE_TYPES),
        "imageUploadMax": IMAGE_UPLOAD_MAX,
        "imagePixelsMax": IMAGE_PIXELS_MAX,
    }


# Search of boards (GET /api/v1/search?type=boards): the newest SEARCH_MATCHES_MAX matches are
# ranked (title above tags above the text in the drawing) and counted, so a query that matches
# half the site costs what one matching SEARCH_MATCHES_MAX boards does; ``total`` stops there.
SEARCH_TYPES = ("users", "boards")
SEARCH_MATCHES_MAX = people_rules.SEARCH_MATCHES_MAX  # one figure for people and boards (social.rules)
# A query of two or more terms (words, prefixes, #tags) each found SEARCH_MATCHES_MAX times or more
# (a conjunction of common words): the newest SEARCH_CONJUNCTION_MATCHES_MAX matches are ranked and
# counted instead. Finding a conjunction's matches reads each term's boards back to its oldest match,
# far more than the matches (two words each in a fifth of the titles: 25,000 index entries for 1,000
# matches at 10^6 boards), and every match is looked up to be ranked; a smaller window divides both
# (bench/README.md, "A smaller window for common words together").
SEARCH_CONJUNCTION_MATCHES_MAX = 250
# The text of a drawing that is searched: its first SEARCH_DOC_TEXT_MAX characters (a tsvector
# holds at most 1 MB, and a drawing may hold 5,000 texts of 500).
SEARCH_DOC_TEXT_MAX = 100_000


PAGE_IDS_MAX = 100  # boards one social reading or likes question asks about (a page of cards)


class NotificationKind(models.TextChoices):
    """What a notification tells (docs/api.md, "Search, notifications"). The value is the API's ``kind``."""

    FOLLOW = "follow", "followed you"
    INVITE = "invite", "invited you to draw"
    BOARD_CHANGED = "board_changed", "changed a board you edit while you were away"
    LIKE = "like", "liked your board"
    BOOST = "boost", "boosted your board"
    REMIX = "remix", "remixed your board"
    COMMENT = "comment", "commented on your board"
    REPLY = "reply", "replied to your comment"
    MENTION = "mention", "mentioned you in a comment"
    REPORT_ACTIONED = "report_actioned", "staff reviewed your report and took the board or person down"
    REPORT_DISMISSED = "report_dismissed", "staff reviewed your report and left the board or person up"


class ReportReason(models.TextChoices):
    """Why someone reports a board or a person (docs/api.md, "Safety"): the API's ``reason``."""

    SPAM = "spam", "Spam"
    ABUSE = "abuse", "Abuse or harassment"
    ILLEGAL = "illegal", "Illegal content"
    OTHER = "other", "Something else"


REPORT_TEXT_MAX = 1_000  # what a reporter may add in their own words


# One notification row gathers every actor of one kind, for one board, in one bucket of
# NOTIFICATION_BUCKET_SECONDS while it is unread ("alice and 41 others followed you"), keeping
# the NOTIFICATION_ACTORS_KEPT latest actors by name and counting the rest: no action, however
# many people it reaches or come from, writes more than one row per recipient.
NOTIFICATION_BUCKET_SECONDS = 24 * 3600
NOTIFICATION_ACTORS_KEPT = 3
# How many ids one POST /api/v1/notifications/read may name.
NOTIFICATIONS_READ_MAX = 100


# Comments on boards (docs/api.md, "Comments"). The text is plain: 1 to COMMENT_TEXT_MAX
# characters once white space at both ends is trimmed (no NUL, no unpaired surrogate); a page
# shows it escaped, with its links and @mentions made links. Replies are one level deep.
COMMENT_TEXT_MAX = 2_000
# People one comment may notify by @name: the first COMMENT_MENTIONS_MAX distinct names that
# are someone's (more are left as text). Each is one notification row, written in Celery.
COMMENT_MENTIONS_MAX = 10
# The @name of a mention: a username (social.rules) after "@" that follows no word character,
# ending where a username cannot go on. Read by the server alone (it renders the links).
MENTION_PATTERN = (
    r"(?<![A-Za-z0-9_@])@(" + people_rules.USERNAME_PATTERN.removeprefix("^").removesuffix("$") + r")(?![A-Za-z0-9_])"
)
MENTION_RE = re.compile(MENTION_PATTERN)
# A link in a comment: http(s) up to white space; a closing punctuation mark is left outside.
LINK_RE = re.compile(r"https?://[^\s<>\"']+[^\s<>\"'.,;:!?)\]]")


class CommentPolicy(models.TextChoices):
    """Who may comment on a board (PATCH /api/v1/boards/{id} ``{"comments": ...}``): its author sets it."""

    EVERYONE = "everyone", "everyone signed in"
    FOLLOWERS = "followers", "people who follow the author"
    OFF = "off", "nobody"


def comments_config() -> dict:
    """What the comment form checks before it sends (embedded in the board page as JSON)."""
    return {"maxText": COMMENT_TEXT_MAX, "pageSize": COMMENTS_PAGE}


COMMENTS_PAGE = 20  # comments a board page shows at first, and each "show more" adds
