"""Pages about a person that reach into feeds: signing up (the new feed made ready), a profile
with its boards, and the follow button (social.views has log-in, log-out and the follow lists)."""

from django.contrib import messages
from django.contrib.auth import login as auth_login, logout
from django.shortcuts import redirect, render
from django.urls import reverse

from feeds.federation import selectors as federation_selectors
from feeds.services import accounts, follows, safety
from feeds.views.boards import before_param, profile_page
from social import hiding, selectors as people, services as people_services
from social.forms import SignupForm
from social.services import BlockSelf, FollowBlocked, FollowSelf, UsernameTaken, WrongPassword, auth_attempt
from social.views import throttle_wait, too_many
from ugcsite.platform.errors import RateLimited
from ugcsite.platform.http import client_address, safe_next
from ugcsite.platform.ratelimits import write_attempt


def signup(request):
    if request.user.is_authenticated:
        return redirect(safe_next(request, "/"))
    context = {"next": safe_next(request, "")}
    if request.method != "POST":
        return render(request, "social/signup.html", {**context, "form": SignupForm()})
    form = SignupForm(request.POST)
    wait = throttle_wait(request)
    if wait:
        return too_many(request, "social/signup.html", {**context, "form": form}, wait)
    if not form.is_valid():
        return render(request, "social/signup.html", {**context, "form": form}, status=400)
    try:
        user = accounts.account_create(
            username=form.cleaned_data["username"],
            password=form.cleaned_data["password"],
            email=form.cleaned_data["email"],
        )
        people_services.address_check(user=user, base_url=request.build_absolute_uri("/"))
    except UsernameTaken:
        form.add_error("username", "That username is taken; choose another.")
        return render(request, "social/signup.html", {**context, "form": form}, status=400)
    auth_login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    messages.success(
        request, f"Welcome, {user.username}! Follow a few people to fill your feed, or draw your first board."
    )
    return redirect(safe_next(request, "/"))


def profile(request, username: str):
    person = people.user_get_for(username, request.user)
    if person.username != username:  # one address per person: the stored spelling
        return redirect("people:profile", person.username)
    viewer = request.user if request.user.is_authenticated else None
    bits = hiding.bits_of(viewer.pk, person.pk) if viewer is not None and viewer.pk != person.pk else 0
    before = before_param(request)
    # a blocker sees none of the blocked person's boards, as the blocked person sees none of theirs
    page = {"items": [], "next": None} if bits & hiding.BLOCKS else profile_page(person, before=before)
    return render(
        request,
        "social/profile.html",
        {
            "person": person,
            "info": federation_selectors.profile_with_remote(people.profile(person, viewer=viewer), person),
            "fediverse_handle": federation_selectors.handle_of(person),
            "is_me": viewer is not None and viewer.pk == person.pk,
            "blocked_by_me": bool(bits & hiding.BLOCKS),
            "muted_by_me": bool(bits & hiding.MUTES),
            "boards": page["items"],
            "next": page["next"],
            "older": before is not None,
            "source": reverse("user-boards", args=[person.username]),
        },
    )


def follow(request, username: str):
    """POST follows (or, with action=unfollow, unfollows) and goes back where the button was."""
    person = people.user_get_by_name(username)
    back = reverse("people:profile", args=[person.username])
    if request.method != "POST":
        return redirect(back)
    if not request.user.is_authenticated:
        return redirect(f"{reverse('people:login')}?next={back}")
    try:
        write_attempt(user_id=request.user.pk, address=client_address(request))
    except RateLimited as error:
        messages.error(request, str(error))
        return redirect(safe_next(request, back))
    if request.POST.get("action") == "unfollow":
        follows.follow_delete(follower=request.user, followee=person)
        messages.info(request, f"You no longer follow {person.username}.")
    else:
        try:
            follows.follow_create(follower=request.user, followee=person)
        except (FollowSelf, FollowBlocked) as error:
            messages.error(request, str(error))
        else:
            messages.success(request, f"You follow {person.username}: their boards will show in your feed.")
    return redirect(safe_next(request, back))


SAFETY_DONE = {  # what the person reads after each of feeds.services.safety.ACTIONS
    "block": "You blocked {name}: you no longer follow each other, and neither of you sees the other's boards.",
    "unblock": "You unblocked {name}. Follows between you do not come back.",
    "mute": "You muted {name}: their boards and notifications leave your lists. They are not told.",
    "unmute": "You unmuted {name}: their boards and notifications are back.",
}


def safety_action(request, username: str):
    """POST block, unblock, mute or unmute (``action``) and go back where the button was (the
    profile, or ``next``: the settings page lists whom you block and mute)."""
    person = people.user_get_by_name(username)
    back = reverse("people:profile", args=[person.username])
    if request.method != "POST":
        return redirect(back)
    if not request.user.is_authenticated:
        return redirect(f"{reverse('people:login')}?next={back}")
    action = request.POST.get("action", "")
    if action not in safety.ACTIONS:
        messages.error(request, "Choose block, unblock, mute or unmute.")
        return redirect(safe_next(request, back))
    try:
        write_attempt(user_id=request.user.pk, address=client_address(request))
        safety.act(action, actor=request.user, other=person)
    except (RateLimited, BlockSelf) as error:
        messages.error(request, str(error))
    else:
        messages.success(request, SAFETY_DONE[action].format(name=person.username))
    return redirect(safe_next(request, back))


def account_delete_page(request):
    """POST the password (the settings page's last form): the account is deleted, the person
    logged out and sent to the home page (feeds.services.accounts.account_delete)."""
    if request.method != "POST" or not request.user.is_authenticated:
        return redirect("people:settings")
    try:
        auth_attempt(address=client_address(request))
        accounts.account_delete(user=request.user, password=request.POST.get("password", ""))
    except (RateLimited, WrongPassword) as error:
        messages.error(request, str(error))
        return redirect(reverse("people:settings") + "#delete-heading")
    logout(request)
    messages.success(request, "Your account is deleted. Your boards leave everyone's feeds within minutes.")
    return redirect("/")
