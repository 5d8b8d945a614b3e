"""Reads about boards for views and the API: boards, timelines, discovery, and social
reading (social's read sets joined with the boards they name). The API's answers these reads
build are declared beside them as TypedDicts (ugcsite.platform.apidoc): plain dicts at run
time, the document's components by name."""

import json
import time
from typing import Annotated, Literal, NotRequired

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Count, Exists, OuterRef, Subquery
from pydantic import Field
from typing_extensions import TypedDict

from feeds import comments, likes, notifications
from feeds.discovery import counters, indexes, queries
from feeds.federation import selectors as federation_selectors
from feeds.models import Board, BoardEditor, Comment as CommentRow, Like  # Comment: the API's answer, below
from feeds.rules import SEARCH_CONJUNCTION_MATCHES_MAX, SEARCH_MATCHES_MAX, NotificationKind, Timeline
from feeds.search import boards_search
from feeds.timelines import archive, boardcache, pages, snapshot, store
from feeds.timelines.boardcache import BoardSummary, RemixSource, summary_from_fields
from feeds.timelines.pages import PageStatus
from social import graph, hiding, keys as social_keys, reading
from social.avatars import avatar_url
from social.limits import ReadGate
from social.search import people_search
from social.selectors import PeoplePage, Person, active_people, sharing_readers
from ugcsite.platform.apidoc import IsoTime
from ugcsite.platform.errors import NotAllowed, NotFound
from ugcsite.platform.redis import get_redis

POPULAR_SCOPES = ("all", "following", "trending")  # popular_list's orders
POPULAR_SORTS = ("views", "likes")  # what popular_list ranks by in each scope
# The sort order of discovery (feeds.discovery.indexes.SORTS) behind each (scope, sort) but following's.
_POPULAR_ORDERS = {
    ("all", "views"): "popular",
    ("trending", "views"): "trending",
    ("all", "likes"): "likes",
    ("trending", "likes"): "likes-trending",
}
REMIX_CHAIN_MAX = 50  # ancestors a board page walks up to at most (each remix is newer than its source)


class BoardNotFound(NotFound):
    def __init__(self, board_id: int):
        super().__init__(f"There is no board {board_id}.")


class NotBoardAuthor(NotAllowed):
    def __init__(self):
        super().__init__("This board is someone else's; only its author can change it.")


def board_get_visible(board_id: int, *, with_doc: bool = True) -> Board:
    """A published board with its author (one query), or ``BoardNotFound``. Without ``with_doc``
    its drawing and search vector are left unread (a 5,000-stroke doc is 1.7 MB: a version's read
    asks only whether the board is visible)."""
    rows = Board.objects.select_related("author").filter(pk=board_id, state=Board.State.PUBLISHED)
    board = (rows if with_doc else rows.defer("doc_json", "search_vector")).first()
    if board is None:
        raise BoardNotFound(board_id)
    return board


def board_get_for(board_id: int, viewer, *, with_doc: bool = True) -> Board:
    """board_get_visible, for what ``viewer`` (or None) may see: a board whose author blocks the
    viewer is no board to them (BoardNotFound). One more O(1) Redis read for a signed-in viewer."""
    board = board_get_visible(board_id, with_doc=with_doc)
    viewer_id = _viewer_id(viewer)
    if viewer_id is not None and viewer_id != board.author_id and hiding.blocked_by(viewer_id, board.author_id):
        raise BoardNotFound(board_id)
    return board


def _viewer_id(viewer) -> int | None:
    """The id of a signed-in viewer; None for no one (or Django's anonymous user)."""
    return viewer.pk if viewer is not None and viewer.is_authenticated else None


def _hidden_from(viewer, *, bits: int = hiding.BLOCKED_EITHER_WAY | hiding.MUTES) -> list[int]:
    """Whom a signed-in viewer does not see for any of ``bits`` (social.hiding.hidden_all: one
    read of their own set, O(its size)); nobody for no one."""
    viewer_id = _viewer_id(viewer)
    return hiding.hidden_all(viewer_id, bits=bits) if viewer_id is not None else []


def _shown_to(viewer, found: dict[int, dict]) -> dict[int, dict]:
    """The hydrated boards of ``found`` whose authors ``viewer`` sees: not blocked either way,
    not muted (social.hiding). One ZMSCORE in the viewer's slot, O(authors); nothing for no one."""
    viewer_id = _viewer_id(viewer)
    if viewer_id is None or not found:
        return found
    hidden = hiding.hidden_among(viewer_id, {int(fields["author_id"]) for fields in found.values()})
    return {i: f for i, f in found.items() if int(f["author_id"]) not in hidden} if hidden else found


