"""Where a page draws a picture from (feeds.images): ``/images/<id>`` redirects to the current
copy in the storage; ``/media/...`` serves the local storage's files when nothing in front
does (``make run``'s nginx serves them itself, with a long cache: ugcsite.serving)."""

from django.conf import settings
from django.http import Http404, HttpResponseRedirect
from django.views.decorators.http import require_safe
from django.views.static import serve

from feeds.images import ImageNotFound, image_get_shown, image_url

# A copy's name never changes while it is shown (hiding moves it), so it may be kept for long;
# the redirect to it is kept briefly, so that a hidden picture leaves every page soon.
REDIRECT_MAX_AGE = 300
MEDIA_MAX_AGE = 365 * 24 * 3600


@require_safe
def image_redirect(request, image_id: str):
    try:
        image = image_get_shown(image_id)
    except ImageNotFound:
        raise Http404("No such picture.") from None
    if not image.file:  # its copy was lost from the storage
        raise Http404("No such picture.")
    response = HttpResponseRedirect(image_url(image))
    response["Cache-Control"] = f"public, max-age={REDIRECT_MAX_AGE}"
    return response


@require_safe
def media_file(request, path: str):
    response = serve(request, path, document_root=settings.MEDIA_ROOT)
    response["Cache-Control"] = f"public, max-age={MEDIA_MAX_AGE}, immutable"
    return response
