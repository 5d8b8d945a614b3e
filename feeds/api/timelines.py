"""API: timelines and discovery (docs/api.md, "Timelines", "Discovery")."""

from dataclasses import replace

from feeds import selectors
from feeds.discovery.queries import SORTS, Query
from feeds.rules import BOARD_KINDS, TAG_PATTERN, TAG_RE, TAG_WORDS
from feeds.selectors import BoardsFound, TimelinePage
from feeds.services.activity import home_feed_read, home_feed_ready
from feeds.timelines.rebuild import refuse_while_rebuilding
from social import hiding
from social.api import USERNAME
from social.limits import TokenNotCached, TokenRefused, read_gate
from social.rules import USERNAME_RE
from social.selectors import user_get_for
from ugcsite.platform.apidoc import PAGING, TIMELINE_PAGING, documented, query_param
from ugcsite.platform.http import TOKEN_REFUSED, ApiError, endpoint, login_required, one_trip, paging

KIND = query_param("kind", {"type": "string", "enum": list(BOARD_KINDS)}, "only boards of this kind")
TAG = query_param(
    "tag",
    {"type": "array", "items": {"type": "string", "pattern": TAG_PATTERN}},
    "only boards with this tag; repeat for several (all must match)",
    style="form",
    explode=True,
)


def query_filters(request, *, allow_author: bool) -> Query:
    """kind=, tag= (repeatable) and author= of a discovery query, or a 400."""
    kind = request.GET.get("kind")
    if kind is not None and kind not in BOARD_KINDS:
        raise ApiError(400, f"kind must be one of {', '.join(sorted(BOARD_KINDS))}; it was {kind[:40]!r}.")
    tags = request.GET.getlist("tag")
    for tag in tags:
        if not TAG_RE.match(tag):
            raise ApiError(400, f"tag {tag[:40]!r} is not a tag: use {TAG_WORDS}.")
    author = request.GET.get("author") if allow_author else None
    return Query(kind=kind or None, tags=tuple(tags), author=author)


@documented(
    "A user's boards, newest first",
    {200: ("a page", TimelinePage)},
    parameters=(TIMELINE_PAGING,),
    errors=(400, 401, 404),
)
def user_boards(request, username: str):
    author = user_get_for(username, request.api_user)  # 404 for someone the author blocks
    viewer = request.api_user
    if viewer is not None and viewer.pk != author.pk and hiding.bits_of(viewer.pk, author.pk) & hiding.BLOCKS:
        return TimelinePage(items=[], next=None)  # and the blocker sees none of theirs either
    return refuse_while_rebuilding(selectors.profile_boards(author.pk, **paging(request, allow_before=True)))


def feed_one_trip(request, key: str, address: str):
    """The feed of a caller whose token names them (social.tokens), its token checked and its
    read limits counted in the page's own script call (social.limits.read_gate): one round trip
    when warm. None (the usual way) for an older token, one not cached yet, paging the usual
    way refuses (its 400 comes after the 401 and the 429) and filters."""
    gate = read_gate(key, address=address)
    if gate is None or any(name in request.GET for name in ("kind", "tag")):
        return None
    try:
        page = paging(request, allow_before=True)
    except ApiError:
        return None
    try:
        answer = home_feed_read(user_id=gate.owner, gate=gate, **page)
    except TokenNotCached:
        return None
    except TokenRefused:
        raise ApiError(401, TOKEN_REFUSED) from None
    return gate.owner, refuse_while_rebuilding(answer)


@one_trip(feed_one_trip)
@login_required
@documented(
    "The caller's home feed, newest first",
    {200: ("a page", TimelinePage)},
    parameters=(TIMELINE_PAGING, KIND, TAG),
    errors=(400, 401),
)
def feed(request):
    page = paging(request, allow_before=True)
    query = query_filters(request, allow_author=False)
    if query.has_filters():
        home_feed_ready(user_id=request.api_user.pk)
        return refuse_while_rebuilding(selectors.home_feed_filtered(request.api_user.pk, query, **page))
    return refuse_while_rebuilding(home_feed_read(user_id=request.api_user.pk, **page))


@documented(
    "Boards matching every filter, with the exact total",
    {200: ("matches", BoardsFound)},
    parameters=(
        *PAGING,
        KIND,
        TAG,
        query_param("author", {"type": "string"}, "username; unknown gives no matches"),
        query_param(
            "sort",
            {"type": "string", "enum": list(SORTS), "default": SORTS[0]},
            "recent: newest first; popular: views all time; trending: views in 24 hours",
        ),
    ),
    errors=(400, 401),
)
def discover(request):
    page = paging(request)
    query = query_filters(request, allow_author=True)
    sort = request.GET.get("sort", SORTS[0])
    if sort not in SORTS:
        raise ApiError(400, f"sort must be {', '.join(SORTS[:-1])} or {SORTS[-1]}; it was {sort[:40]!r}.")
    if query.author is not None and not USERNAME_RE.match(query.author):
        return BoardsFound(total=0, items=[])  # no such user can exist
    return selectors.discover(
        replace(query, sort=sort), offset=page["offset"], limit=page["limit"], viewer=request.api_user
    )


profile_boards = endpoint(GET=user_boards, parameters=(USERNAME,))
home_feed = endpoint(GET=feed)
discover_view = endpoint(GET=discover)
