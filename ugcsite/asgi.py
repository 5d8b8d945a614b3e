"""The ASGI application: pages and the API through Django, and the live boards' WebSocket
(``/ws/boards/{id}``, feeds.live) through Channels, on one port (``make run`` serves it with
uvicorn's worker processes, all sharing the Channels layer on the plain Redis)."""

import os

from django.core.asgi import get_asgi_application

from ugcsite.platform.heap import freeze_startup

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
django_application = get_asgi_application()  # sets Django up before the consumers import models

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from feeds.live.routing import SessionUser, websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_application,
        "websocket": SessionUser(URLRouter(websocket_urlpatterns)),
    }
)
freeze_startup()  # the startup heap out of the collector's walks (ugcsite.platform.heap)
