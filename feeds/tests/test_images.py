"""Pictures on the canvas (docs/api.md, "Pictures"): POST /api/v1/images and its refusals, the
copy kept (re-encoded, no EXIF, at most 2048 px), the quota, the image element's rules (which
pictures a board may show), the SVG preview, reports and hiding, the export and the erasure."""

import io
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from PIL import ExifTags, Image

from feeds import images
from feeds.models import Image as Picture, ImageUsage, ReportCase, StaffAction
from feeds.rules import IMAGE_PIXELS_MAX, IMAGE_PREVIEW_SIDE, IMAGE_SIDE_MAX, IMAGE_UPLOAD_MAX
from feeds.services import reports
from ugcsite.testing import assert_problem, with_second_factor

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media_here(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return tmp_path / "media"


def picture(fmt: str = "PNG", size=(640, 480), color=(200, 30, 60), **save) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format=fmt, **save)
    return out.getvalue()


def upload(client, data: bytes, content_type: str = "image/png"):
    return client.client.post(
        "/api/v1/images", data=data, content_type=content_type, headers={"Authorization": f"Bearer {client.token}"}
    )


def stored(image_id: str) -> Image.Image:
    row = Picture.objects.get(pk=image_id)
    return Image.open(io.BytesIO(images.image_file_read(row.file)))


def doc_with(*elements, width=800, height=600):
    return {"width": width, "height": height, "background": "#ffffff", "elements": list(elements)}


def image_element(image_id: str, **fields):
    return {"type": "image", "x": 10, "y": 20, "w": 200, "h": 150, "image": image_id, **fields}


@pytest.mark.parametrize("fmt, content_type", [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("WEBP", "image/webp")])
def test_an_upload_is_kept_in_its_format_and_served_through_its_address(api, client, fmt, content_type, media_here):
    alice = api.as_user("alice")
    answer = upload(alice, picture(fmt, size=(300, 200)), content_type)
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body == {"id": body["id"], "url": f"/images/{body['id']}", "width": 300, "height": 200}
    assert stored(body["id"]).format == fmt
    row = Picture.objects.get(pk=body["id"])
    copies = len(images.image_file_read(row.file)) + len(images.image_file_read(row.preview_file))
    assert (row.owner.username, row.content_type, row.size) == ("alice", content_type, copies)
    assert (media_here / row.file).is_file() and (media_here / row.preview_file).is_file()

    redirect = client.get(body["url"])
    assert redirect.status_code == 302 and redirect["Location"] == f"/media/{row.file}"
    served = client.get(redirect["Location"])
    assert served.status_code == 200 and "immutable" in served["Cache-Control"]
    assert b"".join(served.streaming_content) == images.image_file_read(row.file)


def test_exif_and_gps_are_dropped_and_the_picture_turned_upright(api):
    exif = Image.Exif()
    exif[ExifTags.Base.Orientation] = 6  # taken sideways: turn 90 degrees clockwise to show
    exif[ExifTags.Base.Make] = "Spycam 3000"
    gps = exif.get_ifd(ExifTags.IFD.GPSInfo)
    gps[ExifTags.GPS.GPSLatitudeRef] = "N"
    gps[ExifTags.GPS.GPSLatitude] = (51.0, 30.0, 12.0)
    photo = picture("JPEG", size=(400, 100), exif=exif)
    assert Image.open(io.BytesIO(photo)).getexif().get_ifd(ExifTags.IFD.GPSInfo)  # the upload carries GPS
    answer = upload(api.as_user("alice"), photo, "image/jpeg")
    assert answer.status_code == 201, answer.content
    assert (answer.json()["width"], answer.json()["height"]) == (100, 400)
    kept = stored(answer.json()["id"])
    assert kept.size == (100, 400)
    assert not kept.getexif() and "exif" not in kept.info
    assert b"Spycam" not in images.image_file_read(Picture.objects.get(pk=answer.json()["id"]).file)


def test_the_kept_copy_is_at_most_2048_on_its_long_side(api):
    answer = upload(api.as_user("alice"), picture("PNG", size=(4096, 1024)))
    assert answer.status_code == 201, answer.content
    assert (answer.json()["width"], answer.json()["height"]) == (IMAGE_SIDE_MAX, 512)
    assert stored(answer.json()["id"]).size == (IMAGE_SIDE_MAX, 512)
    preview = Image.open(io.BytesIO(images.image_file_read(Picture.objects.get(pk=answer.json()["id"]).preview_file)))
    assert (preview.format, preview.size) == ("JPEG", (IMAGE_PREVIEW_SIDE, 256))  # what the SVG preview embeds


