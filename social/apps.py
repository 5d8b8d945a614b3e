from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_in
from django.utils.module_loading import import_string


class SocialConfig(AppConfig):
    name = "social"
    verbose_name = "People and follows"

    def ready(self):
        # Each log-in's session is recorded (and a new device told) by a service; services import
        # the models, which cannot be imported before the registry is ready, so it is named here.
        receiver = import_string("social.services.session_logged_in")
        user_logged_in.connect(receiver, dispatch_uid="social.session_logged_in")
