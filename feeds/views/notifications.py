"""The notifications page (/notifications): what GET /api/v1/notifications answers, with a
button that marks them all read and one on each unread item that marks that one (POST
/api/v1/notifications/read does the same)."""

from datetime import datetime

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse

from feeds import notifications, selectors
from feeds.views.boards import cards
from ugcsite.platform.http import page_number, whole_number

NOTIFICATIONS_PAGE_SIZE = 30


@login_required
def notifications_page(request):
    if request.method == "POST":
        one, page = request.POST.get("id", ""), whole_number(request.POST.get("page", ""))
        if one and whole_number(one) is None:
            return redirect("boards:notifications")  # not an id of anyone's: nothing to mark
        notifications.notifications_mark_read(request.user.pk, ids=[whole_number(one)] if one else None)
        return redirect(
            f"{reverse('boards:notifications')}?page={page}" if page is not None else "boards:notifications"
        )
    number = page_number(request, page_size=NOTIFICATIONS_PAGE_SIZE)
    answer = selectors.notifications_list(
        request.user, offset=(number - 1) * NOTIFICATIONS_PAGE_SIZE, limit=NOTIFICATIONS_PAGE_SIZE + 1
    )
    items = answer["items"][:NOTIFICATIONS_PAGE_SIZE]
    for item in items:
        item["board_card"] = cards([item["board"]])[0] if item["board"] else None
        item["others"] = item["actor_count"] - len(item["actors"][:1])
        item["created"] = datetime.fromisoformat(item["created_at"])
    return render(
        request,
        "feeds/notifications.html",
        {
            "items": items,
            "unread": answer["unread"],
            "page": number,
            "previous_page": number - 1 if number > 1 else None,
            "next_page": number + 1 if len(answer["items"]) > NOTIFICATIONS_PAGE_SIZE else None,
        },
    )
