"""Pages about people: log in (with its code step), log out, settings (two-factor sign-in,
sessions), followers and following lists.

Each view validates its input and calls one service or selector (social.services,
social.selectors); what a page shows is what the API answers for the same person. Signing up,
a profile with its boards and the follow button touch feeds: they are in feeds.views.people.
"""

import json
import time
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login as auth_login, logout as auth_logout, views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from social import passkeys, selectors, services
from social.avatars import AvatarRefused, identicon_svg
from social.forms import LoginForm, ResetForm, SettingsForm
from social.models import Avatar
from social.passkeys import PasskeyRefused
from social.rules import AVATAR_ACCEPT, AVATAR_BODY_MAX, AVATAR_UPLOAD_MAX, LOGIN_CODE_SECONDS, OTP_INPUT_MAX
from social.services import SessionNotFound
from ugcsite.platform.errors import DomainError, RateLimited
from ugcsite.platform.http import body_max, client_address, page_number, safe_next, whole_number
from ugcsite.platform.ratelimits import attempt, write_attempt

PEOPLE_PAGE_SIZE = 50
# Whom a passkey signs in is known without a password; Django's session still names a backend.
PASSWORD_BACKEND = "django.contrib.auth.backends.ModelBackend"


def throttle_wait(request, *, account: str | None = None) -> int:
    """Seconds to wait when this address (or, logging in, this account) has used up its
    attempts this minute, else 0. Pages spend the same budget as the API, so they are no way
    round it."""
    try:
        services.auth_attempt(address=client_address(request))
        if account:
            services.login_attempt(account=account)
    except RateLimited as error:
        return error.retry_after
    return 0


def too_many(request, template: str, context: dict, wait: int):
    response = render(request, template, {**context, "throttled": wait}, status=429)
    response["Retry-After"] = str(wait)
    return response


# --- accounts ----------------------------------------------------------------------------------


class LoginPage(auth_views.LoginView):
    """Django's login (it refuses suspended users: ``is_active`` False), behind the API's rate limit."""

    template_name = "social/login.html"
    authentication_form = LoginForm
    redirect_authenticated_user = True

    def post(self, request, *args, **kwargs):
        wait = throttle_wait(request, account=request.POST.get("username"))
        if wait:
            return too_many(
                request, self.template_name, self.get_context_data(form=self.get_form_class()(request)), wait
            )
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        """With two-factor on, the password is only the first step: the session remembers
        whose it was (for LOGIN_CODE_SECONDS), and the code page signs them in."""
        user = form.get_user()
        if not selectors.two_factor_on(user):
            return super().form_valid(form)
        self.request.session[LOGIN_PENDING] = {"u": user.pk, "b": user.backend, "at": time.time()}
        return redirect(f"{reverse('people:login-code')}?{urlencode({'next': self.get_success_url()})}")

    def form_invalid(self, form):
        response = super().form_invalid(form)
        response.status_code = 400
        return response


LOGIN_PENDING = "login_pending"  # the session's note between the password and the code


def login_code(request):
    """The log-in's second step: the code of the authenticator app (or a recovery code), for
    the person whose password was just given. Wrong codes spend the sign-in throttle."""
    pending = request.session.get(LOGIN_PENDING)
    user = selectors.login_pending_user(pending, max_age=LOGIN_CODE_SECONDS, now=time.time())
    if user is None:
        messages.error(
            request,
            f"Give your username and password first (the code step waits {LOGIN_CODE_SECONDS // 60} minutes at most).",
        )
        return redirect("people:login")
    context = {"next": safe_next(request, "/"), "code_max": OTP_INPUT_MAX}
    if request.method != "POST":
        return render(request, "social/login_code.html", context)
    wait = throttle_wait(request, account=user.username)
    if wait:
        return too_many(request, "social/login_code.html", context, wait)
    try:
        passed = services.second_factor_check(user=user, code=request.POST.get("code", "")[:OTP_INPUT_MAX])
    except RateLimited as error:
        return too_many(request, "social/login_code.html", context, error.retry_after)
    if not passed:
        problem = "That code is wrong or was already used; type the code your app shows now, or a recovery code."
        return render(request, "social/login_code.html", {**context, "problem": problem}, status=400)
    del request.session[LOGIN_PENDING]
    auth_login(request, user, backend=pending["b"])
    return redirect(context["next"])


def logout_page(request):
    """GET asks (a link must not log anyone out), POST logs out."""
    if request.method == "POST":
        auth_logout(request)
        messages.info(request, "You are logged out. See you soon.")
        return redirect("/")
    if not request.user.is_authenticated:
        return redirect("/")
    return render(request, "social/logout.html")


