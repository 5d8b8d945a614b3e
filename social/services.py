"""Writes about people: accounts, the follow graph's edges, the sign-in throttle.

What a follow does to feeds (the back-fill, the clean-up) is added on top by
``feeds.services.follows``, which calls the edge functions here (Zulip's actions: one library
call, then the side effects on commit).
"""

import logging
from datetime import timedelta
from itertools import islice

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.db.models.functions import Greatest, Lower  # counts never go below 0, even over bulk-loaded data
from django.utils import timezone

from social import graph, hiding, keys, limits, mail, token_cache, tokens, two_factor
from social.avatars import AVATAR_CONTENT_TYPE, avatar_process
from social.models import ApiToken, Avatar, Block, Follow, Mute, RetiredUsername, TwoFactor, UserSession
from social.rules import SESSION_ID_RE, SESSION_TOUCH_SECONDS, USER_AGENT_MAX
from social.selectors import UserNotFound, block_between
from social.signals import profile_changed
from ugcsite.platform import replicas
from ugcsite.platform.errors import Conflict, Invalid, NotAllowed, NotFound
from ugcsite.platform.ratelimits import attempt
from ugcsite.platform.redis import get_redis

User = get_user_model()
logger = logging.getLogger(__name__)


class UsernameTaken(Conflict):
    def __init__(self, username: str):
        super().__init__(f"The username {username!r} is taken; choose another.")


class FollowSelf(Invalid):
    def __init__(self):
        super().__init__("You cannot follow yourself.")


class FollowBlocked(NotAllowed):
    def __init__(self, username: str):
        super().__init__(f"You cannot follow {username}: one of you blocked the other.")


class BlockSelf(Invalid):
    def __init__(self, verb: str):
        super().__init__(f"You cannot {verb} yourself.")


def user_create(*, username: str, password: str, is_staff: bool = False, email: str = "") -> User:
    """A new account (``email`` optional, unconfirmed until its link is opened: social.mail);
    ``UsernameTaken`` if the name is used in any letter case."""
    if User.objects.filter(username__iexact=username).exists():
        raise UsernameTaken(username)
    if RetiredUsername.objects.filter(name=username.lower(), free_after__gt=timezone.now()).exists():
        raise UsernameTaken(username)  # a deleted account's, in quarantine
    try:
        with transaction.atomic():
            user = User(username=username, email=email, is_staff=is_staff, is_superuser=is_staff)
            user.set_password(password)
            user.save()
    except IntegrityError:  # a concurrent sign-up took it between the check and the insert
        raise UsernameTaken(username) from None
    return user


def address_check(*, user: User, base_url: str) -> None:
    """After the commit, mail ``user`` the link that confirms their address (social.mail); a
    mail server that does not answer is logged, and the settings page offers to send it again."""

    def send():
        try:
            mail.address_check_send(user, base_url=base_url)
        except OSError as error:  # SMTP refused or unreachable: the address stays unconfirmed
            logger.warning("the address check of user %s was not sent: %s", user.pk, error)

    if user.email:
        transaction.on_commit(send)


def email_confirm(*, token: str) -> User | None:
    """Mark the address a link names confirmed, if it is still the account's; the account, or
    None for a link that is forged, too old, or for an address since changed. One UPDATE."""
    found = mail.address_check_read(token)
    if found is None:
        return None
    user = User.objects.filter(pk=found[0], is_active=True).first()
    if user is None or user.email.lower() != found[1]:
        return None
    User.objects.filter(pk=user.pk).update(email_verified=True)
    user.email_verified = True
    return user


def profile_update(*, user: User, changes: dict, base_url: str = "") -> User:
    """Change a person's own settings (display_name, bio, share_reading; validated by the
    caller). One UPDATE of the fields given; nothing else is derived from them."""
    # Against the stored address: a settings form has put the new one on ``user`` already.
    stored = User.objects.filter(pk=user.pk).values_list("email", flat=True).first() if "email" in changes else None
    new_email = "email" in changes and changes["email"].lower() != (stored or "").lower()
    if new_email:
        changes = {**changes, "email_verified": False}
    for field, value in changes.items():
        setattr(user, field, value)
    if changes:
        user.save(update_fields=list(changes))
    if {"display_name", "bio"} & changes.keys():
        profile_changed.send(sender=User, user=user)
    if new_email and base_url:
        address_check(user=user, base_url=base_url)
    return user


