"""API: a person's notifications (docs/api.md, "Search, notifications, your own settings")."""

from typing import Annotated

from django.http import HttpResponse
from pydantic import Field, StrictBool

from feeds import notifications, selectors
from feeds.rules import NOTIFICATIONS_READ_MAX
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
    """``{"ids": [...]}`` (1 to NOTIFICATIONS_READ_MAX of the caller's notification ids) or
    ``{"all": true}``: exactly one of them."""

    ids: Annotated[list[ApiId], Field(min_length=1, max_length=NOTIFICATIONS_READ_MAX)] = None
    all: StrictBool = None


@login_required
def notifications_get(request):
    page = paging(request)
    return selectors.notifications_list(request.api_user, offset=page["offset"], limit=page["limit"])


@login_required
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
