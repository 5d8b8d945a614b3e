"""Pages about people: sign up, log in, log out, profiles with their boards, follow buttons.

Each view validates its input and calls one service or selector (social.services, social.selectors,
feeds.selectors); what a page shows is what the API answers for the same person.
"""

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model, login as auth_login, logout as auth_logout
from django.contrib.auth import views as auth_views
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from feeds import views as board_pages
from social import selectors, services
from social.models import USERNAME_PATTERN
from ugcsite.api import ApiError, get_user_by_name

User = get_user_model()
PEOPLE_PAGE_SIZE = 50


def _person_or_404(username: str):
    """An active user by name, any letter case (suspended users are no one here, as in the API)."""
    try:
        return get_user_by_name(username)
    except ApiError:
        raise Http404(f"There is nobody called {username!r} here.") from None


def _safe_next(request, default: str) -> str:
    """Where to go after a form: ``next`` when it stays on this site, else ``default``."""
    target = request.POST.get("next") or request.GET.get("next")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                  require_https=request.is_secure()):
        return target
    return default


def _throttle_wait(request) -> int:
    """Seconds to wait when this address has used up its sign-up and log-in attempts this
    minute, else 0. Pages spend the same budget as the API (social.api), so they are no way round it."""
    from social import api as account_api

    try:
        account_api._throttle(request)
    except ApiError as error:
        return int(error.headers.get("Retry-After", "60"))
    return 0


def _too_many(request, template: str, context: dict, wait: int):
    response = render(request, template, {**context, "throttled": wait}, status=429)
    response["Retry-After"] = str(wait)
    return response


# --- accounts -------------------------------------------------------------------------------------

class SignupForm(forms.Form):
    """The rules of POST /api/v1/users (API.md), with the messages a person needs."""

    username = forms.RegexField(
        regex=USERNAME_PATTERN, max_length=30,
        help_text="3–30 letters, digits or underscores.",
        error_messages={"invalid": "Use 3–30 letters (A–Z, a–z), digits or underscores, nothing else."},
        widget=forms.TextInput(attrs={"autocomplete": "username", "autocapitalize": "none", "spellcheck": "false"}),
    )
    password = forms.CharField(
        min_length=8, max_length=128, strip=False, help_text="8–128 characters.",
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )
    password_again = forms.CharField(
        label="Password again", strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def clean_username(self):
        username = self.cleaned_data["username"]
        if User.objects.filter(username__iexact=username).exists():
            raise forms.ValidationError("That username is taken; choose another.")
        return username

    def clean(self):
        data = super().clean()
        if data.get("password") and data.get("password_again") is not None and data["password"] != data["password_again"]:
            self.add_error("password_again", "The two passwords differ; type the same one twice.")
        return data


def signup(request):
    if request.user.is_authenticated:
        return redirect(_safe_next(request, "/"))
    context = {"next": _safe_next(request, "")}
    if request.method != "POST":
        return render(request, "social/signup.html", {**context, "form": SignupForm()})
    form = SignupForm(request.POST)
    wait = _throttle_wait(request)
    if wait:
        return _too_many(request, "social/signup.html", {**context, "form": form}, wait)
    if not form.is_valid():
        return render(request, "social/signup.html", {**context, "form": form}, status=400)
    try:
        user = services.user_create(username=form.cleaned_data["username"], password=form.cleaned_data["password"])
    except services.UsernameTaken:
        form.add_error("username", "That username is taken; choose another.")
        return render(request, "social/signup.html", {**context, "form": form}, status=400)
    auth_login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    messages.success(request, f"Welcome, {user.username}! Follow a few people to fill your feed, or draw your first board.")
    return redirect(_safe_next(request, "/"))


class LoginPage(auth_views.LoginView):
    """Django's login (it refuses suspended users: ``is_active`` False), behind the API's rate limit."""

    template_name = "social/login.html"
    redirect_authenticated_user = True

    def post(self, request, *args, **kwargs):
        wait = _throttle_wait(request)
        if wait:
            return _too_many(request, self.template_name, self.get_context_data(form=self.get_form_class()(request)), wait)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        response = super().form_invalid(form)
        response.status_code = 400
        return response


def logout_page(request):
    """GET asks (a link must not log anyone out), POST logs out."""
    if request.method == "POST":
        auth_logout(request)
        messages.info(request, "You are logged out. See you soon.")
        return redirect("/")
    if not request.user.is_authenticated:
        return redirect("/")
    return render(request, "social/logout.html")


# --- profiles and the follow graph ----------------------------------------------------------------

def profile(request, username: str):
    person = _person_or_404(username)
    if person.username != username:  # one address per person: the stored spelling
        return redirect("people:profile", person.username)
    viewer = request.user if request.user.is_authenticated else None
    before = board_pages.before_param(request)
    page = board_pages.profile_page(person, before=before)
    return render(request, "social/profile.html", {
        "person": person,
        "info": selectors.profile(person, viewer=viewer),
        "is_me": viewer is not None and viewer.pk == person.pk,
        "boards": page["items"],
        "next": page["next"],
        "older": before is not None,
        "source": reverse("user-boards", args=[person.username]),
    })


def follow(request, username: str):
    """POST follows (or, with action=unfollow, unfollows) and goes back where the button was."""
    person = _person_or_404(username)
    back = reverse("people:profile", args=[person.username])
    if request.method != "POST":
        return redirect(back)
    if not request.user.is_authenticated:
        return redirect(f"{reverse('people:login')}?next={back}")
    if request.POST.get("action") == "unfollow":
        services.follow_delete(follower=request.user, followee=person)
        messages.info(request, f"You no longer follow {person.username}.")
    else:
        try:
            services.follow_create(follower=request.user, followee=person)
        except services.FollowSelf:
            messages.error(request, "You cannot follow yourself.")
        else:
            messages.success(request, f"You follow {person.username}: their boards will show in your feed.")
    return redirect(_safe_next(request, back))


def _people(request, username: str, which: str):
    person = _person_or_404(username)
    try:
        number = max(1, int(request.GET.get("page", "1")))
    except ValueError:
        number = 1
    offset = (number - 1) * PEOPLE_PAGE_SIZE
    listing = selectors.followers_list if which == "followers" else selectors.following_list
    page = listing(person, offset=offset, limit=PEOPLE_PAGE_SIZE)
    return render(request, "social/people.html", {
        "person": person,
        "which": which,
        "people": page["items"],
        "total": page["total"],
        "previous_page": number - 1 if number > 1 else None,
        "next_page": number + 1 if offset + PEOPLE_PAGE_SIZE < page["total"] else None,
    })


def followers(request, username: str):
    return _people(request, username, "followers")


def following(request, username: str):
    return _people(request, username, "following")