def board_hidden_from_author(board_id: int, viewer) -> dict | None:
    """What the author of a board staff hid (or that their suspension hid) is told when they
    open it, as {"title", "message"}; None for anyone else or any other board (a 404 then).
    One indexed query."""
    viewer_id = _viewer_id(viewer)
    state = Board.objects.filter(pk=board_id, author_id=viewer_id).values_list("state", flat=True).first()
    if viewer_id is None or state not in (Board.State.HIDDEN, Board.State.SUSPENDED):
        return None
    if state == Board.State.SUSPENDED:
        return {
            "title": "Hidden while your account is suspended",
            "message": "Nobody can open this board while staff keep your account suspended.",
        }
    return {
        "title": "Hidden by staff",
        "message": "Staff hid this board, or it was reported by several people and waits for their review. "
        "Only you see this page; nobody else can open the board.",
    }


def board_get_own(board_id: int, user, *, staff_may: bool = False) -> Board:
    """A published board that ``user`` may change (its author; staff too with ``staff_may``),
    or ``BoardNotFound`` / ``NotBoardAuthor`` (in that order: docs/api.md's 404 before 403)."""
    board = board_get_visible(board_id)
    if board.author_id != user.pk and not (staff_may and user.is_staff):
        raise NotBoardAuthor()
    return board


def board_summary(board: Board) -> BoardSummary:
    """The summary form of docs/api.md."""
    return summary_from_fields(boardcache.fields_of(board))


def board_full_json(board: Board) -> str:
    """The full form (boardcache.Board) as JSON text, with the stored drawing spliced in as it is
    (no re-encoding): the summary, whether it may be remixed and what it is a remix of. One
    indexed query more for a remix."""
    full = {
        **board_summary(board),
        "remixable": board.remixable,
        "remixed_from": remix_source(board),
        "commenting": board.commenting,
    }
    text = json.dumps(full, ensure_ascii=False)
    return f'{text[:-1]}, "doc": {board.doc_json}}}'


def remix_source(board: Board) -> RemixSource | None:
    """docs/api.md's ``remixed_from``: the direct source of a remix, {"id", "username",
    "title"}, with username and title null once the source is gone (deleted, hidden, its
    author's account closed); None for a board that is no remix. One indexed query for a remix."""
    if board.remixed_from_id is None:
        return None
    found = Board.objects.filter(pk=board.remixed_from_id).values_list("author__username", "title", "state").first()
    return _credit(board.remixed_from_id, found)


def _credit(board_id: int, found: tuple | None) -> RemixSource:
    """How a remix names a board it comes from, given its (author's username, title, state) or
    None when its row is gone: the name and title only while it is published."""
    if found is None or found[2] != Board.State.PUBLISHED:
        return {"id": board_id, "username": None, "title": None}
    return {"id": board_id, "username": found[0], "title": found[1]}


def remix_chain(board: Board) -> tuple[list[dict], bool]:
    """The ancestors of a remix, its direct source first, up to REMIX_CHAIN_MAX of them, each
    as remix_source gives it, and whether older ones were left out. One recursive query over
    the primary key: O(depth log n)."""
    if board.remixed_from_id is None:
        return [], False
    table = Board._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH RECURSIVE chain(id, depth) AS ("
            f"  SELECT %s::bigint, 1"
            f"  UNION ALL"
            f"  SELECT b.remixed_from_id, c.depth + 1 FROM chain c JOIN {table} b ON b.id = c.id"
            f"  WHERE b.remixed_from_id IS NOT NULL AND c.depth <= %s"
            f") SELECT c.id, u.username, b.title, b.state FROM chain c"
            f" LEFT JOIN {table} b ON b.id = c.id LEFT JOIN {get_user_model()._meta.db_table} u ON u.id = b.author_id"
            f" ORDER BY c.depth",
            [board.remixed_from_id, REMIX_CHAIN_MAX],
        )
        rows = cursor.fetchall()
    chain = [_credit(board_id, found) for board_id, *found in rows]
    return chain[:REMIX_CHAIN_MAX], len(chain) > REMIX_CHAIN_MAX


class BoardsFound(TypedDict):
    """A page of boards and how many there are in all."""

    total: int
    items: list[BoardSummary]


