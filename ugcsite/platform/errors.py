"""Domain errors: what selectors and services raise when an answer is "no". Each app names its
own (``BoardNotFound``, ``UsernameTaken``, ...) as a subclass of one of these; the API
(``ugcsite.platform.http.endpoint``) and the pages (``ugcsite.middleware.DomainErrorMiddleware``) turn
them into 404, 403, 400 or 409, with the error's message as the sentence a person reads.
Imports nothing: every layer may raise them."""


class DomainError(Exception):
    """Base of the domain errors; ``str(error)`` is a sentence a person can act on."""


class NotFound(DomainError):
    """No such thing, or not one the caller may see (404)."""


class NotAllowed(DomainError):
    """It exists, but the caller may not do this to it (403)."""


class Invalid(DomainError):
    """The request asks for something that can never be done (400)."""


class Conflict(DomainError):
    """It clashes with what exists (409)."""


class RateLimited(DomainError):
    """Too many attempts for now (429); ``retry_after`` seconds until the next may succeed."""

    def __init__(self, message: str, *, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


class Unavailable(DomainError):
    """Not answerable correctly for a moment (503: the data is being rebuilt); ``retry_after``
    seconds until the next try may succeed."""

    def __init__(self, message: str, *, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after
