"""Fixtures the tests of social share: the mail the real SMTP catcher kept."""

import os
import re
import time
from email import policy
from email.parser import BytesParser
from pathlib import Path

import pytest


class MailBox:
    """The mail the catcher kept: what came since the test began."""

    def __init__(self):
        self.folder = Path(os.environ["MAIL_DIR"])
        self.before = set(self.folder.glob("*.eml"))

    def new(self, *, wait: float = 5.0) -> list:
        deadline = time.monotonic() + wait
        while True:
            found = sorted(set(self.folder.glob("*.eml")) - self.before)
            if found or time.monotonic() > deadline:
                return [BytesParser(policy=policy.default).parsebytes(p.read_bytes()) for p in found]
            time.sleep(0.05)

    def none_new(self) -> bool:
        time.sleep(0.3)  # a mail would have come by now: the SMTP exchange is synchronous
        return not set(self.folder.glob("*.eml")) - self.before

    def link(self, message) -> str:
        return re.search(r"https?://\S+", message.get_body(preferencelist=("plain",)).get_content()).group(0)


@pytest.fixture
def mailbox(settings):
    """The real SMTP path (Django's test set-up swaps in a memory backend; not here)."""
    assert settings.MAIL_DIR, "the tests send mail to the catcher scripts/with-servers.sh starts"
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    return MailBox()