@login_required
def settings_page(request):
    """Your own settings: display name, bio and whether people who follow you see what you read
    (PATCH /api/v1/me does the same through social.services.profile_update)."""
    form = SettingsForm(request.POST if request.method == "POST" else None, instance=request.user)
    if request.method != "POST":
        return _settings(request, form)
    if not form.is_valid():
        return _settings(request, form, status=400)
    changes = {field: form.cleaned_data[field] for field in form.changed_data}
    services.profile_update(user=request.user, changes=changes, base_url=request.build_absolute_uri("/"))
    messages.success(
        request,
        "Your settings are saved."
        + (f" We sent a link to {request.user.email}: open it to confirm the address." if changes.get("email") else ""),
    )
    return redirect("people:settings")


def _settings(request, form, *, status: int = 200, avatar_error: str = "", **extra):
    return render(
        request,
        "social/settings.html",
        {
            "form": form,
            "avatar_error": avatar_error,
            "avatar_accept": AVATAR_ACCEPT,
            "avatar_max_mb": AVATAR_UPLOAD_MAX // (1024 * 1024),
            "avatar_src": selectors.profile_avatar_url(request.user),
            "blocks": selectors.blocks_list(request.user),
            "mutes": selectors.mutes_list(request.user),
            "quarantine_days": settings.USERNAME_QUARANTINE_DAYS,
            "two_factor": selectors.two_factor_state(request.user),
            "sessions": selectors.sessions_list(request.user, session_key=request.session.session_key, token_key=None)[
                "items"
            ],
            "code_max": OTP_INPUT_MAX,
            "passkeys": selectors.passkeys_list(request.user),
            **extra,
        },
        status=status,
    )


@login_required
@require_POST
def two_factor_page(request):
    """The settings page's two-factor forms: start an enrolment (the page then shows its QR
    code), confirm it with a code (the page shows the recovery codes, this once), or turn it
    off with the password and a code. The same services as /api/v1/me/2fa."""
    action = request.POST.get("action")
    code = request.POST.get("code", "")[:OTP_INPUT_MAX]
    form = SettingsForm(instance=request.user)
    try:
        if action == "start":
            services.two_factor_start(user=request.user)
            return redirect(f"{reverse('people:settings')}#two-factor-heading")
        if action == "confirm":
            codes = services.two_factor_confirm(user=request.user, code=code)
            return _settings(request, form, recovery_codes=codes)
        if action == "disable":
            services.auth_attempt(address=client_address(request))  # a password guess, counted as a log-in
            services.two_factor_disable(user=request.user, password=request.POST.get("password", ""), code=code)
            messages.success(request, "Two-factor sign-in is off.")
            return redirect("people:settings")
    except RateLimited as error:
        response = _settings(request, form, status=429, two_factor_error=str(error))
        response["Retry-After"] = str(error.retry_after)
        return response
    except DomainError as error:
        return _settings(request, form, status=400, two_factor_error=str(error))
    return _settings(request, form, status=400, two_factor_error="Choose one of the two-factor buttons.")


@login_required
@require_POST
def sessions_page(request):
    """The settings page's sessions: end one (``id``), or every one but this (``others``)."""
    if "others" in request.POST:
        ended = services.sessions_end_others(user=request.user, session_key=request.session.session_key, token_key=None)
        messages.success(
            request, f"Ended {ended} other session{'s' if ended != 1 else ''} and token{'s' if ended != 1 else ''}."
        )
        return redirect("people:settings")
    try:
        services.session_end(user=request.user, session_id=request.POST.get("id", ""))
    except SessionNotFound as error:
        messages.error(request, str(error))
        return redirect("people:settings")
    messages.success(request, "That session is ended.")
    return redirect("people:settings")


@body_max(AVATAR_BODY_MAX, "picture")
@login_required
@require_POST
def avatar_upload(request):
    """The settings page's picture: upload (resized by social.services.avatar_set) or remove."""
    if "remove" in request.POST:
        services.avatar_remove(user=request.user)
        messages.success(request, "Your picture is removed; your identicon is back.")
        return redirect("people:settings")
    upload = request.FILES.get("avatar")
    try:
        write_attempt(user_id=request.user.pk, address=client_address(request))  # decoding a picture is work: a write
    except RateLimited as error:
        response = _settings(request, SettingsForm(instance=request.user), status=429, avatar_error=str(error))
        response["Retry-After"] = str(error.retry_after)
        return response
    try:
        if upload is None:
            raise AvatarRefused("Choose a picture to upload first.")
        if upload.size > AVATAR_UPLOAD_MAX:
            raise AvatarRefused(
                f"The picture is larger than {AVATAR_UPLOAD_MAX // (1024 * 1024)} MB; choose a smaller one."
            )
        services.avatar_set(user=request.user, data=upload.read())
    except AvatarRefused as error:
        return _settings(request, SettingsForm(instance=request.user), status=400, avatar_error=str(error))
    messages.success(request, "Your new picture is saved.")
    return redirect("people:settings")


