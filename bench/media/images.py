"""Pictures for the canvas (issue 40, item 5): the time of one upload of a 12 MP JPEG, a phone's
photo (4000 x 3000, with EXIF and GPS), through POST /api/v1/images as the site serves it.

``python -m bench.media.images`` (`make bench-images`; `make bench` runs it too) makes the photo (a
fixed seed: gradients, shapes and grain, so it compresses as a photo does, not as noise or a flat
colour), then measures, each as p50 and p99 over ``--runs`` calls:

- the whole upload: Django's test client posting the bytes to /api/v1/images with a bearer token,
  in this process (the middleware, the checks, the decode, the shrink to 2048 px, the re-encode,
  the write through the storage API to a local folder, the quota row and the INSERT);
- ``feeds.images.image_process`` alone (decode, turn, shrink, encode, and the small copy for
  previews: the CPU of it);
- beside them: Pillow decoding the same JPEG whole and nothing else (what a site that decodes it
  and shrinks it after pays at least: image_process did that before it asked for half scale), and
  the floor, the half-scale decode alone (libjpeg's DCT scaling, which image_process uses: a
  12 MP photo is kept at 2000 x 1500).

Figures in bench/results/images.md (or ``--out``).
"""

import argparse
import io
import os
import platform
import random
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import django

from bench.harness.report import RESULTS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30, help="timed uploads a figure")
    parser.add_argument("--width", type=int, default=4000)
    parser.add_argument("--height", type=int, default=3000)
    parser.add_argument("--out", default=str(RESULTS / "images.md"))
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.DEBUG = False  # no query log
    settings.RATE_LIMIT_WRITES_PER_MINUTE = 0  # the load is the point here
    settings.RATE_LIMIT_WRITES_PER_ADDRESS_PER_MINUTE = 0
    settings.IMAGE_QUOTA_BYTES = 1 << 40
    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    with tempfile.TemporaryDirectory(prefix="bench-images-") as media:
        settings.MEDIA_ROOT = Path(media)
        run(args)


def photo(width: int, height: int) -> bytes:
    """A JPEG that compresses as a photo does: smooth gradients, a few hundred soft shapes and
    sensor grain, at quality 92, with EXIF (camera, orientation) and GPS. O(pixels)."""
    from PIL import ExifTags, Image, ImageDraw, ImageFilter

    rng = random.Random(40)
    small = Image.linear_gradient("L").resize((width // 8, height // 8))
    base = Image.merge("RGB", (small, small.rotate(90), small.transpose(Image.Transpose.FLIP_LEFT_RIGHT)))
    draw = ImageDraw.Draw(base)
    for _ in range(300):
        x, y = rng.randrange(base.width), rng.randrange(base.height)
        r = rng.randrange(5, base.width // 6)
        draw.ellipse((x - r, y - r, x + r, y + r), fill=tuple(rng.randrange(256) for _ in range(3)))
    image = base.filter(ImageFilter.GaussianBlur(6)).resize((width, height), Image.Resampling.BICUBIC)
    grain = Image.effect_noise((width, height), 18).convert("RGB")
    image = Image.blend(image, grain, 0.12)
    exif = Image.Exif()
    exif[ExifTags.Base.Make] = "Bench"
    exif[ExifTags.Base.Orientation] = 1
    gps = exif.get_ifd(ExifTags.IFD.GPSInfo)
    gps[ExifTags.GPS.GPSLatitudeRef] = "N"
    gps[ExifTags.GPS.GPSLatitude] = (51.0, 30.0, 12.0)
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=92, exif=exif)
    return out.getvalue()


def run(args) -> None:
    from django.test import Client
    from PIL import Image

    from bench.harness.measure import timings
    from feeds import images
    from feeds.models import Image as Picture
    from social import tokens
    from social.services import user_create

    started = time.monotonic()
    data = photo(args.width, args.height)
    made = time.monotonic() - started
    person = user_create(username="img_bench", password="bench-password")
    client = Client()
    headers = {"Authorization": f"Bearer {tokens.token_create(user=person)}"}
    answers = []

    def upload():
        response = client.post("/api/v1/images", data=data, content_type="image/jpeg", headers=headers)
        answers.append(response.status_code)
        if response.status_code != 201:
            raise RuntimeError(f"the upload answered {response.status_code}: {response.content[:300]!r}")
        return response

    whole = timings(upload, runs=args.runs, warmup=2)
    kept = Picture.objects.filter(owner=person).first()
    process = timings(lambda: images.image_process(data, "image/jpeg"), runs=args.runs, warmup=2)

    def decode(scale=1):
        with Image.open(io.BytesIO(data)) as picture:
            if scale != 1:
                picture.draft("RGB", (picture.width // scale, picture.height // scale))
            picture.load()

    floor = timings(decode, runs=args.runs, warmup=2)
    half = timings(lambda: decode(2), runs=args.runs, warmup=2)

    rows = [
        ("the whole upload, POST /api/v1/images (in process)", whole),
        ("feeds.images.image_process alone (decode, shrink, encode)", process),
        ("beside it: Pillow decodes the whole JPEG, nothing else", floor),
        ("the floor: the half-scale decode alone (draft mode)", half),
    ]
    lines = [
        "# An upload of a 12 MP JPEG (`make bench-images`, bench/media/images.py)",
        "",
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.node()}, {os.cpu_count()} cores, load "
        f"{os.getloadavg()[0]:.2f} at the end; Pillow {Image.__version__}.",
        "",
        f"The photo: {args.width} x {args.height} ({args.width * args.height / 1e6:.0f} MP), JPEG at quality 92 with "
        f"EXIF and GPS, {len(data) / 1024 / 1024:.2f} MiB (made in {made:.1f} s). Kept: "
        f"{kept.width} x {kept.height}, {kept.content_type}, {kept.size / 1024:.0f} KiB with its small copy for previews.",
        "",
        "| figure | p50 ms | p99 ms | mean ms | runs |",
        "|---|---|---|---|---|",
    ]
    for label, figure in rows:
        lines.append(
            f"| {label} | {figure['p50']:.1f} | {figure['p99']:.1f} | {figure['mean']:.1f} | {figure['runs']} |"
        )
    lines += [
        "",
        f"image_process is {process['p50'] / whole['p50']:.0%} of the whole upload (p50 over p50); the half-scale "
        f"decode alone is {half['p50'] / process['p50']:.0%} of image_process. Every upload answered 201 "
        f"({len(answers)} in all, warm-up included). The load average counts the other work on this machine: "
        "a p99 far above the p50 is another process's turn on the 2 cores, not the upload.",
        "",
    ]
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
