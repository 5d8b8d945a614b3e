"""Pages about people (docs/api.md, "Pages"): accounts and the follow lists. The 'people' namespace
also holds sign-up, the profile and the follow button of feeds.views.people (ugcsite.urls joins them)."""

from django.urls import path

from social import views

urlpatterns = [
    path("login", views.LoginPage.as_view(), name="login"),
    path("login/code", views.login_code, name="login-code"),
    path("login/passkey/options", views.passkey_sign_in_options, name="passkey-sign-in-options"),
    path("login/passkey", views.passkey_sign_in, name="passkey-sign-in"),
    path("logout", views.logout_page, name="logout"),
    path("settings", views.settings_page, name="settings"),
    path("settings/avatar", views.avatar_upload, name="avatar-upload"),
    path("settings/2fa", views.two_factor_page, name="two-factor"),
    path("settings/sessions", views.sessions_page, name="sessions"),
    path("settings/passkeys/options", views.passkey_register_options, name="passkey-register-options"),
    path("settings/passkeys", views.passkey_register, name="passkey-register"),
    path("settings/passkeys/remove", views.passkey_remove, name="passkey-remove"),
    path("settings/email", views.email_resend, name="email-resend"),
    path("settings/email/<str:token>", views.email_check, name="email-check"),
    path("password/reset", views.ResetPage.as_view(), name="password-reset"),
    path("password/reset/sent", views.ResetSentPage.as_view(), name="password-reset-sent"),
    path("password/reset/done", views.ResetDonePage.as_view(), name="password-reset-done"),
    path("password/reset/<uidb64>/<token>", views.ResetConfirmPage.as_view(), name="password-reset-confirm"),
    path("u/<str:username>/avatar", views.avatar, name="avatar"),
    path("u/<str:username>/followers", views.followers, name="followers"),
    path("u/<str:username>/following", views.following, name="following"),
]
