import json

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models

from feeds.rules import (
    BOARD_KINDS,
    IMAGE_ID_LENGTH,
    MAX_TAGS,
    MAX_TITLE,
    REPORT_TEXT_MAX,
    CommentPolicy,
    NotificationKind,
    ReportReason,
    Timeline,
)


class Board(models.Model):
    """A published whiteboard: the source of truth. Redis holds only what can be rebuilt from here."""

    Kind = models.TextChoices("Kind", [(kind.upper(), kind) for kind in BOARD_KINDS])

    class State(models.TextChoices):
        PUBLISHED = "published"
        HIDDEN = "hidden", "hidden by staff"
        SUSPENDED = "suspended", "hidden: author suspended"
        DELETED = "deleted", "deleted by its author"

    # Snowflake id (feeds.timelines.ids): time-ordered, below 2^53, its own sorted-set score.
    id = models.BigIntegerField(primary_key=True, editable=False)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="boards")
    title = models.CharField(max_length=MAX_TITLE)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    tags = ArrayField(models.CharField(max_length=32), size=MAX_TAGS, default=list, blank=True)
    # The drawing as compact JSON text, exactly as validated: served without re-encoding.
    doc_json = models.TextField("drawing (JSON)")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    views = models.BigIntegerField(default=0)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PUBLISHED)
    # What search matches (feeds.search): the title (weight A), the tags (B) and the text
    # elements of the drawing (C), without accents, computed by PostgreSQL on every insert and
    # update of those columns (a stored generated column: no write path can leave it stale).
    # Search finds boards through BoardTerm, and reads this to rank and check what it found.
    search_vector = models.GeneratedField(
        expression=models.Func(
            models.F("title"),
            models.F("tags"),
            models.F("doc_json"),
            function="ugc_board_search",
            output_field=SearchVectorField(),
        ),
        output_field=SearchVectorField(),
        db_persist=True,
        editable=False,
    )
    # The live sequence number (feeds.live) of the last op that doc_json holds: a compaction
    # writes only a later one, and a board that goes live again starts counting from here.
    live_seq = models.BigIntegerField(db_default=0)  # a default in PostgreSQL too: bulk loads leave it out
    # The likes that count (Like.counted), changed in the like's own transaction: one increment
    # a like, never a recount (feeds.likes). G and the likes orders carry it in Redis.
    likes = models.BigIntegerField(default=0, db_default=0)
    # Boosts (ActivityPub Announce) from the fediverse, moved in the boost's own transaction
    # (feeds.federation.inbox): one increment a boost, never a recount.
    boosts = models.BigIntegerField(default=0, db_default=0)
    # The board this one is a remix of (its direct source). No constraint: a source's row may go
    # (its author's account purged) while the remix stays, crediting "a deleted board".
    remixed_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    remixable = models.BooleanField(default=True, db_default=True)  # its author may turn remixing off
    # The published comments (Comment.State.PUBLISHED), moved in the comment's own transaction:
    # one increment a comment, never a recount (feeds.comments). G carries it as ``comments``.
    comments = models.BigIntegerField(default=0, db_default=0)
    commenting = models.CharField(
        max_length=16, choices=CommentPolicy.choices, default=CommentPolicy.EVERYONE, db_default=CommentPolicy.EVERYONE
    )

    class Meta:
        indexes = [
            models.Index(fields=["author", "-id"], name="board_author_recent_idx"),
            models.Index(
                fields=["remixed_from", "-id"],
                condition=models.Q(remixed_from__isnull=False, state="published"),
                name="board_remixes_idx",
            ),
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


class BoardTerm(models.Model):
    """One search term of a published board, for feeds.search: each lexeme of its search vector,
    and "#" + each of its tags (a tag matched whole). Written only by PostgreSQL: a trigger on
    feeds_board (migration 0013) adds and removes a board's rows in the statement that inserts,
    updates, hides or deletes it, so no write path (API, admin, COPY, a suspension) leaves them
    stale. The primary key orders each term's boards by id, newest last, which a GIN index
    cannot: the newest boards of a term are read from its end, without reading the rest. The
    "C" collation makes a prefix a range of the key, in any database's locale."""

    pk = models.CompositePrimaryKey("term", "board_id")
    term = models.TextField(db_collation="C")
    board_id = models.BigIntegerField()  # no foreign key: the trigger removes the row with the board

    def __str__(self):
        return f"{self.term} {self.board_id}"


class BoardEditor(models.Model):
    """Someone the board's author invited to draw on it (docs/api.md, "Shared boards, live"): they may
    change its drawing, nothing else. The board keeps its one author for feeds and profiles."""

    board = models.ForeignKey(Board, on_delete=models.CASCADE, related_name="editor_rows")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="board_editor_rows")
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["board", "user"], name="board_editor_unique")]
        indexes = [models.Index(fields=["user", "-board"], name="board_editor_user_idx")]

    def __str__(self):
        return f"user {self.user_id} draws on board {self.board_id}"


