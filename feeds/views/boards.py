"""Pages about boards: the home feed, a board, the whiteboard editor, delete with a confirmation.

The first page of a list is rendered here; static/js/infinite.js pages on through the JSON API
(``before=<next>``), so both walk the same timeline. The editor (static/js/editor.js) saves
through the API too: these views only render.
"""

from datetime import datetime
from urllib.parse import quote

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db.models import Exists, OuterRef
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from feeds import pictures, selectors
from feeds.models import Board
from feeds.rules import BOARD_KINDS, COMMENTS_PAGE, CommentPolicy, comments_config, editor_config
from feeds.services import activity, boards as services, comments as comment_services
from feeds.services.boards import remix_title
from feeds.timelines.rebuild import refuse_while_rebuilding
from feeds.validation import ELEMENT_TYPES
from social import graph, hiding
from social.models import Follow
from ugcsite.platform.http import get_view, page_number, visitor, whole_number

User = get_user_model()

# Boards a list page shows at once; the infinite scroll asks the API for as many each time.
PAGE_SIZE = 20
# People suggested to someone whose feed is empty.
SUGGESTIONS = 6
# Remixes a board's page shows; the rest are on its remixes page.
REMIXES_SHOWN = 6
# A board's PNG at the version its address names (?v=, as Open Graph and federation give it)
# never changes: cached for a year. Without it (or with an old one) the answer is today's
# version, cached for an hour and then checked again by its ETag.
PICTURE_CACHE_VERSIONED = "public, max-age=31536000, immutable"
PICTURE_CACHE_BARE = "public, max-age=3600"


def before_param(request) -> int | None:
    """``?before=<id>`` of a list page (the link that pages on without JavaScript); junk is ignored."""
    return whole_number(request.GET.get("before", ""))


def preview_src(preview_url: str, updated_at: str) -> str:
    """The preview's address for an <img>: it is cached for a minute (feeds.api), so the
    version in the query makes an edited drawing show at once."""
    return f"{preview_url}?v={quote(updated_at)}"


def cards(items: list[dict]) -> list[dict]:
    """Summary forms of the API, with ``created`` as a datetime and ``preview_src`` for the templates."""
    return [
        {
            **item,
            "created": datetime.fromisoformat(item["created_at"]),
            "preview_src": preview_src(item["preview_url"], item["updated_at"]),
        }
        for item in items
    ]


def _page(answer: dict) -> dict:
    refuse_while_rebuilding(answer)  # an empty timeline not rebuilt yet is the 503 page, not "no boards"
    return {"items": cards(answer["items"]), "next": answer["next"]}


def profile_page(person, *, before: int | None) -> dict:
    """One page of a person's boards, newest first (GET /api/v1/users/<name>/boards)."""
    return _page(selectors.profile_boards(person.pk, offset=None if before else 0, before=before, limit=PAGE_SIZE))


def people_to_follow(user, *, limit: int = SUGGESTIONS):
    """The most followed people with boards, not ``user`` and not already followed by them.

    Ordered by the stored ``followers_count`` (PostgreSQL); the follow edges are an anti-join."""
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
    activity.user_seen(user_id=user.pk)
    page = _page(activity.home_feed_read(user_id=user.pk, offset=None if before else 0, before=before, limit=PAGE_SIZE))
    empty = not page["items"] and before is None
    # an empty feed says so truly: the boards of followees the person mutes are there, unshown
    muted = graph.followed_among(user.pk, hiding.hidden_all(user.pk, bits=hiding.MUTES)) if empty else set()
    # A feed that fits on one page is a young one: suggest people to follow below it.
    short = before is None and page["next"] is None
    return render(
        request,
        "feeds/home_feed.html",
        {
            "boards": page["items"],
            "next": page["next"],
            "older": before is not None,
            "source": reverse("feed"),
            "suggestions": people_to_follow(user) if short else [],
            "empty": empty,
            "muted_followees": len(muted),
        },
    )


def front_page(request):
    """``/`` for everyone else: what the site is, the newest boards and the most viewed of them."""
    published = Board.objects.filter(state=Board.State.PUBLISHED).select_related("author")
    recent = list(published.order_by("-id")[:PAGE_SIZE])
    # Most viewed among the newest few hundred: bounded work, fresh boards (/popular has all time).
    window = published.order_by("-id").values("id")[:200]
    popular = list(published.filter(id__in=window, views__gt=0).order_by("-views", "-id")[:4])
    return render(
        request,
        "home.html",
        {
            "boards": cards([selectors.board_summary(board) for board in recent]),
            "popular": cards([selectors.board_summary(board) for board in popular]),
        },
    )


def board_detail(request, board_id: int):
    try:
        board = selectors.board_get_for(board_id, request.user)
    except selectors.BoardNotFound:
        hidden = selectors.board_hidden_from_author(board_id, request.user)
        if hidden is None:
            raise
        return render(request, "error.html", {"status": 403, **hidden}, status=403)
    viewer = request.user if request.user.is_authenticated else None
    views = services.board_record_view(board=board, reader=viewer, visitor=visitor(request))
    chain, older = selectors.remix_chain(board)
    remixes = selectors.board_remixes(board, offset=0, limit=REMIXES_SHOWN, viewer=viewer)
    is_author = viewer is not None and viewer.pk == board.author_id
    return render(
        request,
        "feeds/board.html",
        {
            "board": board,
            "views": views,
            "source": chain[0] if chain else None,
            "chain": chain[::-1],  # the original first
            "chain_older": older,
            "remixes": cards(remixes["items"]),
            "remixes_total": remixes["total"],
            "may_remix": board.remixable or is_author,
            "preview_url": reverse("board-preview", args=[board.pk]),
            "preview_src": preview_src(reverse("board-preview", args=[board.pk]), board.updated_at.isoformat()),
            "read_by": _read_by(viewer, board.pk),
            "is_author": is_author,
            "may_draw": selectors.board_may_draw(board, viewer),
            "editors": selectors.board_editors(board.pk),
            "may_delete": viewer is not None and (viewer.pk == board.author_id or viewer.is_staff),
            "comments": selectors.board_comments(board, viewer, after=None, limit=COMMENTS_PAGE),
            "comments_config": comments_config(),
            "comment_refusal": (comment_services.may_comment(user=viewer, board=board) if viewer is not None else None),
            "commenting_choices": CommentPolicy.choices,
            "share": _share_card(request, board),
        },
    )


