import json

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models


class Board(models.Model):
    """A published whiteboard: the source of truth. Redis holds only what can be rebuilt from here."""

    class Kind(models.TextChoices):
        SKETCH = "sketch"
        DIAGRAM = "diagram"
        NOTE = "note"
        COMIC = "comic"
        MAP = "map"

    class State(models.TextChoices):
        PUBLISHED = "published"
        HIDDEN = "hidden", "hidden by staff"
        DELETED = "deleted", "deleted by its author"

    # Snowflake id (feeds.ids): time-ordered, below 2^53, its own sorted-set score.
    id = models.BigIntegerField(primary_key=True, editable=False)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="boards")
    title = models.CharField(max_length=120)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    tags = ArrayField(models.CharField(max_length=32), size=10, default=list, blank=True)
    # The drawing as compact JSON text, exactly as validated: served without re-encoding.
    doc_json = models.TextField("drawing (JSON)")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    views = models.BigIntegerField(default=0)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PUBLISHED)

    class Meta:
        indexes = [
            models.Index(fields=["author", "-id"], name="board_author_recent_idx"),
            models.Index(fields=["state", "-id"], name="board_state_recent_idx"),
            GinIndex(fields=["tags"], name="board_tags_gin"),
        ]

    def __str__(self):
        return f"{self.title} ({self.id})"

    @property
    def doc(self) -> dict:
        return json.loads(self.doc_json)

    @property
    def is_visible(self) -> bool:
        return self.state == self.State.PUBLISHED