class Like(models.Model):
    """One person's like of a board: the truth behind Board.likes and the Redis like sets
    (feeds.likes). ``counted`` is false while its person is suspended or their account is
    closing: the row stays (a lifted suspension counts it again), the count does not."""

    board = models.ForeignKey(Board, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField()
    counted = models.BooleanField(default=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["board", "user"], name="like_once")]
        indexes = [
            models.Index(fields=["board", "-created_at"], name="like_board_recent_idx"),
            models.Index(fields=["user", "-created_at"], name="like_user_recent_idx"),
        ]

    def __str__(self):
        return f"user {self.user_id} likes board {self.board_id}"


class Comment(models.Model):
    """A comment on a board, or a reply to one (docs/api.md, "Comments"; feeds.comments).

    Replies are one level deep: ``reply_to`` is always a top comment, and ``thread`` is the top
    comment's id (a top comment's own), so a board's thread in order is its comments by
    (thread, id): each top comment followed by its replies, oldest first, read from one index.
    The author is a local person, or (federation) a remote one named by ``remote_handle``
    (``user@host``) with ``author`` null; a comment removed while it has replies stays as a
    "deleted" placeholder with neither, and no text."""

    class State(models.TextChoices):
        PUBLISHED = "published"
        DELETED = "deleted", "deleted (a placeholder kept for its replies)"
        HIDDEN = "hidden", "hidden by staff"
        SUSPENDED = "suspended", "hidden: author suspended"

    board = models.ForeignKey(Board, on_delete=models.CASCADE, related_name="+")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    remote_handle = models.CharField(max_length=255, blank=True, default="")  # user@host of a fediverse author
    reply_to = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )  # no constraint: a placeholder's row may go with its last reply; its replies keep their thread
    thread = models.BigIntegerField()  # the top comment's id (its own for a top comment)
    text = models.TextField(blank=True)  # plain text as sent (trimmed); escaped where it is shown
    mentions = ArrayField(models.CharField(max_length=30), default=list, blank=True)  # names linked, lower case
    created_at = models.DateTimeField()
    edited_at = models.DateTimeField(null=True, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PUBLISHED)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(state="published") | models.Q(author__isnull=False) | ~models.Q(remote_handle=""),
                name="comment_has_author",
            ),
        ]
        indexes = [
            models.Index(fields=["board", "thread", "id"], name="comment_thread_idx"),
            # A person's comments (erasure, export), and on one board (what a reader who hides
            # them must not count: feeds.comments.comments_hidden_count).
            models.Index(fields=["author", "board", "id"], name="comment_author_idx"),
        ]

    def __str__(self):
        return f"comment {self.pk} on board {self.board_id}"


