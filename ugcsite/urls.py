from django.contrib import admin
from django.urls import include, path, re_path, register_converter

from feeds import api as board_api
from social import api as account_api
from ugcsite import health, openapi, views


class BoardIdConverter:
    """Board ids are below 2^53: at most 16 digits, so a longer number is simply no board (404)."""

    regex = "[0-9]{1,16}"

    def to_python(self, value):
        return int(value)

    def to_url(self, value):
        return str(value)


register_converter(BoardIdConverter, "board_id")

api_v1 = [
    path("openapi.json", openapi.document, name="openapi"),
    path("health", health.health, name="health"),
    path("users", account_api.users, name="users"),
    path("tokens", account_api.tokens, name="tokens"),
    path("me", account_api.me_view, name="me"),
    path("users/<str:username>", account_api.profile, name="user"),
    path("users/<str:username>/follow", account_api.follow, name="follow"),
    path("users/<str:username>/followers", account_api.followers_view, name="followers"),
    path("users/<str:username>/following", account_api.following_view, name="following"),
    path("users/<str:username>/boards", board_api.profile_boards, name="user-boards"),
    path("feed", board_api.home_feed, name="feed"),
    path("discover", board_api.discover_view, name="discover"),
    path("reading", account_api.reading_view, name="reading"),
    path("popular", account_api.popular_view, name="popular"),
    path("boards", board_api.boards, name="boards"),
    path("boards/<board_id:board_id>", board_api.board, name="board"),
    path("boards/<board_id:board_id>/preview.svg", board_api.preview, name="board-preview"),
]

urlpatterns = [
    path("api/v1/", include(api_v1)),
    re_path(r"^api/", views.page_not_found),  # JSON 404 for the API, in DEBUG too
    path("admin/", admin.site.urls),
    path("", include("social.urls")),
    path("", include("feeds.urls")),
    path("", views.home, name="home"),
]

handler400 = views.bad_request
handler403 = views.permission_denied
handler404 = views.page_not_found
handler500 = views.server_error