def avatar_set(*, user: User, data: bytes) -> User:
    """Store an uploaded picture as the person's avatar (resized by social.avatars; refused with
    ``AvatarRefused`` and nothing changed if it is not a picture it takes). One upsert and one
    UPDATE in a transaction; the new version gives the avatar a new address."""
    image = avatar_process(data)
    with transaction.atomic():
        Avatar.objects.update_or_create(user=user, defaults={"image": image, "content_type": AVATAR_CONTENT_TYPE})
        User.objects.filter(pk=user.pk).update(avatar_version=F("avatar_version") + 1)
    user.refresh_from_db(fields=["avatar_version"])
    profile_changed.send(sender=User, user=user)
    return user


def avatar_remove(*, user: User) -> User:
    """Back to the identicon: the picture is deleted, the version bumped (a new address)."""
    with transaction.atomic():
        if Avatar.objects.filter(user=user).delete()[0]:
            User.objects.filter(pk=user.pk).update(avatar_version=F("avatar_version") + 1)
    user.refresh_from_db(fields=["avatar_version"])
    profile_changed.send(sender=User, user=user)
    return user


def auth_attempt(*, address: str) -> None:
    """Count a sign-up or log-in attempt from a client address: at most
    RATE_LIMIT_AUTH_PER_MINUTE a minute, else ``RateLimited``. API and pages spend the same
    budget. O(1)."""
    attempt("auth", address, per_minute=settings.RATE_LIMIT_AUTH_PER_MINUTE, what="attempts from this address")


def login_attempt(*, account: str) -> None:
    """Count a log-in to one account (any letter case), from wherever it comes: at most
    RATE_LIMIT_AUTH_PER_MINUTE a minute, so guessing one person's password from many addresses
    is slowed too. O(1)."""
    attempt("login", account.lower(), per_minute=settings.RATE_LIMIT_AUTH_PER_MINUTE, what="log-ins to this account")


def _lock_order(*updates: tuple[User, dict]) -> list[tuple[User, dict]]:
    """Row updates in id order: every transaction that locks several people's rows (a follow, an
    unfollow, the last-seen copy) takes them lowest id first, so none waits on another in a cycle
    (two follows of each other, or a follow beside the minutely copy, deadlocked)."""
    return sorted(updates, key=lambda update: update[0].pk)


def follow_create(*, follower: User, followee: User) -> tuple[Follow, bool]:
    """Add a follow edge (idempotent): PostgreSQL and the stored counts now, F and following
    on commit (even when the edge existed: a repeated follow repairs a Redis that lost it).
    Returns the edge and whether it is new."""
    if follower.pk == followee.pk:
        raise FollowSelf()
    with transaction.atomic():
        edge, created = Follow.objects.get_or_create(follower=follower, followee=followee)
        if created:
            # Only between active people: these updates lock both rows, so a suspension either
            # committed first (no edge) or waits, and its member_lists_sync then sees the edge.
            for person, counts in _lock_order(
                (followee, {"followers_count": F("followers_count") + 1}),
                (follower, {"following_count": F("following_count") + 1}),
            ):
                if not User.objects.filter(pk=person.pk, is_active=True).update(**counts):
                    raise UserNotFound(person.username)  # leaving the block rolls the edge back
            # Asked with both rows locked: a block (which locks them too, block_create) either
            # committed first and is seen here, or waits and then ends this edge itself.
            if block_between(follower.pk, followee.pk):
                raise FollowBlocked(followee.username)
    transaction.on_commit(
        lambda: graph.follow_add(follower_id=follower.pk, followee_id=followee.pk, at=edge.created_at.timestamp())
    )
    return edge, created