class TimelineChunk(models.Model):
    """Up to 100 ids of a timeline that fell out of its hot head in Redis (list of lists).

    One row a chunk; (owner, timeline, first_id, last_id) is unique, so re-archiving the same
    ids after a crash between the commit and the Redis trim inserts nothing.
    """

    Timeline = Timeline

    owner_id = models.BigIntegerField()  # a user id; no foreign key: chunks outlive nothing but are never joined
    timeline = models.CharField(max_length=1, choices=Timeline.choices)
    first_id = models.BigIntegerField()  # the smallest id in the chunk
    last_id = models.BigIntegerField()  # the largest
    ids = ArrayField(models.BigIntegerField())  # newest first
    archived_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["owner_id", "timeline", "first_id", "last_id"], name="chunk_unique_range"),
        ]
        indexes = [models.Index(fields=["owner_id", "timeline", "-last_id"], name="chunk_read_idx")]

    def __str__(self):
        return f"{self.get_timeline_display()} of user {self.owner_id}: {len(self.ids)} ids {self.first_id}..{self.last_id}"


class BoardViewHour(models.Model):
    """Views of one board in one hour (hours since the epoch, as feeds.discovery.trending counts
    them), written with Board.views by the view-count flush: enough to rebuild the trending
    window after Redis is lost. Hours past the window are pruned by beat. The key starts with
    the hour: the window and the pruning read by hour, and an upsert's conflict target is the
    key itself (no other index to keep up).
    """

    pk = models.CompositePrimaryKey("hour", "board_id")
    hour = models.IntegerField()
    board_id = models.BigIntegerField()  # no foreign key: written in bulk for boards just viewed
    views = models.BigIntegerField()

    def __str__(self):
        return f"board {self.board_id}: {self.views} views in hour {self.hour}"


class ViewFlush(models.Model):
    """One batch of pending view counts that reached PostgreSQL, by the token the batch got in
    Redis: a flush that dies after its commit and before it clears the batch is not counted
    twice by the next one. Pruned after a day."""

    token = models.CharField(max_length=32, unique=True)
    applied_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self):
        return f"view flush {self.token} at {self.applied_at:%Y-%m-%d %H:%M:%S}"


class ArchiveRun(models.Model):
    """What one run of the archival did, for staff (admin) and for debugging."""

    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True)
    trigger = models.CharField(max_length=16)  # beat, task, command
    timelines = models.PositiveIntegerField(default=0)
    chunks = models.PositiveIntegerField(default=0)
    ids = models.PositiveIntegerField(default=0)
    errors = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at"]

    def summary(self) -> dict:
        return {"timelines": self.timelines, "chunks": self.chunks, "ids": self.ids, "errors": bool(self.errors)}


class Outbox(models.Model):
    """A board's fan-out (or retraction) that must still reach its author's followers: written
    in the same transaction as the board's change (a transactional outbox), deleted when the
    batch of followers still queued is written, and sent again by beat when it waits too long (the
    broker was down or lost its queue). A board has at most one row per action."""

    class Action(models.TextChoices):
        FANOUT = "fanout", "deliver to the followers' feeds"
        RETRACT = "retract", "take out of the followers' feeds"

    board_id = models.BigIntegerField()  # no foreign key: a retraction outlives nothing, and rows are few
    action = models.CharField(max_length=8, choices=Action.choices)
    queued_at = models.DateTimeField()  # stamped by every batch of the walk: due when it stops moving
    pending = models.IntegerField(default=1)  # batches queued and not yet written (feeds.timelines.outbox)
    generation = models.IntegerField(default=0)  # one more each time beat sends the walk again

    class Meta:
        constraints = [models.UniqueConstraint(fields=["board_id", "action"], name="outbox_one_per_action")]
        indexes = [models.Index(fields=["queued_at"], name="outbox_due_idx")]

    def __str__(self):
        return f"{self.action} of board {self.board_id}, queued {self.queued_at:%Y-%m-%d %H:%M:%S}"


