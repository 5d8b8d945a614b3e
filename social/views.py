"""Pages about people: log in, log out, followers and following lists.

Each view validates its input and calls one service or selector (social.services,
social.selectors); what a page shows is what the API answers for the same person. Signing up,
a profile with its boards and the follow button touch feeds: they are in feeds.views.people.
"""

from django.contrib import messages
from django.contrib.auth import logout as auth_logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from social import selectors, services
from social.forms import SettingsForm
from ugcsite.errors import RateLimited
from ugcsite.http import client_address, page_number

PEOPLE_PAGE_SIZE = 50


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
    redirect_authenticated_user = True

    def post(self, request, *args, **kwargs):
        wait = throttle_wait(request, account=request.POST.get("username"))
        if wait:
            return too_many(request, self.template_name, self.get_context_data(form=self.get_form_class()(request)), wait)
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


@login_required
def settings_page(request):
    """Your own settings: display name, bio and whether people who follow you see what you read
    (PATCH /api/v1/me does the same through social.services.profile_update)."""
    form = SettingsForm(request.POST if request.method == "POST" else None, instance=request.user)
    if request.method != "POST":
        return render(request, "social/settings.html", {"form": form})
    if not form.is_valid():
        return render(request, "social/settings.html", {"form": form}, status=400)
    services.profile_update(user=request.user, changes={field: form.cleaned_data[field] for field in form.changed_data})
    messages.success(request, "Your settings are saved.")
    return redirect("people:settings")


# --- the follow graph ----------------------------------------------------------------------------

def _people(request, username: str, which: str):
    person = selectors.user_get_by_name(username)
    number = page_number(request, page_size=PEOPLE_PAGE_SIZE)
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

