"""The WSGI application (gunicorn's workers, behind nginx in `make run`)."""

import os

from django.core.wsgi import get_wsgi_application

from ugcsite.platform.heap import freeze_startup

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
application = get_wsgi_application()
freeze_startup()  # the startup heap out of the collector's walks (ugcsite.platform.heap)
