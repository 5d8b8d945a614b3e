import hashlib
import secrets

from django.contrib.auth.models import AbstractUser, UserManager
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import F, Func, Value
from django.db.models.functions import Concat, Lower, Now
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from django.utils import timezone

from social import mail, token_cache
from social.rules import BIO_MAX, DISPLAY_NAME_MAX, USER_AGENT_MAX, USERNAME_MAX, USERNAME_RE, USERNAME_WORDS


class CaseInsensitiveUserManager(UserManager):
    def get_by_natural_key(self, username):
        return self.get(username__iexact=username)


class User(AbstractUser):
    """A person. Usernames are unique case-insensitively and keep the spelling given at sign-up.

    Suspension is Django's own ``is_active = False``: the user can no longer sign in or use a token.
    """

    username = models.CharField(
        max_length=USERNAME_MAX,
        unique=True,
        validators=[RegexValidator(USERNAME_RE.pattern, "3-30 letters, digits or underscores.")],
        help_text=f"{USERNAME_WORDS}.",
    )
    # Defaults in the database too, so rows inserted without them (bulk loads, processes of
    # the previous release during a deploy) still get them.
    display_name = models.CharField(max_length=DISPLAY_NAME_MAX, blank=True, default="", db_default="")
    bio = models.CharField(max_length=BIO_MAX, blank=True, default="", db_default="")
    # Social reading is opt-in (RockMelt's rule): until this is on, no one's reading answer
    # names this person, and it stops the moment it is turned off (read on every answer).
    share_reading = models.BooleanField(
        default=False, db_default=False, help_text="Whether the people who follow them may see which boards they read."
    )
    # Denormalised counts, kept in step by the services in the same transaction as the row they
    # count (rebuild_redis recounts them): follow edges in PostgreSQL, suspended people
    # included, for ranking suggestions and for staff. A profile shows the sizes of its lists
    # instead (social.graph.profile_counts), which leave suspended people out.
    followers_count = models.PositiveIntegerField(default=0)
    following_count = models.PositiveIntegerField(default=0)
    boards_count = models.PositiveIntegerField(default=0)
    # When the person was last active (any authenticated call), copied from the last-seen index
    # in Redis by beat (feeds.timelines.activity), so a lost Redis gets its activity marks back: at most one
    # flush interval behind. NULL: not seen since the column was added (or bulk-loaded).
    last_seen = models.DateTimeField(null=True, blank=True, editable=False)
    # What people search by (social.search): the username and display name, lower case and
    # without accents, computed by PostgreSQL on every write (a stored generated column), so no
    # write path (admin, bulk loads) can leave it stale. Trigram-indexed: prefix and typo search.
    search_name = models.GeneratedField(
        expression=Func(
            Concat(F("username"), Value(" "), F("display_name")),
            function="ugc_search_name",
            output_field=models.TextField(),
        ),
        output_field=models.TextField(),
        db_persist=True,
        editable=False,
    )
    # 0 while the avatar is the identicon; bumped by every upload, so the avatar's address
    # (with ?v=) changes and a browser never shows a stale picture (social.avatars).
    avatar_version = models.PositiveIntegerField(default=0, db_default=0, editable=False)
    # Whether ``email`` (optional; AbstractUser's field) was confirmed by the link sent to it
    # (social.mail): only a confirmed address gets a password reset. A new address starts false.
    email_verified = models.BooleanField(default=False, db_default=False)

    objects = CaseInsensitiveUserManager()

    class Meta:
        constraints = [models.UniqueConstraint(Lower("username"), name="user_username_ci_unique")]
        # People to follow are the most followed: suggestions read this index, not every user.
        indexes = [
            models.Index(fields=["-followers_count"], name="user_most_followed_idx"),
            # Names alike (typos), found without order: GIN, not GiST, whose walk nearest first
            # reads the whole index when a million names look alike (social.search). Without
            # GIN's pending list: names change rarely, and every search would read the list.
            GinIndex(
                OpClass(F("search_name"), name="gin_trgm_ops"), name="user_search_name_trgm_gin", fastupdate=False
            ),
            # Names that start with the query, in name order (the name itself first).
            models.Index(OpClass(F("search_name"), name="text_pattern_ops"), name="user_search_name_prefix"),
        ]

    def save(self, *args, **kwargs):
        # set_password() leaves the new password here until the save (a hash upgrade at log-in
        # does not: Django clears it first).
        new_password = self._password is not None and not self._state.adding
        super().save(*args, **kwargs)
        if new_password or not self.is_active:
            # However it happened (the admin's form, a shell, a service), a new password or a
            # suspension ends every token at once (docs/api.md, "Operations"): the rows go, and each
            # one's cache entry with it (token_deleted below).
            self.api_tokens.all().delete()
        if new_password:
            mail.security_notice(
                user=self, subject="Your password was changed", what="The password of your account was changed."
            )


