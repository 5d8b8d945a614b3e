"""HTTP Signatures, both kinds the fediverse speaks, over ``cryptography``'s RSA. Pure functions:
no I/O, no Django (docs/federation.md, "Signatures").

- draft-cavage-http-signatures-12, what Mastodon sends and verifies: ``Signature: keyId=...,
  algorithm="rsa-sha256", headers="(request-target) host date digest", signature=...``, with
  ``Digest: SHA-256=<base64>`` over the body. ``cavage_sign`` makes one; ``cavage_parse`` and
  ``cavage_verify`` check one under Mastodon's rules (date signed, (request-target) or digest
  signed, a POST signs its digest).
- RFC 9421 (HTTP Message Signatures), what Mastodon 4.5 verifies and Fedify sends first:
  ``Signature-Input`` and ``Signature`` as structured-field dictionaries, a signature base built
  from derived components (``@method``, ``@target-uri``, ``@authority``, ``@path``, ``@query``)
  and fields, ``Content-Digest`` (RFC 9530) over the body. ``rfc9421_verify`` checks rsa-v1_5-sha256
  and rsa-pss-sha512; ``rfc9421_sign`` makes rsa-v1_5-sha256 (the tests use it as a peer would).

A signature that cannot be read or checked raises ``BadSignature`` (its message says why; the
inbox answers 401, which makes Fedify knock again with draft-cavage).
"""

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from functools import lru_cache
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

RSA_BITS = 2048
MAX_SIGNED_HEADERS = 20  # a Signature naming more components than this is refused unread
DATE_SKEW_SECONDS = 12 * 3600  # Mastodon's window for Date (and RFC 9421's created)


class BadSignature(Exception):
    """A signature missing, unreadable, or not matching: the inbox's 401."""


# --- keys ---------------------------------------------------------------------------------------


def key_generate() -> tuple[str, str]:
    """A new RSA 2048 key pair as (private PKCS#8 PEM, public SubjectPublicKeyInfo PEM)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=RSA_BITS)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return private, public_pem_of(private)


def public_pem_of(private_pem: str) -> str:
    return (
        _private_key(private_pem)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def _public_key(pem: str) -> rsa.RSAPublicKey:
    try:
        key = serialization.load_pem_public_key(pem.encode())
    except (ValueError, TypeError) as error:
        raise BadSignature("The key's publicKeyPem is not a PEM public key.") from error
    if not isinstance(key, rsa.RSAPublicKey):
        raise BadSignature("The key is not an RSA key.")
    return key


@lru_cache(maxsize=1024)
def _private_key(private_pem: str) -> rsa.RSAPrivateKey:
    """A private key, loaded once per process: loading checks the key, some 100 ms of CPU for RSA
    2048, a hundred times the signature. The keys are our own (ActorKey), made by key_generate:
    their check is skipped."""
    return serialization.load_pem_private_key(private_pem.encode(), password=None, unsafe_skip_rsa_key_validation=True)


def rsa_sign(private_pem: str, data: bytes) -> bytes:
    """RSASSA-PKCS1-v1_5 with SHA-256 (``rsa-sha256``, ``rsa-v1_5-sha256``)."""
    return _private_key(private_pem).sign(data, padding.PKCS1v15(), hashes.SHA256())


def _rsa_verify(public_pem: str, data: bytes, signature: bytes, *, pss_sha512: bool = False) -> None:
    key = _public_key(public_pem)
    try:
        if pss_sha512:
            key.verify(signature, data, padding.PSS(mgf=padding.MGF1(hashes.SHA512()), salt_length=64), hashes.SHA512())
        else:
            key.verify(signature, data, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature as error:
        raise BadSignature("The signature does not match the request.") from error


# --- digests and dates --------------------------------------------------------------------------


def digest_header(body: bytes) -> str:
    """The draft-cavage ``Digest`` of ``body``: ``SHA-256=<base64>``."""
    return "SHA-256=" + base64.b64encode(hashlib.sha256(body).digest()).decode()


def content_digest_header(body: bytes, algorithm: str = "sha-256") -> str:
    """RFC 9530's ``Content-Digest`` of ``body``: ``sha-256=:<base64>:`` (or sha-512)."""
    digest = hashlib.sha512(body) if algorithm == "sha-512" else hashlib.sha256(body)
    return f"{algorithm}=:{base64.b64encode(digest.digest()).decode()}:"


