"""A small fediverse peer for the federation tests: a real HTTP server on loopback with its own
RSA key, serving its actor and an inbox that checks every delivery's draft-cavage signature
against the key it fetches from ugcsite (over HTTP, as Mastodon would). It also signs what it
sends to ugcsite. Not a mock of our stack: it stands for another server."""

import io
import json
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from PIL import Image

from feeds.federation import signatures


def _avatar() -> bytes:
    picture = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 40, 90)).save(picture, "PNG")
    return picture.getvalue()


AVATAR = _avatar()


class Peer:
    def __init__(self, name: str = "bob"):
        self.private, self.public = signatures.key_generate()
        self.received: list[dict] = []  # each: {"path", "headers", "activity", "verified"}
        self.answers: list[int] = []  # statuses the inbox answers next (then 202)
        self.name = name
        peer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, document: dict | None = None):
                body = json.dumps(document).encode() if document is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/activity+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                if self.path == f"/users/{peer.name}":
                    self._send(200, peer.actor())
                elif self.path == "/avatar.png":
                    self.send_response(200)
                    self.send_header("Content-Type", "image/png")
                    self.send_header("Content-Length", str(len(AVATAR)))
                    self.end_headers()
                    self.wfile.write(AVATAR)
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {k.lower(): v for k, v in self.headers.items()}
                verified = peer.verify(self.path, headers, body)
                peer.received.append(
                    {"path": self.path, "headers": headers, "activity": json.loads(body), "verified": verified}
                )
                self._send(peer.answers.pop(0) if peer.answers else 202)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def uri(self) -> str:
        return f"{self.base}/users/{self.name}"

    @property
    def host(self) -> str:
        return self.base.split("://", 1)[1]

    def actor(self) -> dict:
        return {
            "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
            "id": self.uri,
            "type": "Person",
            "preferredUsername": self.name,
            "name": self.name.title(),
            "icon": {"type": "Image", "url": f"{self.base}/avatar.png"},
            "inbox": f"{self.uri}/inbox",
            "endpoints": {"sharedInbox": f"{self.base}/inbox"},
            "publicKey": {"id": f"{self.uri}#main-key", "owner": self.uri, "publicKeyPem": self.public},
        }

    def verify(self, path: str, headers: dict, body: bytes) -> str:
        """ "ok", or why the delivery's signature does not hold (its key fetched from its actor)."""
        try:
            signatures.digest_check(headers, body)
            signed = signatures.cavage_signed(headers["signature"], method="POST")
            request = urllib.request.Request(
                signed.key_id.split("#")[0], headers={"Accept": "application/activity+json"}
            )
            actor = json.loads(urllib.request.urlopen(request, timeout=10).read())
            if actor["publicKey"]["id"] != signed.key_id:
                return "the key is not the actor's"
            signatures.cavage_verify(
                value=headers["signature"],
                public_pem=actor["publicKey"]["publicKeyPem"],
                method="POST",
                path=path,
                headers=headers,
            )
            return "ok"
        except Exception as error:
            return f"{error.__class__.__name__}: {error}"

    def post(self, url: str, activity: dict | bytes, *, kind: str = "cavage", tamper: bool = False, sign: bool = True):
        """POST ``activity`` to ugcsite, signed as this peer: (status, body)."""
        body = activity if isinstance(activity, bytes) else json.dumps(activity).encode()
        headers = {"Content-Type": "application/activity+json"}
        if sign:
            signer = signatures.rfc9421_sign if kind == "rfc9421" else signatures.cavage_sign
            headers.update(
                signer(private_pem=self.private, key_id=f"{self.uri}#main-key", method="POST", url=url, body=body)
            )
        if tamper:
            body = body.replace(b"Like", b"Lik3") if b"Like" in body else body + b" "
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=20) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def activity(self, kind: str, obj, suffix: str) -> dict:
        return {
            "@context": "https://www.w3.org/ns/activitystreams",
            "id": f"{self.uri}/activities/{suffix}",
            "type": kind,
            "actor": self.uri,
            "object": obj,
        }

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def path_of(url: str) -> str:
    return urlsplit(url).path
