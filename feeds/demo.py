"""Drawings for the demo world: small scenes made of the document's own elements (docs/api.md).

Each maker takes a seeded ``random.Random`` and returns ``(title, kind, tags, doc)``.
"""

import math
import random

W, H = 800, 600
PALETTE = ["#1d2330", "#3b5bdb", "#e8590c", "#2f9e44", "#c2255c", "#f59f00", "#6741d9", "#0c8599"]


def _path(color, width, points):
    return {
        "type": "path",
        "color": color,
        "width": width,
        "points": [[round(min(max(x, 0), W), 1), round(min(max(y, 0), H), 1)] for x, y in points],
    }


def _rect(x, y, w, h, color, fill=None, width=3, kind="rect"):
    return {"type": kind, "color": color, "width": width, "x": x, "y": y, "w": w, "h": h, "fill": fill}


def _text(x, y, text, color="#1d2330", size=28):
    return {"type": "text", "color": color, "size": size, "x": x, "y": y, "text": text}


def _wobble(rng, points, amount=2.0):
    return [(x + rng.uniform(-amount, amount), y + rng.uniform(-amount, amount)) for x, y in points]


def _doc(background, elements):
    return {"width": W, "height": H, "background": background, "elements": elements}


def house(rng):
    x, y = rng.randint(120, 380), rng.randint(260, 320)
    roof = rng.choice(PALETTE)
    sun_x, sun_y = rng.randint(560, 700), rng.randint(70, 150)
    rays = [
        _path(
            "#f59f00",
            4,
            [
                (sun_x + 55 * math.cos(a), sun_y + 55 * math.sin(a)),
                (sun_x + 80 * math.cos(a), sun_y + 80 * math.sin(a)),
            ],
        )
        for a in [i * math.pi / 4 for i in range(8)]
    ]
    grass = _path("#2f9e44", 5, _wobble(rng, [(i * 40, 540 + 8 * math.sin(i)) for i in range(21)], 4))
    return (
        "A house in the sun",
        "sketch",
        ["house", "sun"],
        _doc(
            "#e7f5ff",
            [
                _rect(x, y, 240, 200, "#1d2330", "#fff4e6"),
                _path(roof, 6, _wobble(rng, [(x - 20, y), (x + 120, y - 120), (x + 260, y), (x - 20, y)])),
                _rect(x + 95, y + 110, 50, 90, "#1d2330", "#a5673f"),
                _rect(x + 30, y + 40, 50, 50, "#1d2330", "#d0ebff"),
                _rect(x + 160, y + 40, 50, 50, "#1d2330", "#d0ebff"),
                _rect(sun_x - 40, sun_y - 40, 80, 80, "#f59f00", "#ffd43b", kind="ellipse"),
                *rays,
                grass,
            ],
        ),
    )


def flowchart(rng):
    steps = rng.choice(
        [
            ["Idea", "Sketch", "Review", "Publish"],
            ["Post", "Fan out", "Trim", "Read"],
            ["Follow", "Back-fill", "Feed"],
            ["Request", "Cache?", "Hydrate", "Answer"],
        ]
    )
    color = rng.choice(PALETTE)
    elements = []
    gap = (W - 100) // len(steps)
    for i, step in enumerate(steps):
        bx = 50 + i * gap
        elements.append(_rect(bx, 240, gap - 60, 100, color, "#ffffff", kind=rng.choice(["rect", "ellipse"])))
        elements.append(_text(bx + 12, 298, step, size=22))
        if i + 1 < len(steps):
            ax = bx + gap - 60
            elements.append(_path("#1d2330", 3, [(ax + 4, 290), (ax + 56, 290)]))
            elements.append(_path("#1d2330", 3, [(ax + 44, 280), (ax + 56, 290), (ax + 44, 300)]))
    elements.append(_text(50, 120, " → ".join(steps), size=26, color=color))
    return (
        f"How {steps[0].lower()} becomes {steps[-1].lower()}",
        "diagram",
        ["flow", "process"],
        _doc("#ffffff", elements),
    )


def note(rng):
    lines = rng.sample(
        [
            "buy paper",
            "call mum",
            "sketch the bridge",
            "water plants",
            "read seed 001",
            "fix the bike",
            "learn Lua",
            "walk the dog",
            "draw every day",
            "try ellipses",
        ],
        4,
    )
    elements = [_rect(120, 60, 560, 480, "#f59f00", "#fff9db")]
    elements.append(_text(160, 130, "To do", size=40, color="#e8590c"))
    for i, line in enumerate(lines):
        y = 200 + i * 80
        elements.append(_rect(160, y - 28, 30, 30, "#1d2330"))
        if rng.random() < 0.5:
            elements.append(_path("#2f9e44", 5, [(164, y - 14), (174, y - 2), (196, y - 36)]))
        elements.append(_text(210, y, line, size=30))
    return ("Things to do", "note", ["todo"], _doc("#f8f9fa", elements))


def comic(rng):
    elements = []
    words = rng.sample(["Hi!", "Look, a board!", "I drew it.", "Wow.", "Follow me?", "Sure!"], 2)
    for i in range(2):
        px = 30 + i * 385
        elements.append(_rect(px, 40, 355, 520, "#1d2330", "#ffffff", width=4))
        cx = px + 170
        elements.append(_rect(cx - 40, 300, 80, 80, "#1d2330", "#ffe8cc", kind="ellipse"))
        elements.append(_path("#1d2330", 4, [(cx, 380), (cx, 480)]))
        elements.append(_path("#1d2330", 4, [(cx - 50, 420), (cx, 400), (cx + 50, 420)]))
        elements.append(_path("#1d2330", 4, [(cx - 40, 540), (cx, 480), (cx + 40, 540)]))
        elements.append(_rect(px + 40, 90, 270, 110, "#1d2330", "#ffffff", kind="ellipse"))
        elements.append(_text(px + 80, 155, words[i], size=26))
    return ("Two friends", "comic", ["friends", "strip"], _doc("#fff0f6", elements))


def map_(rng):
    elements = [_rect(0, 380, 800, 220, "#1c7ed6", "#a5d8ff", width=1)]
    road = _wobble(rng, [(i * 50, 220 + 60 * math.sin(i / 2.5)) for i in range(17)], 3)
    elements.append(_path("#868e96", 10, road))
    for _ in range(6):
        tx, ty = rng.randint(40, 740), rng.randint(40, 330)
        elements.append(_path("#2b8a3e", 3, [(tx, ty + 30), (tx + 15, ty), (tx + 30, ty + 30), (tx, ty + 30)]))
    elements.append(_text(560, 470, "the lake", size=30, color="#1864ab"))
    elements.append(_text(40, 60, "N ↑", size=28))
    place = rng.choice(["Our village", "The walk home", "Weekend trail", "Where the cafe is"])
    return (place, "map", ["map", "walk"], _doc("#f4fce3", elements))


MAKERS = [house, flowchart, note, comic, map_]


def drawing(rng: random.Random, index: int):
    """The ``index``-th demo drawing: the five kinds in turn, each varied by ``rng``."""
    return MAKERS[index % len(MAKERS)](rng)
