"""Pages about boards: the home feed, a board, the whiteboard editor, delete with a confirmation.

The first page of a list is rendered here; static/js/infinite.js pages on through the JSON API
(``before=<next>``), so both walk the same timeline. The editor (static/js/editor.js) saves
through the API too: these views only render.
"""

from datetime import datetime
from urllib.parse import quote

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse

from feeds import selectors, services
from feeds.models import Board
from ugcsite.api import ApiError

User = get_user_model()

# Boards a list page shows at once; the infinite scroll asks the API for as many each time.
PAGE_SIZE = 20
# People suggested to someone whose feed is empty.
SUGGESTIONS = 6


def before_param(request) -> int | None:
    """``?before=<id>`` of a list page (the link that pages on without JavaScript); junk is ignored."""
    raw = request.GET.get("before", "")
    return int(raw) if raw.isascii() and raw.isdigit() and 0 < len(raw) <= 16 else None


def preview_src(preview_url: str, updated_at: str) -> str:
    """The preview's address for an <img>: it is cached for a minute (feeds.api), so the
    version in the query makes an edited drawing show at once."""
    return f"{preview_url}?v={quote(updated_at)}"


def cards(items: list[dict]) -> list[dict]:
    """Summary forms of the API, with ``created`` as a datetime and ``preview_src`` for the templates."""
    return [{**item, "created": datetime.fromisoformat(item["created_at"]),
             "preview_src": preview_src(item["preview_url"], item["updated_at"])} for item in items]


def _page(answer: dict) -> dict:
    return {"items": cards(answer["items"]), "next": answer["next"]}


def profile_page(person, *, before: int | None) -> dict:
    """One page of a person's boards, newest first (GET /api/v1/users/<name>/boards)."""
    return _page(selectors.profile_boards(person.pk, offset=None if before else 0, before=before, limit=PAGE_SIZE))


def people_to_follow(user, *, limit: int = SUGGESTIONS):
    """The most followed people with boards, not ``user`` and not already followed by them.

    Ordered by the stored ``followers_count`` (PostgreSQL); the follow edges are an anti-join."""
    from social.models import Follow

    followed = Follow.objects.filter(follower=user, followee=OuterRef("pk"))
    return (
        User.objects.filter(is_active=True, boards_count__gt=0)
        .exclude(pk=user.pk)
        .exclude(Exists(followed))
        .order_by("-followers_count", "-boards_count", "id")
        .only("id", "username", "followers_count", "boards_count")[:limit]
    )


def home_feed(request):
    """``/`` for a signed-in person: boards of the people they follow, newest first."""
    user = request.user
    before = before_param(request)
    services.user_seen(user_id=user.pk)
    services.home_feed_ready(user_id=user.pk)
    page = _page(selectors.home_feed(user.pk, offset=None if before else 0, before=before, limit=PAGE_SIZE))
    empty = not page["items"] and before is None
    # A feed that fits on one page is a young one: suggest people to follow below it.
    short = before is None and page["next"] is None
    return render(request, "feeds/home_feed.html", {
        "boards": page["items"],
        "next": page["next"],
        "older": before is not None,
        "source": reverse("feed"),
        "suggestions": people_to_follow(user) if short else [],
        "empty": empty,
    })


def front_page(request):
    """``/`` for everyone else: what the site is, the newest boards and the most viewed of them."""
    published = Board.objects.filter(state=Board.State.PUBLISHED).select_related("author")
    recent = list(published.order_by("-id")[:PAGE_SIZE])
    # Most viewed among the newest few hundred: bounded work, fresh boards (/popular has all time).
    window = published.order_by("-id").values("id")[:200]
    popular = list(published.filter(id__in=window, views__gt=0).order_by("-views", "-id")[:4])
    return render(request, "home.html", {
        "boards": cards([selectors.board_summary(board) for board in recent]),
        "popular": cards([selectors.board_summary(board) for board in popular]),
    })


def _visible_board(board_id: int) -> Board:
    try:
        return selectors.board_get_visible(board_id)
    except ApiError:
        raise Http404(f"There is no board {board_id}.") from None


def _own_board(request, board_id: int, *, staff_may: bool = False) -> Board:
    board = _visible_board(board_id)
    if board.author_id != request.user.pk and not (staff_may and request.user.is_staff):
        raise PermissionDenied("This board is someone else's; only its author can change it.")
    return board


def board_detail(request, board_id: int):
    board = _visible_board(board_id)
    viewer = request.user if request.user.is_authenticated else None
    views = services.board_record_view(board=board, reader=viewer)
    return render(request, "feeds/board.html", {
        "board": board,
        "views": views,
        "preview_url": reverse("board-preview", args=[board.pk]),
        "preview_src": preview_src(reverse("board-preview", args=[board.pk]), board.updated_at.isoformat()),
        "read_by": _read_by(viewer, board.pk),
        "is_author": viewer is not None and viewer.pk == board.author_id,
        "may_delete": viewer is not None and (viewer.pk == board.author_id or viewer.is_staff),
    })


def _read_by(viewer, board_id: int) -> list[str]:
    """Who of the people the viewer follows read this board lately (social reading)."""
    if viewer is None:
        return []
    from social.selectors import reading_answer

    return sorted(reading_answer(viewer, [board_id]).get(str(board_id), []), key=str.lower)