def test_a_large_jpeg_is_decoded_at_a_reduced_scale_and_kept_within_2048(api):
    # 4000 x 3000 (a 12 MP photo): libjpeg decodes it at half scale, 2000 x 1500, kept as is.
    answer = upload(api.as_user("alice"), picture("JPEG", size=(4000, 3000)), "image/jpeg")
    assert answer.status_code == 201, answer.content
    assert (answer.json()["width"], answer.json()["height"]) == (2000, 1500)
    # 9000 x 1000: half scale is 4500 wide, a quarter 2250 (at least 3/4 of 2048), then shrunk to 2048.
    wide = upload(api.as_user("bob"), picture("JPEG", size=(9000, 1000)), "image/jpeg")
    assert (wide.json()["width"], wide.json()["height"]) == (IMAGE_SIDE_MAX, 228)


def test_a_transparent_pictures_small_copy_keeps_its_transparency(api):
    out = io.BytesIO()
    Image.new("RGBA", (300, 200), (10, 200, 30, 0)).save(out, format="PNG")
    answer = upload(api.as_user("alice"), out.getvalue())
    row = Picture.objects.get(pk=answer.json()["id"])
    small = Image.open(io.BytesIO(images.image_file_read(row.preview_file)))
    assert (small.format, small.mode, small.getpixel((5, 5))[3]) == ("PNG", "RGBA", 0)
    assert stored(row.pk).mode == "RGBA"


def bomb() -> bytes:
    side = int(IMAGE_PIXELS_MAX**0.5) + 100
    out = io.BytesIO()
    Image.new("1", (side, side)).save(out, format="PNG")  # a few KB that decode to 40+ million pixels
    return out.getvalue()


@pytest.mark.parametrize(
    "data, content_type, status, words",
    [
        (b"", "image/png", 400, "empty"),
        (b"not a picture at all", "image/png", 400, "not a picture"),
        (b"<svg xmlns='http://www.w3.org/2000/svg'></svg>", "image/png", 400, "not a picture"),
        (picture("BMP"), "image/png", 400, "not a picture"),  # a decoder the site does not run
        (picture("PNG"), "image/jpeg", 400, "is a PNG picture but its Content-Type says image/jpeg"),
        (picture("JPEG"), "image/webp", 400, "send it as image/jpeg"),
        (picture("PNG")[:80], "image/png", 400, "damaged"),
        (bomb(), "image/png", 400, "decompression bomb"),
        (b"x" * (IMAGE_UPLOAD_MAX + 1), "image/png", 413, "at most 10 MiB"),
        (picture("GIF"), "image/gif", 415, "image/png, image/jpeg, image/webp"),
        (picture("PNG"), "application/octet-stream", 415, "application/octet-stream"),
        (b'{"a": 1}', "application/json", 415, "application/json"),
    ],
    ids=[
        "empty",
        "text",
        "svg",
        "bmp",
        "png-as-jpeg",
        "jpeg-as-webp",
        "truncated",
        "bomb",
        "too-large",
        "gif",
        "octet",
        "json",
    ],
)
def test_refusals_say_why(api, data, content_type, status, words):
    alice = api.as_user("alice")
    detail = assert_problem(upload(alice, data, content_type), status)["detail"]
    assert words in detail
    assert not Picture.objects.exists()


def test_an_upload_needs_a_signed_in_person(client):
    response = client.post("/api/v1/images", data=picture(), content_type="image/png")
    assert_problem(response, 401)


def test_the_quota_counts_what_each_person_keeps(api, settings):
    alice, bob = api.as_user("alice"), api.as_user("bob")
    first = upload(alice, picture("PNG", size=(200, 200)))
    size = Picture.objects.get(pk=first.json()["id"]).size
    settings.IMAGE_QUOTA_BYTES = size * 2 + size // 2
    assert upload(alice, picture("PNG", size=(200, 200), color=(1, 2, 3))).status_code == 201
    refused = assert_problem(upload(alice, picture("PNG", size=(200, 200), color=(4, 5, 6))), 400)
    assert "does not fit" in refused["detail"] and "MiB" in refused["detail"]
    assert Picture.objects.filter(owner__username="alice").count() == 2
    assert ImageUsage.objects.get(user__username="alice").bytes == sum(
        Picture.objects.filter(owner__username="alice").values_list("size", flat=True)
    )
    assert upload(bob, picture("PNG", size=(200, 200))).status_code == 201  # a quota of one's own