def board_remixes(board: Board, *, offset: int, limit: int, viewer=None) -> BoardsFound:
    """docs/api.md's remixes answer: the published remixes of a board, newest first, with their
    total. Two queries on a partial index (O(remixes) for the count, O(log n + offset + limit)
    for the page), then G for the page like every list. Remixes by whom the viewer does not see
    (blocked either way, muted: one read of their own social.hiding set) are neither listed nor
    counted."""
    hidden = _hidden_from(viewer)
    remixes = Board.objects.filter(remixed_from_id=board.pk, state=Board.State.PUBLISHED)
    if hidden:
        remixes = remixes.exclude(author_id__in=hidden)
    ids = list(remixes.order_by("-id").values_list("id", flat=True)[offset : offset + limit])
    found = boards_hydrate(ids)
    return {"total": remixes.count(), "items": [summary_from_fields(found[i]) for i in ids if i in found]}


def board_likers(board: Board, *, offset: int, limit: int, viewer=None) -> PeoplePage:
    """docs/api.md's likers answer: who likes a board, latest first, with the count that shows
    on it (Board.likes: the likes that count). One query on the likes' board index, O(log n +
    offset + limit); likes that do not count (suspended, closing) are left out. People blocked
    either way are neither listed nor counted for the viewer: the total is the board's count
    less their likes (one more indexed count, O(h log n) for the h people, only when there are
    any), so the list and its total agree."""
    hidden = _hidden_from(viewer, bits=hiding.BLOCKED_EITHER_WAY)
    counted = Like.objects.filter(board_id=board.pk, counted=True)
    total = board.likes
    if hidden:
        total = max(total - counted.filter(user_id__in=hidden).count(), 0)
        counted = counted.exclude(user_id__in=hidden)
    rows = list(
        counted.order_by("-created_at", "-id").values_list("user_id", "user__username")[offset : offset + limit]
    )
    return {"total": total, "items": [{"id": user_id, "username": name} for user_id, name in rows]}


class BoardLikes(TypedDict):
    count: int
    liked: bool
    by_followees: list[str]


class LikesAnswer(TypedDict):
    boards: dict[str, BoardLikes]


def likes_answer(viewer, board_ids: list[int]) -> LikesAnswer:
    """docs/api.md's likes answer, for a page of boards at once: for each visible board asked
    for, its like count, whether the viewer likes it, and who of the people they follow (and
    who may use the site) like it. One G pipeline, one SMISMEMBER, one query for the followees'
    names, then social reading's N x M question over the liked sets: O(page x followees) at
    most, one round trip per Redis node."""
    shown = _shown_to(viewer, boards_hydrate(board_ids))
    visible = [board_id for board_id in board_ids if board_id in shown]
    mine = likes.liked_among(viewer.pk, visible)
    people = active_people(graph.following_ids(viewer.pk))
    found = likes.likers_of(visible, people)
    return {
        "boards": {
            str(board_id): {
                "count": int(shown[board_id].get("likes", 0)),
                "liked": board_id in mine,
                "by_followees": sorted((people[p] for p in found[board_id]), key=str.lower),
            }
            for board_id in visible
        }
    }


def boards_hydrate(board_ids: list[int]) -> dict[int, dict]:
    """The G hashes of the visible boards among ``board_ids``; invisible ones are left out.

    One pipelined round trip to G; only the misses touch PostgreSQL (one query), and they are
    written back to G. Cost O(k) for k ids.
    """
    cached = boardcache.board_cache_get_many(board_ids)
    missing = [board_id for board_id in board_ids if board_id not in cached]
    if missing:
        found = list(Board.objects.select_related("author").filter(pk__in=missing, state=Board.State.PUBLISHED))
        pending = counters.pending_views([board.id for board in found])
        pipe = get_redis().pipeline(transaction=False)
        for board in found:
            board.views += pending[board.id]  # the live figure
            cached[board.id] = boardcache.fields_of(board)
            boardcache.board_cache_put(board, pipe=pipe)
        pipe.execute()
    return cached


def _visible(user_id: int, kind: Timeline, ids: list[int]) -> dict[int, dict]:
    """Hydrated boards among ``ids`` that the timeline may show; drops the rest from its head.
    On a plain Redis one script call (pages.visible_hashes) answers the G hits and the
    following check; G misses (and every id on a cluster) go through _visible_slow."""
    if settings.REDIS_CLUSTER or not ids:
        return _visible_slow(user_id, kind, ids)
    found, misses, _ = pages.visible_hashes(user_id, kind, ids)
    if misses:
        found.update(_visible_slow(user_id, kind, misses))
    return found


