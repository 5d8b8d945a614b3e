"""What every page's header shows a signed-in person: their unread notifications, and how many
boards the cards' scripts may ask about at once (static/js/reading.js, likes.js)."""

from feeds.notifications import notifications_unread
from feeds.rules import PAGE_IDS_MAX


def header(request) -> dict:
    """``notifications_unread`` for the header's badge: one count on a partial index, only for
    a signed-in person (nothing for anyone else)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"notifications_unread": notifications_unread(user.pk), "page_ids_max": PAGE_IDS_MAX}
