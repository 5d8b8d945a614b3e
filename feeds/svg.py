"""Server-side SVG of a drawing document (``/api/v1/boards/<id>/preview.svg``).

The document has been validated (feeds.validation), so numbers are numbers and colors match
``#rrggbb``; still, every value written into the markup is escaped, and characters that XML 1.0
cannot carry are dropped from texts, so nothing from a document can open a tag, an attribute
or a script. The answer is also served with a CSP that forbids scripts (feeds.api).

A picture (an ``image`` element) is drawn from ``images``, its id's ``data:`` URI of its small
copy, a JPEG or a PNG (feeds.images.image_data_uris): an SVG shown through ``<img>`` loads
nothing from outside, and a renderer on the server resolves a data: URI of either format with no
network. One it lacks (hidden, deleted) is a blank box with a faint edge, as the canvas draws one
it cannot load.
"""

import math
import re
from html import escape

from feeds.rules import DRAWING_LAYOUT

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")
_ATTR_NAMES = {"xml_space": "xml:space"}
# Drawn alike by the canvas and the editor's export (static/js/live.js: arrowHead, stickyLines).
ARROW_HEAD_ANGLE = DRAWING_LAYOUT["arrowHeadAngle"]  # each side of the head, from the shaft
STICKY_PAD = DRAWING_LAYOUT["stickyPad"]  # between a sticky note's edge and its text
STICKY_LINE_HEIGHT = DRAWING_LAYOUT["stickyLineHeight"]  # times the text size
STICKY_CHAR_WIDTH = DRAWING_LAYOUT["stickyCharWidth"]  # times the text size, when a note's text wraps
_PAPER_EDGE = {"stroke": "#000000", "stroke_opacity": "0.15", "stroke_width": "1"}


def _num(value) -> str:
    """A coordinate as SVG text: integers as such, decimals to two places, nothing else."""
    number = float(value)
    if number.is_integer():
        return str(int(number))
    return f"{number:.2f}".rstrip("0").rstrip(".")


def _color(value) -> str:
    return value if isinstance(value, str) and _COLOR.match(value) else "#000000"


def _attrs(**attrs) -> str:
    return " ".join(
        f'{_ATTR_NAMES.get(name, name.replace("_", "-"))}="{escape(str(value), quote=True)}"'
        for name, value in attrs.items()
    )


def arrow_head(element: dict) -> list[tuple[float, float]]:
    """The three points of an arrow's head (one side, the tip, the other): sides of three times
    the stroke width (at least 10), at ARROW_HEAD_ANGLE to the shaft."""
    (x0, y0), (x1, y1) = element["points"]
    angle = math.atan2(y1 - y0, x1 - x0)
    size = max(10, 3 * float(element["width"]))
    sides = [angle + math.pi - ARROW_HEAD_ANGLE, angle + math.pi + ARROW_HEAD_ANGLE]
    a, b = ((x1 + size * math.cos(side), y1 + size * math.sin(side)) for side in sides)
    return [a, (x1, y1), b]


def sticky_wrap(element: dict) -> list[str]:
    """A sticky note's text in the lines it is drawn in: each of its lines wrapped at spaces to
    what its box holds (STICKY_CHAR_WIDTH per character, inside STICKY_PAD on each side), a word
    longer than a line cut. Alike in static/js/live.js (stickyWrap). O(length of the text)."""
    size = float(element["size"])
    room = max(1, math.floor((float(element["w"]) - 2 * STICKY_PAD) / (size * STICKY_CHAR_WIDTH)))
    lines = []
    for paragraph in element["text"].split("\n"):
        line = None
        for word in paragraph.split(" "):
            candidate = word if line is None else line + " " + word
            if len(candidate) <= room:
                line = candidate
                continue
            if line is not None:
                lines.append(line)
            while len(word) > room:
                lines.append(word[:room])
                word = word[room:]
            line = word
        lines.append(line or "")
    return lines


def sticky_lines(element: dict) -> list[tuple[str, float, float]]:
    """A sticky note's text as (line, x, baseline y): one per wrapped line, from the top left."""
    size = float(element["size"])
    x = float(element["x"]) + STICKY_PAD
    top = float(element["y"]) + STICKY_PAD + size
    return [(line, x, top + i * size * STICKY_LINE_HEIGHT) for i, line in enumerate(sticky_wrap(element))]


def _rotation(element: dict) -> dict:
    """The transform of a rotated element: about its centre (a text: its anchor)."""
    degrees = element.get("rotation")
    if not degrees:
        return {}
    if "w" in element:
        cx, cy = float(element["x"]) + float(element["w"]) / 2, float(element["y"]) + float(element["h"]) / 2
    else:
        cx, cy = float(element["x"]), float(element["y"])
    return {"transform": f"rotate({_num(degrees)} {_num(cx)} {_num(cy)})"}


