"""Pages about boards (docs/api.md, "Pages"), and the ``board_id`` path converter (here and in
ugcsite.urls' API paths)."""

from django.urls import path, register_converter

from feeds.views import boards, discovery, images, notifications, people, reports, search
from ugcsite.platform.http import ID_DIGITS


class BoardIdConverter:
    """Board ids are below 2^53: at most 16 digits, so a longer number is simply no board (404)."""

    regex = f"[0-9]{{1,{ID_DIGITS}}}"

    def to_python(self, value):
        return int(value)

    def to_url(self, value):
        return str(value)


register_converter(BoardIdConverter, "board_id")

app_name = "boards"

urlpatterns = [
    path("new", boards.board_new, name="new"),
    path("b/<board_id:board_id>", boards.board_detail, name="detail"),
    path("b/<board_id:board_id>.png", boards.board_picture, name="picture"),
    path("b/<board_id:board_id>/edit", boards.board_edit, name="edit"),
    path("b/<board_id:board_id>/delete", boards.board_delete, name="delete"),
    path("b/<board_id:board_id>/remixes", boards.board_remixes_page, name="remixes"),
    path("discover", discovery.discover_page, name="discover"),
    path("popular", discovery.popular_page, name="popular"),
    path("search", search.search_page, name="search"),
    path("notifications", notifications.notifications_page, name="notifications"),
    path("report", reports.report_page, name="report"),
    path("images/<str:image_id>", images.image_redirect, name="image"),
]

# In the 'people' namespace beside social.urls: signing up readies a feed, a profile shows
# boards, following fills a feed.
people_urlpatterns = [
    path("signup", people.signup, name="signup"),
    path("u/<str:username>", people.profile, name="profile"),
    path("u/<str:username>/follow", people.follow, name="follow"),
    path("u/<str:username>/safety", people.safety_action, name="safety"),
    path("settings/delete", people.account_delete_page, name="account-delete"),
]
