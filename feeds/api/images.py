"""API: pictures for the canvas (docs/api.md, "Pictures")."""

from django.http import JsonResponse

from feeds.images import image_href
from feeds.rules import IMAGE_TYPES, IMAGE_UPLOAD_MAX
from feeds.services import images as services
from ugcsite.platform.http import ApiError, body_max, client_address, endpoint, login_required, takes_bytes
from ugcsite.platform.ratelimits import write_attempt

_TYPES = ", ".join(IMAGE_TYPES)


@login_required
@takes_bytes
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
        {"id": image.pk, "url": image_href(image.pk), "width": image.width, "height": image.height}, status=201
    )


images = body_max(IMAGE_UPLOAD_MAX, "picture")(endpoint(POST=image_upload))