class Notification(models.Model):
    """Something that happened to a person: one row per (recipient, kind, board, day) while
    unread, gathering its actors ("alice and 41 others followed you"; feeds.notifications).
    Reading it closes the row: what happens next starts a new one."""

    Kind = NotificationKind

    recipient = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    board_id = models.BigIntegerField(
        default=0
    )  # 0: about no board (a follow); no foreign key: a board leaving keeps the row
    bucket = models.IntegerField()  # seconds since the epoch // NOTIFICATION_BUCKET_SECONDS
    actors = ArrayField(models.BigIntegerField())  # user ids, latest first, at most NOTIFICATION_ACTORS_KEPT
    actor_count = models.PositiveIntegerField()
    created_at = models.DateTimeField()  # the latest action gathered here
    read = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["recipient", "kind", "board_id", "bucket"],
                condition=models.Q(read=False),
                name="notification_one_unread",
            ),
        ]
        indexes = [
            models.Index(fields=["recipient", "-created_at", "-id"], name="notification_recent_idx"),
            models.Index(fields=["recipient"], condition=models.Q(read=False), name="notification_unread_idx"),
        ]

    def __str__(self):
        return f"{self.kind} for {self.recipient_id}: {self.actor_count} actor(s)"


class Image(models.Model):
    """An uploaded picture (feeds.images): the copy kept in the storage (``file``, under a random
    name that changes when staff hide or show it, so an old address stops answering), its size
    in pixels and bytes. Deleted (row and file) with its uploader's account (feeds.erasure)."""

    class State(models.TextChoices):
        PUBLISHED = "published"
        HIDDEN = "hidden", "hidden by staff"

    id = models.CharField(primary_key=True, max_length=IMAGE_ID_LENGTH, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    file = models.CharField(max_length=200)  # the storage's name of the copy
    preview_file = models.CharField(
        max_length=200, blank=True, default=""
    )  # the small copy (IMAGE_PREVIEW_SIDE, JPEG or PNG)
    content_type = models.CharField(max_length=16)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    size = models.PositiveIntegerField()  # bytes of the stored copies (both): what the quota counts
    state = models.CharField(max_length=16, choices=State.choices, default=State.PUBLISHED)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["owner", "created_at"], name="image_owner_idx")]

    def __str__(self):
        return f"image {self.pk} ({self.width}x{self.height}) of {self.owner_id}"


