from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView

from feeds import urls as board_pages  # registers the board_id converter
from feeds.api import (
    boards as board_api,
    comments as comment_api,
    images as image_api,
    likes as like_api,
    notifications as notification_api,
    people as people_api,
    reports as report_api,
    search as search_api,
    timelines as timeline_api,
    versions as version_api,
)
from feeds.federation import api as federation_api, urls as federation_urls
from feeds.views import images as image_pages
from social import api as account_api, urls as people_pages
from ugcsite import health, openapi, views

api_v1 = [
    path("openapi.json", openapi.document, name="openapi"),
    path("health", health.health, name="health"),
    path("users", people_api.users, name="users"),
    path("tokens", account_api.tokens_view, name="tokens"),
    path("tokens/current", account_api.token_current, name="token-current"),
    path("me", people_api.me_view, name="me"),
    path("me/avatar", account_api.me_avatar, name="me-avatar"),
    path("me/2fa", account_api.two_factor_view, name="me-2fa"),
    path("me/2fa/confirm", account_api.two_factor_confirm_view, name="me-2fa-confirm"),
    path("me/sessions", account_api.sessions_view, name="me-sessions"),
    path("me/sessions/<str:session_id>", account_api.session_view, name="me-session"),
    path("me/blocks", people_api.blocks_view, name="me-blocks"),
    path("me/remote-blocks", federation_api.remote_blocks_view, name="me-remote-blocks"),
    path("me/remote-blocks/<str:handle>", federation_api.remote_block_view, name="me-remote-block"),
    path("me/export", people_api.export_view, name="me-export"),
    path("me/export/<board_id:export_id>", people_api.export_item, name="me-export-item"),
    path("me/export/<board_id:export_id>/download", people_api.export_file, name="me-export-file"),
    path("reports", report_api.reports_view, name="reports"),
    path("images", image_api.images, name="images"),
    path("me/mutes", people_api.mutes_view, name="me-mutes"),
    path("users/<str:username>", account_api.profile, name="user"),
    path("users/<str:username>/follow", people_api.follow, name="follow"),
    path("users/<str:username>/block", people_api.block, name="block"),
    path("users/<str:username>/mute", people_api.mute, name="mute"),
    path("users/<str:username>/followers", account_api.followers_view, name="followers"),
    path("users/<str:username>/following", account_api.following_view, name="following"),
    path("users/<str:username>/boards", timeline_api.profile_boards, name="user-boards"),
    path("feed", timeline_api.home_feed, name="feed"),
    path("discover", timeline_api.discover_view, name="discover"),
    path("reading", people_api.reading_view, name="reading"),
    path("likes", like_api.likes_view, name="likes"),
    path("popular", people_api.popular_view, name="popular"),
    path("search", search_api.search_view, name="search"),
    path("notifications", notification_api.notifications_view, name="notifications"),
    path("notifications/read", notification_api.notifications_read_view, name="notifications-read"),
    path("boards", board_api.boards, name="boards"),
    path("boards/<board_id:board_id>", board_api.board, name="board"),
    path("boards/<board_id:board_id>/preview.svg", board_api.preview, name="board-preview"),
    path("boards/<board_id:board_id>/editors", board_api.editors, name="board-editors"),
    path("boards/<board_id:board_id>/remix", like_api.remix, name="board-remix"),
    path("boards/<board_id:board_id>/remixes", like_api.remixes, name="board-remixes"),
    path("boards/<board_id:board_id>/like", like_api.like, name="board-like"),
    path("boards/<board_id:board_id>/likes", like_api.likers, name="board-likes"),
    path("boards/<board_id:board_id>/editors/<str:username>", board_api.editor, name="board-editor"),
    path("boards/<board_id:board_id>/comments", comment_api.comments, name="board-comments"),
    path("boards/<board_id:board_id>/versions", version_api.versions_view, name="board-versions"),
    path("boards/<board_id:board_id>/versions/<int:n>", version_api.version_view, name="board-version"),
    path("boards/<board_id:board_id>/versions/<int:n>/restore", version_api.restore_view, name="board-version-restore"),
    path("comments/<board_id:comment_id>", comment_api.comment, name="comment"),
]

federation_pages = federation_urls.urlpatterns

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", health.metrics, name="metrics"),
    path("api/v1/", include(api_v1)),
    re_path(r"^api/", views.api_not_found),  # JSON 404 for the API, in DEBUG too
    path("admin/mail/", views.mail_box, name="mail-box"),
    # The local storage's pictures, where nothing in front serves them (nginx does in make run).
    re_path(r"^" + settings.MEDIA_URL.lstrip("/") + r"(?P<path>images/.+)$", image_pages.media_file, name="media"),
    # The admin's password-only log-in would skip the second factor: /login asks for it.
    path("admin/login/", RedirectView.as_view(url="/login", query_string=True), name="admin-login"),
    path("admin/", admin.site.urls),
    path("", include(federation_pages)),  # before the pages whose paths it shares (content negotiation)
    path("", include((people_pages.urlpatterns + board_pages.people_urlpatterns, "people"))),
    path("", include("feeds.urls")),
    path("", views.home, name="home"),
]

handler400 = views.bad_request
handler403 = views.permission_denied
handler404 = views.page_not_found
handler500 = views.server_error