def follow_delete(*, follower: User, followee: User) -> bool:
    """Remove a follow edge (idempotent): PostgreSQL now, F and following on commit.
    True if there was an edge."""
    with transaction.atomic():
        deleted, _ = Follow.objects.filter(follower=follower, followee=followee).delete()
        if deleted:
            for person, counts in _lock_order(
                (followee, {"followers_count": Greatest(F("followers_count") - 1, 0)}),
                (follower, {"following_count": Greatest(F("following_count") - 1, 0)}),
            ):
                User.objects.filter(pk=person.pk).update(**counts)
    transaction.on_commit(lambda: graph.follow_remove(follower_id=follower.pk, followee_id=followee.pk))
    return bool(deleted)


def block_create(*, blocker: User, blocked: User) -> bool:
    """Record that ``blocker`` blocks ``blocked`` (idempotent), both people's rows locked in id
    order first, as a follow locks them, so a follow between them either committed before (and
    the caller ends it in this transaction) or waits and then sees the block. Redis's hidden
    sets on commit. O(1). True if it is new."""
    if blocker.pk == blocked.pk:
        raise BlockSelf("block")
    with transaction.atomic():
        list(User.objects.select_for_update().filter(pk__in=[blocker.pk, blocked.pk]).order_by("pk").values_list("pk"))
        _, created = Block.objects.get_or_create(blocker=blocker, blocked=blocked)
    transaction.on_commit(lambda: hiding.block_set(blocker.pk, blocked.pk, on=True))
    return created


def block_delete(*, blocker: User, blocked: User) -> bool:
    """Lift a block (idempotent); no follow comes back. Redis on commit. O(1). True if there was one."""
    if blocker.pk == blocked.pk:
        raise BlockSelf("unblock")
    deleted, _ = Block.objects.filter(blocker=blocker, blocked=blocked).delete()
    transaction.on_commit(lambda: hiding.block_set(blocker.pk, blocked.pk, on=False))
    return bool(deleted)


def mute_create(*, muter: User, muted: User) -> bool:
    """``muter`` no longer sees ``muted``'s boards and notifications (idempotent); ``muted`` is
    not told. Redis on commit. O(1). True if it is new."""
    if muter.pk == muted.pk:
        raise BlockSelf("mute")
    _, created = Mute.objects.get_or_create(muter=muter, muted=muted)
    transaction.on_commit(lambda: hiding.mute_set(muter.pk, muted.pk, on=True))
    return created


def mute_delete(*, muter: User, muted: User) -> bool:
    """Unmute (idempotent): everything comes back, what they made meanwhile included (nothing
    was removed). O(1). True if there was a mute."""
    if muter.pk == muted.pk:
        raise BlockSelf("unmute")
    deleted, _ = Mute.objects.filter(muter=muter, muted=muted).delete()
    transaction.on_commit(lambda: hiding.mute_set(muter.pk, muted.pk, on=False))
    return bool(deleted)


MEMBER_SYNC_BATCH = 1000  # edges per pipeline: one round trip per node each


def member_lists_sync(*, user_id: int) -> bool | None:
    """Make a person's place in other people's follower and following sets (social.graph) match
    whether they are active: out of every one while suspended, back at their follow times once
    it is lifted. The edges come from PostgreSQL, read under a lock on the person's row, so two
    runs (a suspension lifted at once) cannot interleave and the last committed state wins.
    Offline (a task): O(edges of the person), a pipeline per MEMBER_SYNC_BATCH edges.
    Idempotent. Returns whether the person is listed now (None: no such person)."""
    with transaction.atomic():
        active = User.objects.select_for_update().filter(pk=user_id).values_list("is_active", flat=True).first()
        if active is None:
            return None
        for side, other in (("followee_id", "follower_id"), ("follower_id", "followee_id")):
            rows = (
                Follow.objects.filter(**{side: user_id})
                .values_list(other, "created_at")
                .iterator(chunk_size=MEMBER_SYNC_BATCH)
            )
            while batch := [(other_id, at.timestamp()) for other_id, at in islice(rows, MEMBER_SYNC_BATCH)]:
                pipe = get_redis().pipeline(transaction=False)
                graph.member_set(
                    user_id,
                    followers=batch if side == "followee_id" else (),
                    followees=batch if side == "follower_id" else (),
                    present=active,
                    pipe=pipe,
                )
                pipe.execute()
    return active


