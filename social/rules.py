"""The facts of an account, spelled once (docs/api.md, "Accounts and auth"): the model's validator,
the API's body models, the OpenAPI document and the pages read them here."""

import re

USERNAME_PATTERN = r"^[A-Za-z0-9_]{3,30}$"  # the portable form: JSON Schema, pydantic, HTML
USERNAME_RE = re.compile(USERNAME_PATTERN.removesuffix("$") + r"\Z")  # Python's $ would let a final newline through
USERNAME_MAX = 30
USERNAME_WORDS = "3-30 characters of A-Z, a-z, 0-9 and _"
PASSWORD_LENGTH = (8, 128)
# A person's own settings (docs/api.md, "Search, notifications, your own settings").
DISPLAY_NAME_MAX = 50
BIO_MAX = 300
# Search of people (GET /api/v1/search?type=users): the query's length, and how alike a typo
# must be to a word of a name (pg_trgm's word similarity, 0..1; 0.3 finds "alcie" for "alice").
SEARCH_QUERY_LENGTH = (1, 100)
# A search's ``total`` counts at most this many matches (people and boards alike), so a query
# that matches half the site costs no more to count than this many do.
SEARCH_MATCHES_MAX = 1_000
NAME_SIMILARITY_MIN = 0.3
# Avatars (the settings page): an upload is refused past AVATAR_UPLOAD_MAX bytes or
# AVATAR_PIXELS_MAX pixels (a decompression bomb opens small and decodes huge), and is stored
# as a AVATAR_SIZE-pixel square WebP (a few KB). AVATAR_FORMATS: the decoders ever run on it.
AVATAR_UPLOAD_MAX = 5 * 1024 * 1024
AVATAR_BODY_MAX = AVATAR_UPLOAD_MAX + 256 * 1024  # a request carrying one (a form's other fields), before the 413
AVATAR_PIXELS_MAX = 25_000_000
AVATAR_SIZE = 256
AVATAR_FORMATS = ("PNG", "JPEG", "GIF", "WEBP")
AVATAR_ACCEPT = "image/png,image/jpeg,image/gif,image/webp"
