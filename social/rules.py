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
EMAIL_MAX = 254  # RFC 5321's longest path; an address is optional ("" for none)
# The addresses taken: a plain dot-atom at a host name with a top-level domain of letters; every
# one of them passes Django's EmailValidator too (the model's), so the API, its schema and the
# pages agree. "" (no address) is allowed by the pattern.
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
EMAIL_PATTERN = rf"^(?:[A-Za-z0-9_%+-]+(?:\.[A-Za-z0-9_%+-]+)*@(?:{_LABEL}\.)+[A-Za-z]{{2,63}})?$"
EMAIL_RE = re.compile(EMAIL_PATTERN.removesuffix("$") + r"\Z")
EMAIL_WORDS = "an address such as name@example.org, or empty for none"
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
# Two-factor sign-in (docs/api.md, "Two-factor sign-in and sessions"): six-digit codes of 30 s
# (RFC 6238's defaults, what every authenticator app shows), a code of the step before or after
# taken too (a phone's clock drifts), and ten single-use recovery codes of two groups of five
# lower-case letters and digits (~52 bits each).
OTP_DIGITS = 6
OTP_PERIOD_SECONDS = 30
OTP_DRIFT_STEPS = 1
OTP_ISSUER = "ugcsite"
RECOVERY_CODES = 10
RECOVERY_CODE_PATTERN = r"^[a-z0-9]{5}-[a-z0-9]{5}$"
# What a client may send as a code: a TOTP code or a recovery code, spaces allowed (longer is no code).
OTP_INPUT_MAX = 32
# A session's or token's id in GET/DELETE /api/v1/me/sessions: "s" (a browser session) or "t"
# (a token), then its row's number.
SESSION_ID_PATTERN = r"^[st][1-9][0-9]{0,17}$"
SESSION_ID_RE = re.compile(SESSION_ID_PATTERN.removesuffix("$") + r"\Z")
# A browser's User-Agent as kept beside a session or token (longer ones are cut).
USER_AGENT_MAX = 300
# A session's last use is written at most this often (a write a request would cost too much).
SESSION_TOUCH_SECONDS = 300
# Between the password and the code on the log-in page: how long the password step holds.
LOGIN_CODE_SECONDS = 300
