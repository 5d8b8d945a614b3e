"""Outgoing HTTP for federation, on the standard library: every request to another server goes
through ``request``, which refuses private, loopback, link-local and reserved addresses (unless
FEDERATION_ALLOW_PRIVATE: tests and local development), connects to the address it checked (no
second DNS answer in between), follows at most FEDERATION_MAX_REDIRECTS redirects (each target
checked again), reads at most FEDERATION_MAX_FETCH_BYTES and gives up after
FEDERATION_FETCH_TIMEOUT seconds. Failures raise ``FetchFailed`` with a sentence."""

import http.client
import ipaddress
import socket
import ssl
import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from django.conf import settings

USER_AGENT = "ugcsite (ActivityPub; +{site})"
ACTIVITY_JSON = "application/activity+json"
ACCEPT_ACTIVITY = f'{ACTIVITY_JSON}, application/ld+json; profile="https://www.w3.org/ns/activitystreams"'


class FetchFailed(Exception):
    """A request that did not get an answer: ``retry`` says whether trying later may help."""

    def __init__(self, message: str, *, retry: bool = True, status: int | None = None):
        super().__init__(message)
        self.retry, self.status = retry, status


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    url: str  # after redirects


def host_of(url: str) -> str:
    """The lower-case host (with a port other than the scheme's) of ``url``; "" if none."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:
        return ""
    if port and port != {"http": 80, "https": 443}.get(parts.scheme):
        return f"{host}:{port}"
    return host


def address_allowed(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    if settings.FEDERATION_ALLOW_PRIVATE:
        return True
    return ip.is_global and not (ip.is_multicast or ip.is_reserved)


def _resolve(host: str, port: int) -> str:
    """The first address of ``host`` that may be reached; FetchFailed if none may."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise FetchFailed(f"{host} does not resolve ({error}).") from error
    addresses = [info[4][0] for info in infos]
    allowed = [address for address in addresses if address_allowed(address)]
    if not allowed:
        raise FetchFailed(f"{host} resolves to a private or reserved address, which is refused.", retry=False)
    return allowed[0]


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, host, port, address, timeout):
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self):
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, host, port, address, timeout):
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self):
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def request(
    method: str, url: str, *, headers: dict[str, str] | None = None, body: bytes | None = None, sign=None
) -> Answer:
    """One request, redirects followed for GET (a POST is never redirected: answered as is).
    ``sign(method, url, body) -> headers`` signs each hop (the target changes with a redirect).
    Cost: the network's; bounded by the settings above."""
    deadline = time.monotonic() + settings.FEDERATION_FETCH_TIMEOUT
    for _ in range(settings.FEDERATION_MAX_REDIRECTS + 1):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise FetchFailed(f"{url[:200]!r} is not an http(s) URL.", retry=False)
        if parts.scheme == "http" and not settings.FEDERATION_ALLOW_PRIVATE:
            raise FetchFailed("Plain http is refused: federation speaks https.", retry=False)
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError as error:
            raise FetchFailed("The URL's port is not a number.", retry=False) from error
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise FetchFailed("The request took too long.")
        address = _resolve(parts.hostname, port)
        kind = _PinnedHTTPSConnection if parts.scheme == "https" else _PinnedHTTPConnection
        connection = kind(parts.hostname, port, address, remaining)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        sent = {"User-Agent": USER_AGENT.format(site=settings.SITE_URL), **(headers or {})}
        if sign is not None:
            sent.update(sign(method, url, body))
        if body is not None:
            sent["Content-Length"] = str(len(body))
        try:
            connection.request(method, target, body=body, headers=sent)
            response = connection.getresponse()
            data = response.read(settings.FEDERATION_MAX_FETCH_BYTES + 1)
        except (OSError, http.client.HTTPException) as error:
            raise FetchFailed(f"{parts.hostname} did not answer ({error.__class__.__name__}: {error}).") from error
        finally:
            connection.close()
        if len(data) > settings.FEDERATION_MAX_FETCH_BYTES:
            raise FetchFailed("The answer is larger than FEDERATION_MAX_FETCH_BYTES.", retry=False)
        answer_headers = {name.lower(): value for name, value in response.getheaders()}
        if response.status in (301, 302, 303, 307, 308) and method == "GET" and "location" in answer_headers:
            url = urljoin(url, answer_headers["location"])
            continue
        return Answer(response.status, answer_headers, data, url)
    raise FetchFailed("Too many redirects.", retry=False)
