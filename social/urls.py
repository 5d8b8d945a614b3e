"""Pages about people (API.md, "Pages"): accounts, profiles, follow buttons."""

from django.urls import path

from social import views

app_name = "people"

urlpatterns = [
    path("signup", views.signup, name="signup"),
    path("login", views.LoginPage.as_view(), name="login"),
    path("logout", views.logout_page, name="logout"),
    path("u/<str:username>", views.profile, name="profile"),
    path("u/<str:username>/follow", views.follow, name="follow"),
    path("u/<str:username>/followers", views.followers, name="followers"),
    path("u/<str:username>/following", views.following, name="following"),
]
