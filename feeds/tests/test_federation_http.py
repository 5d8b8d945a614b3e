"""feeds.federation.http, the guarded client every outgoing request takes: private and reserved
addresses refused unless FEDERATION_ALLOW_PRIVATE, redirects, size and time bounded, each
redirect's target checked again. Against a real HTTP server on loopback."""

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from feeds.federation import http


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path.startswith("/loop"):
            self.send_response(302)
            self.send_header("Location", "/loop")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/big":
            body = b"x" * 5000
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/slow":
            time.sleep(3)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/",
        "https://10.0.0.1/",
        "https://169.254.169.254/latest",
        "https://[::1]/",
        "https://192.168.1.1/",
        "https://localhost/",
    ],
)
def test_private_loopback_and_link_local_addresses_are_refused(settings, url):
    settings.FEDERATION_ALLOW_PRIVATE = False
    with pytest.raises(http.FetchFailed, match="private or reserved") as refused:
        http.request("GET", url)
    assert refused.value.retry is False


def test_plain_http_and_other_schemes_are_refused(settings):
    settings.FEDERATION_ALLOW_PRIVATE = False
    for url in ("http://example.com/", "file:///etc/passwd", "gopher://example.com/", "https:///nohost"):
        with pytest.raises(http.FetchFailed):
            http.request("GET", url)


def test_bounds_with_private_allowed(settings, server):
    settings.FEDERATION_ALLOW_PRIVATE = True
    settings.FEDERATION_MAX_FETCH_BYTES = 1000
    settings.FEDERATION_FETCH_TIMEOUT = 1
    assert http.request("GET", server + "/").body == b"ok"
    with pytest.raises(http.FetchFailed, match="redirects"):
        http.request("GET", server + "/loop")
    with pytest.raises(http.FetchFailed, match="larger"):
        http.request("GET", server + "/big")
    started = time.monotonic()
    with pytest.raises(http.FetchFailed):
        http.request("GET", server + "/slow")
    assert time.monotonic() - started < 2.5


def test_what_counts_as_private(settings):
    settings.FEDERATION_ALLOW_PRIVATE = False
    for address in (
        "10.1.2.3",
        "172.16.0.1",
        "192.168.0.1",
        "127.0.0.1",
        "169.254.169.254",
        "::1",
        "fc00::1",
        "0.0.0.0",
        "100.64.0.1",
    ):
        assert not http.address_allowed(address), address
    assert http.address_allowed("93.184.216.34") and http.address_allowed("2606:2800:220:1::1")
