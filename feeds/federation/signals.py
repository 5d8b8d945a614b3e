"""Federation's signal receivers (connected in feeds.apps)."""

from feeds.federation import services


def person_changed(sender, user, **kwargs) -> None:
    """social.signals.profile_changed: the person's actor Update (nothing for a closed account)."""
    if user.is_active:
        services.person_changed(user)
