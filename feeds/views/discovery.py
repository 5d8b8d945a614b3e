"""Pages of discovery: /discover (facets, filters as shareable links, sorts, pages) and
/popular (all time, the last day, or among the people I follow)."""

from urllib.parse import urlencode

from django.contrib.auth.views import redirect_to_login
from django.shortcuts import render

from feeds import selectors
from feeds.discovery.queries import SORTS, Query
from feeds.rules import BOARD_KINDS, TAG_RE
from feeds.selectors import POPULAR_SCOPES as SCOPES
from feeds.views.boards import PAGE_SIZE, cards
from social.rules import USERNAME_RE
from ugcsite.platform.http import page_number

# What the tabs say, in their order; the names themselves are the API's (SORTS, POPULAR_SCOPES).
SORT_LABELS = {
    "recent": "Newest",
    "popular": "Most viewed",
    "trending": "Trending today",
    "likes": "Most liked",
    "likes-trending": "Liked today",
}
SCOPE_LABELS = {"all": "All time", "trending": "Last 24 hours", "following": "Among people you follow"}
POPULAR_SORT_LABELS = {"views": "By views", "likes": "By likes"}
DISCOVER_SORTS = tuple((name, SORT_LABELS[name]) for name in SORTS)
POPULAR_SCOPES = tuple((name, label) for name, label in SCOPE_LABELS.items() if name in SCOPES)
POPULAR_SORTS = tuple((name, POPULAR_SORT_LABELS[name]) for name in selectors.POPULAR_SORTS)


def _discover_query(request):
    """The filters of /discover from its query string (as the API takes them); junk is dropped
    with a note, so a shared link never breaks the page."""
    notes = []
    kind = request.GET.get("kind") or None
    if kind is not None and kind not in BOARD_KINDS:
        notes.append(f"There is no kind “{kind[:40]}”; showing every kind.")
        kind = None
    tags = []
    for tag in request.GET.getlist("tag"):
        if TAG_RE.match(tag):
            tags.append(tag)
        else:
            notes.append(f"“{tag[:40]}” is not a tag (tags are a-z, 0-9 and -); it is left out.")
    author = request.GET.get("author") or None
    if author is not None and not USERNAME_RE.match(author):
        notes.append(f"There is nobody called “{author[:40]}”.")
    sort = request.GET.get("sort", "recent")
    if sort not in dict(DISCOVER_SORTS):
        sort = "recent"
    return Query(kind=kind, tags=tuple(dict.fromkeys(tags)), author=author, sort=sort), notes


def _link(query, **changes) -> str:
    """A shareable /discover address: the current filters with ``changes`` (None removes)."""
    params = {
        "kind": query.kind,
        "tag": list(query.tags),
        "author": query.author,
        "sort": None if query.sort == "recent" else query.sort,
    }
    params.update(changes)
    pairs = [
        (k, v) for k, values in params.items() if values for v in (values if isinstance(values, list) else [values])
    ]
    return "/discover" + (f"?{urlencode(pairs)}" if pairs else "")


def discover_page(request):
    """Discovery in the browser: facets with counts (kinds, the most used tags), filters as
    links that can be shared, a sort switch and pages, all from one discovery query."""
    query, notes = _discover_query(request)
    number = page_number(request, page_size=PAGE_SIZE)
    offset = (number - 1) * PAGE_SIZE
    if query.author is not None and not USERNAME_RE.match(query.author):
        answer = {"total": 0, "items": []}  # no such person can exist
    else:
        answer = selectors.discover(query, offset=offset, limit=PAGE_SIZE, viewer=request.user)
    facets = selectors.discover_facets(request.user)
    kinds = [
        {
            "name": name,
            "count": count,
            "active": name == query.kind,
            "url": _link(query, kind=None if name == query.kind else name),
        }
        for name, count in facets["kinds"].items()
    ]
    tags = [
        {
            "name": tag,
            "count": count,
            "active": tag in query.tags,
            "url": _link(query, tag=[t for t in query.tags if t != tag] if tag in query.tags else [*query.tags, tag]),
        }
        for tag, count in facets["tags"]
    ]
    pages = -(-answer["total"] // PAGE_SIZE)
    return render(
        request,
        "feeds/discover.html",
        {
            "query": query,
            "notes": notes,
            "boards": cards(answer["items"]),
            "total": answer["total"],
            "kinds": kinds,
            "tags": tags,
            "sorts": [
                {"name": name, "label": label, "active": name == query.sort, "url": _link(query, sort=name)}
                for name, label in DISCOVER_SORTS
            ],
            "active_tags": [
                {"name": tag, "url": _link(query, tag=[t for t in query.tags if t != tag])} for tag in query.tags
            ],
            "author_clear": _link(query, author=None) if query.author else None,
            "page": number,
            "pages": pages,
            "previous_url": _link(query, page=number - 1 if number > 2 else None) if number > 1 else None,
            "next_url": _link(query, page=number + 1) if number < pages else None,
        },
    )


def _popular_link(scope: str, sort: str) -> str:
    query = {key: value for key, value in (("scope", scope), ("sort", sort)) if value not in ("all", "views")}
    return "/popular" + (f"?{urlencode(query)}" if query else "")


def popular_page(request):
    """The most viewed (or liked) boards of all time or of the last day, or the most read (or
    liked) among the people I follow (that scope asks to log in)."""
    scope = request.GET.get("scope", "all")
    if scope not in dict(POPULAR_SCOPES):
        scope = "all"
    sort = request.GET.get("sort", "views")
    if sort not in dict(POPULAR_SORTS):
        sort = "views"
    if scope == "following" and not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    answer = selectors.popular_list(scope=scope, sort=sort, limit=PAGE_SIZE, viewer=request.user)
    entries = cards([item["board"] for item in answer["items"]])
    field = "reads" if sort == "views" else "likes_ranked"
    for entry, item in zip(entries, answer["items"]):
        entry[field] = item["reads" if sort == "views" else "likes"]
    return render(
        request,
        "feeds/popular.html",
        {
            "boards": entries,
            "scope": scope,
            "sort": sort,
            "scopes": [
                {"name": name, "label": label, "active": name == scope, "url": _popular_link(name, sort)}
                for name, label in POPULAR_SCOPES
            ],
            "sorts": [
                {"name": name, "label": label, "active": name == sort, "url": _popular_link(scope, name)}
                for name, label in POPULAR_SORTS
            ],
        },
    )
