from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import post_save
from django.utils.module_loading import import_string


class FeedsConfig(AppConfig):
    name = "feeds"
    verbose_name = "Boards and timelines"

    def ready(self):
        # A person's name or bio saved (social.services.profile_update, which cannot call feeds)
        # sends their actor's Update to their remote followers (feeds.federation). The receiver
        # imports the models, which cannot be imported before the registry is ready: named here.
        receiver = import_string("feeds.federation.signals.person_saved")
        post_save.connect(receiver, sender=settings.AUTH_USER_MODEL, dispatch_uid="feeds.federation.person_saved")