class WrongPassword(NotAllowed):
    def __init__(self):
        super().__init__("That is not your password; nothing was deleted.")


def is_active(user_id: int) -> bool:
    """Whether the person may use the site now (not suspended, not closed). One query by key."""
    return User.objects.filter(pk=user_id, is_active=True).exists()


def account_close(*, user: User, password: str) -> None:
    """The first, online step of deleting an account, confirmed by its password (WrongPassword
    otherwise): the person can no longer sign in, every token and logged-in session ends now,
    and the username is kept from others for USERNAME_QUARANTINE_DAYS. The rest (boards out of
    every feed, rows and keys gone) is feeds.services.accounts' work in Celery.
    O(tokens + sessions of the person)."""
    if not user.check_password(password):
        raise WrongPassword()
    with transaction.atomic():
        User.objects.filter(pk=user.pk).update(is_active=False)
        user.is_active = False
        tokens.tokens_end(user=user)
        sessions = list(UserSession.objects.filter(user=user).values_list("session_key", flat=True))
        Session.objects.filter(session_key__in=sessions).delete()
        UserSession.objects.filter(user=user).delete()
        RetiredUsername.objects.update_or_create(
            name=user.username.lower(),
            defaults={"free_after": timezone.now() + timedelta(days=settings.USERNAME_QUARANTINE_DAYS)},
        )


def accounts_closed(*, older_than: timedelta = timedelta(hours=1)) -> list[int]:
    """Accounts closed (account_close) over ``older_than`` ago whose row is still there: their
    erasure never finished. A suspended person has no retired name, so is never one of them.
    One query, through the index on the lower-case username."""
    since = timezone.now() + timedelta(days=settings.USERNAME_QUARANTINE_DAYS) - older_than
    names = RetiredUsername.objects.filter(free_after__lte=since).values("name")
    rows = User.objects.annotate(name=Lower("username")).filter(is_active=False, name__in=names)
    return list(rows.values_list("pk", flat=True))


ACCOUNT_PURGE_BATCH = 1000  # rows of a closed account's relations a statement or a pipeline


def account_purge(*, user_id: int) -> bool:
    """The last step of deleting a closed (inactive) account, in Celery: out of everyone's
    follower and following sets and of everyone's hidden sets, the follow counts of the people
    it followed or who followed it lowered, its own keys and its buffered reads deleted, then
    its row (and with it, by cascade, its follows, reads, blocks, mutes, tokens, picture and
    sessions' records), then its tokens' cache entries and its read count. Idempotent; False when there is no such closed account.
    O(relations of the person), in batches."""
    if User.objects.filter(pk=user_id, is_active=False).first() is None:
        return False
    member_lists_sync(user_id=user_id)  # inactive: out of every list
    client = get_redis()
    relations = Block.objects.filter(Q(blocker_id=user_id) | Q(blocked_id=user_id)).values_list(
        "blocker_id", "blocked_id"
    )
    others = {blocker if blocked == user_id else blocked for blocker, blocked in relations}
    others |= set(Mute.objects.filter(muted_id=user_id).values_list("muter_id", flat=True))
    pipe = client.pipeline(transaction=False)
    for other in others:
        pipe.zrem(keys.hidden(other), user_id)
    for key in keys.user_keys(user_id):
        pipe.delete(key)  # one key a DEL: a cluster takes no other
    pipe.execute()
    bucket = keys.reads_pending(user_id)
    buffered = [field for field, _ in client.hscan_iter(bucket, match=f"{user_id}:*", count=1000)]
    for start in range(0, len(buffered), ACCOUNT_PURGE_BATCH):
        client.hdel(bucket, *buffered[start : start + ACCOUNT_PURGE_BATCH])
    token_hashes = list(ApiToken.objects.filter(user_id=user_id).values_list("key_hash", flat=True))
    with transaction.atomic():
        followees = Follow.objects.filter(follower_id=user_id).values_list("followee_id", flat=True)
        followers = Follow.objects.filter(followee_id=user_id).values_list("follower_id", flat=True)
        User.objects.filter(pk__in=followees).update(followers_count=Greatest(F("followers_count") - 1, 0))
        User.objects.filter(pk__in=followers).update(following_count=Greatest(F("following_count") - 1, 0))
        User.objects.filter(pk=user_id).delete()
    # Their tokens' tombstones (written as the rows went) and read count are in their slot: no
    # fill can race these deletes, since a closed account's token is never cached again.
    token_cache.forget(token_hashes, owner=user_id)
    limits.person_limits_forget(user_id)
    return True