def _visible_slow(user_id: int, kind: Timeline, ids: list[int]) -> dict[int, dict]:
    """_visible by separate round trips: G by node (PostgreSQL for misses), then the following
    check, then the stale ids out of the head."""
    found = boards_hydrate(ids)
    if kind == Timeline.HOME and found:
        # A feed shows only boards of people the reader follows now: an unfollow's clean-up
        # may lag, and archived chunks keep what was delivered while they were followed.
        # The authors the reader blocks, is blocked by or mutes are left out too, but stay in P.
        authors = sorted({int(fields["author_id"]) for fields in found.values()})
        pipe = get_redis().pipeline(transaction=False)  # both sets in the reader's slot
        pipe.zmscore(social_keys.following(user_id), authors)
        pipe.zmscore(social_keys.hidden(user_id), authors)
        following, hidden = pipe.execute()
        followed = {a for a, score in zip(authors, following, strict=True) if score}
        unseen = {a for a, score in zip(authors, hidden, strict=True) if score}
        stale = [
            board_id for board_id in ids if board_id not in found or int(found[board_id]["author_id"]) not in followed
        ]
        found = {i: f for i, f in found.items() if int(f["author_id"]) in followed - unseen}
    else:
        stale = [board_id for board_id in ids if board_id not in found]
    if stale:  # deleted, hidden or unfollowed: drop them from the head now (no-op for archived ids)
        store.timeline_remove(kind, [user_id], stale)
    return found


class TimelinePage(TypedDict):
    """A page of a timeline, newest first."""

    items: list[BoardSummary]
    next: Annotated[str | None, Field(description="pass as before= for the next page; null when no older item")]


def _timeline_answer(user_id: int, kind: Timeline, page: pages.IdPage) -> TimelinePage:
    found = _visible(user_id, kind, page.ids)
    items = [summary_from_fields(found[board_id]) for board_id in page.ids if board_id in found]
    return {"items": items, "next": str(page.ids[-1]) if page.has_more else None}


def _warm_answer(user_id: int, kind: Timeline, warm: pages.WarmPage) -> TimelinePage:
    """The answer to a page that pages.page_warm read: hits as they came, misses (every id
    on a cluster) through _visible (G by node, PostgreSQL, the following check)."""
    found = warm.hashes
    misses = [board_id for board_id in warm.ids if board_id not in found]
    if misses:  # G misses already: straight to the longer way
        found = {**found, **_visible_slow(user_id, kind, misses)}
    items = [summary_from_fields(found[board_id]) for board_id in warm.ids if board_id in found]
    return {"items": items, "next": str(warm.last) if warm.has_more else None}


def profile_boards(user_id: int, *, offset: int | None, before: int | None, limit: int) -> TimelinePage:
    """A user's boards, newest first (list_recent), across head and archive.
    Warm (above M's archived max): one round trip on a plain Redis (pages.page_warm, G
    included), two on a cluster; O(log |M| + limit). Past it, a chunk row or two."""
    warm = pages.page_warm(user_id, Timeline.PROFILE, offset=offset, before=before, limit=limit)
    if warm.status == PageStatus.PAGE:
        return _warm_answer(user_id, Timeline.PROFILE, warm)
    archived = archive.archived_max(user_id, Timeline.PROFILE, stored=warm.stored_mark)
    page = pages.page(user_id, Timeline.PROFILE, offset=offset, before=before, limit=limit, archived=archived)
    return _timeline_answer(user_id, Timeline.PROFILE, page)


def home_feed(
    user_id: int,
    *,
    offset: int | None,
    before: int | None,
    limit: int,
    touch: bool = False,
    stop_if_regenerate: bool = False,
    gate: ReadGate | None = None,
) -> TimelinePage | None:
    """A user's home feed, newest first (list_public_feed), across head and archive: P merged
    with the M of the big authors they follow (pages.home_page, hybrid fan-out). With a
    ``gate`` (social.limits.read_gate) the first script call checks the reader's token and
    counts their read limits too, raising what it refuses (pages.page_warm).

    A warm page (no big followee, above P's archived max) is one round trip on a plain Redis:
    ids, G, the following check and, with ``touch``, the activity mark (pages.page_warm);
    on a cluster G and the following check take two more. So is a deep page that the reader's
    feed snapshot holds (feeds.timelines.snapshot; on a cluster one more trip for the big
    followees' facts); a deep page by offset that it does not hold makes one (pages.home_page).
    Otherwise O(log |P| + k log |M| + limit) for k big followees, plus hydration. With ``stop_if_regenerate``, None when P waits
    for regeneration (services.activity.home_feed_read regenerates, then reads); without it,
    call services.activity.home_feed_ready first."""
    warm = pages.page_warm(
        user_id,
        Timeline.HOME,
        offset=offset,
        before=before,
        limit=limit,
        touch=touch,
        stop_if_regenerate=stop_if_regenerate,
        gate=gate,
    )
    if warm.status == PageStatus.PAGE:
        return _warm_answer(user_id, Timeline.HOME, warm)
    if warm.status == PageStatus.REGENERATE:
        return None
    if warm.status == PageStatus.SNAPSHOT and snapshot.authors_hold(warm.unchecked):
        return _warm_answer(user_id, Timeline.HOME, warm)
    page = pages.home_page(
        user_id, offset=offset, before=before, limit=limit, prefetched=(warm.big, warm.stored_mark), facts=warm.facts
    )
    return _timeline_answer(user_id, Timeline.HOME, page)