class ImageUsage(models.Model):
    """The bytes one person's pictures hold, kept beside the rows so a quota check is one locked
    row, not a sum over every picture (feeds.services.images)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="+")
    bytes = models.BigIntegerField(default=0)

    def __str__(self):
        return f"{self.bytes} bytes of pictures of {self.user_id}"


class ReportCase(models.Model):
    """One reported board or person while staff have not decided (feeds.services.reports): the
    reports of it gathered, ``reporters`` of them from distinct people. Past REPORTS_AUTO_HIDE
    the target is hidden (a board) or suspended (a person) until staff decide, ``auto_hidden``.
    Closed with an outcome; a new report after that opens a new case."""

    class Outcome(models.TextChoices):
        ACTIONED = "actioned", "action taken"
        DISMISSED = "dismissed", "dismissed"

    board = models.ForeignKey(Board, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    comment = models.ForeignKey(Comment, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    image = models.ForeignKey(Image, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    person = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    reporters = models.PositiveIntegerField(default=0)
    auto_hidden = models.BooleanField(default=False)
    opened_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, blank=True, default="")
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(board__isnull=False, person__isnull=True, comment__isnull=True, image__isnull=True)
                | models.Q(board__isnull=True, person__isnull=False, comment__isnull=True, image__isnull=True)
                | models.Q(board__isnull=True, person__isnull=True, comment__isnull=False, image__isnull=True)
                | models.Q(board__isnull=True, person__isnull=True, comment__isnull=True, image__isnull=False),
                name="report_case_one_target",
            ),
            models.UniqueConstraint(
                fields=["image"], condition=models.Q(closed_at__isnull=True), name="report_case_open_image"
            ),
            models.UniqueConstraint(
                fields=["comment"], condition=models.Q(closed_at__isnull=True), name="report_case_open_comment"
            ),
            models.UniqueConstraint(
                fields=["board"], condition=models.Q(closed_at__isnull=True), name="report_case_open_board"
            ),
            models.UniqueConstraint(
                fields=["person"], condition=models.Q(closed_at__isnull=True), name="report_case_open_person"
            ),
        ]
        indexes = [
            models.Index(
                fields=["-reporters", "opened_at"], condition=models.Q(closed_at__isnull=True), name="report_case_queue"
            )
        ]

    def __str__(self):
        if self.image_id:
            return f"image {self.image_id}"
        if self.comment_id:
            return f"comment {self.comment_id}"
        return f"board {self.board_id}" if self.board_id else f"person {self.person_id}"


class Report(models.Model):
    """One person's report in a case: why, and what they wrote. Reporting again in an open case
    replaces their reason and text (one report per person and case)."""

    Reason = ReportReason

    case = models.ForeignKey(ReportCase, on_delete=models.CASCADE, related_name="reports")
    reporter = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=16, choices=ReportReason.choices)
    text = models.CharField(max_length=REPORT_TEXT_MAX, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["case", "reporter"], name="report_one_per_person")]

    def __str__(self):
        return f"{self.reason} by {self.reporter_id}"


class StaffAction(models.Model):
    """One staff action on the record (issue 41): who, what, on what, when and why. Written in
    the same transaction as the action (feeds.services.moderation); read-only in the admin, and
    nothing deletes a row but STAFF_ACTIONS_RETENTION_DAYS (beat's staff_actions_prune). The
    staff member's name is kept beside the key, so the record outlives their account."""

    class Action(models.TextChoices):
        HIDE = "hide", "hid a board"
        UNHIDE = "unhide", "unhid a board"
        SUSPEND = "suspend", "suspended a person"
        UNSUSPEND = "unsuspend", "lifted a suspension"
        TAKE_DOWN = "take_down", "took down a reported target"
        DISMISS = "dismiss", "dismissed a report"
        HIDE_COMMENT = "hide_comment", "hid a comment"
        UNHIDE_COMMENT = "unhide_comment", "showed a hidden comment again"
        HIDE_IMAGE = "hide_image", "hid a picture"
        UNHIDE_IMAGE = "unhide_image", "showed a hidden picture again"
        BLOCK_SERVER = "block_server", "blocked a server"
        UNBLOCK_SERVER = "unblock_server", "unblocked a server"

    staff = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    staff_name = models.CharField(max_length=150)
    action = models.CharField(max_length=16, choices=Action.choices)
    target = models.CharField(
        max_length=200,
        help_text='what it was done to: "board 12 (A cat) by alice", "comment 7 on board 12 by bob", "person bob"',
    )
    why = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self):
        return f"{self.staff_name} {self.get_action_display()}: {self.target}"


class Export(models.Model):
    """A person's "take my data" archive (feeds.export): built by a Celery task into a zip under
    EXPORT_DIR, with its progress, served to its owner alone, and deleted (file and row)
    EXPORT_KEEP_HOURS after it is ready."""

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        READY = "ready"
        FAILED = "failed"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    progress = models.PositiveSmallIntegerField(default=0)  # 0-100
    file_name = models.CharField(max_length=100, blank=True, default="")
    size = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["user", "-created_at"], name="export_recent_idx")]

    def __str__(self):
        return f"export {self.pk} of {self.user_id}: {self.status} {self.progress}%"


