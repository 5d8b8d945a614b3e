"""The facts of a board and of a timeline, spelled once (API.md, "Boards").

The validators (feeds.validation), the models, the OpenAPI document, the pages and the editor
(``static/js/editor.js``, through ``editor_config()`` embedded in its page) all read them here.
"""

import re

from django.db import models

BOARD_KINDS = ("sketch", "diagram", "note", "comic", "map")

TAG_PATTERN = r"^[a-z0-9-]{1,32}$"
TAG_RE = re.compile(TAG_PATTERN.removesuffix("$") + r"\Z")  # Python's $ would let a final newline through
TAG_WORDS = "1-32 characters of a-z, 0-9 and -"
MAX_TAGS = 10

MAX_TITLE = 120
COLOR_PATTERN = r"^#[0-9a-fA-F]{6}$"
MAX_CANVAS = 4_096
MAX_ELEMENTS = 5_000
MAX_POINTS = 100_000  # in all paths of a drawing
STROKE_WIDTH = (1, 64)
TEXT_SIZE = (8, 128)
MAX_TEXT = 500


class Timeline(models.TextChoices):
    """The two timelines of a user: the value is the letter in keys, chunks and task arguments."""

    PROFILE = "m", "profile (M)"
    HOME = "p", "home (P)"


def editor_config() -> dict:
    """What the whiteboard editor checks before it saves (embedded in its page as JSON)."""
    return {
        "kinds": list(BOARD_KINDS), "tagPattern": TAG_PATTERN, "tagWords": TAG_WORDS, "maxTags": MAX_TAGS, "maxTitle": MAX_TITLE,
        "colorPattern": COLOR_PATTERN, "maxCanvas": MAX_CANVAS, "maxElements": MAX_ELEMENTS,
        "maxPoints": MAX_POINTS, "strokeWidth": list(STROKE_WIDTH), "textSize": list(TEXT_SIZE), "maxText": MAX_TEXT,
    }
