"""Avatars: an identicon drawn from the username by default (SVG, the same for a name
forever), or a picture the person uploaded, resized here with Pillow to a small WebP square.

An upload is checked before it is decoded: its size in bytes (AVATAR_UPLOAD_MAX), its format
(only the decoders of AVATAR_FORMATS ever run) and its pixel count from the header
(AVATAR_PIXELS_MAX: a decompression bomb is a small file that decodes to gigabytes)."""

import hashlib
import io
import warnings
from urllib.parse import quote

from PIL import Image, ImageOps, UnidentifiedImageError

from social.rules import AVATAR_FORMATS, AVATAR_PIXELS_MAX, AVATAR_SIZE, AVATAR_UPLOAD_MAX
from ugcsite.platform.errors import Invalid

AVATAR_CONTENT_TYPE = "image/webp"
_GRID = 5  # cells a side; the left half is mirrored to the right, like GitHub's identicons


class AvatarRefused(Invalid):
    """An upload that is not a picture this site takes; the message says what to send instead."""


def avatar_url(username: str, version: int) -> str:
    """Where a person's avatar is served (social.views.avatar); ``version`` changes with every
    upload, so the address of a new picture is new and the old one can be cached for long."""
    return f"/u/{quote(username)}/avatar?v={version}"


def identicon_svg(username: str) -> str:
    """A 5 x 5 mirrored pattern and a colour, both from the SHA-256 of the lower-cased username:
    deterministic, distinct for distinct names in practice, and no dependency."""
    digest = hashlib.sha256(username.lower().encode()).digest()
    hue = int.from_bytes(digest[:2], "big") % 360
    cells = []
    for row in range(_GRID):
        for col in range((_GRID + 1) // 2):
            if digest[2 + row * 3 + col] % 2:
                for x in {col, _GRID - 1 - col}:
                    cells.append(f'<rect x="{x + 1}" y="{row + 1}" width="1" height="1"/>')
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_GRID + 2} {_GRID + 2}" '
        f'shape-rendering="crispEdges" role="img" aria-label="identicon">'
        f'<rect width="{_GRID + 2}" height="{_GRID + 2}" fill="hsl({hue}, 35%, 93%)"/>'
        f'<g fill="hsl({hue}, 55%, 42%)">{"".join(cells)}</g></svg>'
    )


def avatar_process(data: bytes) -> bytes:
    """The uploaded bytes as an AVATAR_SIZE-pixel WebP square (centre-cropped, EXIF-rotated,
    first frame of an animation), or ``AvatarRefused`` saying why. Reads the header first:
    nothing past AVATAR_PIXELS_MAX pixels is decoded. O(pixels) of the upload."""
    if not data:
        raise AvatarRefused("The file is empty; choose a PNG, JPEG, GIF or WebP picture.")
    if len(data) > AVATAR_UPLOAD_MAX:
        raise AvatarRefused(
            f"The picture is larger than {AVATAR_UPLOAD_MAX // (1024 * 1024)} MB; choose a smaller one."
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data), formats=AVATAR_FORMATS)
            width, height = image.size
            if width * height > AVATAR_PIXELS_MAX:
                raise AvatarRefused(
                    f"The picture is {width} x {height} pixels; send one of at most "
                    f"{AVATAR_PIXELS_MAX // 1_000_000} million pixels."
                )
            image.seek(0)
            image = ImageOps.exif_transpose(image.convert("RGBA") if image.mode in ("P", "LA", "PA") else image)
            image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
            square = ImageOps.fit(image, (AVATAR_SIZE, AVATAR_SIZE), method=Image.Resampling.LANCZOS)
    except (UnidentifiedImageError, Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise AvatarRefused("That is not a picture this site can read; choose a PNG, JPEG, GIF or WebP file.") from None
    except (OSError, ValueError, SyntaxError, EOFError):  # truncated or corrupt data inside a valid header
        raise AvatarRefused("The picture is damaged and cannot be read; choose another file.") from None
    out = io.BytesIO()
    square.save(out, format="WEBP", quality=85, method=4)
    return out.getvalue()