class Follow(models.Model):
    """One edge of the follow graph: ``follower`` reads ``followee``'s boards in their feed."""

    follower = models.ForeignKey(User, on_delete=models.CASCADE, related_name="following_edges")
    followee = models.ForeignKey(User, on_delete=models.CASCADE, related_name="follower_edges")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["follower", "followee"], name="follow_unique_pair"),
            models.CheckConstraint(condition=~models.Q(follower=models.F("followee")), name="follow_not_self"),
        ]
        indexes = [
            models.Index(fields=["followee", "-created_at"], name="follow_followers_idx"),
            models.Index(fields=["follower", "-created_at"], name="follow_following_idx"),
        ]

    def __str__(self):
        return f"{self.follower_id} -> {self.followee_id}"


class Block(models.Model):
    """``blocker`` blocked ``blocked``: no follow and no invitation between them either way,
    neither sees the other's boards in any list, and ``blocked`` gets 404 for ``blocker``'s
    profile and boards (feeds.services.safety). Mirrored in Redis by social.hiding."""

    blocker = models.ForeignKey(User, on_delete=models.CASCADE, related_name="blocks_made", db_index=False)
    blocked = models.ForeignKey(User, on_delete=models.CASCADE, related_name="blocks_received")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["blocker", "blocked"], name="block_unique_pair"),
            models.CheckConstraint(condition=~models.Q(blocker=models.F("blocked")), name="block_not_self"),
        ]

    def __str__(self):
        return f"{self.blocker_id} blocks {self.blocked_id}"


class Mute(models.Model):
    """``muter`` does not see ``muted``'s boards or notifications; ``muted`` is not told and
    nothing else changes (a follow stays). Mirrored in Redis by social.hiding."""

    muter = models.ForeignKey(User, on_delete=models.CASCADE, related_name="mutes_made", db_index=False)
    muted = models.ForeignKey(User, on_delete=models.CASCADE, related_name="mutes_received")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["muter", "muted"], name="mute_unique_pair"),
            models.CheckConstraint(condition=~models.Q(muter=models.F("muted")), name="mute_not_self"),
        ]

    def __str__(self):
        return f"{self.muter_id} mutes {self.muted_id}"


class RetiredUsername(models.Model):
    """A deleted account's username, kept (lower case) so that nobody takes it until
    ``free_after`` (USERNAME_QUARANTINE_DAYS after the deletion): old links and mentions do not
    lead to a stranger at once. Nothing else of the account is kept."""

    name = models.CharField(max_length=USERNAME_MAX, primary_key=True)
    free_after = models.DateTimeField()

    def __str__(self):
        return f"{self.name} (free after {self.free_after:%Y-%m-%d})"


