"""What every page's header shows a signed-in person: their unread notifications, and how many
boards the cards' scripts may ask about at once (static/js/reading.js, likes.js); and the
drawing's layout numbers, for the pages that draw boards (static/js/live.js)."""

from feeds.notifications import notifications_unread
from feeds.rules import DRAWING_LAYOUT, MAX_CANVAS, PAGE_IDS_MAX


def header(request) -> dict:
    """``notifications_unread`` for the header's badge: one count on a partial index, only for
    a signed-in person (nothing for anyone else)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"notifications_unread": notifications_unread(user.pk), "page_ids_max": PAGE_IDS_MAX}


def drawing(request) -> dict:
    """``drawing_layout`` for the pages that draw boards (static/js/live.js): a constant, with the
    largest canvas (a rotated box's corners grow a board up to it, feeds.validation.element_extent)."""
    return {"drawing_layout": _LAYOUT}


_LAYOUT = {**DRAWING_LAYOUT, "maxCanvas": MAX_CANVAS}
