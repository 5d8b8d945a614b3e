"""Federation's addresses (docs/api.md, "Federation"), included by ugcsite.urls before the pages
they share a path with: the ActivityPub form of ``/u/<username>``, ``/b/<id>`` and the follow
lists is served to a client that asks for it, the page to everyone else."""

from django.urls import path

from feeds.federation import views
from feeds.views import boards, people
from social import views as social_views

urlpatterns = [
    path(".well-known/webfinger", views.webfinger, name="webfinger"),
    path(".well-known/nodeinfo", views.nodeinfo_links, name="nodeinfo-links"),
    path("nodeinfo/2.1", views.nodeinfo, name="nodeinfo"),
    path("actor", views.instance_actor, name="instance-actor"),
    path("inbox", views.inbox, name="shared-inbox"),
    path("actor/inbox", views.inbox, name="instance-inbox"),  # the instance actor's: the shared one
    path("fediverse/avatars/<int:actor_id>", views.remote_avatar, name="remote-avatar"),
    path("u/<str:username>", views.negotiated(views.actor, people.profile)),
    path("u/<str:username>/inbox", views.inbox, name="actor-inbox"),
    path("u/<str:username>/outbox", views.outbox, name="actor-outbox"),
    path("u/<str:username>/followers", views.negotiated(views.followers, social_views.followers)),
    path("u/<str:username>/following", views.negotiated(views.following, social_views.following)),
    path("b/<board_id:board_id>", views.negotiated(views.note, boards.board_detail)),
]