@require_GET
def avatar(request, username: str):
    """A person's avatar: their picture, or their identicon. With the current version in the
    address (``?v=``) it is cached for a year; without, for five minutes (cards name no version)."""
    person = selectors.user_get_by_name(username)
    stored = Avatar.objects.filter(user=person).only("image", "content_type").first() if person.avatar_version else None
    if stored is not None:
        response = HttpResponse(bytes(stored.image), content_type=stored.content_type)
    else:
        response = HttpResponse(identicon_svg(person.username), content_type="image/svg+xml")
    current = request.GET.get("v") == str(person.avatar_version)
    response["Cache-Control"] = "public, max-age=31536000, immutable" if current else "public, max-age=300"
    return response


# --- the follow graph ----------------------------------------------------------------------------


def _people(request, username: str, which: str):
    person = selectors.user_get_for(username, request.user)
    number = page_number(request, page_size=PEOPLE_PAGE_SIZE)
    offset = (number - 1) * PEOPLE_PAGE_SIZE
    listing = selectors.followers_list if which == "followers" else selectors.following_list
    page = listing(person, offset=offset, limit=PEOPLE_PAGE_SIZE)
    return render(
        request,
        "social/people.html",
        {
            "person": person,
            "which": which,
            "people": page["items"],
            "total": page["total"],
            "previous_page": number - 1 if number > 1 else None,
            "next_page": number + 1 if offset + PEOPLE_PAGE_SIZE < page["total"] else None,
        },
    )


def followers(request, username: str):
    return _people(request, username, "followers")


def following(request, username: str):
    return _people(request, username, "following")


# --- addresses and forgotten passwords ------------------------------------------------------------


@login_required
@require_POST
def email_resend(request):
    """Send the link that confirms the account's address again (the settings page's button)."""
    if request.user.email and not request.user.email_verified:
        try:
            write_attempt(user_id=request.user.pk, address=client_address(request))
        except RateLimited as error:
            messages.error(request, str(error))
            return redirect("people:settings")
        services.address_check(user=request.user, base_url=request.build_absolute_uri("/"))
        messages.success(request, f"We sent a new link to {request.user.email}.")
    return redirect("people:settings")


@require_GET
def email_check(request, token: str):
    """The link of an address check: the address is confirmed if it is still the account's."""
    user = services.email_confirm(token=token)
    if user is None:
        messages.error(
            request, "That link is too old or no longer matches your address; send a new one from your settings."
        )
    else:
        messages.success(
            request, f"Your address {user.email} is confirmed: a forgotten password can be reset through it."
        )
    return redirect("people:settings" if request.user.is_authenticated else "people:login")


class ResetPage(auth_views.PasswordResetView):
    """Ask for a reset link: the same answer for any address (Django's view), at most
    RATE_LIMIT_RESETS_PER_MINUTE a minute from an address, only to confirmed addresses."""

    form_class = ResetForm
    template_name = "social/password_reset.html"
    email_template_name = "social/password_reset_email.txt"
    subject_template_name = "social/password_reset_subject.txt"
    success_url = "/password/reset/sent"

    def form_valid(self, form):
        try:
            attempt(
                "resets",
                client_address(self.request),
                per_minute=settings.RATE_LIMIT_RESETS_PER_MINUTE,
                what="password resets from this address",
            )
        except RateLimited as error:
            response = render(self.request, self.template_name, {"form": form, "problem": str(error)}, status=429)
            response["Retry-After"] = str(error.retry_after)
            return response
        try:
            return super().form_valid(form)
        except OSError:  # the mail server did not take it
            return render(
                self.request,
                self.template_name,
                {"form": form, "problem": "We could not send the mail just now; try again in a minute."},
                status=503,
            )


class ResetSentPage(auth_views.PasswordResetDoneView):
    template_name = "social/password_reset_sent.html"
    extra_context = {"hours": settings.EMAIL_LINK_HOURS}


