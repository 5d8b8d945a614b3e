"""A picture of every board (feeds.pictures, ``GET /b/<id>.png``): the drawing rasterised by
CairoSVG, kept once per version in PostgreSQL, rendered by a task on publish and on change (and by
the first request that finds none), served with a long cache and an ETag, and named in the board
page's Open Graph and Twitter card tags. Pixels are read back with Pillow."""

import io
import re
import time

import blurhash
import pytest
from PIL import Image

from feeds import pictures
from feeds.models import Board, BoardPicture
from feeds.services import boards as services
from ugcsite.testing import wait_for

BOARDS = "/api/v1/boards"
RED, BLUE, PAPER = (255, 0, 0), (0, 0, 255), (250, 250, 250)


def drawing(fill="#ff0000", *, width=200, height=100) -> dict:
    """A paper-coloured canvas with a filled square in its middle (40 px a side)."""
    square = {"type": "rect", "color": fill, "width": 1, "x": width / 2 - 20, "y": height / 2 - 20, "w": 40, "h": 40}
    return {"width": width, "height": height, "background": "#fafafa", "elements": [{**square, "fill": fill}]}


@pytest.fixture
def alice(api):
    return api.as_user("alice")


def _create(client, doc: dict, title: str = "A red square") -> int:
    response = client.post(BOARDS, {"title": title, "kind": "sketch", "tags": ["red"], "doc": doc})
    assert response.status_code == 201, response.content[:500]
    return response.json()["id"]


def _image(response) -> Image.Image:
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"] == "image/png"
    return Image.open(io.BytesIO(response.content)).convert("RGB")


@pytest.mark.django_db
def test_the_png_is_the_drawing_at_its_canvas_size(api, alice):
    board_id = _create(alice, drawing(width=200, height=100))

    image = _image(api.get(f"/b/{board_id}.png"))

    assert image.size == (200, 100)
    assert image.getpixel((100, 50)) == RED  # the square
    assert image.getpixel((5, 5)) == PAPER  # the background


