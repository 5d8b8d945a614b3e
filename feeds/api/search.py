"""API: search of people and boards (docs/api.md, "Search, notifications, your own settings")."""

from feeds import selectors
from feeds.rules import SEARCH_TYPES
from feeds.selectors import SearchAnswer
from social.rules import SEARCH_QUERY_LENGTH
from ugcsite.platform.apidoc import PAGING, documented, query_param
from ugcsite.platform.http import STORABLE_PATTERN, ApiError, endpoint, paging


def search_params(request) -> tuple[str, str]:
    """``q`` (1-100 characters, no NUL) and ``type`` (users or boards; boards by default), or a 400."""
    query = request.GET.get("q")
    low, high = SEARCH_QUERY_LENGTH
    if query is None or not low <= len(query) <= high:
        raise ApiError(400, f"q must be {low} to {high} characters: the words to look for.")
    if "\x00" in query:
        raise ApiError(400, "q must not contain NUL characters.")
    kind = request.GET.get("type", SEARCH_TYPES[-1])
    if kind not in SEARCH_TYPES:
        raise ApiError(400, f"type must be {' or '.join(SEARCH_TYPES)}; it was {kind[:40]!r}.")
    return query, kind


@documented(
    "Search people (by username and display name) or boards (by title, tags and the text in drawings)",
    {200: ("best match first", SearchAnswer)},
    parameters=(
        query_param(
            "q",
            {
                "type": "string",
                "minLength": SEARCH_QUERY_LENGTH[0],
                "maxLength": SEARCH_QUERY_LENGTH[1],
                "pattern": STORABLE_PATTERN,
            },
            "the words to look for (prefixes match; people also by a near spelling; for boards, a word written "
            "#tag matches that tag whole)",
            required=True,
        ),
        query_param(
            "type", {"type": "string", "enum": list(SEARCH_TYPES), "default": SEARCH_TYPES[-1]}, "what to search"
        ),
        *PAGING,
    ),
    errors=(400, 401),
)
def search(request):
    page = paging(request)
    query, kind = search_params(request)
    return selectors.search(query, kind=kind, offset=page["offset"], limit=page["limit"], viewer=request.api_user)


search_view = endpoint(GET=search)
