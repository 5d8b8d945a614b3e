"""API: a person's notifications (docs/api.md, "Search, notifications, your own settings")."""

from typing import Annotated, ClassVar

from django.http import HttpResponse
from pydantic import Field, StrictBool

from feeds import notifications, selectors
from feeds.rules import NOTIFICATIONS_READ_MAX
from feeds.selectors import Notifications
from ugcsite.platform.apidoc import PAGING, documented
from ugcsite.platform.http import (
    ApiError,
    ApiId,
    Strict,
    endpoint,
    login_required,
    paging,
    parse_json_object,
    validate,
)


class NotificationsRead(Strict):
    """Either {"ids": [...]} (some of the caller's notification ids) or {"all": true}: exactly one of them."""

    one_of: ClassVar[tuple[str, ...]] = ("ids", "all")  # exactly one (the handler checks too)

    # 1 to NOTIFICATIONS_READ_MAX of the caller's notification ids
    ids: Annotated[list[ApiId], Field(min_length=1, max_length=NOTIFICATIONS_READ_MAX)] = None
    all: Annotated[StrictBool, Field(json_schema_extra={"const": True})] = None  # false is a 400


@login_required
@documented(
    "The caller's notifications, latest first, with the unread count",
    {200: ("notifications", Notifications)},
    parameters=PAGING,
    errors=(400, 401),
)
def notifications_get(request):
    page = paging(request)
    return selectors.notifications_list(request.api_user, offset=page["offset"], limit=page["limit"])


@login_required
@documented(
    "Mark notifications read: some by id, or all", {204: "marked read"}, body=NotificationsRead, errors=(400, 401, 413)
)
def notifications_read(request):
    body = validate(NotificationsRead, parse_json_object(request))
    given = body.model_fields_set
    if given == {"all"} and body.all is True:
        notifications.notifications_mark_read(request.api_user.pk)
    elif given == {"ids"}:
        notifications.notifications_mark_read(request.api_user.pk, ids=body.ids)
    else:
        raise ApiError(400, 'Send either {"ids": [...]} with the notifications to mark read, or {"all": true}.')
    return HttpResponse(status=204)


notifications_view = endpoint(GET=notifications_get)
notifications_read_view = endpoint(POST=notifications_read)
