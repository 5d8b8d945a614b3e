"""The search page (/search?q=&type=users|boards): what GET /api/v1/search answers, in pages."""

from django.shortcuts import render

from feeds import selectors
from feeds.views.boards import cards
from social import graph
from social.rules import SEARCH_QUERY_LENGTH
from ugcsite.platform.http import page_number

SEARCH_PAGE_SIZE = 20
PEOPLE_ON_TOP = 5  # people shown above the boards when a search looks for everything
TYPE_LABELS = {"all": "Everything", "users": "People", "boards": "Boards"}


def _with_follow_state(request, people: list[dict]) -> list[dict]:
    """Each person found, with whether the viewer follows them (one ZMSCORE) for its button."""
    if not request.user.is_authenticated:
        return people
    followed = graph.followed_among(request.user.pk, [person["id"] for person in people])
    return [
        {**person, "followed_by_me": person["id"] in followed, "is_me": person["id"] == request.user.pk}
        for person in people
    ]


def search_page(request):
    """Results of the header's search box: people first (with Follow buttons), then boards, best
    match first; or people alone, or boards alone (the page's choice). An empty or over-long
    query shows the form with a note instead of an error."""
    query = request.GET.get("q", "").replace("\x00", "")
    kind = request.GET.get("type", "all")
    if kind not in TYPE_LABELS:
        kind = "all"
    low, high = SEARCH_QUERY_LENGTH
    context = {
        "q": query,
        "type": kind,
        "types": list(TYPE_LABELS.items()),
        "max_length": high,
        "note": "",
        "here": request.get_full_path(),
    }
    if not query.strip():
        return render(request, "feeds/search.html", context)
    if len(query) > high:
        context["note"] = f"Searches are at most {high} characters; shorten yours."
        return render(request, "feeds/search.html", context, status=400)
    number = page_number(request, page_size=SEARCH_PAGE_SIZE)
    offset = (number - 1) * SEARCH_PAGE_SIZE
    people = {"total": 0, "items": []}
    if kind in ("all", "users"):
        people = selectors.search(
            query,
            kind="users",
            offset=0 if kind == "all" else offset,
            limit=PEOPLE_ON_TOP if kind == "all" else SEARCH_PAGE_SIZE,
            viewer=request.user,
        )
    boards = {"total": 0, "items": []}
    if kind in ("all", "boards"):
        boards = selectors.search(query, kind="boards", offset=offset, limit=SEARCH_PAGE_SIZE, viewer=request.user)
    paged = people if kind == "users" else boards
    context.update(
        {
            "people_total": people["total"],
            "boards_total": boards["total"],
            "people": _with_follow_state(request, people["items"]),
            "boards": cards(boards["items"]),
            "more_people": kind == "all" and people["total"] > PEOPLE_ON_TOP,
            "page": number,
            "previous_page": number - 1 if number > 1 else None,
            "next_page": number + 1 if offset + SEARCH_PAGE_SIZE < paged["total"] else None,
            "searched": True,
        }
    )
    return render(request, "feeds/search.html", context)
