"""Pictures on the canvas (docs/api.md, "Pictures"): an upload checked and re-encoded with Pillow,
the copy kept in Django's storage, and what a board may hold of them. Storage only: the writes
that combine a row and a file are feeds.services.images.

An upload is checked before it is decoded: its size in bytes (IMAGE_UPLOAD_MAX, also the
request's limit), its format (only the decoder its Content-Type names ever runs: the body must
be what it says) and its pixel count from the header (IMAGE_PIXELS_MAX). It is then decoded,
turned upright by its EXIF orientation, shrunk to IMAGE_SIDE_MAX pixels on its long side and
written anew in its own format: EXIF (GPS with it), XMP and text chunks are not carried over.

Where a picture is drawn:
- the canvas and the editor load ``image_href(id)`` (``/images/<id>``), which redirects to the
  storage's address of the current copy (a 404 once it is hidden or gone);
- the SVG preview embeds each as a ``data:`` URI of its small copy (IMAGE_PREVIEW_SIDE, a JPEG,
  or a PNG when it has transparency: formats every SVG renderer reads; ``image_data_uris``): an SVG shown through an
  ``<img>`` loads nothing from outside, and a renderer on the server (a PNG of the board) needs
  no network or storage access to resolve it.
"""

import base64
import io
import secrets
import warnings

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from PIL import Image as Pillow, ImageOps, UnidentifiedImageError

from feeds.models import BoardEditor, Image, ImageUsage
from feeds.rules import (
    IMAGE_ID_LENGTH,
    IMAGE_PIXELS_MAX,
    IMAGE_PREVIEW_SIDE,
    IMAGE_SIDE_MAX,
    IMAGE_TYPES,
    IMAGE_UPLOAD_MAX,
)
from ugcsite.platform.errors import Invalid, NotFound

_EXTENSIONS = {"PNG": "png", "JPEG": "jpg", "WEBP": "webp"}
_SAVE_OPTIONS = {
    "PNG": {"optimize": False},
    "JPEG": {"quality": 85, "optimize": True},
    "WEBP": {"quality": 85, "method": 4},
}
# How the stored copies are named in the storage: a folder, and a random part that is all the
# address holds (it changes when staff hide or show the picture).
IMAGE_FOLDER = "images"


class ImageRefused(Invalid):
    """An upload that is not a picture this site keeps; the sentence says what to send instead."""


class ImageNotFound(NotFound):
    def __init__(self):
        super().__init__("No such picture (or it was hidden by staff or deleted).")


class ProcessedImage:
    """A re-encoded picture ready to store: its bytes, format, and size in pixels, and the bytes
    of its small copy for previews (and that copy's type)."""

    def __init__(self, data: bytes, content_type: str, width: int, height: int, preview: bytes, preview_type: str):
        self.data, self.content_type, self.width, self.height = data, content_type, width, height
        self.preview, self.preview_type = preview, preview_type


