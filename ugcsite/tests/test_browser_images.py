"""Pictures on the canvas (issue 40, item 3) in a real Chromium: a picture pasted into the editor
is uploaded (with its progress shown), placed and selected; it moves and resizes like any box;
one dropped and one chosen with the Picture button join it; after publishing, the server's
preview draws each where the editor left it (its SVG embeds them, and the page's <img> shows
their pixels). No CSP violation and no script error on the way."""

import base64
import io
import re
import xml.etree.ElementTree as ET

import pytest
from PIL import Image

from feeds.models import Image as Picture
from ugcsite.tests.support import client_of, model, mouse_drag, open_editor, sign_up

pytestmark = [pytest.mark.browser]
NS = "{http://www.w3.org/2000/svg}"
RED, BLUE, GREEN = (220, 20, 40), (20, 60, 220), (30, 170, 60)


@pytest.fixture(autouse=True)
def media_here(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"  # the live server runs in this process: it reads the same


def png(size, color) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format="PNG")
    return out.getvalue()


# A File built in the page from base64, then handed to the editor as a person's paste or drop does.
MAKE_FILE = "([data, name]) => new File([Uint8Array.from(atob(data), c => c.charCodeAt(0))], name, {type: 'image/png'})"
PASTE = f"""args => {{
    const file = ({MAKE_FILE})(args);
    const data = new DataTransfer();
    data.items.add(file);
    document.dispatchEvent(new ClipboardEvent("paste", {{clipboardData: data, bubbles: true, cancelable: true}}));
}}"""
DROP = f"""([data, name, x, y]) => {{
    const file = ({MAKE_FILE})([data, name]);
    const transfer = new DataTransfer();
    transfer.items.add(file);
    const wrap = document.getElementById("canvas-wrap");
    const options = {{dataTransfer: transfer, bubbles: true, cancelable: true, clientX: x, clientY: y}};
    wrap.dispatchEvent(new DragEvent("dragover", options));
    wrap.dispatchEvent(new DragEvent("drop", options));
}}"""
# The colour at a point of the editor's canvas (page coordinates), as drawn.
CANVAS_PIXEL = """([x, y]) => {
    const canvas = document.getElementById("board-canvas");
    const box = canvas.getBoundingClientRect();
    const ratio = canvas.width / box.width;
    return Array.from(canvas.getContext("2d").getImageData((x - box.left) * ratio, (y - box.top) * ratio, 1, 1).data.slice(0, 3));
}"""
# The colour at a document point of the board page's preview <img> (the server's SVG, drawn by the browser).
PREVIEW_PIXEL = """([x, y, width]) => {
    const img = document.querySelector("img.board-image");
    const scale = img.naturalWidth / width;
    const canvas = document.createElement("canvas");
    canvas.width = img.naturalWidth;
    canvas.height = img.naturalHeight;
    const ctx = canvas.getContext("2d");
    ctx.drawImage(img, 0, 0);
    return Array.from(ctx.getImageData(x * scale, y * scale, 1, 1).data.slice(0, 3));
}"""


def images_of(page) -> list[dict]:
    return [element for element in model(page)["elements"] if element["type"] == "image"]


def near(color, expected, tolerance=12) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(color, expected, strict=True))


