"""The facts of an account, spelled once (API.md, "Accounts and auth"): the model's validator,
the API's body models, the OpenAPI document and the pages read them here."""

import re

USERNAME_PATTERN = r"^[A-Za-z0-9_]{3,30}$"  # the portable form: JSON Schema, pydantic, HTML
USERNAME_RE = re.compile(USERNAME_PATTERN.removesuffix("$") + r"\Z")  # Python's $ would let a final newline through
USERNAME_MAX = 30
USERNAME_WORDS = "3-30 characters of A-Z, a-z, 0-9 and _"
PASSWORD_LENGTH = (8, 128)
# A person's own settings (API.md, "Search, notifications, your own settings").
DISPLAY_NAME_MAX = 50
BIO_MAX = 300
