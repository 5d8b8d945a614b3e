"""Server-side SVG of a drawing document (``/api/v1/boards/<id>/preview.svg``).

The document has been validated (feeds.validation), so numbers are numbers and colors match
``#rrggbb``; still, every value written into the markup is escaped, and characters that XML 1.0
cannot carry are dropped from texts, so nothing from a document can open a tag, an attribute
or a script. The answer is also served with a CSP that forbids scripts (feeds.api).
"""

import re
from html import escape

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")
_ATTR_NAMES = {"xml_space": "xml:space"}


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


def _element(element: dict) -> str:
    kind = element.get("type")
    color = _color(element.get("color"))
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
        text = escape(_XML_INVALID.sub("", element["text"]), quote=True)
        return (
            "<text "
            + _attrs(
                x=_num(element["x"]),
                y=_num(element["y"]),
                fill=color,
                font_size=_num(element["size"]),
                font_family="sans-serif",
                xml_space="preserve",
            )
            + f">{text}</text>"
        )
    if kind in ("rect", "ellipse"):
        fill = element.get("fill")
        paint = {"fill": _color(fill) if fill else "none", "stroke": color, "stroke_width": _num(element["width"])}
        x, y, w, h = (float(element[k]) for k in ("x", "y", "w", "h"))
        if kind == "rect":
            return "<rect " + _attrs(x=_num(x), y=_num(y), width=_num(w), height=_num(h), **paint) + "/>"
        return (
            "<ellipse " + _attrs(cx=_num(x + w / 2), cy=_num(y + h / 2), rx=_num(w / 2), ry=_num(h / 2), **paint) + "/>"
        )
    return ""  # unknown types never pass validation; a stored one is skipped, not rendered raw


def render_svg(doc: dict, *, title: str = "") -> str:
    """The whole drawing as one SVG document. O(number of points)."""
    width, height = _num(doc["width"]), _num(doc["height"])
    parts = [
        '<svg xmlns="http://www.w3.org/2000/svg" '
        + _attrs(width=width, height=height, viewBox=f"0 0 {width} {height}")
        + ">"
    ]
    if title:
        parts.append(f"<title>{escape(_XML_INVALID.sub('', title))}</title>")
    parts.append("<rect " + _attrs(width="100%", height="100%", fill=_color(doc.get("background"))) + "/>")
    parts.extend(_element(element) for element in doc.get("elements", ()))
    parts.append("</svg>")
    return "\n".join(parts)