def digest_check(headers: dict[str, str], body: bytes) -> None:
    """BadSignature unless ``headers`` (lower-case names) carry a ``Digest`` (SHA-256, the only
    algorithm Mastodon accepts) or a ``Content-Digest`` (sha-256 or sha-512) that matches ``body``,
    checking every one given."""
    found = False
    if "digest" in headers:
        for part in headers["digest"].split(","):
            name, _, value = part.strip().partition("=")
            if name.lower() == "sha-256":
                found = True
                if not hmac.compare_digest(value.strip(), digest_header(body).partition("=")[2]):
                    raise BadSignature("The Digest header does not match the body.")
    if "content-digest" in headers:
        for name, (value, _) in _sf_dictionary(headers["content-digest"]).items():
            if name in ("sha-256", "sha-512"):
                found = True
                if not isinstance(value, bytes) or not hmac.compare_digest(
                    content_digest_header(body, name), f"{name}=:{base64.b64encode(value).decode()}:"
                ):
                    raise BadSignature("The Content-Digest header does not match the body.")
    if not found:
        raise BadSignature("A POST must carry a SHA-256 Digest (or Content-Digest) of its body.")


def http_date(moment: datetime | None = None) -> str:
    return format_datetime(moment or datetime.now(UTC), usegmt=True)


def date_check(value: str | None, *, now: datetime | None = None) -> None:
    """BadSignature unless ``value`` is an HTTP date within DATE_SKEW_SECONDS of now."""
    try:
        moment = parsedate_to_datetime(value or "")
    except (TypeError, ValueError, IndexError) as error:
        raise BadSignature("The Date header is missing or not an HTTP date.") from error
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if abs(((now or datetime.now(UTC)) - moment).total_seconds()) > DATE_SKEW_SECONDS:
        raise BadSignature("The Date header is more than 12 hours away from now.")


# --- draft-cavage -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Signed:
    """What a signature claims: the key that made it, and its kind (``cavage`` or ``rfc9421``)."""

    key_id: str
    kind: str
    covered: tuple[str, ...]
    created: int | None = None


def _cavage_string(method: str, path: str, headers: dict[str, str], names: list[str], params: dict) -> bytes:
    lines = []
    for name in names:
        if name == "(request-target)":
            lines.append(f"(request-target): {method.lower()} {path}")
        elif name == "(created)":
            lines.append(f"(created): {params.get('created', '')}")
        elif name == "(expires)":
            lines.append(f"(expires): {params.get('expires', '')}")
        elif name in headers:
            lines.append(f"{name}: {headers[name]}")
        else:
            raise BadSignature(f"The signed header {name!r} is not in the request.")
    return "\n".join(lines).encode()


def cavage_sign(
    *, private_pem: str, key_id: str, method: str, url: str, body: bytes | None, date: str | None = None
) -> dict[str, str]:
    """The headers that sign a request as Mastodon does: Host, Date, (Digest for a body) and
    Signature over ``(request-target) host date [digest]`` with rsa-sha256."""
    parts = urlsplit(url)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    headers = {"host": parts.netloc, "date": date or http_date()}
    names = ["(request-target)", "host", "date"]
    if body is not None:
        headers["digest"] = digest_header(body)
        names.append("digest")
    signature = rsa_sign(private_pem, _cavage_string(method, path, headers, names, {}))
    headers["signature"] = (
        f'keyId="{key_id}",algorithm="rsa-sha256",headers="{" ".join(names)}",'
        f'signature="{base64.b64encode(signature).decode()}"'
    )
    return {name.title(): value for name, value in headers.items()}


_CAVAGE_PARAM = re.compile(r'\s*([a-zA-Z]+)\s*=\s*(?:"([^"]*)"|([0-9.]+))\s*(?:,|$)')


