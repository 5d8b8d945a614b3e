import hashlib
import secrets

from django.contrib.auth.models import AbstractUser, UserManager
from django.core.validators import RegexValidator
from django.db import models
from django.db.models.functions import Lower

from social.keys import token_user
from social.rules import USERNAME_MAX, USERNAME_RE, USERNAME_WORDS
from ugcsite.redis import get_redis


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
    # Denormalised counts for profiles, kept in step by the services in the same transaction
    # as the row they count, so a profile never counts rows (rebuild_redis recounts them).
    followers_count = models.PositiveIntegerField(default=0)
    following_count = models.PositiveIntegerField(default=0)
    boards_count = models.PositiveIntegerField(default=0)

    objects = CaseInsensitiveUserManager()

    class Meta:
        constraints = [models.UniqueConstraint(Lower("username"), name="user_username_ci_unique")]
        # People to follow are the most followed: suggestions read this index, not every user.
        indexes = [models.Index(fields=["-followers_count"], name="user_most_followed_idx")]

    def save(self, *args, **kwargs):
        super().save(*args, **kwargs)
        if not self.is_active and self.pk:
            # However it was deactivated (the admin's form, a shell), cached tokens stop at once.
            hashes = list(self.api_tokens.values_list("key_hash", flat=True))
            if hashes:
                get_redis().delete(*(token_user(h) for h in hashes))


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


class ApiToken(models.Model):
    """A bearer token of the API. Only its SHA-256 is stored, so a database leak reveals no token."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_tokens")
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    @staticmethod
    def hash_key(key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest()

    @staticmethod
    def new_key() -> str:
        return secrets.token_urlsafe(32)

    def __str__(self):
        return f"token of {self.user_id}, expires {self.expires_at:%Y-%m-%d}"