class BoardVersion(models.Model):
    """A kept version of a board's drawing (feeds.versions): immutable once written. ``n`` counts
    from 1 per board. The doc is stored whole, zlib-compressed (``doc_z``): a version opens with
    one row read and one inflate, and pruning deletes rows without rewriting any other
    (bench/results/versions.md measures this against deltas)."""

    board = models.ForeignKey(Board, on_delete=models.CASCADE, related_name="+")
    n = models.IntegerField()
    created_at = models.DateTimeField()
    # Who changed the board since the version before, by username, the last to change it last.
    authors = ArrayField(models.CharField(max_length=150), default=list)
    elements = models.IntegerField()
    doc_z = models.BinaryField("drawing (zlib-compressed JSON)")
    # The doc's SHA-256: a live board's snapshot equal to the latest version is not kept again.
    digest = models.BinaryField(max_length=32)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["board", "n"], name="board_version_n_uniq")]
        indexes = [models.Index(fields=["created_at"], name="board_version_created_idx")]

    def __str__(self):
        return f"board {self.board_id} version {self.n}"


# --- Federation (feeds.federation; docs/federation.md) ------------------------------------------


class ActorKey(models.Model):
    """The RSA key pair an actor signs with: a person's (``owner`` "user:<id>"), or the instance
    actor's ("instance"), made when first needed (feeds.federation.actors). No foreign key: a
    closed account's key stays until the Delete of its actor is delivered."""

    owner = models.CharField(max_length=40, primary_key=True)
    private_pem = models.TextField()
    public_pem = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"key of {self.owner}"


class RemoteActor(models.Model):
    """An actor of another server, as last fetched (feeds.federation.remote): refetched when its
    signature fails (a rotated key) or when it is older than FEDERATION_ACTOR_REFRESH_SECONDS."""

    uri = models.CharField(max_length=2048, unique=True)
    host = models.CharField(max_length=255, db_index=True)
    handle = models.CharField(max_length=512, blank=True, default="")  # user@host
    kind = models.CharField(max_length=32, default="Person")
    name = models.CharField(max_length=200, blank=True, default="")
    icon_url = models.CharField(max_length=2048, blank=True, default="")
    inbox = models.CharField(max_length=2048)
    shared_inbox = models.CharField(max_length=2048, blank=True, default="")
    key_id = models.CharField(max_length=2048, db_index=True)
    public_pem = models.TextField()
    fetched_at = models.DateTimeField()

    def __str__(self):
        return self.handle or self.uri

    @property
    def delivery_inbox(self) -> str:
        return self.shared_inbox or self.inbox


class RemoteFollow(models.Model):
    """A remote actor following a local person. In PostgreSQL only, never in F's Redis sets:
    local fan-out walks F unchanged, and federation's deliveries read these rows in Celery."""

    actor = models.ForeignKey(RemoteActor, on_delete=models.CASCADE, related_name="follows")
    followee = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    activity_id = models.CharField(max_length=2048)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["followee", "actor"], name="remote_follow_once")]

    def __str__(self):
        return f"{self.actor_id} follows {self.followee_id}"


class RemoteReaction(models.Model):
    """A Like or an Announce (boost) of a board by a remote actor; ``activity_id`` makes a
    repeated delivery harmless, and Undo names it."""

    class Kind(models.TextChoices):
        LIKE = "like"
        ANNOUNCE = "announce"

    kind = models.CharField(max_length=8, choices=Kind.choices)
    actor = models.ForeignKey(RemoteActor, on_delete=models.CASCADE, related_name="reactions")
    board = models.ForeignKey(Board, on_delete=models.CASCADE, related_name="+")
    activity_id = models.CharField(max_length=2048, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "board", "actor"], name="remote_reaction_once")]
        indexes = [models.Index(fields=["board", "kind"], name="remote_reaction_board_idx")]

    def __str__(self):
        return f"{self.kind} of {self.board_id} by {self.actor_id}"


class RemoteNote(models.Model):
    """A remote reply to a board, kept as a Comment whose ``remote_handle`` is its author's
    handle; this row names the Note's id (for Delete and Update) and its author (for avatars and
    for a domain block's clean-up)."""

    comment = models.OneToOneField(Comment, on_delete=models.CASCADE, primary_key=True, related_name="+")
    uri = models.CharField(max_length=2048, unique=True)
    actor = models.ForeignKey(RemoteActor, on_delete=models.CASCADE, related_name="notes")

    def __str__(self):
        return self.uri


