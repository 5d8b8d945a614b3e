"""Screenshots of the pages people look at first (the header, a card, the editor), on a desktop
(1280x800) and a phone (390x844, touch), signed in as a demo person, in the distribution's
Chromium through Playwright. For before/after pictures of a layout change (issue 28).

    make run                                  # in another terminal (PORT=... to move it)
    .venv/bin/python scripts/screenshots.py OUT_DIR [--url http://127.0.0.1:8000]
        [--user alice] [--password demo-password] [--chromium /usr/bin/chromium]

Expects a running site (``make run``, which creates the demo world: README.md lists its logins)
and writes into OUT_DIR, for each of ``desktop`` and ``phone``:
  {size}-header.png    the top of the feed page (the header, as tall as it is)
  {size}-feed.png      the feed as it first shows (the window)
  {size}-card.png      the first card of the feed
  {size}-discover.png  discover as it first shows
  {size}-editor.png    the new-board editor as it first shows (the window: is Publish in it?)
  {size}-editor-full.png  the whole editor page
Prints each file's path. Exits 1 if the login fails. Nothing on the site is changed.
"""

import argparse
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

SIZES = {
    "desktop": {"viewport": {"width": 1280, "height": 800}},
    "phone": {
        "viewport": {"width": 390, "height": 844},
        "has_touch": True,
        "is_mobile": True,
        "device_scale_factor": 3,
    },
}


def log_in(page, user: str, password: str) -> None:
    page.goto("/login?next=/")
    page.fill("#id_username", user)
    page.fill("#id_password", password)
    page.click("form.stacked button[type=submit]")
    page.wait_for_load_state()
    if "/login" in page.url:
        sys.exit(f"The login of {user!r} failed at {page.url}: is this a demo login of the running site?")


def shoot(page, out: Path, name: str, **options) -> None:
    path = out / f"{name}.png"
    page.screenshot(path=path, **options)
    print(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the folder the PNGs are written to (made if missing)")
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the running site (make run)")
    parser.add_argument("--user", default="alice")
    parser.add_argument("--password", default="demo-password")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
        for size, options in SIZES.items():
            context = browser.new_context(base_url=args.url.rstrip("/"), **options)
            page = context.new_page()
            log_in(page, args.user, args.password)
            page.goto("/")
            page.wait_for_load_state("networkidle")
            header = page.locator("header.topbar").bounding_box()
            width = options["viewport"]["width"]
            shoot(page, args.out, f"{size}-header", clip={"x": 0, "y": 0, "width": width, "height": header["height"]})
            shoot(page, args.out, f"{size}-feed")
            card = page.locator(".card").first
            if card.count():
                card.scroll_into_view_if_needed()
                card.screenshot(path=args.out / f"{size}-card.png")
                print(args.out / f"{size}-card.png")
            page.goto("/discover")
            page.wait_for_load_state("networkidle")
            shoot(page, args.out, f"{size}-discover")
            page.goto("/new")
            page.wait_for_selector("#editor[data-ready=true]")
            shoot(page, args.out, f"{size}-editor")
            shoot(page, args.out, f"{size}-editor-full", full_page=True)
            context.close()
        browser.close()


if __name__ == "__main__":
    main()