def cavage_parse(value: str) -> dict[str, str]:
    params, at = {}, 0
    while at < len(value):
        match = _CAVAGE_PARAM.match(value, at)
        if match is None:
            raise BadSignature('The Signature header is not a list of key="value" parameters.')
        params[match[1]] = match[2] if match[2] is not None else match[3]
        at = match.end()
    if not params.get("keyId") or not params.get("signature"):
        raise BadSignature("The Signature header names no keyId or no signature.")
    return params


def cavage_signed(value: str, *, method: str) -> Signed:
    """What a draft-cavage Signature header claims, checked against Mastodon's rules of what
    must be signed (BadSignature otherwise); the signature itself is checked by cavage_verify."""
    params = cavage_parse(value)
    names = (params.get("headers") or "(created)").lower().split()
    if len(names) > MAX_SIGNED_HEADERS:
        raise BadSignature("The signature names too many headers.")
    if "date" not in names and "(created)" not in names:
        raise BadSignature("The signature must cover date (or (created)).")
    if "(request-target)" not in names and "digest" not in names:
        raise BadSignature("The signature must cover (request-target) or digest.")
    if method.upper() == "POST" and "digest" not in names:
        raise BadSignature("A POST's signature must cover its digest.")
    if method.upper() == "GET" and "host" not in names:
        raise BadSignature("A GET's signature must cover host.")
    algorithm = params.get("algorithm", "hs2019").lower()
    if algorithm not in ("rsa-sha256", "hs2019"):
        raise BadSignature(f"The signature algorithm {algorithm!r} is not supported (rsa-sha256 is).")
    created = params.get("created")
    return Signed(params["keyId"], "cavage", tuple(names), int(float(created)) if created else None)


def cavage_verify(
    *, value: str, public_pem: str, method: str, path: str, headers: dict[str, str], now: datetime | None = None
) -> None:
    """BadSignature unless the draft-cavage ``value`` signs this request with ``public_pem``.
    ``path`` is the request target with its query; ``headers`` have lower-case names."""
    params = cavage_parse(value)
    names = (params.get("headers") or "(created)").lower().split()
    if "date" in names:
        date_check(headers.get("date"), now=now)
    try:
        signature = base64.b64decode(params["signature"], validate=True)
    except ValueError as error:
        raise BadSignature("The signature is not base64.") from error
    _rsa_verify(public_pem, _cavage_string(method, path, headers, names, params), signature)


# --- RFC 9421 and structured fields (RFC 8941, the part signatures use) ----------------------------

_KEY = re.compile(r"[a-z*][a-z0-9_\-.*]*")
_TOKEN = re.compile(r"[A-Za-z*][A-Za-z0-9:/!#$%&'*+\-.^_`|~]*")
_NUMBER = re.compile(r"-?[0-9]{1,15}(\.[0-9]{1,3})?")


class _Parser:
    def __init__(self, text: str):
        self.text, self.at = text, 0

    def fail(self, what: str):
        raise BadSignature(f"The {what} header is not a structured field RFC 9421 can read.")

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def spaces(self) -> None:
        while self.peek() in (" ", "\t") and self.peek():
            self.at += 1

    def key(self) -> str:
        match = _KEY.match(self.text, self.at)
        if match is None:
            self.fail("signature")
        self.at = match.end()
        return match[0]

    def bare_item(self):
        c = self.peek()
        if c == '"':
            out, self.at = [], self.at + 1
            while self.at < len(self.text):
                c = self.text[self.at]
                self.at += 1
                if c == "\\":
                    if self.at >= len(self.text) or self.text[self.at] not in '"\\':
                        self.fail("signature")
                    out.append(self.text[self.at])
                    self.at += 1
                elif c == '"':
                    return "".join(out)
                elif not (" " <= c <= "~"):
                    self.fail("signature")
                else:
                    out.append(c)
            self.fail("signature")
        if c == ":":
            end = self.text.find(":", self.at + 1)
            if end < 0:
                self.fail("signature")
            try:
                value = base64.b64decode(self.text[self.at + 1 : end], validate=True)
            except ValueError:
                self.fail("signature")
            self.at = end + 1
            return value
        if c == "?":
            if self.text[self.at + 1 : self.at + 2] not in ("0", "1"):
                self.fail("signature")
            self.at += 2
            return self.text[self.at - 1] == "1"
        if c == "-" or c.isdigit():
            match = _NUMBER.match(self.text, self.at)
            if match is None:
                self.fail("signature")
            self.at = match.end()
            return float(match[0]) if match[1] else int(match[0])
        match = _TOKEN.match(self.text, self.at)
        if match is None:
            self.fail("signature")
        self.at = match.end()
        return ("token", match[0])

    def params(self) -> dict:
        found = {}
        while self.peek() == ";":
            self.at += 1
            self.spaces()
            name = self.key()
            value = True
            if self.peek() == "=":
                self.at += 1
                value = self.bare_item()
            found[name] = value
        return found

    def item_or_list(self):
        if self.peek() == "(":
            self.at += 1
            items = []
            while True:
                self.spaces()
                if self.peek() == ")":
                    self.at += 1
                    return items, self.params()
                if len(items) >= MAX_SIGNED_HEADERS:
                    self.fail("signature")
                value = self.bare_item()
                items.append((value, self.params()))
                if self.peek() not in (" ", ")"):
                    self.fail("signature")
        value = self.bare_item()
        return value, self.params()