class RemoteBlock(models.Model):
    """A person's block of a remote actor: its activities addressed to them are dropped, it stops
    following them, and it receives nothing more of theirs."""

    blocker = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    actor = models.ForeignKey(RemoteActor, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["blocker", "actor"], name="remote_block_once")]


class FederatedHost(models.Model):
    """What we know of another server: a staff block (its inbound activities get 403, nothing
    is delivered there, and what it left here goes), and the distinct days its deliveries failed
    since the last one that succeeded (FEDERATION_FAILURE_DAYS of them: skipped until one does)."""

    host = models.CharField(max_length=255, primary_key=True)
    blocked = models.BooleanField(default=False)
    blocked_at = models.DateTimeField(null=True, blank=True)
    reason = models.CharField(max_length=500, blank=True, default="")
    failure_days = ArrayField(models.DateField(), default=list, blank=True)

    def __str__(self):
        return self.host + (" (blocked)" if self.blocked else "")


class FederationActivity(models.Model):
    """An activity that must reach remote inboxes (feeds.federation.delivery): written in the
    change's own transaction (a transactional outbox, as feeds.timelines.outbox), walked by a
    Celery task into one FederationDelivery per inbox; beat sends the walk again when it does
    not happen within OUTBOX_RESEND_AFTER_SECONDS (the broker was down)."""

    actor_owner = models.CharField(max_length=40)  # the ActorKey that signs it
    actor_id = models.BigIntegerField()  # the local person whose remote followers receive it
    body = models.TextField()  # the activity's JSON
    inboxes = ArrayField(models.CharField(max_length=2048), default=list, blank=True)  # named inboxes (an Accept)
    # A board's Create or Update: its body is built again by the walk (in Celery), from the board as
    # it then stands and with its picture rendered there, never online; a board no longer
    # published by then sends nothing.
    board_id = models.BigIntegerField(null=True, blank=True)
    verb = models.CharField(max_length=8, blank=True, default="")  # "create", "update" with board_id
    to_followers = models.BooleanField(default=True)
    walked = models.BooleanField(default=False)
    queued_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["queued_at"], condition=models.Q(walked=False), name="fed_activity_due_idx")]

    def __str__(self):
        return f"activity {self.pk} of {self.actor_owner}"


class FederationDelivery(models.Model):
    """One activity to one inbox (a shared inbox serves all of a server's followers): tried
    with Mastodon's backoff until it succeeds, fails for good, or runs out of tries."""

    activity = models.ForeignKey(FederationActivity, on_delete=models.CASCADE, related_name="deliveries")
    inbox = models.CharField(max_length=2048)
    host = models.CharField(max_length=255)
    attempts = models.PositiveIntegerField(default=0)
    next_at = models.DateTimeField()
    last_error = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["activity", "inbox"], name="fed_delivery_once")]
        indexes = [models.Index(fields=["next_at"], name="fed_delivery_due_idx")]

    def __str__(self):
        return f"{self.activity_id} to {self.inbox} (try {self.attempts})"


class BoardPicture(models.Model):
    """A board's drawing as PNG (feeds.pictures): rendered once per version of the board and
    kept here, so ``/b/<id>.png`` and federation's attachment are one primary-key read. A new
    version overwrites the row; the board's row going takes it along."""

    board = models.OneToOneField(Board, on_delete=models.CASCADE, primary_key=True, related_name="+")
    # The board's updated_at (microseconds since the epoch, hex) that this PNG shows: the ETag,
    # and the ?v= of its address.
    version = models.CharField(max_length=16)
    png = models.BinaryField()
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    blurhash = models.CharField(max_length=64)
    rendered_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"picture of board {self.board_id} v{self.version}: {self.width}x{self.height}"
