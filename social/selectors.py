"""Reads about people for views and the API."""

from typing import Annotated, Literal

from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session as BrowserSession  # Session: the API's answer, below
from django.db.models import Q
from django.utils import timezone
from pydantic import Field
from typing_extensions import TypedDict

from social import graph, hiding, two_factor
from social.avatars import avatar_url
from social.models import ApiToken, Block, Mute, Passkey, RetiredUsername, UserSession
from social.rules import BIO_MAX, DISPLAY_NAME_MAX, SESSION_ID_PATTERN, USERNAME_RE
from ugcsite.platform.apidoc import IsoTime
from ugcsite.platform.errors import NotFound

# The API's answers about people (ugcsite.platform.apidoc: TypedDicts, plain dicts at run time).


class Person(TypedDict):
    """Someone in a list: their id and username."""

    id: int
    username: str


class People(TypedDict):
    items: list[Person]


class PeoplePage(TypedDict):
    """A page of a list of people, and the list's total."""

    items: list[Person]
    total: int


class Profile(TypedDict):
    id: int
    username: str
    display_name: Annotated[str, Field(max_length=DISPLAY_NAME_MAX)]
    bio: Annotated[str, Field(max_length=BIO_MAX)]
    followers: Annotated[int, Field(description="the total of the followers list (suspended people left out)")]
    following: Annotated[int, Field(description="the total of the following list (suspended people left out)")]
    boards: int
    followed_by_me: bool
    avatar_url: Annotated[str, Field(description="the avatar (an uploaded picture, else an identicon)")]


class Me(Profile):
    share_reading: Annotated[
        bool, Field(description="whether the people who follow the caller see what they read (off until set)")
    ]
    email: Annotated[str, Field(description='the caller\'s address, "" for none (only for password resets)')]
    email_verified: Annotated[bool, Field(description="whether the link mailed to the address was opened")]


class Session(TypedDict):
    """A browser session or a token of the caller's."""

    id: Annotated[str, Field(pattern=SESSION_ID_PATTERN)]
    kind: Literal["session", "token"]
    created_at: IsoTime
    last_used_at: Annotated[IsoTime, Field(description="to within five minutes")]
    user_agent: Annotated[str, Field(description="the browser or client that signed in")]
    current: Annotated[bool, Field(description="the session or token of this call")]


class Sessions(TypedDict):
    items: list[Session]


User = get_user_model()


class UserNotFound(NotFound):
    def __init__(self, username: str):
        super().__init__(f"There is no user named {username!r}.")


def user_get_by_name(username: str) -> User:
    """The active user of a path or filter, matched case-insensitively; ``UserNotFound`` if none
    (suspended users are no one). One indexed query; none for a name no one can have."""
    user = None
    if USERNAME_RE.match(username):
        user = User.objects.filter(username__iexact=username, is_active=True).first()
    if user is None:
        raise UserNotFound(username)
    return user


def closed_account_words(username: str, password: str) -> str | None:
    """What to tell someone whose log-in failed with the right password of an account that
    cannot sign in: suspended by staff, or deleted. None otherwise (a wrong password reveals
    nothing). One indexed query and a hash check, only after a refused log-in."""
    user = User.objects.filter(username__iexact=username, is_active=False).first()
    if user is None or not user.check_password(password):
        return None
    if RetiredUsername.objects.filter(name=user.username.lower()).exists():
        return "This account was deleted; its data is being erased."
    return "Your account is suspended by staff, so you cannot log in. Write to the site's staff if you think this is a mistake."


def user_get_for(username: str, viewer) -> User:
    """user_get_by_name, for what ``viewer`` may see: someone who blocks the viewer is no one to
    them (UserNotFound: their profile and boards answer 404). One more O(1) Redis read."""
    user = user_get_by_name(username)
    viewer_id = getattr(viewer, "pk", None)  # None: no one signed in (or Django's anonymous user)
    if viewer_id is not None and viewer_id != user.pk and hiding.blocked_by(viewer_id, user.pk):
        raise UserNotFound(username)
    return user


def block_between(first_id: int, second_id: int) -> bool:
    """Whether either of two people blocks the other, from PostgreSQL (the source of truth, for
    writes that must not race a block: a follow, an invitation). One indexed query."""
    return Block.objects.filter(
        Q(blocker_id=first_id, blocked_id=second_id) | Q(blocker_id=second_id, blocked_id=first_id)
    ).exists()


def blocks_list(user) -> list[Person]:
    """``{"id", "username"}`` of everyone ``user`` blocks, the latest first. O(n) for their n blocks."""
    rows = (
        Block.objects.filter(blocker=user).order_by("-created_at", "-id").values_list("blocked_id", "blocked__username")
    )
    return [{"id": user_id, "username": username} for user_id, username in rows]


def mutes_list(user) -> list[Person]:
    """``{"id", "username"}`` of everyone ``user`` mutes, the latest first. O(n) for their n mutes."""
    rows = Mute.objects.filter(muter=user).order_by("-created_at", "-id").values_list("muted_id", "muted__username")
    return [{"id": user_id, "username": username} for user_id, username in rows]


