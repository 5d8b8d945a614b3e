"""The WebSocket paths (ugcsite.asgi), and who opens them (``SessionUser``)."""

from http.cookies import SimpleCookie
from importlib import import_module

from channels.auth import get_user
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.urls import re_path

from feeds.live.consumer import BoardConsumer, NoSuchSocket, PersonConsumer
from ugcsite.platform.http import ID_DIGITS


class SessionUser:
    """ASGI middleware of the sockets: ``scope["user"]``, the person of the session cookie (or
    AnonymousUser), looked up once when the socket opens, and only when it carries no bearer
    token (feeds.live.consumer.socket_user reads that itself). Channels' AuthMiddlewareStack
    does the lookup too, but copies the scope three times and wraps every frame sent in a
    session-saving check a socket never needs: a cost on each of thousands of frames a second,
    and memory on each of thousands of idle sockets."""

    def __init__(self, inner):
        self.inner = inner
        self.store = import_module(settings.SESSION_ENGINE).SessionStore

    async def __call__(self, scope, receive, send):
        user = AnonymousUser()
        headers = dict(scope.get("headers", ()))
        if b"authorization" not in headers and b"cookie" in headers:
            cookies = SimpleCookie()
            try:
                cookies.load(headers[b"cookie"].decode("latin-1"))
            except Exception:  # a cookie header we cannot read: no session
                cookies = SimpleCookie()
            morsel = cookies.get(settings.SESSION_COOKIE_NAME)
            if morsel is not None and morsel.value:
                user = await get_user({"session": self.store(morsel.value)})
        scope["user"] = user  # the server's scope, not a copy of it: each open socket keeps it (issue 42)
        return await self.inner(scope, receive, send)


websocket_urlpatterns = [
    re_path(rf"^ws/boards/(?P<board_id>[0-9]{{1,{ID_DIGITS}}})$", BoardConsumer.as_asgi()),
    re_path(r"^ws/me$", PersonConsumer.as_asgi()),
    re_path(r"", NoSuchSocket.as_asgi()),
]