def test_a_pasted_picture_moves_resizes_and_is_in_the_published_preview(people, tmp_path):
    alice = people("alice", viewport=(1280, 800))
    sign_up(alice, "alice")
    open_editor(alice, "/new", "editor")
    page = alice.page
    # Whether the upload's progress was shown: the status appears while it runs, then goes.
    page.evaluate(
        """() => { window.progressSeen = false;
        new MutationObserver(() => { if (!document.getElementById("image-status").hidden) window.progressSeen = true; })
          .observe(document.getElementById("image-status"), {attributes: true}); }"""
    )

    page.evaluate(PASTE, [base64.b64encode(png((400, 300), RED)).decode(), "screenshot.png"])
    page.wait_for_function("() => window.ugcsiteEditor.doc().elements.length === 1")
    (pasted,) = images_of(page)
    assert page.evaluate("() => window.progressSeen") is True
    assert page.locator("#image-status").is_hidden()
    assert (pasted["w"], pasted["h"]) == (400, 300)  # its own size: it fits in half the 800 x 600 board
    assert (pasted["x"], pasted["y"]) == pytest.approx((200, 150), abs=40)  # the middle of the view
    assert page.evaluate("() => window.ugcsiteEditor.selection()") == [pasted["id"]]
    stored = Picture.objects.get(pk=pasted["image"])
    assert (stored.owner.username, stored.width, stored.height) == ("alice", 400, 300)
    middle = client_of(page, pasted["x"] + 200, pasted["y"] + 150)
    page.wait_for_function(f"() => {{ const c = ({CANVAS_PIXEL})({list(middle)}); return c[0] > 180 && c[2] < 90; }}")
    alice.shot("pasted")

    # Move it by (-150, -100): dragged from its middle with the select tool.
    mouse_drag(page, middle, client_of(page, pasted["x"] + 50, pasted["y"] + 50))
    (moved,) = images_of(page)
    assert (moved["x"], moved["y"]) == pytest.approx((pasted["x"] - 150, pasted["y"] - 100), abs=1)
    assert (moved["w"], moved["h"], moved["image"]) == (400, 300, pasted["image"])

    # Resize it from its bottom-right handle, 100 x 60 smaller.
    corner = (moved["x"] + moved["w"], moved["y"] + moved["h"])
    mouse_drag(page, client_of(page, *corner), client_of(page, corner[0] - 100, corner[1] - 60))
    (resized,) = images_of(page)
    assert (resized["x"], resized["y"]) == pytest.approx((moved["x"], moved["y"]), abs=0.5)
    assert (resized["w"], resized["h"]) == pytest.approx((300, 240), abs=1)
    alice.shot("moved-and-resized")

    # One more dropped at a point, one chosen with the Picture button.
    drop_at = client_of(page, 600, 450)
    page.evaluate(DROP, [base64.b64encode(png((100, 80), BLUE)).decode(), "photo.png", *drop_at])
    page.wait_for_function("() => window.ugcsiteEditor.doc().elements.length === 2")
    dropped = images_of(page)[1]
    assert (dropped["x"] + dropped["w"] / 2, dropped["y"] + dropped["h"] / 2) == pytest.approx((600, 450), abs=2)
    chosen = tmp_path / "logo.png"
    chosen.write_bytes(png((60, 60), GREEN))
    with page.expect_file_chooser() as chooser:
        page.click("button[data-action=image]")
    chooser.value.set_files(str(chosen))
    page.wait_for_function("() => window.ugcsiteEditor.doc().elements.length === 3")
    logo = images_of(page)[2]

    page.fill("#title", "Annotated screenshot")
    page.click("#publish")
    page.wait_for_url(re.compile(r".*/b/\d+$"))
    board_id = page.url.rsplit("/", 1)[1]
    board = alice.api(f"/api/v1/boards/{board_id}")
    assert [e for e in board["doc"]["elements"] if e["type"] == "image"] == [resized, dropped, logo]

    svg = page.evaluate("path => fetch(path).then(r => r.text())", f"/api/v1/boards/{board_id}/preview.svg")
    groups = {g.get("data-image"): g for g in ET.fromstring(svg).iter(f"{NS}g") if g.get("data-type") == "image"}
    assert set(groups) == {resized["image"], dropped["image"], logo["image"]}
    drawn = groups[resized["image"]].find(f"{NS}image")
    assert [float(drawn.get(k)) for k in ("x", "y", "width", "height")] == pytest.approx(
        [resized["x"], resized["y"], resized["w"], resized["h"]], abs=0.01
    )
    assert drawn.get("href").startswith("data:image/jpeg;base64,")  # its small copy, embedded

    # The board page's <img> of that preview shows the pictures' own pixels where they stand.
    page.wait_for_function(
        "() => { const img = document.querySelector('img.board-image'); return img && img.complete && img.naturalWidth > 0; }"
    )
    width = board["doc"]["width"]
    for element, color in ((resized, RED), (dropped, BLUE), (logo, GREEN)):
        centre = [element["x"] + element["w"] / 2, element["y"] + element["h"] / 2, width]
        assert near(page.evaluate(PREVIEW_PIXEL, centre), color), (element, color)
    alice.shot("published")
    alice.check_clean()