# --- account security: two-factor sign-in, sessions and devices, notices ------------------------


class TwoFactorAlreadyOn(Conflict):
    def __init__(self):
        super().__init__("Two-factor sign-in is already on; turn it off first to enrol a new authenticator.")


class TwoFactorNotStarted(Conflict):
    def __init__(self):
        super().__init__("There is no enrolment to confirm; start one with POST /api/v1/me/2fa first.")


class WrongCode(Invalid):
    def __init__(self):
        super().__init__("That code is wrong or was already used; type the code your authenticator app shows now.")


class WrongPasswordOrCode(NotAllowed):
    def __init__(self):
        super().__init__("The password or the one-time code is wrong; two-factor sign-in stays on.")


class SessionNotFound(NotFound):
    def __init__(self, session_id: str):
        super().__init__(f"You have no session or token {session_id[:40]!r}; GET /api/v1/me/sessions lists them.")


def second_factor_check(*, user: User, code: str | None) -> bool:
    """Whether ``code`` passes ``user``'s second factor: True when two-factor is off; else a
    TOTP code not used before or an unused recovery code (spent here). A wrong code counts
    against the account's sign-in throttle once more (``RateLimited`` past it). O(1) queries."""
    if not two_factor.is_on(user.pk):
        return True
    if code and (
        two_factor.code_take(user_id=user.pk, code=code) or two_factor.recovery_take(user_id=user.pk, code=code)
    ):
        return True
    login_attempt(account=user.username)
    return False


def two_factor_start(*, user: User) -> dict:
    """Start enrolling an authenticator: a new secret and its otpauth:// address (two-factor is
    not on until two_factor_confirm). ``TwoFactorAlreadyOn`` if it is on."""
    if two_factor.is_on(user.pk):
        raise TwoFactorAlreadyOn()
    secret = two_factor.enrolment_start(user_id=user.pk)
    return {"secret": secret, "otpauth_uri": two_factor.provisioning_uri(secret, username=user.username)}


def two_factor_confirm(*, user: User, code: str) -> list[str]:
    """Turn two-factor on with the first code of the enrolled secret; the recovery codes, shown
    this once. ``WrongCode`` (counted against the sign-in throttle) if the code does not match."""
    if two_factor.is_on(user.pk):
        raise TwoFactorAlreadyOn()
    if not TwoFactor.objects.filter(user_id=user.pk).exists():
        raise TwoFactorNotStarted()
    if not two_factor.code_take(user_id=user.pk, code=code, confirmed=False):
        login_attempt(account=user.username)
        raise WrongCode()
    codes = two_factor.confirm(user_id=user.pk)
    mail.security_notice(
        user=user, subject="Two-factor sign-in is on", what="Two-factor sign-in was turned on for your account."
    )
    return codes


def two_factor_seed(*, user: User, secret: str) -> None:
    """Two-factor on with a known key, no code asked (the demo admin: seed_demo). No mail."""
    two_factor.enrolment_start(user_id=user.pk, secret=secret)
    two_factor.confirm(user_id=user.pk)


def two_factor_disable(*, user: User, password: str, code: str) -> None:
    """Turn two-factor off, confirmed by the password and a code (TOTP or recovery);
    ``WrongPasswordOrCode`` otherwise (a wrong code counted against the sign-in throttle).
    Idempotent: with it off, the right password is enough and nothing changes."""
    if not user.check_password(password):
        raise WrongPasswordOrCode()
    if not two_factor.is_on(user.pk):
        two_factor.remove(user_id=user.pk)  # an enrolment never confirmed goes too
        return
    if not second_factor_check(user=user, code=code):
        raise WrongPasswordOrCode()
    two_factor.remove(user_id=user.pk)
    mail.security_notice(
        user=user, subject="Two-factor sign-in is off", what="Two-factor sign-in was turned off for your account."
    )


