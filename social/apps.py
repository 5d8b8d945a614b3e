from django.apps import AppConfig


class SocialConfig(AppConfig):
    name = "social"
    verbose_name = "People and follows"

    def ready(self):
        # Here, not in social.models: the receiver is a service (it may mail), and services import the models.
        from django.contrib.auth.signals import user_logged_in

        from social import services

        user_logged_in.connect(services.session_logged_in, dispatch_uid="social.session_logged_in")
