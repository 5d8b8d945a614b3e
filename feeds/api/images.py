"""API: pictures for the canvas (docs/api.md, "Pictures")."""

from typing import Annotated

from django.http import JsonResponse
from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict

from feeds.images import image_href
from feeds.rules import IMAGE_ID_PATTERN, IMAGE_PIXELS_MAX, IMAGE_SIDE_MAX, IMAGE_TYPES, IMAGE_UPLOAD_MAX
from feeds.services import images as services
from ugcsite.platform.apidoc import documented
from ugcsite.platform.http import ApiError, Error, body_max, client_address, endpoint, login_required, takes_bytes
from ugcsite.platform.ratelimits import write_attempt

_TYPES = ", ".join(IMAGE_TYPES)
Side = Annotated[int, Field(ge=1, le=IMAGE_SIDE_MAX)]


@with_config(ConfigDict(extra="forbid"))
class ImageKept(TypedDict):
    id: Annotated[str, Field(pattern=IMAGE_ID_PATTERN)]
    url: Annotated[str, Field(description="where pages load it (a redirect to the copy)")]
    width: Side
    height: Side


@login_required
@takes_bytes
@documented(
    f"Upload a picture for the canvas: the body is the image's bytes, its Content-Type one of {_TYPES} (the body "
    f"must be that format), at most {IMAGE_UPLOAD_MAX // (1024 * 1024)} MiB and {IMAGE_PIXELS_MAX // 1_000_000} "
    f"million pixels. It is re-encoded (no EXIF or GPS kept), shrunk to {IMAGE_SIDE_MAX} px on its long side, and "
    "counts against the caller's storage quota; an image element names it by its id. A write (rate limited)",
    {201: ("the picture kept", ImageKept), 415: (f"not one of {_TYPES}", Error)},
    body={media: {"schema": {"type": "string", "format": "binary"}} for media in IMAGE_TYPES},
    errors=(400, 401, 413, 429),
)
def image_upload(request):
    """The body is the picture's bytes, its Content-Type one of IMAGE_TYPES (415 for another:
    the type names the one decoder that runs). An upload counts as a write."""
    if not request.body:  # nothing to misread, whatever its type (a client may send none with no body)
        raise ApiError(400, f"The body is empty; send the bytes of a picture as {_TYPES}.")
    if request.content_type not in IMAGE_TYPES:
        sent = f"'{request.content_type[:60]}'" if request.content_type else "no Content-Type"
        raise ApiError(415, f"Send a picture's bytes as {_TYPES}; this request had {sent}.")
    write_attempt(user_id=request.api_user.pk, address=client_address(request))
    image = services.image_create(owner=request.api_user, data=request.body, content_type=request.content_type)
    return JsonResponse(
        ImageKept(id=image.pk, url=image_href(image.pk), width=image.width, height=image.height), status=201
    )


images = body_max(IMAGE_UPLOAD_MAX, "picture")(endpoint(POST=image_upload))