def home_feed_filtered(user_id: int, query, *, offset: int | None, before: int | None, limit: int) -> TimelinePage:
    """The home feed narrowed by discovery filters (kind, tags), paged like the feed.

    Intersected from the feed's side: the feed (P merged with the big followees' M) is read
    newest first in batches and each batch is checked against the filter sets (SMISMEMBER),
    never a scan of an index. Cost grows with how far down the feed the matches lie, bounded
    by the feed's length."""
    skip, want = (offset or 0), limit + 1
    matched: list[int] = []
    for batch in pages.home_iter_desc(user_id, below=before):
        hits = indexes.members_of_all(query, batch)
        found = _visible(user_id, Timeline.HOME, hits) if hits else {}
        for board_id in hits:
            if board_id not in found:
                continue
            if skip:
                skip -= 1
                continue
            matched.append(board_id)
        if len(matched) >= want:
            break
    page, more = matched[:limit], len(matched) > limit
    found = boards_hydrate(page)
    items = [summary_from_fields(found[board_id]) for board_id in page if board_id in found]
    return {"items": items, "next": str(page[-1]) if more else None}


def discover(query, *, offset: int, limit: int, viewer=None) -> BoardsFound:
    """A discovery query: the total and the page, hydrated. One script call a node for the
    query (queries.query: the shards merged), one pipeline for the boards; G misses touch
    PostgreSQL (boards_hydrate). For a signed-in viewer who hides people (blocked either way or
    muted), the page leaves them out (_shown_to) and the total does not count their boards
    (_hidden_matches): what the viewer sees. The page may hold fewer than ``limit`` boards then."""
    total, ids = queries.query(query, offset=offset, limit=limit)
    hidden = _hidden_from(viewer)
    if hidden and total:
        total = max(total - _hidden_matches(hidden, query), 0)
    unseen = set(hidden)
    found = {i: f for i, f in boards_hydrate(ids).items() if int(f["author_id"]) not in unseen}
    return {"total": total, "items": [summary_from_fields(found[i]) for i in ids if i in found]}


def _hidden_boards(hidden: list[int]):
    """The published boards (what discovery indexes) of the people in ``hidden``."""
    return Board.objects.filter(author_id__in=hidden, state=Board.State.PUBLISHED)


def _hidden_matches(hidden: list[int], query) -> int:
    """How many boards of the people in ``hidden`` a discovery query matches: one count over
    their boards (board_author_recent_idx), O(their boards): the hidden people's data, never
    the site's, and only for a viewer who hides someone."""
    boards = _hidden_boards(hidden)
    if query.kind:
        boards = boards.filter(kind=query.kind)
    if query.tags:
        boards = boards.filter(tags__contains=list(query.tags))
    if query.author is not None:
        boards = boards.filter(author__username__iexact=query.author)
    return boards.count()


def discover_facets(viewer=None) -> dict:
    """The discover page's facets (discovery.indexes.facets: boards per kind, the most used
    tags) as the viewer sees them: for one who hides people, less those people's boards (two
    grouped counts over their boards, O(their boards)); a tag they leave at 0 goes. The tags
    are the site's most used, recounted: one just below them is not brought up."""
    found = indexes.facets()
    hidden = _hidden_from(viewer)
    if not hidden:
        return found
    boards = _hidden_boards(hidden)
    for kind, count in boards.order_by().values_list("kind").annotate(n=Count("id")).values_list("kind", "n"):
        if kind in found["kinds"]:
            found["kinds"][kind] = max(found["kinds"][kind] - count, 0)
    top = [tag for tag, _ in found["tags"]]
    if top:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT tag, count(*) FROM {Board._meta.db_table}, unnest(tags) AS tag"
                " WHERE author_id = ANY(%s) AND state = %s AND tag = ANY(%s) GROUP BY tag",
                [hidden, Board.State.PUBLISHED, top],
            )
            less = dict(cursor.fetchall())
        tags = [(tag, count - less.get(tag, 0)) for tag, count in found["tags"]]
        found["tags"] = sorted((pair for pair in tags if pair[1] > 0), key=lambda pair: -pair[1])
    return found


