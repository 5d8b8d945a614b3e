"""Pages about boards (API.md, "Pages"); ``board_id`` is the converter of ugcsite.urls."""

from django.urls import path

from feeds import views

app_name = "boards"

urlpatterns = [
    path("new", views.board_new, name="new"),
    path("b/<board_id:board_id>", views.board_detail, name="detail"),
    path("b/<board_id:board_id>/edit", views.board_edit, name="edit"),
    path("b/<board_id:board_id>/delete", views.board_delete, name="delete"),
    path("discover", views.discover_page, name="discover"),
    path("popular", views.popular_page, name="popular"),
]
