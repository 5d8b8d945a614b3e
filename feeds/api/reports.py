"""API: reporting a board or a person (docs/api.md, "Safety"); staff decide in the admin."""

from typing import Annotated, ClassVar, Literal

from django.http import JsonResponse
from pydantic import Field, StrictStr
from typing_extensions import TypedDict

from feeds import selectors
from feeds.images import image_get_shown
from feeds.rules import IMAGE_ID_PATTERN, REPORT_TEXT_MAX, ReportReason
from feeds.services import reports
from social.rules import USERNAME_PATTERN, USERNAME_WORDS
from social.selectors import user_get_for
from ugcsite.platform.apidoc import documented
from ugcsite.platform.http import (
    ApiError,
    ApiId,
    Strict,
    Text,
    endpoint,
    login_required,
    parse_json_object,
    validate,
)

Reason = Literal[tuple(ReportReason.values)]  # type: ignore[valid-type]


class ReportCreate(Strict):
    """``{"board": id}``, ``{"comment": id}``, ``{"image": id}`` or ``{"user": username}``, with a
    reason and, if you like, a few words."""

    pattern_messages: ClassVar[dict[str, str]] = {
        "user": f"must be {USERNAME_WORDS}",
        "image": "must be a picture's id (16 characters of A-Z, a-z, 0-9, _ and -)",
    }

    one_of: ClassVar[tuple[str, ...]] = (
        "board",
        "comment",
        "image",
        "user",
    )  # exactly one, never null (the handler checks too)

    board: ApiId = None
    comment: ApiId = None
    image: Annotated[StrictStr, Field(pattern=IMAGE_ID_PATTERN)] = None
    user: Annotated[StrictStr, Field(pattern=USERNAME_PATTERN)] = None
    reason: Reason
    text: Annotated[Text, Field(max_length=REPORT_TEXT_MAX)] = ""


class Reported(TypedDict):
    id: int


@login_required
@documented(
    "Report a board, a comment, a picture or a person to staff (rate limited); enough distinct reporters hide it "
    "until staff decide",
    {201: ("reported", Reported)},
    body=ReportCreate,
    errors=(400, 401, 404, 413, 429),
)
def report_create(request):
    data = validate(ReportCreate, parse_json_object(request))
    if [data.board, data.comment, data.image, data.user].count(None) != 3:
        raise ApiError(
            400,
            'Name one thing to report: {"board": <id>}, {"comment": <id>}, {"image": "<id>"} or {"user": "<username>"}.',
        )
    reporter = request.api_user
    if data.board is not None:
        target = {"board": selectors.board_get_for(data.board, reporter)}
    elif data.comment is not None:
        target = {"comment": selectors.comment_get(data.comment, reporter)}
    elif data.image is not None:
        target = {"image": image_get_shown(data.image)}
    else:
        target = {"person": user_get_for(data.user, reporter)}
    report = reports.report_create(reporter=reporter, reason=data.reason, text=data.text, **target)
    return JsonResponse(Reported(id=report.pk), status=201)


reports_view = endpoint(POST=report_create)
