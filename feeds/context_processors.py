"""What every page's header shows a signed-in person: their unread notifications."""

from feeds.notifications import notifications_unread


def header(request) -> dict:
    """``notifications_unread`` for the header's badge: one count on a partial index, only for
    a signed-in person (nothing for anyone else)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"notifications_unread": notifications_unread(user.pk)}