def _sf_dictionary(text: str) -> dict:
    """An RFC 8941 dictionary: {key: (value, params)}; a value is an item or a list of
    (item, params) for an inner list. BadSignature when it cannot be read."""
    parser, found = _Parser(text.strip()), {}
    while parser.at < len(parser.text):
        name = parser.key()
        if parser.peek() == "=":
            parser.at += 1
            found[name] = parser.item_or_list()
        else:
            found[name] = (True, parser.params())
        parser.spaces()
        if parser.at >= len(parser.text):
            break
        if parser.peek() != ",":
            parser.fail("signature")
        parser.at += 1
        parser.spaces()
        if len(found) > MAX_SIGNED_HEADERS:
            parser.fail("signature")
    return found


def _serialize_item(value) -> str:
    if isinstance(value, bool):
        return "?1" if value else "?0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, bytes):
        return ":" + base64.b64encode(value).decode() + ":"
    if isinstance(value, tuple):
        return value[1]
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _serialize_params(params: dict) -> str:
    return "".join(
        f";{name}" if value is True else f";{name}={_serialize_item(value)}" for name, value in params.items()
    )


def _serialize_inner(items: list, params: dict) -> str:
    return "(" + " ".join(_serialize_item(v) + _serialize_params(p) for v, p in items) + ")" + _serialize_params(params)


def _component(name: str, params: dict, *, method: str, url: str, headers: dict[str, str]) -> str:
    parts = urlsplit(url)
    if params.keys() - {"sf", "req"}:
        raise BadSignature(f"The component parameter of {name!r} is not supported.")
    if name == "@method":
        return method.upper()
    if name == "@target-uri":
        return url
    if name == "@authority":
        return parts.netloc.lower()
    if name == "@scheme":
        return parts.scheme.lower()
    if name == "@path":
        return parts.path or "/"
    if name == "@query":
        return "?" + parts.query
    if name == "@request-target":
        return (parts.path or "/") + ("?" + parts.query if parts.query else "")
    if name.startswith("@"):
        raise BadSignature(f"The derived component {name!r} is not supported.")
    if name not in headers:
        raise BadSignature(f"The signed field {name!r} is not in the request.")
    return headers[name].strip()


def rfc9421_base(*, method: str, url: str, headers: dict[str, str], covered: list, params: dict) -> bytes:
    """The signature base (RFC 9421 section 2.5) of a request: one line per covered component
    (``[(name, params)]``), then ``@signature-params``. ``url`` is the full target URI."""
    lines = []
    for name, component_params in covered:
        if not isinstance(name, str) or isinstance(name, tuple):
            raise BadSignature("A covered component is not a string.")
        value = _component(name, component_params, method=method, url=url, headers=headers)
        lines.append(f'"{name}"{_serialize_params(component_params)}: {value}')
    lines.append(f'"@signature-params": {_serialize_inner(covered, params)}')
    return "\n".join(lines).encode()