def _text(value: str) -> str:
    return escape(_XML_INVALID.sub("", value), quote=True)


def _image(element: dict, images: dict[str, str]) -> str:
    x, y, w, h = (_num(element[k]) for k in ("x", "y", "w", "h"))
    box = {"x": x, "y": y, "width": w, "height": h}
    href = images.get(element["image"])
    if href is None or not href.startswith("data:image/"):
        inner = "<rect " + _attrs(**box, fill="#f1f3f5", **_PAPER_EDGE) + "/>"
    else:
        inner = "<image " + _attrs(**box, preserveAspectRatio="none", href=href) + "/>"
    return "<g " + _attrs(**_rotation(element), data_type="image", data_image=element["image"]) + ">" + inner + "</g>"


def _element(element: dict, images: dict[str, str]) -> str:
    kind = element.get("type")
    if kind == "image":
        return _image(element, images)
    color = _color(element.get("color"))
    if kind in ("line", "arrow"):
        stroke = {"stroke": color, "stroke_width": _num(element["width"]), "stroke_linecap": "round"}
        (x0, y0), (x1, y1) = element["points"]
        line = "<line " + _attrs(x1=_num(x0), y1=_num(y0), x2=_num(x1), y2=_num(y1), **stroke) + "/>"
        if kind == "line":
            return line
        head = " ".join(f"{_num(x)},{_num(y)}" for x, y in arrow_head(element))
        return line + "<polyline " + _attrs(points=head, fill="none", stroke_linejoin="round", **stroke) + "/>"
    if kind == "sticky":
        box = (float(element[k]) for k in ("x", "y", "w", "h"))
        x, y, w, h = (_num(v) for v in box)
        parts = [
            "<g " + _attrs(**_rotation(element), data_type="sticky") + ">",
            "<rect " + _attrs(x=x, y=y, width=w, height=h, fill=_color(element["fill"]), **_PAPER_EDGE) + "/>",
        ]
        font = {"fill": color, "font_size": _num(element["size"]), "font_family": "sans-serif", "xml_space": "preserve"}
        for line, lx, ly in sticky_lines(element):
            if line:
                parts.append("<text " + _attrs(x=_num(lx), y=_num(ly), **font) + f">{_text(line)}</text>")
        parts.append("</g>")
        return "".join(parts)
    if kind == "path":
        points = " ".join(f"{_num(x)},{_num(y)}" for x, y in element["points"])
        return (
            "<polyline "
            + _attrs(
                points=points,
                fill="none",
                stroke=color,
                stroke_width=_num(element["width"]),
                stroke_linecap="round",
                stroke_linejoin="round",
            )
            + "/>"
        )
    if kind == "text":
        text = _text(element["text"])
        return (
            "<text "
            + _attrs(
                x=_num(element["x"]),
                y=_num(element["y"]),
                fill=color,
                font_size=_num(element["size"]),
                font_family="sans-serif",
                xml_space="preserve",
                **_rotation(element),
            )
            + f">{text}</text>"
        )
    if kind in ("rect", "ellipse"):
        fill = element.get("fill")
        paint = {
            "fill": _color(fill) if fill else "none",
            "stroke": color,
            "stroke_width": _num(element["width"]),
            **_rotation(element),
        }
        x, y, w, h = (float(element[k]) for k in ("x", "y", "w", "h"))
        if kind == "rect":
            return "<rect " + _attrs(x=_num(x), y=_num(y), width=_num(w), height=_num(h), **paint) + "/>"
        return (
            "<ellipse " + _attrs(cx=_num(x + w / 2), cy=_num(y + h / 2), rx=_num(w / 2), ry=_num(h / 2), **paint) + "/>"
        )
    return ""  # unknown types never pass validation; a stored one is skipped, not rendered raw


def render_svg(doc: dict, *, title: str = "", images: dict[str, str] | None = None) -> str:
    """The whole drawing as one SVG document; ``images`` maps a picture's id to its data: URI
    (feeds.images.image_data_uris). O(number of points + bytes of the pictures)."""
    images = images or {}
    width, height = _num(doc["width"]), _num(doc["height"])
    parts = [
        '<svg xmlns="http://www.w3.org/2000/svg" '
        + _attrs(width=width, height=height, viewBox=f"0 0 {width} {height}")
        + ">"
    ]
    if title:
        parts.append(f"<title>{escape(_XML_INVALID.sub('', title))}</title>")
    parts.append("<rect " + _attrs(width="100%", height="100%", fill=_color(doc.get("background"))) + "/>")
    parts.extend(_element(element, images) for element in doc.get("elements", ()))
    parts.append("</svg>")
    return "\n".join(parts)
