"""The WebSocket paths (ugcsite.asgi)."""

from django.urls import re_path

from feeds.live.consumer import BoardConsumer, NoSuchSocket, PersonConsumer
from ugcsite.http import ID_DIGITS

websocket_urlpatterns = [
    re_path(rf"^ws/boards/(?P<board_id>[0-9]{{1,{ID_DIGITS}}})$", BoardConsumer.as_asgi()),
    re_path(r"^ws/me$", PersonConsumer.as_asgi()),
    re_path(r"", NoSuchSocket.as_asgi()),
]