def rfc9421_signed(headers: dict[str, str]) -> tuple[str, Signed, list, dict, bytes]:
    """The one RFC 9421 signature of a request: (its label, what it claims, its covered
    components, its parameters, the signature bytes). BadSignature when missing, unreadable,
    or not one signature."""
    inputs = _sf_dictionary(headers.get("signature-input", ""))
    signatures = _sf_dictionary(headers.get("signature", ""))
    if len(inputs) != 1:
        raise BadSignature("RFC 9421: the request must carry exactly one signature.")
    label, (covered, params) = next(iter(inputs.items()))
    signature = signatures.get(label, (None, {}))[0]
    if not isinstance(covered, list) or not isinstance(signature, bytes):
        raise BadSignature("RFC 9421: Signature-Input and Signature do not match.")
    key_id, created = params.get("keyid"), params.get("created")
    if not isinstance(key_id, str) or not key_id:
        raise BadSignature("RFC 9421: the signature names no keyid.")
    if not isinstance(created, int) or isinstance(created, bool):
        raise BadSignature("RFC 9421: the signature has no created time.")
    names = tuple(name for name, _ in covered if isinstance(name, str))
    if len(names) != len(covered):
        raise BadSignature("RFC 9421: a covered component is not a string.")
    return label, Signed(key_id, "rfc9421", names, created), covered, params, signature


def rfc9421_verify(
    *, public_pem: str, method: str, url: str, headers: dict[str, str], now: datetime | None = None
) -> Signed:
    """BadSignature unless the request's RFC 9421 signature is rsa-v1_5-sha256 (or
    rsa-pss-sha512) by ``public_pem``, created within 12 hours, covering ``@method``, the target
    (``@target-uri``, or ``@authority`` with ``@path``) and, on a POST, ``content-digest``."""
    _, signed, covered, params, signature = rfc9421_signed(headers)
    if "@method" not in signed.covered or not (
        "@target-uri" in signed.covered or {"@authority", "@path"} <= set(signed.covered)
    ):
        raise BadSignature("RFC 9421: the signature must cover @method and @target-uri.")
    if method.upper() == "POST" and "content-digest" not in signed.covered:
        raise BadSignature("RFC 9421: a POST's signature must cover content-digest.")
    moment = (now or datetime.now(UTC)).timestamp()
    if abs(moment - signed.created) > DATE_SKEW_SECONDS:
        raise BadSignature("RFC 9421: the signature was created more than 12 hours away from now.")
    expires = params.get("expires")
    if isinstance(expires, int) and expires < moment:
        raise BadSignature("RFC 9421: the signature has expired.")
    algorithm = params.get("alg", "rsa-v1_5-sha256")
    if algorithm not in ("rsa-v1_5-sha256", "rsa-pss-sha512"):
        raise BadSignature(f"RFC 9421: the algorithm {algorithm!r} is not supported.")
    base = rfc9421_base(method=method, url=url, headers=headers, covered=covered, params=params)
    _rsa_verify(public_pem, base, signature, pss_sha512=algorithm == "rsa-pss-sha512")
    return signed


def rfc9421_sign(
    *, private_pem: str, key_id: str, method: str, url: str, body: bytes | None, created: int | None = None
) -> dict[str, str]:
    """Headers that sign a request with RFC 9421 as Fedify does (rsa-v1_5-sha256 over
    ``@method @target-uri @authority`` and ``content-digest`` for a body)."""
    headers = {"host": urlsplit(url).netloc, "date": http_date()}
    covered = [("@method", {}), ("@target-uri", {}), ("@authority", {})]
    if body is not None:
        headers["content-digest"] = content_digest_header(body)
        covered.append(("content-digest", {}))
    params = {"alg": "rsa-v1_5-sha256", "keyid": key_id, "created": created or int(datetime.now(UTC).timestamp())}
    base = rfc9421_base(method=method, url=url, headers=headers, covered=covered, params=params)
    signature = rsa_sign(private_pem, base)
    headers["signature-input"] = "sig1=" + _serialize_inner(covered, params)
    headers["signature"] = "sig1=:" + base64.b64encode(signature).decode() + ":"
    return {name.title(): value for name, value in headers.items()}
