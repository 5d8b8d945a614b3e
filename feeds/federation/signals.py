"""Federation's signal receivers (connected in feeds.apps)."""

from feeds.federation import services

PROFILE_FIELDS = {"display_name", "bio"}


def person_saved(sender, instance, created=False, update_fields=None, **kwargs) -> None:
    """A saved person whose name or bio changed: their actor's Update (inside the save's
    transaction when there is one)."""
    if not created and update_fields and PROFILE_FIELDS & set(update_fields) and instance.is_active:
        services.person_changed(instance)
