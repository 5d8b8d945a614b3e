"""Remote actors: fetched (a GET signed by our instance actor, for servers in authorized-fetch
mode), checked, and cached in PostgreSQL's RemoteActor; refetched when stale or when a signature
fails (a rotated key). Network through feeds.federation.http only."""

import json
from datetime import timedelta
from urllib.parse import urldefrag

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from feeds.federation import actors, documents, signatures
from feeds.federation.http import ACCEPT_ACTIVITY, FetchFailed, host_of, request
from feeds.models import FederatedHost, RemoteActor

ACTOR_TYPES = {"Person", "Service", "Application", "Group", "Organization"}


class ActorUnusable(Exception):
    """A remote actor (or key) that cannot be fetched or makes no sense: the sentence says why."""


def host_blocked(host: str) -> bool:
    """Whether staff blocked ``host`` (or a domain above it). One indexed read."""
    parts = host.split(":")[0].split(".")
    candidates = [".".join(parts[i:]) for i in range(len(parts) - 1)] or [host]
    return FederatedHost.objects.filter(host__in=[host, *candidates], blocked=True).exists()


def _sign_get(method: str, url: str, body: bytes | None) -> dict:
    key = actors.key_for(actors.INSTANCE)
    return signatures.cavage_sign(
        private_pem=key.private_pem,
        key_id=documents.instance_actor_url() + "#main-key",
        method=method,
        url=url,
        body=None,
    )


def fetch_json(url: str) -> dict:
    """A remote ActivityPub document, fetched with a signed GET. ActorUnusable when it cannot be."""
    try:
        answer = request("GET", url, headers={"Accept": ACCEPT_ACTIVITY}, sign=_sign_get)
    except FetchFailed as error:
        raise ActorUnusable(str(error)) from error
    if answer.status != 200:
        raise ActorUnusable(f"{url[:200]} answered {answer.status}.")
    try:
        document = json.loads(answer.body)
    except ValueError as error:
        raise ActorUnusable(f"{url[:200]} did not answer JSON.") from error
    if not isinstance(document, dict):
        raise ActorUnusable(f"{url[:200]} did not answer a JSON object.")
    return document


def _text(value, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _url_of(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return _url_of(value.get("url") or value.get("href"))
    if isinstance(value, list) and value:
        return _url_of(value[0])
    return ""


def actor_store(document: dict, *, uri: str) -> RemoteActor:
    """Check an actor document fetched from ``uri`` and keep it. ActorUnusable when it is not an
    actor, its id is not where it was fetched from, or its key is not its own."""
    if document.get("id") != uri:
        raise ActorUnusable("The actor's id is not the address it was fetched from.")
    kind = document.get("type")
    if kind not in ACTOR_TYPES:
        raise ActorUnusable("The document is not an actor.")
    key = document.get("publicKey")
    if isinstance(key, list):
        key = key[0] if key else None
    if not isinstance(key, dict) or not isinstance(key.get("publicKeyPem"), str) or not isinstance(key.get("id"), str):
        raise ActorUnusable("The actor has no publicKey.")
    if key.get("owner", uri) != uri or host_of(key["id"]) != host_of(uri):
        raise ActorUnusable("The actor's key is not its own.")
    inbox = document.get("inbox")
    if not isinstance(inbox, str) or host_of(inbox) != host_of(uri):
        raise ActorUnusable("The actor has no inbox on its own server.")
    endpoints = document.get("endpoints") if isinstance(document.get("endpoints"), dict) else {}
    shared = endpoints.get("sharedInbox") if isinstance(endpoints.get("sharedInbox"), str) else ""
    if shared and host_of(shared) != host_of(uri):
        shared = ""
    username = _text(document.get("preferredUsername"), 200)
    host = host_of(uri)
    fields = {
        "host": host,
        "handle": f"{username}@{host}" if username else "",
        "kind": kind,
        "name": _text(document.get("name"), 200) or username,
        "icon_url": _url_of(document.get("icon"))[:2048],
        "inbox": inbox[:2048],
        "shared_inbox": shared[:2048],
        "key_id": key["id"][:2048],
        "public_pem": key["publicKeyPem"][:10000],
        "fetched_at": timezone.now(),
    }
    try:
        with transaction.atomic():
            actor, _ = RemoteActor.objects.update_or_create(uri=uri, defaults=fields)
    except IntegrityError:
        actor = RemoteActor.objects.get(uri=uri)
    return actor


def actor_fetch(uri: str) -> RemoteActor:
    """Fetch and keep the actor at ``uri``. ActorUnusable otherwise."""
    if host_blocked(host_of(uri)):
        raise ActorUnusable("That server is blocked here.")
    return actor_store(fetch_json(uri), uri=uri)


def actor_get(uri: str, *, refresh: bool = False) -> RemoteActor:
    """The actor at ``uri``, from the cache while fresh. One indexed read when cached."""
    actor = RemoteActor.objects.filter(uri=uri).first()
    fresh_after = timezone.now() - timedelta(seconds=settings.FEDERATION_ACTOR_REFRESH_SECONDS)
    if actor is not None and not refresh and actor.fetched_at > fresh_after:
        return actor
    try:
        return actor_fetch(uri)
    except ActorUnusable:
        if actor is not None and not refresh:
            return actor  # the server is down: what we knew stands until it answers
        raise


def actor_by_key(key_id: str, *, refresh: bool = False) -> RemoteActor:
    """The actor owning the key ``key_id``: cached, or fetched (the key's document is the actor,
    as Mastodon's ``#main-key``, or names its ``owner``). ActorUnusable otherwise."""
    if not refresh:
        actor = RemoteActor.objects.filter(key_id=key_id).first()
        if actor is not None:
            return actor
    document_url = urldefrag(key_id)[0]
    actor = RemoteActor.objects.filter(uri=document_url).first()
    if actor is not None and actor.key_id == key_id and refresh:
        actor = actor_fetch(document_url)
    elif actor is None or actor.key_id != key_id:
        if host_blocked(host_of(document_url)):
            raise ActorUnusable("That server is blocked here.")
        document = fetch_json(document_url)
        if document.get("type") in ACTOR_TYPES:
            actor = actor_store(document, uri=document_url)
        else:
            owner = document.get("owner")
            if not isinstance(owner, str) or host_of(owner) != host_of(key_id):
                raise ActorUnusable("The key names no owner on its own server.")
            actor = actor_fetch(owner)
    if actor.key_id != key_id:
        raise ActorUnusable("The key is not its actor's key.")
    return actor