def image_process(data: bytes, content_type: str) -> ProcessedImage:
    """The upload as the copy to keep, or ``ImageRefused`` saying why. ``content_type`` is one of
    IMAGE_TYPES (the caller answered 415 for any other). O(pixels of the upload); nothing past
    IMAGE_PIXELS_MAX pixels is decoded."""
    expected = IMAGE_TYPES[content_type]
    words = "a PNG, JPEG or WebP picture"
    if not data:
        raise ImageRefused(f"The body is empty; send the bytes of {words}.")
    if len(data) > IMAGE_UPLOAD_MAX:
        raise ImageRefused(f"The picture is larger than {IMAGE_UPLOAD_MAX // (1024 * 1024)} MiB; send a smaller one.")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Pillow.DecompressionBombWarning)
            try:
                image = Pillow.open(io.BytesIO(data), formats=[expected])
            except UnidentifiedImageError:
                actual = _format_of(data)
                if actual is None:
                    raise
                raise ImageRefused(
                    f"The body is a {actual} picture but its Content-Type says {content_type}; "
                    f"send it as {_type_of(actual)}."
                ) from None
            width, height = image.size
            if width * height > IMAGE_PIXELS_MAX:
                raise ImageRefused(
                    f"The picture is {width} x {height} pixels; at most {IMAGE_PIXELS_MAX // 1_000_000} million "
                    "pixels are taken (a larger one may be a decompression bomb). Send a smaller picture."
                )
            icc = image.info.get("icc_profile")
            image.seek(0)  # the first frame of an animation
            if expected == "JPEG":
                _decode_reduced(image)
            image.thumbnail((IMAGE_SIDE_MAX, IMAGE_SIDE_MAX), Pillow.Resampling.LANCZOS)
            image = ImageOps.exif_transpose(image)
            image = _mode_for(image, expected)
    except ImageRefused:
        raise
    except (UnidentifiedImageError, Pillow.DecompressionBombError, Pillow.DecompressionBombWarning):
        raise ImageRefused(f"That is not a picture this site can read; send {words}.") from None
    except Exception:
        raise ImageRefused("The picture is damaged and cannot be read; send another file.") from None
    image.info = {}  # nothing of the original's metadata is written back (EXIF, XMP, text chunks)
    out = io.BytesIO()
    image.save(out, format=expected, **_SAVE_OPTIONS[expected], **({"icc_profile": icc} if icc else {}))
    small = image.copy()
    small.thumbnail((IMAGE_PREVIEW_SIDE, IMAGE_PREVIEW_SIDE), Pillow.Resampling.LANCZOS)
    preview = io.BytesIO()
    if "A" in small.getbands():  # transparency: PNG keeps it
        small.save(preview, format="PNG")
        preview_type = "image/png"
    else:
        _mode_for(small, "JPEG").save(preview, format="JPEG", quality=80)
        preview_type = "image/jpeg"
    return ProcessedImage(out.getvalue(), content_type, image.width, image.height, preview.getvalue(), preview_type)


