"""A local SMTP server that keeps every mail it is given as a file: ``make run`` and the tests
send the site's mail here (EMAIL_HOST/EMAIL_PORT), staff read it at /admin/mail/, the tests
read the files. Production sends through a real relay instead (docs/operations.md).

    python scripts/mailcatcher.py --port 1025 --dir var/mail

aiosmtpd (aio-libs) speaks SMTP; this keeps each message whole, ``<time>-<n>.eml``, written
aside and renamed so a reader never sees half a file."""

import argparse
import itertools
import os
import signal
import threading
import time
from pathlib import Path

from aiosmtpd.controller import Controller


class Keep:
    def __init__(self, folder: Path):
        self.folder = folder
        self.count = itertools.count()

    async def handle_DATA(self, server, session, envelope):
        name = f"{time.time_ns()}-{next(self.count)}.eml"
        partial = self.folder / f".{name}"
        partial.write_bytes(envelope.original_content or envelope.content)
        os.replace(partial, self.folder / name)
        return "250 Message accepted for delivery"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", type=Path, required=True)
    options = parser.parse_args()
    options.dir.mkdir(parents=True, exist_ok=True)
    controller = Controller(Keep(options.dir), hostname="127.0.0.1", port=options.port)
    controller.start()
    print(f"mail catcher on 127.0.0.1:{options.port}, keeping mail in {options.dir}", flush=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    controller.stop()


if __name__ == "__main__":
    main()
