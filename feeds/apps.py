from django.apps import AppConfig
from django.utils.module_loading import import_string

from social.signals import profile_changed


class FeedsConfig(AppConfig):
    name = "feeds"
    verbose_name = "Boards and timelines"

    def ready(self):
        # A person's public profile changed (social.services, which cannot call feeds): their
        # actor's Update goes to their remote followers (feeds.federation). The receiver imports
        # the models, which cannot be imported before the registry is ready: named here.
        receiver = import_string("feeds.federation.signals.person_changed")
        profile_changed.connect(receiver, dispatch_uid="feeds.federation.person_changed")