def reading_answer(viewer, board_ids: list[int], *, now: float | None = None) -> dict[str, list[str]]:
    """docs/api.md's reading answer: for each visible board asked for, the usernames of the people
    the viewer follows who share their reads and read it in the window. One pipeline to check
    the boards exist, one query for which followees share (and their names), then the N x M
    question over those alone."""
    shown = _shown_to(viewer, boards_hydrate(board_ids))
    visible = [board_id for board_id in board_ids if board_id in shown]
    readers = sharing_readers(graph.following_ids(viewer.pk))
    found = reading.readers_of(visible, readers, now=now)
    return {str(board_id): [readers[r] for r in ids] for board_id, ids in found.items()}


class Popular(TypedDict):
    board: BoardSummary
    reads: NotRequired[Annotated[int, Field(description="sort=views")]]
    likes: NotRequired[Annotated[int, Field(description="sort=likes")]]


class PopularPage(TypedDict):
    items: list[Popular]


def popular_list(
    *, scope: str, sort: str = "views", offset: int = 0, limit: int, viewer=None, now: float | None = None
) -> PopularPage:
    """docs/api.md's popular answer. By views: ``all`` by views (reads = views), ``trending`` by
    views in the last 24 hours (reads = those views), ``following`` by how many of the viewer's
    followees read each board in the window (reads = that number; only people who share their
    reads count). By likes, the same three (likes = the likes that count; those of the last 24
    hours; how many followees liked it within the reading window). Invisible boards are left out."""
    field = "reads" if sort == "views" else "likes"
    if scope == "following":
        followees = graph.following_ids(viewer.pk)
        if sort == "likes":
            since = (time.time() if now is None else now) - settings.READ_RETENTION.total_seconds()
            counts = likes.liked_counts(active_people(followees), since=since)
        else:
            counts = reading.read_counts(sharing_readers(followees), now=now)
        # most reads first, ties newest first; boards that are gone drop out at hydration
        ranked = sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)
        found = _shown_to(viewer, boards_hydrate([board_id for board_id, _ in ranked[: offset + limit + 50]]))
        page = [(board_id, reads) for board_id, reads in ranked if board_id in found][offset : offset + limit]
    else:
        # the sort orders hold visible boards only (discovery drops the rest at once)
        order = _POPULAR_ORDERS[(scope, sort)]
        page = [(int(board_id), int(score)) for board_id, score in queries.top(order, offset=offset, limit=limit)]
        found = _shown_to(viewer, boards_hydrate([board_id for board_id, _ in page]))
    return {
        "items": [
            {"board": summary_from_fields(found[board_id]), field: count}
            for board_id, count in page
            if board_id in found
        ]
    }


class PersonFound(TypedDict):
    id: int
    username: str
    display_name: str
    avatar_url: NotRequired[str]


class SearchAnswer(TypedDict):
    total: Annotated[
        int,
        Field(
            description=f"the matches, counted up to {SEARCH_MATCHES_MAX:,} (boards: up to "
            f"{SEARCH_CONJUNCTION_MATCHES_MAX:,} for two or more terms each found "
            f"{SEARCH_MATCHES_MAX:,} times or more)"
        ),
    ]
    items: list[PersonFound | BoardSummary]


def search(query: str, *, kind: str, offset: int, limit: int, viewer=None) -> SearchAnswer:
    """docs/api.md's search answer: people (``kind`` "users", by name: social.search) or boards
    (by title, tags and drawing text: feeds.search), best match first, with the total. Boards
    are hydrated from G like every list (one pipeline; misses from PostgreSQL). A signed-in
    viewer neither finds nor counts whom they do not see: people blocked either way, and the
    boards of people blocked either way or muted (their ids, one read of the viewer's own
    social.hiding set, go into the query), so the total and the page agree."""
    if kind == "users":
        hidden = _hidden_from(viewer, bits=hiding.BLOCKED_EITHER_WAY)
        people, total = people_search(query, offset=offset, limit=limit, hidden=hidden)
        return {
            "total": total,
            "items": [
                {
                    "id": p["id"],
                    "username": p["username"],
                    "display_name": p["display_name"],
                    "avatar_url": avatar_url(p["username"], p["avatar_version"]),
                }
                for p in people
            ],
        }
    hidden = _hidden_from(viewer)
    ids, total = boards_search(query, offset=offset, limit=limit, hidden=hidden)
    found = boards_hydrate(ids)
    return {"total": total, "items": [summary_from_fields(found[i]) for i in ids if i in found]}