def _editor(request, *, board: Board | None):
    return render(request, "feeds/editor.html", {
        "board": board,
        "kinds": Board.Kind.values,
        "kind": board.kind if board else Board.Kind.SKETCH,
        "tags": ", ".join(board.tags) if board else "",
        "doc": board.doc if board else None,
        "save_url": reverse("board", args=[board.pk]) if board else reverse("boards"),
        "save_method": "PATCH" if board else "POST",
    })


@login_required
def board_new(request):
    return _editor(request, board=None)


@login_required
def board_edit(request, board_id: int):
    return _editor(request, board=_own_board(request, board_id))


@login_required
def board_delete(request, board_id: int):
    """GET asks for a confirmation; POST deletes (the author, or staff) and goes to the author's profile."""
    board = _own_board(request, board_id, staff_may=True)
    if request.method != "POST":
        preview = preview_src(reverse("board-preview", args=[board.pk]), board.updated_at.isoformat())
        return render(request, "feeds/delete.html", {"board": board, "preview_src": preview})
    services.board_delete(board=board)
    messages.success(request, f"“{board.title}” is deleted.")
    return redirect("people:profile", board.author.username)


DISCOVER_SORTS = (("recent", "Newest"), ("popular", "Most viewed"), ("trending", "Trending today"))
POPULAR_SCOPES = (("all", "All time"), ("trending", "Last 24 hours"), ("following", "Among people you follow"))


def _discover_query(request):
    """The filters of /discover from its query string (as the API takes them); junk is dropped
    with a note, so a shared link never breaks the page."""
    from feeds.api import KINDS, TAG_RE, USERNAME_RE
    from feeds.discovery import Query

    notes = []
    kind = request.GET.get("kind") or None
    if kind is not None and kind not in KINDS:
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
    from urllib.parse import urlencode

    params = {"kind": query.kind, "tag": list(query.tags), "author": query.author,
              "sort": None if query.sort == "recent" else query.sort}
    params.update(changes)
    pairs = [(k, v) for k, values in params.items() if values
             for v in (values if isinstance(values, list) else [values])]
    return "/discover" + (f"?{urlencode(pairs)}" if pairs else "")


def discover_page(request):
    """Discovery in the browser: facets with counts (kinds, the most used tags), filters as
    links that can be shared, a sort switch and pages, all from one discovery query."""
    from feeds import discovery

    query, notes = _discover_query(request)
    page_number = page_param(request)
    offset = (page_number - 1) * PAGE_SIZE
    from feeds.api import USERNAME_RE

    if query.author is not None and not USERNAME_RE.match(query.author):
        answer = {"total": 0, "items": []}  # no such person can exist
    else:
        answer = selectors.discover(query, offset=offset, limit=PAGE_SIZE)
    facets = discovery.facets()
    kinds = [{"name": name, "count": count, "active": name == query.kind,
              "url": _link(query, kind=None if name == query.kind else name)} for name, count in facets["kinds"].items()]
    tags = [{"name": tag, "count": count, "active": tag in query.tags,
             "url": _link(query, tag=[t for t in query.tags if t != tag] if tag in query.tags else [*query.tags, tag])}
            for tag, count in facets["tags"]]
    pages = -(-answer["total"] // PAGE_SIZE)
    return render(request, "feeds/discover.html", {
        "query": query, "notes": notes, "boards": cards(answer["items"]), "total": answer["total"],
        "kinds": kinds, "tags": tags,
        "sorts": [{"name": name, "label": label, "active": name == query.sort, "url": _link(query, sort=name)}
                  for name, label in DISCOVER_SORTS],
        "active_tags": [{"name": tag, "url": _link(query, tag=[t for t in query.tags if t != tag])} for tag in query.tags],
        "author_clear": _link(query, author=None) if query.author else None,
        "page": page_number, "pages": pages,
        "previous_url": _link(query, page=page_number - 1 if page_number > 2 else None) if page_number > 1 else None,
        "next_url": _link(query, page=page_number + 1) if page_number < pages else None,
    })


def page_param(request) -> int:
    """``?page=`` of /discover, 1 and up; junk is page 1."""
    raw = request.GET.get("page", "1")
    return max(int(raw), 1) if raw.isascii() and raw.isdigit() and len(raw) <= 6 else 1


def popular_page(request):
    """The most viewed boards of all time or of the last day, or the most read among the
    people I follow (that scope asks to log in)."""
    from django.contrib.auth.views import redirect_to_login

    from social.selectors import popular_list

    scope = request.GET.get("scope", "all")
    if scope not in dict(POPULAR_SCOPES):
        scope = "all"
    if scope == "following" and not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    answer = popular_list(scope=scope, limit=PAGE_SIZE, viewer=request.user if scope == "following" else None)
    entries = cards([item["board"] for item in answer["items"]])
    for entry, item in zip(entries, answer["items"]):
        entry["reads"] = item["reads"]
    return render(request, "feeds/popular.html", {
        "boards": entries, "scope": scope,
        "scopes": [{"name": name, "label": label, "active": name == scope, "url": f"/popular?scope={name}"}
                   for name, label in POPULAR_SCOPES],
    })
