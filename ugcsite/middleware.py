import logging
import time

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.core.exceptions import BadRequest, PermissionDenied
from django.db import DatabaseError
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string

from social import selectors as people, services as accounts
from ugcsite.platform import errors, outages
from ugcsite.platform.http import error_response

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5

# Pages load nothing from other hosts and run no inline script (docs/api.md, "Pages").
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response


class BodySizeLimitMiddleware:
    """A body over the limit answers 413 before anything reads it: API_MAX_BODY_BYTES, or the
    view's own (``ugcsite.platform.http.body_max``: a picture). Checked once the view is known and before
    any view middleware reads the body (CSRF reads a form's): this runs first of them."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return JsonResponse({"detail": "The Content-Length header is not a number."}, status=400)
        limit = getattr(view_func, "body_max", settings.API_MAX_BODY_BYTES)
        if length > limit:
            _drain(request, length)
            what = getattr(view_func, "body_what", "drawing")
            return JsonResponse(
                {
                    "detail": f"The body is {length:,} bytes; at most {limit / 1024 / 1024:g} MiB is accepted. Send a smaller {what}."
                },
                status=413,
            )
        return None


# Bodies up to this size are read and thrown away before a 413 (a chunk at a time, never held):
# a WSGI server that answers before the body is read closes the connection while the proxy in
# front is still sending it, and the proxy turns that into a 502. nginx passes nothing larger
# than the largest limit of any view (ugcsite.serving), well under this.
DRAIN_MAX_BYTES = 8 * 1024 * 1024


def _drain(request, length: int) -> None:
    if length > DRAIN_MAX_BYTES:
        return
    try:
        while request.read(64 * 1024):
            pass
    except OSError:  # the client went away: nothing to answer anyway
        pass


class DomainErrorMiddleware:
    """Pages: a domain error a view lets through (``ugcsite.platform.errors``) is Django's 404, 403 or
    400 page, saying what was wrong; the API answers them itself (``ugcsite.platform.http.endpoint``)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, errors.NotFound):
            raise Http404(str(exception))
        if isinstance(exception, errors.NotAllowed):
            raise PermissionDenied(str(exception))
        if isinstance(exception, errors.Invalid):
            raise BadRequest(str(exception)) from exception
        return None


class ServiceUnavailableMiddleware:
    """PostgreSQL or Redis unreachable: 503 with Retry-After and a sentence (API), or the site's
    503 page, rendered without anything that needs those servers; never a traceback."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, errors.Unavailable):  # a page whose data is being rebuilt
            response = HttpResponse(
                render_to_string("unavailable.html", {"retry_after": exception.retry_after}), status=503
            )
            response["Retry-After"] = str(exception.retry_after)
            return response
        conflict = isinstance(exception.__cause__, outages.CONFLICTS)
        if not conflict and not outages.is_outage(exception):
            return None
        which = outages.which(exception)
        logger.warning(
            "503 for %s %s: the %s %s: %s",
            request.method,
            request.path,
            which,
            "met a conflicting change" if conflict else "is unreachable",
            exception,
        )
        if request.path.startswith("/api/"):
            said = (
                f"The site's {which} was busy with a conflicting change, so this one was not made"
                if conflict
                else f"The site's {which} is unreachable for a moment; nothing was lost"
            )
            return error_response(
                503,
                f"{said}. Try again in {RETRY_AFTER_SECONDS} seconds.",
                headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
            )
        response = HttpResponse(render_to_string("unavailable.html", {"retry_after": RETRY_AFTER_SECONDS}), status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response


ADMIN_PREFIX = "/admin/"  # ugcsite.urls mounts Django's admin (and the staff mail box) here


class StaffSecondFactorMiddleware:
    """Staff need a second factor (issue 41): a staff member signed in without two-factor on is
    refused every page under /admin/ with a page saying how to turn it on. (The admin's own
    password-only log-in page is not served: ugcsite.urls sends it to /login, which asks for the code.)"""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if (
            request.path.startswith(ADMIN_PREFIX)
            and request.user.is_authenticated
            and request.user.is_staff
            and not people.two_factor_on(request.user)
        ):
            return render(request, "admin/second_factor_required.html", status=403)
        return self.get_response(request)


class SessionTouchMiddleware:
    """A signed-in browser session's last use, for the settings page's list of sessions: written
    at most every SESSION_TOUCH_SECONDS (social.services.session_touch). A request with no
    session cookie (a bearer token's) loads nothing."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        session = getattr(request, "session", None)
        if session is not None and settings.SESSION_COOKIE_NAME in request.COOKIES:
            user_id = session.get(SESSION_KEY)
            if user_id is not None:
                try:
                    accounts.session_touch(session=session, user_id=int(user_id), now=time.time())
                except DatabaseError as error:  # bookkeeping: the answer stands (a 503's too), the next touch comes
                    logger.info("a session's last use was not noted: %s", error)
        return response