def profile(user, *, viewer=None) -> Profile:
    """The profile object of docs/api.md ("Follow graph"). No row counting: ``followers`` and
    ``following`` are the sizes of the lists as served (suspended people are in neither), one
    Redis round trip; ``boards`` is stored."""
    viewer_id = viewer.pk if viewer is not None and viewer.pk != user.pk else None
    followers, following, followed_by_me = graph.profile_counts(user.pk, viewer_id=viewer_id)
    return {
        "id": user.pk,
        "username": user.username,
        "display_name": user.display_name,
        "bio": user.bio,
        "followers": followers,
        "following": following,
        "boards": user.boards_count,
        "followed_by_me": followed_by_me,
        "avatar_url": avatar_url(user.username, user.avatar_version),
    }


def own_profile(user) -> Me:
    """``GET /api/v1/me``: the profile, with the caller's own settings."""
    return {
        **profile(user, viewer=user),
        "share_reading": user.share_reading,
        "email": user.email,
        "email_verified": user.email_verified,
    }


def people_page(ids: list[int]) -> list[Person]:
    """``{"id", "username"}`` for each id, in the given order (one query)."""
    names = dict(User.objects.filter(pk__in=ids).values_list("id", "username"))
    return [{"id": user_id, "username": names[user_id]} for user_id in ids if user_id in names]


def followers_list(user, *, offset: int, limit: int) -> PeoplePage:
    """A page of a user's followers, newest follow first, with the total. O(log n + limit)."""
    ids, total = graph.followers_page(user.pk, offset=offset, limit=limit)
    return {"items": people_page(ids), "total": total}


def following_list(user, *, offset: int, limit: int) -> PeoplePage:
    """A page of the people a user follows, newest follow first, with the total. O(log n + limit)."""
    ids, total = graph.following_page(user.pk, offset=offset, limit=limit)
    return {"items": people_page(ids), "total": total}


def sharing_readers(user_ids) -> dict[int, str]:
    """Usernames of the people among ``user_ids`` whose reads may be shown: active, and sharing
    them (``share_reading``, read here on every answer, so turning it off counts at once).
    One query by primary key: O(k log n) for k ids, next to the O(k x reads) of the question."""
    return dict(
        User.objects.filter(pk__in=list(user_ids), is_active=True, share_reading=True).values_list("id", "username")
    )


def active_people(user_ids) -> dict[int, str]:
    """Usernames of the people among ``user_ids`` who may use the site (not suspended, not
    closed): whose likes count. One query by primary key: O(k log n) for k ids."""
    return dict(User.objects.filter(pk__in=list(user_ids), is_active=True).values_list("id", "username"))


def profile_avatar_url(user) -> str:
    """The address of a person's avatar at its current version (social.avatars)."""
    return avatar_url(user.username, user.avatar_version)


def sessions_list(user, *, session_key: str | None, token_key: str | None) -> Sessions:
    """Where a person is signed in: every browser session and unexpired token, the latest used
    first, ``current`` marking the one of this request (GET /api/v1/me/sessions). Ids are
    "s<id>" for a session, "t<id>" for a token. Two indexed queries."""
    token_hash = ApiToken.hash_key(token_key) if token_key else None
    items: list[Session] = [
        {
            "id": f"s{row.pk}",
            "kind": "session",
            "created_at": row.created_at,
            "last_used_at": row.last_used_at,
            "user_agent": row.user_agent,
            "current": row.session_key == session_key and token_key is None,
        }
        for row in UserSession.objects.filter(
            user=user,
            session_key__in=BrowserSession.objects.filter(expire_date__gt=timezone.now()).values("session_key"),
        )
    ] + [
        {
            "id": f"t{row.pk}",
            "kind": "token",
            "created_at": row.created_at,
            "last_used_at": row.last_used_at or row.created_at,
            "user_agent": row.user_agent,
            "current": row.key_hash == token_hash,
        }
        for row in ApiToken.objects.filter(user=user, expires_at__gt=timezone.now())
    ]
    items.sort(key=lambda item: item["last_used_at"], reverse=True)
    return {"items": items}


def two_factor_state(user) -> dict:
    """What the settings page shows of two-factor sign-in: on (and how many recovery codes are
    left), or an enrolment under way (its secret, address and QR code), or off. Two queries."""
    if two_factor.is_on(user.pk):
        return {"on": True, "recovery_left": two_factor.recovery_left(user.pk)}
    pending = two_factor.enrolment(user.pk)
    if pending is None:
        return {"on": False}
    uri = two_factor.provisioning_uri(pending.secret, username=user.username)
    return {"on": False, "secret": pending.secret, "otpauth_uri": uri, "qr": two_factor.qr_data_uri(uri)}


def two_factor_on(user) -> bool:
    """Whether a person signs in with a second factor. One query."""
    return two_factor.is_on(user.pk)


def login_pending_user(pending, *, max_age: float, now: float):
    """The active person a log-in's password step named (the session's note: user id, backend,
    when), if it is at most ``max_age`` seconds old; else None. One query."""
    if not isinstance(pending, dict) or now - pending.get("at", 0) > max_age:
        return None
    return User.objects.filter(pk=pending.get("u"), is_active=True).first()


def passkeys_list(user) -> list[dict]:
    """A person's passkeys for the settings page: id, the browser that made it, when, last use. One query."""
    return list(
        Passkey.objects.filter(user=user).order_by("-created_at").values("id", "name", "created_at", "last_used_at")
    )