def _decode_reduced(image: Pillow.Image) -> None:
    """Have libjpeg decode a large JPEG at 1/2, 1/4 or 1/8 scale (its DCT scaling: a true
    downscale, several times faster than decoding it whole and shrinking it after): the largest
    reduction that keeps at least 3/4 of IMAGE_SIDE_MAX on the long side. A 12 MP photo (4000 x
    3000) is kept at 2000 x 1500, decoded at half scale, with no resampling after it."""
    long_side = max(image.size)
    scale = 1
    while scale < 8 and long_side / (scale * 2) >= IMAGE_SIDE_MAX * 3 / 4:
        scale *= 2
    if scale > 1:
        image.draft(image.mode, (-(-image.width // scale), -(-image.height // scale)))


def _format_of(data: bytes) -> str | None:
    """Which of the taken formats ``data`` is, reading its header alone; None for none of them."""
    try:
        with Pillow.open(io.BytesIO(data), formats=list(IMAGE_TYPES.values())) as probe:
            return probe.format
    except Exception:  # anything Pillow raises on a header it cannot read: not a picture
        return None


def _type_of(pillow_format: str) -> str:
    return next(name for name, value in IMAGE_TYPES.items() if value == pillow_format)


def _mode_for(image: Pillow.Image, pillow_format: str) -> Pillow.Image:
    """The image in a mode its format writes: JPEG has no alpha; palettes become RGB(A)."""
    if image.mode in ("P", "PA", "LA", "I;16", "I", "F"):
        image = image.convert("RGBA" if "A" in image.getbands() or "transparency" in image.info else "RGB")
    if pillow_format == "JPEG" and image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    if pillow_format == "WEBP" and image.mode not in ("RGB", "RGBA"):
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    return image


def new_image_id() -> str:
    """A fresh picture id: IMAGE_ID_LENGTH characters of ``[A-Za-z0-9_-]`` (96 random bits)."""
    return secrets.token_urlsafe(IMAGE_ID_LENGTH * 3 // 4)


def image_file_save(data: bytes, content_type: str) -> str:
    """Write a copy to the storage under a fresh random name; returns the storage's name. One write."""
    ext = _EXTENSIONS[IMAGE_TYPES[content_type]]
    return default_storage.save(f"{IMAGE_FOLDER}/{secrets.token_urlsafe(18)}.{ext}", ContentFile(data))


def content_type_of(name: str) -> str:
    """The type of a stored copy, from its name's extension (image_file_save gives it)."""
    ext = name.rsplit(".", 1)[-1]
    return next(name for name, value in IMAGE_TYPES.items() if _EXTENSIONS[value] == ext)


def image_file_delete(name: str) -> None:
    """Remove a stored copy (nothing if it is gone). One call to the storage."""
    if name:
        default_storage.delete(name)


def image_file_read(name: str) -> bytes:
    with default_storage.open(name, "rb") as stored:
        return stored.read()


def image_url(image: Image) -> str:
    """The storage's address of the current copy (a path under MEDIA_URL, or the bucket's URL)."""
    return default_storage.url(image.file)


def image_href(image_id: str) -> str:
    """The address a page draws a picture from: it redirects to the current copy (feeds.views)."""
    return f"/images/{image_id}"


def image_get_shown(image_id: str) -> Image:
    """A picture that is not hidden, or ImageNotFound. One query by primary key."""
    image = Image.objects.filter(pk=image_id, state=Image.State.PUBLISHED).first()
    if image is None:
        raise ImageNotFound()
    return image


def doc_image_ids(doc: dict) -> set[str]:
    """The picture ids a (valid) doc's image elements name. O(elements)."""
    return {element["image"] for element in doc.get("elements", ()) if element.get("type") == "image"}


def images_check_placeable(image_ids: set[str], *, author_id: int, board_id: int | None) -> None:
    """Raise Invalid unless every picture of ``image_ids`` may be placed on the board of
    ``board_id`` (None: a board not yet made) whose author is ``author_id``: it exists, is not
    hidden, and was uploaded by the board's author or one of its editors, the people who may
    draw on it. So a picture reaches only boards its uploader may draw on, and every reader of
    such a board may see it. Two queries, O(|image_ids|)."""
    if not image_ids:
        return
    found = dict(Image.objects.filter(pk__in=image_ids, state=Image.State.PUBLISHED).values_list("pk", "owner_id"))
    missing = sorted(image_ids - found.keys())
    if missing:
        raise Invalid(
            f"There is no picture {missing[0]!r} (or it was hidden or deleted); upload it with POST /api/v1/images."
        )
    owners = set(found.values()) - {author_id}
    if owners and board_id is not None:
        owners -= set(
            BoardEditor.objects.filter(board_id=board_id, user_id__in=owners).values_list("user_id", flat=True)
        )
    if owners:
        image_id = next(pk for pk, owner in found.items() if owner in owners)
        raise Invalid(
            f"The picture {image_id!r} was uploaded by someone who may not draw on this board; "
            "a board shows only pictures of its author and its editors."
        )


def image_data_uris(image_ids: set[str]) -> dict[str, str]:
    """``{id: data: URI}`` of the small copies (IMAGE_PREVIEW_SIDE, JPEG or PNG) of the shown pictures
    of ``image_ids`` (hidden and deleted ones are left out: the SVG draws a blank box for them).
    One query and one storage read a picture."""
    uris = {}
    shown = Image.objects.filter(pk__in=image_ids, state=Image.State.PUBLISHED)
    for image in shown.only("pk", "file", "preview_file", "content_type"):
        name = image.preview_file or image.file
        content_type = content_type_of(name)
        try:
            data = image_file_read(name)
        except OSError:  # the file went missing from the storage: drawn as a blank box
            continue
        uris[image.pk] = f"data:{content_type};base64,{base64.b64encode(data).decode()}"
    return uris


def images_erase(user_id: int) -> int:
    """Delete every picture of a closed account: the copies in the storage, then the rows and
    the usage row. Idempotent. Returns how many. O(pictures of the account)."""
    count = 0
    for image in Image.objects.filter(owner_id=user_id).only("pk", "file", "preview_file").iterator():
        image_file_delete(image.file)
        image_file_delete(image.preview_file)
        count += 1
    Image.objects.filter(owner_id=user_id).delete()
    ImageUsage.objects.filter(user_id=user_id).delete()
    return count