def test_a_board_shows_its_authors_pictures_in_the_preview(api, client):
    alice = api.as_user("alice")
    image_id = upload(alice, picture("PNG", size=(40, 30))).json()["id"]
    made = alice.post(
        "/api/v1/boards",
        {"title": "A photo", "kind": "sketch", "doc": doc_with(image_element(image_id, rotation=30))},
    )
    assert made.status_code == 201, made.content
    element = made.json()["doc"]["elements"][0]
    assert element["image"] == image_id and element["rotation"] == 30 and element["id"]
    preview = client.get(f"/api/v1/boards/{made.json()['id']}/preview.svg")
    svg = preview.content.decode()
    assert f'data-image="{image_id}"' in svg and 'href="data:image/jpeg;base64,' in svg  # its small copy
    assert "img-src data:" in preview["Content-Security-Policy"]
    assert 'transform="rotate(30 110 95)"' in svg


@pytest.mark.parametrize(
    "element, words",
    [
        ({"type": "image", "x": 0, "y": 0, "w": 10, "h": 10, "image": "short"}, "picture's id"),
        ({"type": "image", "x": 0, "y": 0, "w": 10, "h": 10}, "image"),
        ({"type": "image", "x": 0, "y": 0, "w": 10, "h": 10, "image": "A" * 16, "color": "#000000"}, "color"),
        ({"type": "image", "x": 700, "y": 0, "w": 200, "h": 10, "image": "A" * 16}, "does not fit"),
    ],
    ids=["bad-id", "no-image", "unknown-key", "off-canvas"],
)
def test_image_elements_are_checked_like_other_boxes(api, element, words):
    detail = assert_problem(
        api.as_user("alice").post("/api/v1/boards", {"title": "x", "kind": "sketch", "doc": doc_with(element)}), 400
    )["detail"]
    assert words in detail


def test_only_pictures_of_the_boards_author_and_editors_may_be_placed(api, run):
    alice, bob, carol = api.as_user("alice"), api.as_user("bob"), api.as_user("carol")
    alices, bobs, carols = (upload(c, picture()).json()["id"] for c in (alice, bob, carol))

    unknown = assert_problem(
        alice.post("/api/v1/boards", {"title": "x", "kind": "sketch", "doc": doc_with(image_element("Z" * 16))}), 400
    )
    assert "no picture 'ZZZZZZZZZZZZZZZZ'" in unknown["detail"]
    others = assert_problem(
        alice.post("/api/v1/boards", {"title": "x", "kind": "sketch", "doc": doc_with(image_element(carols))}), 400
    )
    assert "may not draw on this board" in others["detail"]

    board = alice.post("/api/v1/boards", {"title": "x", "kind": "sketch", "doc": doc_with(image_element(alices))})
    board_id = board.json()["id"]
    run(alice.put, f"/api/v1/boards/{board_id}/editors/bob")
    kept = board.json()["doc"]["elements"]
    # bob, an editor, adds his own picture; carol's may not come in through him.
    added = run(bob.patch, f"/api/v1/boards/{board_id}", {"doc": doc_with(*kept, image_element(bobs, x=300))})
    assert added.status_code == 200, added.content
    assert_problem(bob.patch(f"/api/v1/boards/{board_id}", {"doc": doc_with(*kept, image_element(carols, x=300))}), 400)
    # carol remixes: alice's and bob's pictures come with the copy; her own may join them.
    remix = run(
        carol.post,
        f"/api/v1/boards/{board_id}/remix",
        {"doc": doc_with(*added.json()["doc"]["elements"], image_element(carols, x=500, w=50))},
    )
    assert remix.status_code == 201, remix.content
    assert_problem(
        carol.post(
            f"/api/v1/boards/{board_id}/remix",
            {"doc": doc_with(image_element(alices), image_element(upload(bob, picture()).json()["id"], x=300))},
        ),
        400,
    )


