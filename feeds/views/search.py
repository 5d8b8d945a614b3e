"""The search page (/search?q=&type=users|boards): what GET /api/v1/search answers, in pages."""

from django.shortcuts import render

from feeds import selectors
from feeds.rules import SEARCH_TYPES
from feeds.views.boards import cards
from social.rules import SEARCH_QUERY_LENGTH
from ugcsite.http import page_number

SEARCH_PAGE_SIZE = 20
TYPE_LABELS = {"boards": "Boards", "users": "People"}


def search_page(request):
    """Results of the header's search box, people or boards, best match first; an empty or
    over-long query shows the form with a note instead of an error."""
    query = request.GET.get("q", "").replace("\x00", "")
    kind = request.GET.get("type", "boards")
    if kind not in SEARCH_TYPES:
        kind = "boards"
    low, high = SEARCH_QUERY_LENGTH
    context = {
        "q": query,
        "type": kind,
        "types": [(name, TYPE_LABELS[name]) for name in SEARCH_TYPES],
        "max_length": high,
        "note": "",
    }
    if not query.strip():
        return render(request, "feeds/search.html", context)
    if len(query) > high:
        context["note"] = f"Searches are at most {high} characters; shorten yours."
        return render(request, "feeds/search.html", context, status=400)
    number = page_number(request, page_size=SEARCH_PAGE_SIZE)
    offset = (number - 1) * SEARCH_PAGE_SIZE
    answer = selectors.search(query, kind=kind, offset=offset, limit=SEARCH_PAGE_SIZE, viewer=request.user)
    context.update(
        {
            "total": answer["total"],
            "people": answer["items"] if kind == "users" else [],
            "boards": cards(answer["items"]) if kind == "boards" else [],
            "page": number,
            "previous_page": number - 1 if number > 1 else None,
            "next_page": number + 1 if offset + SEARCH_PAGE_SIZE < answer["total"] else None,
            "searched": True,
        }
    )
    return render(request, "feeds/search.html", context)
