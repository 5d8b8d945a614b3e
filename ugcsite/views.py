"""Site-wide pages and the error handlers: JSON under /api/, pages in the site's look elsewhere."""

from email import policy as email_policy
from email.parser import BytesParser
from pathlib import Path

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt

from feeds.views import boards as board_pages
from ugcsite.platform import errors
from ugcsite.platform.http import error_response

MAIL_BOX_SHOWN = 100  # the newest mails the staff page lists


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def _error(request, status: int, api_detail: str, title: str, message: str):
    if _is_api(request):
        return error_response(status, api_detail)
    return render(request, "error.html", {"status": status, "title": title, "message": message}, status=status)


def bad_request(request, exception=None):
    # A domain error (ugcsite.middleware.DomainErrorMiddleware) says what was wrong; Django's own
    # 400s (a bad Host header, a mangled form) keep their details to the log.
    said = str(exception) if exception is not None and isinstance(exception.__cause__, errors.Invalid) else None
    return _error(
        request,
        400,
        said or "The request could not be understood; check its URL and body.",
        "Bad request",
        said or "The request could not be understood.",
    )


def csrf_failure(request, reason=""):
    """A form sent without its CSRF token (an old tab, cookies off): the site's 403 page."""
    return _error(
        request,
        403,
        "The CSRF token is missing or wrong; send the csrftoken cookie's value as X-CSRFToken.",
        "Form expired",
        "This form has expired or your browser did not send its cookie. Go back, reload the page and try again.",
    )


def permission_denied(request, exception=None):
    """The site's 403 page, with the reason when the refusal gave one (a domain error's
    sentence, ugcsite.middleware.DomainErrorMiddleware: "Its author turned remixing off")."""
    reason = str(exception) if exception is not None and str(exception) else ""
    return _error(
        request,
        403,
        reason or "You are not allowed to do that.",
        "Not allowed",
        reason or "You are not allowed to see or change this page.",
    )


def page_not_found(request, exception=None):
    return _error(
        request,
        404,
        "There is nothing at this address; see /api/v1/openapi.json for the API.",
        "Not found",
        "There is nothing at this address. It may have been deleted.",
    )


@csrf_exempt  # nothing is there to protect: a POST to no API path is a 404, not a CSRF 403
def api_not_found(request):
    return page_not_found(request)


def server_error(request):
    return _error(
        request,
        500,
        "Something went wrong on our side; try again in a moment.",
        "Something went wrong",
        "Something went wrong on our side. Try again in a moment.",
    )


def home(request):
    """``/``: the home feed for a signed-in person, the public front page for everyone else."""
    if request.user.is_authenticated:
        return board_pages.home_feed(request)
    return board_pages.front_page(request)


@staff_member_required
def mail_box(request):
    """Staff read the mail the local catcher kept (MAIL_DIR: `make run` and the tests; a real
    relay keeps none here): the newest first, and one whole with ``?m=<file>``."""
    folder = Path(settings.MAIL_DIR) if settings.MAIL_DIR else None
    files = sorted(folder.glob("*.eml"), reverse=True)[:MAIL_BOX_SHOWN] if folder and folder.is_dir() else []
    mails = []
    for path in files:
        message = BytesParser(policy=email_policy.default).parsebytes(path.read_bytes())
        mails.append(
            {
                "file": path.name,
                "subject": message["subject"],
                "to": message["to"],
                "date": message["date"],
                "body": message.get_body(preferencelist=("plain",)).get_content()
                if request.GET.get("m") == path.name
                else None,
            }
        )
    return render(request, "mail_box.html", {"mails": mails, "folder": folder, "chosen": request.GET.get("m")})