def _device_known(user: User, user_agent: str) -> bool:
    """Whether the person signed in from this browser before (a session or a token of theirs
    names the same User-Agent). Two indexed queries."""
    return (
        UserSession.objects.filter(user=user, user_agent=user_agent).exists()
        or ApiToken.objects.filter(user=user, user_agent=user_agent).exists()
    )


def sign_in_recorded(*, user: User, user_agent: str, session_key: str | None = None) -> None:
    """Record a sign-in: a session (with its key) or a token (recorded by token_sign_in). The
    person is told by mail when the browser is one they never signed in from."""
    user_agent = user_agent[:USER_AGENT_MAX]
    if not _device_known(user, user_agent):
        mail.security_notice(
            user=user,
            subject="A sign-in from a new device",
            what=f"Someone signed in to your account from a device we had not seen: {user_agent or 'unknown browser'}.",
        )
    if session_key:
        UserSession.objects.get_or_create(user=user, session_key=session_key, defaults={"user_agent": user_agent})


def session_logged_in(sender, request, user, **kwargs) -> None:
    """Django's user_logged_in signal (connected in social.apps): each log-in's session is
    recorded, so deleting the account or ending it from the settings page can end it."""
    if request is not None and getattr(request, "session", None) is not None and request.session.session_key:
        sign_in_recorded(
            user=user, user_agent=request.headers.get("User-Agent", ""), session_key=request.session.session_key
        )


def token_sign_in(*, user: User, user_agent: str) -> str:
    """A new bearer token after a sign-in (password, and second factor when on), recorded as a
    device of the person (a mail when it is new)."""
    sign_in_recorded(user=user, user_agent=user_agent)
    return tokens.token_create(user=user, user_agent=user_agent[:USER_AGENT_MAX])


def session_touch(*, session, user_id: int, now: float) -> None:
    """Note a session's use at most every SESSION_TOUCH_SECONDS (a time kept in the session
    itself, so the other requests cost nothing). One UPDATE when due."""
    if now - session.get("touched", 0) < SESSION_TOUCH_SECONDS or not session.session_key:
        return
    session["touched"] = now
    with replicas.bookkeeping():  # no write a reader reads back: its person keeps the replica
        UserSession.objects.filter(user_id=user_id, session_key=session.session_key).update(last_used_at=timezone.now())


def session_end(*, user: User, session_id: str) -> None:
    """End one of a person's sessions ("s<id>") or tokens ("t<id>") at once: the session's
    row goes (its next request is signed out), or the token's (its cache entry revoked by
    the post_delete signal). ``SessionNotFound`` for anyone else's or none. O(1)."""
    if not SESSION_ID_RE.match(session_id):
        raise SessionNotFound(session_id)
    kind, number = session_id[:1], session_id[1:]
    if kind == "t":
        if not ApiToken.objects.filter(user=user, pk=int(number)).delete()[0]:
            raise SessionNotFound(session_id)
        return
    with transaction.atomic():
        row = UserSession.objects.filter(user=user, pk=int(number)).select_for_update().first()
        if row is None:
            raise SessionNotFound(session_id)
        Session.objects.filter(session_key=row.session_key).delete()
        row.delete()


def sessions_end_others(*, user: User, session_key: str | None, token_key: str | None) -> int:
    """End every session and token of a person but the one of this request. How many went."""
    keep_hash = ApiToken.hash_key(token_key) if token_key else None
    with transaction.atomic():
        ended = ApiToken.objects.filter(user=user).exclude(key_hash=keep_hash or "").delete()[0]
        others = UserSession.objects.filter(user=user).exclude(session_key=session_key or "")
        Session.objects.filter(session_key__in=list(others.values_list("session_key", flat=True))).delete()
        ended += others.delete()[0]
    return ended