def _share_card(request, board: Board) -> dict:
    """What the page's Open Graph and Twitter card tags say: its address, its picture's (at the
    board's current version: the first fetch of it renders it) and the picture's size. No query."""
    width, height = pictures.picture_size(board.doc)
    tags = " ".join(f"#{tag}" for tag in board.tags)
    return {
        "url": f"{settings.SITE_URL}{request.path}",
        "image": pictures.picture_url(board.pk, pictures.version_of(board)),
        "width": width,
        "height": height,
        "description": f"A {board.kind} by @{board.author.username} on ugcsite" + (f". {tags}" if tags else ""),
    }


@get_view
def board_picture(request, board_id: int):
    """``GET /b/<id>.png``: the drawing of a published board as PNG (feeds.pictures), a 404 for
    any other. One primary-key read of the board and one of its kept render (rendered here
    first when no render of its version is kept yet); a 304 when the ETag still matches."""
    board = selectors.board_get_visible(board_id)
    picture = pictures.picture_get(board, with_png=True)
    etag = f'"{picture.version}"'
    cache = PICTURE_CACHE_VERSIONED if request.GET.get("v") == picture.version else PICTURE_CACHE_BARE
    if etag in [tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")]:
        response = HttpResponse(status=304)
    else:
        response = HttpResponse(bytes(picture.png), content_type=pictures.MEDIA_TYPE)
    response["ETag"] = etag
    response["Cache-Control"] = cache
    return response


def _read_by(viewer, board_id: int) -> list[str]:
    """Who of the people the viewer follows read this board lately (social reading)."""
    if viewer is None:
        return []
    return sorted(selectors.reading_answer(viewer, [board_id]).get(str(board_id), []), key=str.lower)


def board_remixes_page(request, board_id: int):
    """Every published remix of a board, newest first, in numbered pages."""
    board = selectors.board_get_for(board_id, request.user)
    number = page_number(request, page_size=PAGE_SIZE)
    viewer = request.user if request.user.is_authenticated else None
    answer = selectors.board_remixes(board, offset=(number - 1) * PAGE_SIZE, limit=PAGE_SIZE, viewer=viewer)
    return render(
        request,
        "feeds/remixes.html",
        {
            "board": board,
            "boards": cards(answer["items"]),
            "total": answer["total"],
            "previous_page": number - 1 if number > 1 else None,
            "next_page": number + 1 if number * PAGE_SIZE < answer["total"] else None,
        },
    )


def _editor(request, *, board: Board | None, remix_of: Board | None = None):
    """The editor on a board (PATCH), on a new one (POST), or on a copy of ``remix_of`` that
    becomes the caller's board when they publish it (POST .../remix): nothing exists before."""
    start = board or remix_of
    if remix_of is not None:
        save_url = reverse("board-remix", args=[remix_of.pk])
    else:
        save_url = reverse("board", args=[board.pk]) if board else reverse("boards")
    return render(
        request,
        "feeds/editor.html",
        {
            "board": board,
            "remix_of": remix_of,
            "title": remix_title(remix_of) if remix_of else (board.title if board else ""),
            "kinds": BOARD_KINDS,
            "kind": start.kind if start else BOARD_KINDS[0],
            "editor_config": {**editor_config(), "elementTypes": list(ELEMENT_TYPES)},
            "tags": ", ".join(start.tags) if start else "",
            "doc": start.doc if start else None,
            "save_url": save_url,
            "save_method": "PATCH" if board else "POST",
            "is_author": board is None or board.author_id == request.user.pk,
        },
    )


@login_required
def board_new(request):
    """A new board, or with ``?remix=<id>`` a remix of that board (its copy in the editor)."""
    remix = request.GET.get("remix")
    if remix is None:
        return _editor(request, board=None)
    source_id = whole_number(remix)
    if source_id is None:
        raise selectors.BoardNotFound(remix[:20])
    source = selectors.board_get_for(source_id, request.user)
    services.remix_check(author=request.user, source=source)
    return _editor(request, board=None, remix_of=source)


@login_required
def board_edit(request, board_id: int):
    return _editor(request, board=selectors.board_get_drawable(board_id, request.user))


@login_required
def board_delete(request, board_id: int):
    """GET asks for a confirmation; POST deletes (the author, or staff) and goes to the author's profile."""
    board = selectors.board_get_own(board_id, request.user, staff_may=True)
    if request.method != "POST":
        preview = preview_src(reverse("board-preview", args=[board.pk]), board.updated_at.isoformat())
        return render(request, "feeds/delete.html", {"board": board, "preview_src": preview})
    services.board_delete(board=board)
    messages.success(request, f"“{board.title}” is deleted.")
    return redirect("people:profile", board.author.username)
