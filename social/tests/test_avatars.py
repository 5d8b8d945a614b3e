"""Avatars: the identicon (deterministic SVG from the username) and an uploaded picture,
checked (size, type, pixel count: decompression bombs) and resized with Pillow, on the
settings page; served at /u/<name>/avatar and named in the profile."""

import io
import os

import pytest
from PIL import Image

from social import avatars
from social.models import Avatar, User
from social.rules import AVATAR_BODY_MAX, AVATAR_PIXELS_MAX, AVATAR_SIZE, AVATAR_UPLOAD_MAX

pytestmark = pytest.mark.django_db


def picture(fmt: str = "PNG", size=(640, 480), color=(200, 30, 60)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format=fmt)
    return out.getvalue()


def test_identicon_is_deterministic_and_distinct():
    first = avatars.identicon_svg("alice")
    assert first == avatars.identicon_svg("ALICE")  # names are case-insensitive
    assert first != avatars.identicon_svg("bob")
    assert first.startswith("<svg") and "<script" not in first


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "WEBP"])
def test_pictures_are_resized_to_a_webp_square(fmt):
    image = Image.open(io.BytesIO(avatars.avatar_process(picture(fmt, size=(900, 300)))))
    assert image.format == "WEBP" and image.size == (AVATAR_SIZE, AVATAR_SIZE)


@pytest.mark.parametrize(
    "data, words",
    [
        (b"", "empty"),
        (b"not a picture at all", "not a picture"),
        (b"<svg xmlns='http://www.w3.org/2000/svg'></svg>", "not a picture"),
        (picture("BMP"), "not a picture"),  # a decoder the site does not run
        (picture("PNG")[:60], "damaged"),
        (b"x" * (AVATAR_UPLOAD_MAX + 1), "larger than"),
    ],
)
def test_refused_uploads_say_why(data, words):
    with pytest.raises(avatars.AvatarRefused, match=words):
        avatars.avatar_process(data)


def test_a_decompression_bomb_is_refused_before_it_is_decoded():
    side = int(AVATAR_PIXELS_MAX**0.5) + 100
    out = io.BytesIO()
    Image.new("1", (side, side)).save(out, format="PNG")  # a few KB that decode to 25+ million pixels
    assert len(out.getvalue()) < AVATAR_UPLOAD_MAX
    with pytest.raises(avatars.AvatarRefused, match="pixels"):
        avatars.avatar_process(out.getvalue())


def test_upload_on_the_settings_page_then_remove(client, api):
    api.as_user("alice")
    client.login(username="alice", password="password123")
    assert client.get("/u/alice/avatar")["Content-Type"] == "image/svg+xml"

    response = client.post("/settings/avatar", {"avatar": io.BytesIO(picture("JPEG"))}, follow=True)
    assert response.status_code == 200 and "Your new picture is saved" in response.content.decode()
    alice = User.objects.get(username="alice")
    assert alice.avatar_version == 1 and Avatar.objects.filter(user=alice).exists()
    served = client.get("/u/ALICE/avatar?v=1")
    assert served["Content-Type"] == "image/webp" and "immutable" in served["Cache-Control"]
    assert Image.open(io.BytesIO(served.content)).size == (AVATAR_SIZE, AVATAR_SIZE)
    assert "max-age=300" in client.get("/u/alice/avatar")["Cache-Control"]
    assert api.get("/api/v1/users/alice").json()["avatar_url"] == "/u/alice/avatar?v=1"

    bad = client.post("/settings/avatar", {"avatar": io.BytesIO(b"GIF89a nonsense")})
    assert bad.status_code == 400
    assert "damaged" in bad.content.decode() or "not a picture" in bad.content.decode()
    assert User.objects.get(username="alice").avatar_version == 1  # nothing changed

    client.post("/settings/avatar", {"remove": "1"})
    assert client.get("/u/alice/avatar")["Content-Type"] == "image/svg+xml"
    assert User.objects.get(username="alice").avatar_version == 2


def test_avatar_of_no_one_is_404(client):
    assert client.get("/u/nobody_here/avatar").status_code == 404


def test_upload_needs_a_signed_in_person(client):
    response = client.post("/settings/avatar", {"avatar": io.BytesIO(picture())})
    assert response.status_code == 302 and "/login" in response["Location"]


def test_uploads_count_as_writes(client, api, settings):
    settings.RATE_LIMIT_WRITES_PER_MINUTE = 1
    api.as_user("alice")
    client.login(username="alice", password="password123")
    assert client.post("/settings/avatar", {"avatar": io.BytesIO(picture())}).status_code == 302
    refused = client.post("/settings/avatar", {"avatar": io.BytesIO(picture())})
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert User.objects.get(username="alice").avatar_version == 1


def noise_png(side: int) -> bytes:
    """A PNG that does not compress: about 3 x side² bytes."""
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(3 * side * side)).save(out, format="PNG", compress_level=0)
    return out.getvalue()


def test_a_phone_sized_picture_passes_the_body_limit_on_the_settings_page(client, api, settings):
    """API bodies stop at 2 MiB, but the settings page takes pictures up to 5 MB: a 3 MB one is
    saved, and one past the page's own limit is a 413 saying "picture"."""
    api.as_user("alice")
    client.login(username="alice", password="password123")
    photo = noise_png(1000)
    assert settings.API_MAX_BODY_BYTES < len(photo) < AVATAR_UPLOAD_MAX
    response = client.post("/settings/avatar", {"avatar": io.BytesIO(photo)})
    assert response.status_code == 302, response.content[:300]
    assert User.objects.get(username="alice").avatar_version == 1
    huge = client.post("/settings/avatar", {"avatar": io.BytesIO(b"x" * (AVATAR_BODY_MAX + 1))})
    assert huge.status_code == 413 and "picture" in huge.json()["detail"]


def test_the_api_sets_and_removes_the_callers_picture(api, client):
    alice = api.as_user("alice")
    auth = {"Authorization": f"Bearer {alice.token}"}
    put = client.put("/api/v1/me/avatar", data=picture("JPEG"), content_type="image/jpeg", headers=auth)
    assert put.status_code == 200, put.content
    assert put.json()["avatar_url"] == "/u/alice/avatar?v=1" and put.json()["username"] == "alice"
    served = client.get("/u/alice/avatar?v=1")
    assert served["Content-Type"] == "image/webp"
    assert Image.open(io.BytesIO(served.content)).size == (AVATAR_SIZE, AVATAR_SIZE)

    bad = client.put("/api/v1/me/avatar", data=b"<svg/>", content_type="image/png", headers=auth)
    assert bad.status_code == 400 and "not a picture" in bad.json()["detail"]
    big = client.put("/api/v1/me/avatar", data=noise_png(1000), content_type="image/png", headers=auth)
    assert big.status_code == 413 and "picture" in big.json()["detail"]
    assert client.put("/api/v1/me/avatar", data=picture(), content_type="image/png").status_code == 401
    assert User.objects.get(username="alice").avatar_version == 1  # none of those changed it

    gone = client.delete("/api/v1/me/avatar", headers=auth)
    assert gone.status_code == 200 and gone.json()["avatar_url"] == "/u/alice/avatar?v=2"
    assert client.get("/u/alice/avatar")["Content-Type"] == "image/svg+xml"