class Notification(TypedDict):
    id: int
    kind: Literal[tuple(NotificationKind.values)]  # type: ignore[valid-type]
    actors: Annotated[list[str], Field(description="the latest few, newest first")]
    actor_count: Annotated[
        int,
        Field(ge=0, description="everyone gathered here (0: no person did it, as staff's decision on a report)"),
    ]
    board: BoardSummary | None
    created_at: IsoTime
    read: bool


class Notifications(TypedDict):
    unread: Annotated[int, Field(ge=0)]
    items: list[Notification]


def notifications_list(user, *, offset: int, limit: int) -> Notifications:
    """docs/api.md's notifications answer: the unread count and a page, latest first, each with its
    kept actors' names (suspended people left out), the count of actors and the board (null
    when there is none or it is gone). Whom the person does not see (blocked either way,
    muted) leaves the names and the count, and a notice only they caused leaves the page.
    Three queries, one read of social.hiding and one G pipeline, whatever the page."""
    hidden = hiding.hidden_all(user.pk)
    rows = notifications.notifications_page(user.pk, offset=offset, limit=limit, hidden=hidden)
    unseen = set(hidden)
    actor_ids = {actor for row in rows for actor in row.actors} - unseen
    names = dict(get_user_model().objects.filter(pk__in=actor_ids, is_active=True).values_list("id", "username"))
    names.update(federation_selectors.remote_names(actor_ids))  # a fediverse actor: its negated id
    found = boards_hydrate(sorted({row.board_id for row in rows if row.board_id}))
    return {
        "unread": notifications.notifications_unread(user.pk, hidden=hidden),
        "items": [
            {
                "id": row.pk,
                "kind": row.kind,
                "actors": [names[actor] for actor in row.actors if actor in names],
                "actor_count": row.actor_count - len(unseen.intersection(row.actors)),
                "board": summary_from_fields(found[row.board_id]) if row.board_id in found else None,
                "created_at": row.created_at.isoformat(),
                "read": row.read,
            }
            for row in rows
        ],
    }


class NotBoardEditor(NotAllowed):
    def __init__(self):
        super().__init__("Only this board's author and the editors they invited can change its drawing.")


class NotBoardAuthorOrEditor(NotAllowed):
    def __init__(self):
        super().__init__("Only this board's author can remove its editors (an editor may remove themself).")


def board_may_draw(board: Board, user) -> bool:
    """Whether ``user`` (or None) may change ``board``'s drawing: its author or an editor (the
    rule board_access reads in its query too). One indexed query at most."""
    if user is None or not user.is_authenticated:
        return False
    return board.author_id == user.pk or BoardEditor.objects.filter(board_id=board.pk, user_id=user.pk).exists()


def board_access(board_id: int, user_id: int | None) -> tuple[object | None, int | None, bool]:
    """Who opens a board and what they may do there, in one indexed query (a live socket opening
    it, feeds.live.consumer): (the active user ``user_id`` names, or None; the board's author id,
    or None when it is not published; whether the user may change its drawing, board_may_draw's
    rule: its author or an editor). ``user_id`` None: anonymous, who may only watch."""
    published = Board.objects.filter(pk=board_id, state=Board.State.PUBLISHED)
    if user_id is None:
        return None, published.values_list("author_id", flat=True).first(), False
    user = (
        get_user_model()
        .objects.filter(pk=user_id, is_active=True)
        .annotate(
            board_author=Subquery(published.values("author_id")[:1]),
            board_editor=Exists(BoardEditor.objects.filter(board_id=board_id, user_id=OuterRef("pk"))),
        )
        .first()
    )
    if user is None:
        return None, None, False
    author_id = user.board_author
    return user, author_id, author_id is not None and (author_id == user.pk or user.board_editor)


def board_get_drawable(board_id: int, user) -> Board:
    """A published board whose drawing ``user`` may change, or ``BoardNotFound`` / ``NotBoardEditor``."""
    board = board_get_visible(board_id)
    if not board_may_draw(board, user):
        raise NotBoardEditor()
    return board


def board_editors(board_id: int) -> list[Person]:
    """``{"id", "username"}`` of a board's editors, in the order they were invited (one query;
    at most MAX_EDITORS rows)."""
    rows = (
        BoardEditor.objects.filter(board_id=board_id)
        .order_by("added_at", "id")
        .values_list("user_id", "user__username")
    )
    return [{"id": user_id, "username": username} for user_id, username in rows]


def boards_edited_by(user_id: int, *, limit: int = 20) -> list[dict]:
    """Summaries of the published boards ``user_id`` was invited to draw on, newest first
    (their profile lists them). One query over the editor rows' index."""
    boards = (
        Board.objects.select_related("author")
        .filter(editor_rows__user_id=user_id, state=Board.State.PUBLISHED)
        .order_by("-id")[:limit]
    )
    return [board_summary(board) for board in boards]


