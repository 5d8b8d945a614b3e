"""A picture of every board: its drawing as PNG (``/b/<id>.png``), for link previews (Open Graph)
and for federation, whose readers (Mastodon) never show SVG.

The PNG is rasterised from the server's own SVG (feeds.svg) by CairoSVG (Debian's libcairo
beneath: scripts/services.sh installs it), at most ``MAX_SIDE`` pixels on its longer side, with
its BlurHash (the placeholder Mastodon shows while the picture loads). It is rendered once per
version of the board (its ``updated_at``) and kept in PostgreSQL (feeds.models.BoardPicture):
a Celery task renders it when a board is published or its drawing or title changes
(``board_picture_render``; a board changing often, as a live board compacted every few seconds
does, at most twice every PICTURE_RENDER_SECONDS: feeds.services.boards), so serving it is one
primary-key read; a request that finds no
render of the current version renders it itself (the first request after a change the task has
not reached yet), once.

CairoSVG was measured against resvg (resvg-py 0.5.0) on the same SVGs (bench/pictures.py
--compare, bench/results/pictures.md): 15 against 28 ms for a demo drawing on a lightly loaded
machine, and 13 against 89 s for 5,000 long strokes across the largest canvas the rules allow,
the case that decided it (a render holds a worker); on scribbled strokes the two are close.
"""

import io

import blurhash
import cairosvg
from django.conf import settings
from django.db import IntegrityError, transaction
from PIL import Image

from feeds.images import doc_image_ids, image_data_uris
from feeds.models import Board, BoardPicture
from feeds.svg import render_svg

MAX_SIDE = 1_600  # pixels on the longer side; a smaller canvas is rendered at its own size
MEDIA_TYPE = "image/png"
# BlurHash's components across and down (Mastodon computes 4 x 4), from a thumbnail this small:
# the encoder is pure Python, O(pixels x components).
BLURHASH_COMPONENTS = (4, 4)
BLURHASH_FROM = 32


def version_of(board: Board) -> str:
    """The version a render shows: the board's updated_at, microseconds since the epoch in hex."""
    return f"{int(board.updated_at.timestamp() * 1_000_000):x}"


def picture_size(doc: dict) -> tuple[int, int]:
    """The PNG's width and height for a drawing: its canvas, scaled down to fit MAX_SIDE."""
    width, height = float(doc["width"]), float(doc["height"])
    scale = min(1.0, MAX_SIDE / max(width, height))
    return max(1, round(width * scale)), max(1, round(height * scale))


def render_png(doc: dict, *, title: str = "") -> tuple[bytes, int, int]:
    """The drawing as PNG bytes, with its width and height. O(number of points) to build the SVG,
    then O(pixels x elements drawn over them) in Cairo: 15 ms for a demo drawing, seconds for
    the largest the rules allow (bench/results/pictures.md). Its pictures are drawn from their
    small copies (one query and one storage read a picture: feeds.images.image_data_uris)."""
    width, height = picture_size(doc)
    svg = render_svg(doc, title=title, images=image_data_uris(doc_image_ids(doc))).encode()
    png = cairosvg.svg2png(bytestring=svg, output_width=width, output_height=height)
    return png, width, height


def blurhash_of(png: bytes) -> str:
    """The BlurHash of a PNG, from a BLURHASH_FROM-pixel thumbnail. O(1): a few ms."""
    with Image.open(io.BytesIO(png)) as image:
        small = image.convert("RGB")
    small.thumbnail((BLURHASH_FROM, BLURHASH_FROM))
    pixels = list(small.get_flattened_data())
    across = small.size[0]
    rows = [pixels[start : start + across] for start in range(0, len(pixels), across)]
    return blurhash.encode(rows, components_x=BLURHASH_COMPONENTS[0], components_y=BLURHASH_COMPONENTS[1])


def picture_render(board: Board) -> BoardPicture:
    """Render ``board`` as it is now and keep it, unless a render of this version or a later one
    is kept already (two renders racing: the later version stays). One render (render_png),
    then one locked read and one write of the board's BoardPicture row."""
    version = version_of(board)
    png, width, height = render_png(board.doc, title=board.title)
    picture = BoardPicture(
        board_id=board.pk, version=version, png=png, width=width, height=height, blurhash=blurhash_of(png)
    )
    try:
        with transaction.atomic():
            kept = BoardPicture.objects.select_for_update().filter(board_id=board.pk).only("version").first()
            if kept is not None and int(kept.version, 16) >= int(version, 16):
                return BoardPicture.objects.get(board_id=board.pk)
            picture.save(force_insert=kept is None, force_update=kept is not None)
    except IntegrityError:  # another render inserted the first row meanwhile: keep the later one
        return picture_render(Board.objects.get(pk=board.pk))
    return picture


def picture_get(board: Board, *, with_png: bool = False) -> BoardPicture:
    """The kept render of ``board``'s current version; rendered now (picture_render) when none is
    kept yet. One primary-key read when it is (``with_png``: its bytes too, else only its
    description)."""
    rows = BoardPicture.objects.filter(board_id=board.pk)
    if not with_png:
        rows = rows.defer("png")
    picture = rows.first()
    if picture is None or int(picture.version, 16) < int(version_of(board), 16):
        picture = picture_render(board)  # a later version than ``board``'s (a newer edit) is served as it is
    return picture


def picture_url(board_id: int, version: str) -> str:
    """The absolute address of a board's PNG at one version (SITE_URL): what Open Graph and
    federation give, cached for a year by whoever fetches it."""
    return f"{settings.SITE_URL}/b/{board_id}.png?v={version}"


def picture_of(board: Board) -> dict:
    """What describes a board's picture to others (an Open Graph image, an ActivityPub
    ``Document``): ``{"url", "width", "height", "blurhash", "media_type"}``. ``board`` is
    published: the caller checked. picture_get's cost: one primary-key read once it is rendered."""
    picture = picture_get(board)
    return {
        "url": picture_url(board.pk, picture.version),
        "width": picture.width,
        "height": picture.height,
        "blurhash": picture.blurhash,
        "media_type": MEDIA_TYPE,
    }


def board_picture_refresh(board_id: int) -> None:
    """The task's work: render a published board's current version unless it is kept already
    (a board gone or hidden meanwhile is done). O(1) reads, the doc read only to render: a
    live board's leaving sends one each time its last editor goes, most with nothing to do."""
    published = Board.objects.filter(pk=board_id, state=Board.State.PUBLISHED)
    updated_at = published.values_list("updated_at", flat=True).first()
    if updated_at is None:
        return
    kept = BoardPicture.objects.filter(board_id=board_id).values_list("version", flat=True).first()
    if kept != version_of(Board(updated_at=updated_at)):
        board = published.first()
        if board is not None:
            picture_render(board)