@pytest.mark.django_db
def test_a_large_canvas_is_scaled_to_fit_max_side(api, alice):
    board_id = _create(alice, drawing(width=4000, height=1000))

    image = _image(api.get(f"/b/{board_id}.png"))

    assert image.size == (pictures.MAX_SIDE, pictures.MAX_SIDE // 4)
    assert image.getpixel((pictures.MAX_SIDE // 2, pictures.MAX_SIDE // 8)) == RED


@pytest.mark.django_db
def test_it_is_rendered_once_per_version_and_again_after_a_change(api, alice):
    board_id = _create(alice, drawing())
    assert _image(api.get(f"/b/{board_id}.png")).getpixel((100, 50)) == RED
    first = BoardPicture.objects.get(board_id=board_id)

    assert api.get(f"/b/{board_id}.png").content == bytes(first.png)
    assert BoardPicture.objects.get(board_id=board_id).rendered_at == first.rendered_at  # not rendered again

    assert alice.patch(f"{BOARDS}/{board_id}", {"doc": drawing("#0000ff")}).status_code == 200
    assert _image(api.get(f"/b/{board_id}.png")).getpixel((100, 50)) == BLUE
    second = BoardPicture.objects.get(board_id=board_id)
    assert second.version == pictures.version_of(Board.objects.get(pk=board_id)) != first.version


@pytest.mark.django_db
def test_a_title_change_is_a_new_version_too(api, alice):
    board_id = _create(alice, drawing())
    before = api.get(f"/b/{board_id}.png")["ETag"]

    assert alice.patch(f"{BOARDS}/{board_id}", {"title": "Renamed"}).status_code == 200

    assert api.get(f"/b/{board_id}.png")["ETag"] != before


@pytest.mark.django_db
def test_the_versioned_address_is_cached_for_a_year_and_the_etag_answers_304(api, alice):
    board_id = _create(alice, drawing())
    version = pictures.version_of(Board.objects.get(pk=board_id))

    versioned = api.get(f"/b/{board_id}.png?v={version}")
    bare = api.get(f"/b/{board_id}.png")
    stale = api.get(f"/b/{board_id}.png?v=1")

    assert versioned["Cache-Control"] == "public, max-age=31536000, immutable"
    assert bare["Cache-Control"] == stale["Cache-Control"] == "public, max-age=3600"
    assert versioned["ETag"] == bare["ETag"] == f'"{version}"'
    again = api.get(f"/b/{board_id}.png", headers={"If-None-Match": f'"other", "{version}"'})
    assert again.status_code == 304
    assert again.content == b""
    assert again["ETag"] == f'"{version}"'
    assert api.get(f"/b/{board_id}.png", headers={"If-None-Match": '"other"'}).status_code == 200


@pytest.mark.django_db
def test_head_answers_without_a_body_and_a_post_is_405(api, alice):
    board_id = _create(alice, drawing())

    head = api.client.head(f"/b/{board_id}.png")
    post = api.client.post(f"/b/{board_id}.png")

    assert head.status_code == 200
    assert head["Content-Type"] == "image/png"
    assert head.content == b""
    assert post.status_code == 405
    assert post["Allow"] == "GET, HEAD"


@pytest.mark.django_db
@pytest.mark.parametrize("state", [Board.State.DELETED, Board.State.HIDDEN, Board.State.SUSPENDED])
def test_a_board_no_longer_published_has_no_picture(api, alice, state):
    board_id = _create(alice, drawing())
    assert api.get(f"/b/{board_id}.png").status_code == 200

    assert services.board_leave(Board.objects.get(pk=board_id), state)

    assert api.get(f"/b/{board_id}.png").status_code == 404
    assert alice.get(f"/b/{board_id}.png").status_code == 404  # its author too: the answer is public


@pytest.mark.django_db
def test_no_board_is_404(api):
    assert api.get("/b/1.png").status_code == 404
    assert api.get("/b/12345678901234567.png").status_code == 404  # past 2^53: no board id


@pytest.mark.django_db
def test_picture_of_describes_the_kept_render(alice, settings):
    settings.SITE_URL = "https://draw.example"
    board = Board.objects.get(pk=_create(alice, drawing(width=300, height=150)))

    described = pictures.picture_of(board)

    version = pictures.version_of(board)
    assert described == {
        "url": f"https://draw.example/b/{board.pk}.png?v={version}",
        "width": 300,
        "height": 150,
        "blurhash": BoardPicture.objects.get(board_id=board.pk).blurhash,
        "media_type": "image/png",
    }
    # A BlurHash of 4 x 4 components: decoded, pale paper whose middle (the square) is redder.
    assert len(described["blurhash"]) == 2 + 4 + 2 * (4 * 4 - 1)
    decoded = blurhash.decode(described["blurhash"], 32, 16)
    middle, corner = decoded[8][16], decoded[0][0]
    assert middle[0] - middle[2] > corner[0] - corner[2] + 15
    assert min(corner) > 180


@pytest.mark.django_db
def test_publishing_and_changing_a_board_render_it_in_a_task(run, alice):
    board_id = run(_create, alice, drawing())
    kept = BoardPicture.objects.get(board_id=board_id)  # no request asked for it
    assert kept.version == pictures.version_of(Board.objects.get(pk=board_id))

    response = run(alice.patch, f"{BOARDS}/{board_id}", {"doc": drawing("#0000ff")})
    assert response.status_code == 200

    changed = BoardPicture.objects.get(board_id=board_id)
    assert changed.version == pictures.version_of(Board.objects.get(pk=board_id)) != kept.version
    assert Image.open(io.BytesIO(bytes(changed.png))).convert("RGB").getpixel((100, 50)) == BLUE


def _kept_version(board_id: int) -> str | None:
    return BoardPicture.objects.filter(board_id=board_id).values_list("version", flat=True).first()


def test_changes_inside_a_window_render_once_more_when_it_ends(celery_worker, api, settings):
    """A board changed again and again (a live board is compacted every few seconds) renders at
    its first change, then once for every later change of the window, when the window ends."""
    settings.PICTURE_RENDER_SECONDS = 6  # (5 minutes by default)
    alice = api.as_user("alice")
    board_id = _create(alice, drawing())
    wait_for(lambda: _kept_version(board_id) is not None, what="the picture rendered on publish")

    assert alice.patch(f"{BOARDS}/{board_id}", {"doc": drawing("#0000ff")}).status_code == 200  # opens a window
    blue = pictures.version_of(Board.objects.get(pk=board_id))
    wait_for(lambda: _kept_version(board_id) == blue, what="the first change's render, at once")

    for fill in ("#00ff00", "#ff0000"):  # two more inside the window
        assert alice.patch(f"{BOARDS}/{board_id}", {"doc": drawing(fill)}).status_code == 200
    last = pictures.version_of(Board.objects.get(pk=board_id))
    time.sleep(2)  # a render takes a fraction of that: were it sent now, it would be kept
    assert _kept_version(board_id) == blue  # their render waits for the window's end
    wait_for(lambda: _kept_version(board_id) == last, timeout=30, what="the render at the window's end")
    png = BoardPicture.objects.get(board_id=board_id).png
    assert Image.open(io.BytesIO(bytes(png))).convert("RGB").getpixel((100, 50)) == RED


@pytest.mark.django_db
def test_an_older_render_never_replaces_a_newer_one(alice):
    board = Board.objects.get(pk=_create(alice, drawing()))
    old = Board.objects.get(pk=board.pk)
    services.board_update(board=board, changes={"doc": drawing("#0000ff")})
    board.refresh_from_db()
    newer = pictures.picture_render(board)

    kept = pictures.picture_render(old)  # a slow render of the version before

    assert kept.version == newer.version == pictures.version_of(board)
    assert pictures.picture_get(old).version == newer.version  # served as it is, not rendered again


@pytest.mark.django_db
def test_the_board_page_carries_open_graph_and_twitter_card_tags(api, alice, settings):
    settings.SITE_URL = "https://draw.example"
    board_id = _create(alice, drawing(width=400, height=300), title="Tags & <things>")
    board = Board.objects.get(pk=board_id)

    html = api.get(f"/b/{board_id}").content.decode()

    meta = dict(re.findall(r'<meta (?:property|name)="([^"]+)" content="([^"]*)">', html))
    image = f"https://draw.example/b/{board_id}.png?v={pictures.version_of(board)}"
    assert meta["og:image"] == meta["twitter:image"] == image
    assert meta["og:title"] == meta["twitter:title"] == "Tags &amp; &lt;things&gt;"
    assert meta["og:url"] == f"https://draw.example/b/{board_id}"
    assert (meta["og:image:width"], meta["og:image:height"]) == ("400", "300")
    assert meta["og:description"] == "A sketch by @alice on ugcsite. #red"
    assert meta["twitter:card"] == "summary_large_image"
    # The address the tags give is the PNG, at the version the page showed.
    assert _image(api.get(image.removeprefix("https://draw.example"))).size == (400, 300)


@pytest.mark.django_db
def test_the_png_draws_the_pictures_on_the_board(api, alice):
    """Issue 40: the board's PNG draws its pictures (the SVG carries each as a data: URI of its
    small copy, which CairoSVG reads with no network)."""
    out = io.BytesIO()
    Image.new("RGB", (64, 64), (0, 160, 0)).save(out, format="PNG")
    uploaded = alice.client.post(
        "/api/v1/images",
        data=out.getvalue(),
        content_type="image/png",
        headers={"Authorization": f"Bearer {alice.token}"},
    )
    assert uploaded.status_code == 201, uploaded.content[:300]
    doc = drawing(width=200, height=100)
    doc["elements"].append({"type": "image", "x": 10, "y": 10, "w": 40, "h": 40, "image": uploaded.json()["id"]})
    board_id = _create(alice, doc, title="A picture and a square")

    image = _image(api.get(f"/b/{board_id}.png"))

    red, green, blue = image.getpixel((30, 30))  # the picture's middle (JPEG-free: a PNG small copy)
    assert green > 120 and red < 60 and blue < 60, (red, green, blue)
    assert image.getpixel((100, 50)) == RED and image.getpixel((150, 90)) == PAPER