class UserSession(models.Model):
    """Which browser sessions a person logged in (recorded at each log-in), so that deleting
    the account ends them all without decoding every session of the site, and so that the
    person sees where they are signed in and ends one (GET/DELETE /api/v1/me/sessions)."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    session_key = models.CharField(max_length=40)
    created_at = models.DateTimeField(default=timezone.now, db_default=Now())
    # Touched at most every SESSION_TOUCH_SECONDS (social.services.session_touch), not every request.
    last_used_at = models.DateTimeField(default=timezone.now, db_default=Now())
    user_agent = models.CharField(max_length=USER_AGENT_MAX, blank=True, default="", db_default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "session_key"], name="user_session_unique")]

    def __str__(self):
        return f"session of {self.user_id}"


class Read(models.Model):
    """That a person read a board on a day (UTC), with the latest time that day: social reading
    written through to PostgreSQL in batches from a Redis buffer (social.reading.reads_flush),
    so a lost Redis gets the last READ_RETENTION of reads back. Rows older than the retention
    are pruned by beat. The key starts with the day: pruning deletes whole days by it, and an
    upsert's conflict target is the key itself (no other index to keep up).
    """

    pk = models.CompositePrimaryKey("day", "reader_id", "board_id")
    day = models.DateField()
    # No index of its own: reads are looked up in Redis, never here by reader (people are
    # suspended, not deleted, so the cascade is for completeness only).
    reader = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+", db_index=False)
    board_id = models.BigIntegerField()  # a feeds board; no foreign key: social knows nothing of feeds
    read_at = models.DateTimeField()

    def __str__(self):
        return f"{self.reader_id} read {self.board_id} on {self.day}"


class Avatar(models.Model):
    """A person's uploaded picture, already resized (social.avatars): a small WebP square.

    Kept in PostgreSQL rather than under MEDIA_ROOT: it is a few KB, the site runs as several
    processes on several machines with no shared disk, and PostgreSQL is what is backed up and
    restored; it is served by a view with long caching (the address carries the version)."""

    user = models.OneToOneField(User, on_delete=models.CASCADE, primary_key=True, related_name="avatar")
    image = models.BinaryField()
    content_type = models.CharField(max_length=32)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"avatar of {self.user_id} ({len(self.image)} bytes)"


class ApiToken(models.Model):
    """A bearer token of the API. Only its SHA-256 is stored, so a database leak reveals no token."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_tokens")
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)
    # Written when the token's cache entry is filled (social.tokens.token_user_id): at most every
    # token_cache.CACHE_SECONDS, so a busy token costs no write a request.
    last_used_at = models.DateTimeField(null=True, blank=True)
    user_agent = models.CharField(max_length=USER_AGENT_MAX, blank=True, default="", db_default="")

    @staticmethod
    def hash_key(key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest()

    @staticmethod
    def new_key() -> str:
        return secrets.token_urlsafe(32)

    def __str__(self):
        return f"token of {self.user_id}, expires {self.expires_at:%Y-%m-%d}"


class TwoFactor(models.Model):
    """A person's TOTP secret (RFC 6238, social.two_factor). ``confirmed_at`` NULL: enrolment
    started, not on yet. ``last_step`` is the time step of the last code accepted: a code of that
    step or an earlier one is refused, so a code works once."""

    user = models.OneToOneField(User, on_delete=models.CASCADE, primary_key=True, related_name="two_factor")
    secret = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    last_step = models.BigIntegerField(default=0)

    def __str__(self):
        return f"two-factor of {self.user_id} ({'on' if self.confirmed_at else 'enrolling'})"


class Passkey(models.Model):
    """A WebAuthn credential (a passkey) of a person (social.passkeys): its id and public key as
    the authenticator gave them at registration, and the signature counter it last reported."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="passkeys")
    credential_id = models.BinaryField(unique=True)
    public_key = models.BinaryField()
    sign_count = models.BigIntegerField(default=0)
    name = models.CharField(max_length=USER_AGENT_MAX, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"passkey of {self.user_id}"


class RecoveryCode(models.Model):
    """One single-use recovery code of a person with two-factor on; only its SHA-256 is kept
    (the codes are random, 50 bits each: no salt or slow hash needed)."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="recovery_codes")
    code_hash = models.CharField(max_length=64)
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "code_hash"], name="recovery_code_unique")]

    def __str__(self):
        return f"recovery code of {self.user_id}{' (used)' if self.used_at else ''}"


@receiver(post_delete, sender=ApiToken)
def token_deleted(sender, instance: ApiToken, **kwargs) -> None:
    """However a token is deleted (the API, the admin, a queryset: Django sends this for each
    row when a receiver listens), its cached entry is revoked at once."""
    token_cache.revoke([instance.key_hash], owner=instance.user_id)


@receiver(post_save, sender=ApiToken)
def token_saved(sender, instance: ApiToken, created: bool, **kwargs) -> None:
    """A token changed in place (its expiry, say) is read afresh on its next use."""
    if not created:
        token_cache.forget([instance.key_hash], owner=instance.user_id)