# --- comments (docs/api.md, "Comments") ---------------------------------------------------------


class CommentNotFound(NotFound):
    def __init__(self, comment_id: int):
        super().__init__(f"There is no comment {comment_id}.")


class CommentAuthor(TypedDict):
    """A local person; a remote (fediverse) author has its user@host handle as username."""

    username: str
    display_name: str
    avatar: str | None


class Comment(TypedDict):
    id: int
    board: int
    author: Annotated[CommentAuthor | None, Field(description="null for a deleted placeholder")]
    text: Annotated[str, Field(description="plain text as written (empty for a placeholder)")]
    html: Annotated[str, Field(description="the text escaped, links rel=nofollow ugc, @names linked")]
    reply_to: Annotated[int | None, Field(description="the top comment it answers")]
    created_at: IsoTime
    edited_at: IsoTime | None
    deleted: Annotated[bool, Field(description="a placeholder of a comment deleted while it had replies")]


class CommentsPage(TypedDict):
    items: list[Comment]
    next: Annotated[str | None, Field(description="pass as after= for the next page; null at the end")]
    total: Annotated[
        int, Field(description="the board's published comments the caller sees (those of people they hide left out)")
    ]


def comment_json(row: dict) -> Comment:
    """docs/api.md's comment from a row of feeds.comments (comments_page, comment_row): a
    placeholder has no author and no text, ``deleted`` true; a remote author (federation) is
    named by their handle, their avatar served from here (feeds.federation.views.remote_avatar). ``html`` is the text as the page shows it (escaped, links made)."""
    if row["state"] == CommentRow.State.DELETED:
        author, text, html = None, "", ""
    else:
        text, html = row["text"], comments.comment_html(row["text"], row["mentions"])
        if row["author_id"] is not None:
            author = {
                "username": row["username"],
                "display_name": row["display_name"],
                "avatar": avatar_url(row["username"], row["avatar_version"]),
            }
        else:
            author = {
                "username": row["remote_handle"],
                "display_name": row["remote_handle"],
                "avatar": federation_selectors.remote_avatar_url(row.get("remote_actor_id")),
            }
    return {
        "id": row["id"],
        "board": row["board_id"],
        "author": author,
        "text": text,
        "html": html,
        "reply_to": row["reply_to_id"],
        "created_at": row["created_at"],
        "edited_at": row["edited_at"],
        "deleted": row["state"] == CommentRow.State.DELETED,
    }


def board_comments(board: Board, viewer, *, after: tuple[int, int] | None, limit: int) -> CommentsPage:
    """docs/api.md's page of a board's comments, in thread order, after the cursor: without the
    people the viewer does not see (blocked either way, muted) and what staff hid. ``total`` is
    what the viewer sees: the board's count (the row in hand) less the published comments of the
    people they hide (one more indexed query, only when they hide someone). One Redis read of
    the viewer's hidden set, one or two queries: O(limit + |hidden| log n)."""
    hidden = _hidden_from(viewer)
    rows = comments.comments_page(board.pk, after=after, limit=limit + 1, hidden=hidden)
    more, rows = len(rows) > limit, rows[:limit]
    return {
        "items": [comment_json(row) for row in rows],
        "next": f"{rows[-1]['thread']}.{rows[-1]['id']}" if more else None,
        "total": max(board.comments - comments.comments_hidden_count(board.pk, hidden), 0),
    }


def comment_get(comment_id: int, viewer) -> CommentRow:
    """A comment the viewer may see (published, or a placeholder), on a board they may see, by
    someone they see, with its board (and the board's author): CommentNotFound otherwise (as for
    a hidden board). Two queries and one Redis read."""
    comment = CommentRow.objects.filter(pk=comment_id, state__in=comments.SHOWN).first()
    if comment is None:
        raise CommentNotFound(comment_id)
    try:
        comment.board = board_get_for(comment.board_id, viewer)
    except BoardNotFound:
        raise CommentNotFound(comment_id) from None
    viewer_id = _viewer_id(viewer)
    others = comment.author_id is not None and viewer_id is not None and viewer_id != comment.author_id
    if others and hiding.bits_of(viewer_id, comment.author_id):
        raise CommentNotFound(comment_id)
    return comment


def comment_read(comment_id: int, viewer) -> Comment:
    """One comment as docs/api.md shapes it, for what the viewer may see (comment_get)."""
    comment = comment_get(comment_id, viewer)
    return comment_json(comments.comment_row(comment.pk))