class ResetConfirmPage(auth_views.PasswordResetConfirmView):
    """The link of a reset mail: single-use (the token dies with the old password) and good for
    PASSWORD_RESET_TIMEOUT; a new password ends every session and token (User.save)."""

    template_name = "social/password_reset_confirm.html"
    success_url = "/password/reset/done"


class ResetDonePage(auth_views.PasswordResetCompleteView):
    template_name = "social/password_reset_done.html"


# --- passkeys (WebAuthn): the settings page registers one, the log-in page signs in with it ------

PASSKEY_REGISTERING = "passkey_registering"  # the session's challenge of a registration under way
PASSKEY_SIGNING_IN = "passkey_signing_in"  # and of a sign-in


def _relying_party(request) -> tuple[str, str]:
    """This site as WebAuthn names it: the host (the RP id) and the origin the browser reports."""
    host = request.get_host()
    return host.rsplit(":", 1)[0] if not host.endswith("]") else host, f"{request.scheme}://{host}"


def _json_body(request) -> dict:
    try:
        data = json.loads(request.body or b"{}")
    except ValueError:
        raise PasskeyRefused("the browser's answer was not JSON") from None
    if not isinstance(data, dict):
        raise PasskeyRefused("the browser's answer was not an object")
    return data


def _refused(error: Exception, status: int = 400) -> JsonResponse:
    response = JsonResponse({"detail": str(error)}, status=status)
    if isinstance(error, RateLimited):
        response["Retry-After"] = str(error.retry_after)
    return response


@login_required
@require_POST
def passkey_register_options(request):
    """What navigator.credentials.create() needs; the challenge stays in the session."""
    rp_id, _ = _relying_party(request)
    options, challenge = passkeys.registration_options(user=request.user, rp_id=rp_id)
    request.session[PASSKEY_REGISTERING] = challenge
    return JsonResponse(options)


@login_required
@require_POST
def passkey_register(request):
    """The new credential, checked against the session's challenge (used once) and kept."""
    challenge = request.session.pop(PASSKEY_REGISTERING, None)
    rp_id, origin = _relying_party(request)
    try:
        if challenge is None:
            raise PasskeyRefused("no registration was started; press the button again")
        passkeys.register(
            user=request.user,
            credential=_json_body(request),
            challenge=challenge,
            rp_id=rp_id,
            origin=origin,
            name=request.headers.get("User-Agent", ""),
        )
    except PasskeyRefused as error:
        return _refused(error)
    messages.success(request, "Your passkey is saved: you can sign in with it, no password needed.")
    return JsonResponse({"next": reverse("people:settings")}, status=201)


@login_required
@require_POST
def passkey_remove(request):
    """Forget one of your passkeys (the settings page's list)."""
    number = whole_number(request.POST.get("id", ""))
    if number is not None and passkeys.remove(user=request.user, passkey_id=number):
        messages.success(request, "That passkey is removed.")
    return redirect("people:settings")


@require_POST
def passkey_sign_in_options(request):
    """What navigator.credentials.get() needs to sign in by passkey alone; the challenge stays
    in the session. Counted as a log-in attempt of the address."""
    try:
        services.auth_attempt(address=client_address(request))
    except RateLimited as error:
        return _refused(error, 429)
    rp_id, _ = _relying_party(request)
    options, challenge = passkeys.sign_in_options(rp_id=rp_id)
    request.session[PASSKEY_SIGNING_IN] = challenge
    return JsonResponse(options)


@require_POST
def passkey_sign_in(request):
    """The passkey's signature of the session's challenge (used once): the person it belongs to
    is signed in, with no password and no code (the authenticator verified its holder). On the
    code page, after a password, it stands for the code, and must be that account's."""
    challenge = request.session.pop(PASSKEY_SIGNING_IN, None)
    rp_id, origin = _relying_party(request)
    try:
        if challenge is None:
            raise PasskeyRefused("no sign-in was started; press the button again")
        user = passkeys.sign_in(credential=_json_body(request), challenge=challenge, rp_id=rp_id, origin=origin)
        pending = request.session.get(LOGIN_PENDING)
        if isinstance(pending, dict) and pending.get("u") != user.pk:
            raise PasskeyRefused("it is not a passkey of the account whose password you gave")
    except PasskeyRefused as error:
        return _refused(error)
    request.session.pop(LOGIN_PENDING, None)  # as the second factor, it ends the code step too
    auth_login(request, user, backend=PASSWORD_BACKEND)
    return JsonResponse({"next": safe_next(request, "/")})
