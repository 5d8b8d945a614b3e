"""Federation's reads for pages and the API."""

from django.conf import settings

from feeds.federation import documents
from feeds.models import RemoteActor, RemoteFollow


def remote_followers_count(user_id: int) -> int:
    """The person's followers on other servers: a count on RemoteFollow's (followee, actor)
    index, O(remote followers) within it."""
    return RemoteFollow.objects.filter(followee_id=user_id).count()


def profile_with_remote(info: dict, person) -> dict:
    """The profile object with its remote followers in its ``followers`` count."""
    if not settings.FEDERATION_ENABLED:
        return info
    return {**info, "followers": info["followers"] + remote_followers_count(person.pk)}


def handle_of(person) -> str:
    """``username@host`` to follow ``person`` by from another server ("" when federation is off)."""
    return documents.handle(person.username) if settings.FEDERATION_ENABLED else ""


def remote_names(negated_ids) -> dict[int, str]:
    """Names of remote actors as notifications keep them (negated RemoteActor ids):
    {negated id: "user@host"}. One query."""
    ids = [-i for i in negated_ids if i < 0]
    if not ids:
        return {}
    return {
        -pk: handle or uri
        for pk, handle, uri in RemoteActor.objects.filter(pk__in=ids).values_list("pk", "handle", "uri")
    }


def remote_avatar_url(actor_id: int | None) -> str | None:
    """Where a remote actor's avatar is served from this site (the page loads nothing from other
    hosts): fetched once and cached by feeds.federation.views.remote_avatar."""
    return f"/fediverse/avatars/{actor_id}" if actor_id is not None else None