def test_a_reported_picture_taken_down_leaves_every_board(api, client, run, django_user_model):
    alice, carol = api.as_user("alice"), api.as_user("carol")
    image_id = upload(alice, picture()).json()["id"]
    board_id = alice.post(
        "/api/v1/boards", {"title": "x", "kind": "sketch", "doc": doc_with(image_element(image_id))}
    ).json()["id"]
    address = client.get(f"/images/{image_id}")["Location"]
    assert client.get(address).status_code == 200

    assert_problem(alice.post("/api/v1/reports", {"image": image_id, "reason": "spam"}), 400)  # one's own
    report = run(carol.post, "/api/v1/reports", {"image": image_id, "reason": "abuse", "text": "not theirs"})
    assert report.status_code == 201, report.content
    case = ReportCase.objects.get(image_id=image_id)
    staff = django_user_model.objects.create_user("moderator", password="x" * 12, is_staff=True)
    assert run(reports.case_close, case=case, outcome=ReportCase.Outcome.ACTIONED, staff=staff)

    assert Picture.objects.get(pk=image_id).state == Picture.State.HIDDEN
    assert client.get(f"/images/{image_id}").status_code == 404
    assert client.get(address).status_code == 404  # the copy moved: the old address answers nothing
    svg = client.get(f"/api/v1/boards/{board_id}/preview.svg").content.decode()
    assert f'data-image="{image_id}"' in svg and "data:image/" not in svg  # a blank box
    assert_problem(
        alice.post("/api/v1/boards", {"title": "y", "kind": "sketch", "doc": doc_with(image_element(image_id))}), 400
    )


def test_pictures_are_in_the_export_and_go_with_the_account(api, run, settings, tmp_path, media_here):
    settings.EXPORT_DIR = str(tmp_path / "exports")
    alice = api.as_user("alice")
    uploaded = upload(alice, picture("WEBP", size=(64, 48)), "image/webp")
    assert uploaded.status_code == 201, uploaded.content
    image_id = uploaded.json()["id"]
    row = Picture.objects.get(pk=image_id)
    alice.post("/api/v1/boards", {"title": "x", "kind": "sketch", "doc": doc_with(image_element(image_id))})

    started = run(alice.post, "/api/v1/me/export", {})
    download = alice.get(f"/api/v1/me/export/{started.json()['id']}/download")
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    assert archive.read(f"images/{image_id}.webp") == images.image_file_read(row.file)
    assert f'"id": "{image_id}"' in archive.read("images.json").decode()
    board_svg = next(name for name in archive.namelist() if name.startswith("boards/") and name.endswith(".svg"))
    assert "data:image/jpeg;base64," in archive.read(board_svg).decode()  # the small copy

    user_id = get_user_model().objects.get(username="alice").pk
    assert run(alice.delete, "/api/v1/me", {"password": "password123"}).status_code == 204
    assert not Picture.objects.filter(pk=image_id).exists()
    assert not ImageUsage.objects.filter(user_id=user_id).exists()
    assert not Path(media_here / row.file).exists() and not Path(media_here / row.preview_file).exists()


def test_staff_hide_and_show_a_picture_in_the_admin_on_the_record(api, client, run):
    staff = with_second_factor(get_user_model().objects.create_superuser("mod", password="password123"))
    page = Client()
    page.force_login(staff)
    image_id = upload(api.as_user("alice"), picture()).json()["id"]
    address = client.get(f"/images/{image_id}")["Location"]
    assert page.get("/admin/feeds/image/").status_code == 200

    run(page.post, "/admin/feeds/image/", {"action": "hide_images", "_selected_action": [image_id]})
    assert Picture.objects.get(pk=image_id).state == Picture.State.HIDDEN
    assert client.get(address).status_code == 404 and client.get(f"/images/{image_id}").status_code == 404
    run(page.post, "/admin/feeds/image/", {"action": "unhide_images", "_selected_action": [image_id]})
    shown = client.get(f"/images/{image_id}")
    assert shown.status_code == 302 and shown["Location"] != address  # shown again, under a new name
    assert client.get(shown["Location"]).status_code == 200
    record = list(StaffAction.objects.order_by("id").values_list("staff_name", "action", "target"))
    assert record == [
        ("mod", "hide_image", f"picture {image_id} (640x480) by alice"),
        ("mod", "unhide_image", f"picture {image_id} (640x480) by alice"),
    ]
