"""Logs: one line per request (``ugcsite.requests``: method, path, status, milliseconds, request
id), and with production settings (DJANGO_DEBUG=0, or LOG_FORMAT=json) every log line one JSON
object: time, level, logger, message, and the request's id, method, path and status when it has
them. The standard library's logging, nothing else. Imports no app.

A request's id is the X-Request-ID it came with (a proxy's), when that is a short token, else a
new one; the answer carries it back, and every line logged while serving it names it."""

import json
import logging
import re
import time
import uuid
from contextvars import ContextVar
from datetime import UTC, datetime

from ugcsite.platform import outages

REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
_current: ContextVar[dict | None] = ContextVar("ugcsite_request", default=None)
logger = logging.getLogger("ugcsite.requests")


class RequestContextFilter(logging.Filter):
    """Adds ``request_id``, ``method`` and ``path`` of the request being served to each record
    (Django's own request records carry the request itself). Django's line about a 4xx keeps its
    sentence and loses its traceback: a refusal (a 403 page, a bad request) is the client's doing,
    and a traceback a refusal would bury the server's own errors (issue 37, "noise"). So does a
    Celery task's failure on a dependency's outage (ugcsite.platform.outages: the database or
    Redis unreachable, as while PostgreSQL fails over): the line says which was unreachable, with
    no traceback, still at its level."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "django.request" and getattr(record, "status_code", 500) < 500:
            record.exc_info, record.exc_text = None, None
        if record.name == "celery.app.trace" and record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            if outages.is_outage(error):
                record.msg, record.args = f"{record.getMessage()} (the {outages.which(error)} was unreachable)", None
                record.exc_info, record.exc_text = None, None
        request = getattr(record, "request", None)
        context = _current.get() or {}
        if getattr(request, "request_id", None):
            context = {"request_id": request.request_id, "method": request.method, "path": request.path}
        for field, value in context.items():
            if not hasattr(record, field):
                setattr(record, field, value)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, the request fields
    present, and the traceback as ``exception``."""

    FIELDS = ("request_id", "method", "path", "status", "duration_ms")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        logging.captureWarnings(True)  # Python's warnings too, as lines of logger "py.warnings", not bare text

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for field in self.FIELDS:
            value = getattr(record, field, None)
            if value is not None:
                entry[field] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class RequestLogMiddleware:
    """Names each request (``request.request_id``, the X-Request-ID answer header) and logs one
    line when it is answered. First in MIDDLEWARE, so it sees every answer."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        given = request.headers.get("X-Request-ID", "")
        request.request_id = given if REQUEST_ID_RE.match(given) else uuid.uuid4().hex
        token = _current.set({"request_id": request.request_id, "method": request.method, "path": request.path})
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            response["X-Request-ID"] = request.request_id
            logger.info(
                "%s %s %s",
                request.method,
                request.path,
                response.status_code,
                extra={"status": response.status_code, "duration_ms": round((time.perf_counter() - started) * 1000, 2)},
            )
            return response
        finally:
            _current.reset(token)
