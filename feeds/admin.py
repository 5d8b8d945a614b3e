"""The admin of boards and of the archive, and the moderation actions on people (suspension
takes a person's boards out of every feed, so it lives here, on top of social's UserAdmin)."""

from django.contrib import admin, messages
from django.db import connections, transaction
from django.utils.html import format_html, format_html_join

from feeds import staff_record
from feeds.federation import services as federation
from feeds.images import image_href
from feeds.models import (
    ArchiveRun,
    Board,
    Comment,
    FederatedHost,
    Image,
    Report,
    ReportCase,
    StaffAction,
    TimelineChunk,
)
from feeds.services import (
    boards as services,
    comments as comment_services,
    images as image_services,
    moderation,
    reports,
)
from feeds.timelines import archive
from social.admin import UserAdmin
from social.models import User
from ugcsite.platform.replicas import read_alias


class TagFilter(admin.SimpleListFilter):
    """Filter by one tag, listing the 30 most used."""

    title = "tag"
    parameter_name = "tag"

    def lookups(self, request, model_admin):
        # A scan of all tags, for staff only; discovery's tag indexes will answer this from Redis.
        with connections[read_alias()].cursor() as cursor:  # the replica, as the list's other reads
            cursor.execute(
                f"SELECT tag, count(*) FROM {Board._meta.db_table}, unnest(tags) AS tag "
                "GROUP BY tag ORDER BY count(*) DESC, tag LIMIT 30"
            )
            return [(tag, f"{tag} ({count})") for tag, count in cursor.fetchall()]

    def queryset(self, request, queryset):
        return queryset.filter(tags__contains=[self.value()]) if self.value() else queryset


@admin.register(Board)
class BoardAdmin(admin.ModelAdmin):
    list_display = ("id", "title", "kind", "author", "state", "views", "likes", "created_at")
    list_filter = ("state", "kind", TagFilter)
    search_fields = ("title", "author__username", "=tags")
    list_select_related = ("author",)
    raw_id_fields = ("author",)
    readonly_fields = (
        "id",
        "created_at",
        "updated_at",
        "views",
        "likes",
        "boosts",
        "comments",
        "commenting",
        "remixed_from",
        "live_seq",
    )
    ordering = ("-id",)
    show_full_result_count = False
    actions = ["hide_boards", "unhide_boards"]

    # Every change of what is visible goes through feeds.services, which keeps Redis (the board
    # cache, timelines, feeds) in step with PostgreSQL: so no adding, no hard delete, no editing
    # of the state or the drawing here; title, kind, tags and remixable go through board_update.
    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields + ("author", "state", "doc_json") if obj else self.readonly_fields

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        editable = ("title", "kind", "tags", "remixable")
        changes = {field: form.cleaned_data[field] for field in form.changed_data if field in editable}
        services.board_update(board=obj, changes=changes, unpublished_ok=True)

    @admin.action(description="Hide selected boards", permissions=["change"])
    def hide_boards(self, request, queryset):
        done = sum(
            moderation.board_hide(board=board, staff=request.user) for board in queryset.select_related("author")
        )
        _report(self, request, done, queryset.count(), "hidden", "were not published")

    @admin.action(description="Unhide selected boards", permissions=["change"])
    def unhide_boards(self, request, queryset):
        done = sum(
            moderation.board_unhide(board=board, staff=request.user) for board in queryset.select_related("author")
        )
        _report(self, request, done, queryset.count(), "unhidden", "were not hidden by staff")


admin.site.unregister(User)


@admin.register(User)
class ModeratedUserAdmin(UserAdmin):
    actions = ["suspend_users", "unsuspend_users"]
    # Suspension is the actions below, never the change form's "active" box: only they take
    # the person's boards out of feeds and the person out of everyone's lists.
    readonly_fields = UserAdmin.readonly_fields + ("is_active",)

    @admin.action(description="Suspend selected users", permissions=["change"])
    def suspend_users(self, request, queryset):
        """No more sign-in or tokens, and every board of theirs hidden (feeds.services.moderation.user_suspend)."""
        people = [user for user in queryset if user.pk != request.user.pk and user.is_active]
        if queryset.filter(pk=request.user.pk).exists():
            self.message_user(request, "You cannot suspend yourself; you were left out.", messages.WARNING)
        boards = sum(moderation.user_suspend(user=user, staff=request.user) for user in people)
        self.message_user(
            request,
            f"{len(people)} user{'s' if len(people) != 1 else ''} suspended, "
            f"{boards} board{'s' if boards != 1 else ''} hidden with them.",
            messages.SUCCESS if people else messages.WARNING,
        )

    @admin.action(description="Lift suspension", permissions=["change"])
    def unsuspend_users(self, request, queryset):
        """Sign-in again, and the boards the suspension hid come back (feeds.services.moderation.user_unsuspend)."""
        people = [user for user in queryset if not user.is_active]
        boards = sum(moderation.user_unsuspend(user=user, staff=request.user) for user in people)
        self.message_user(
            request,
            f"Suspension lifted for {len(people)} user{'s' if len(people) != 1 else ''}, "
            f"{boards} board{'s' if boards != 1 else ''} back.",
            messages.SUCCESS if people else messages.WARNING,
        )


def _report(
    model_admin, request, done: int, selected: int, verb: str, skipped_because: str, what: str = "board"
) -> None:
    """One message for a bulk action: how many it changed, and why the rest were left alone."""
    noun = what if done == 1 else what + "s"
    message = f"{done} {noun} {verb}."
    level = messages.SUCCESS
    if done < selected:
        message += f" {selected - done} of the {selected} selected {skipped_because} and were left as they are."
        level = messages.WARNING if done else messages.ERROR
    model_admin.message_user(request, message, level)


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(TimelineChunk)
class TimelineChunkAdmin(ReadOnlyAdmin):
    """The archive of timelines (read-only: written only by the archival)."""

    list_display = ("owner_id", "timeline", "size", "first_id", "last_id", "archived_at")
    list_filter = ("timeline",)
    search_fields = ("=owner_id",)
    ordering = ("-archived_at",)
    show_full_result_count = False

    @admin.display(description="ids")
    def size(self, chunk):
        return len(chunk.ids)


@admin.register(ArchiveRun)
class ArchiveRunAdmin(ReadOnlyAdmin):
    """What the scheduler has done: one row a run, and the totals above the list."""

    list_display = ("started_at", "trigger", "timelines", "chunks", "ids", "duration", "failed")
    list_filter = ("trigger",)
    change_list_template = "admin/feeds/archiverun/change_list.html"

    @admin.display(description="seconds")
    def duration(self, run):
        return f"{(run.finished_at - run.started_at).total_seconds():.2f}" if run.finished_at else "running"

    @admin.display(boolean=True, description="errors")
    def failed(self, run):
        return bool(run.errors)

    def changelist_view(self, request, extra_context=None):
        return super().changelist_view(request, {**(extra_context or {}), "archive": archive.last_run_summary()})


class ReportInline(admin.TabularInline):
    model = Report
    fields = ("reporter", "reason", "text", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


class CaseStatus(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return [("open", "waiting for staff"), ("closed", "decided")]

    def queryset(self, request, queryset):
        if self.value() in (None, "open"):
            return queryset.filter(closed_at__isnull=True)
        return queryset.filter(closed_at__isnull=False)

    def choices(self, changelist):  # "waiting for staff" is what the queue shows first
        for lookup, title in self.lookup_choices:
            yield {
                "selected": self.value() == lookup or (self.value() is None and lookup == "open"),
                "query_string": changelist.get_query_string({self.parameter_name: lookup}),
                "display": title,
            }


@admin.register(ReportCase)
class ReportCaseAdmin(admin.ModelAdmin):
    """The moderation queue: one row per reported board or person, most reporters first, with
    the reasons and what they wrote; the actions decide (feeds.services.reports.case_close),
    take down or dismiss, and every reporter is told."""

    list_display = ("target", "reporters", "reasons", "auto_hidden", "opened_at", "outcome")
    list_filter = (CaseStatus, "outcome", "auto_hidden")
    list_select_related = ("board", "board__author", "person", "comment", "comment__author", "image", "image__owner")
    ordering = ("-reporters", "opened_at")
    inlines = [ReportInline]
    readonly_fields = (
        "board",
        "comment",
        "comment_text",
        "image",
        "person",
        "reporters",
        "auto_hidden",
        "opened_at",
        "closed_at",
        "outcome",
        "closed_by",
        "texts",
    )
    fields = readonly_fields
    actions = ["take_down", "dismiss"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("reports")

    @admin.display(description="the comment's text")
    def comment_text(self, case):
        return case.comment.text if case.comment_id else ""

    @admin.display(description="reported")
    def target(self, case):
        if case.image_id:
            return format_html(
                'picture <a href="{}">{}</a> by {}', image_href(case.image_id), case.image_id, case.image.owner.username
            )
        if case.comment_id:
            who = case.comment.author.username if case.comment.author else "a deleted account"
            return format_html(
                'comment by {} on <a href="/b/{}#comment-{}">board {}</a>: {}',
                who,
                case.comment.board_id,
                case.comment_id,
                case.comment.board_id,
                case.comment.text[:120],
            )
        if case.board_id:
            return format_html(
                'board <a href="/b/{}">{}</a> by {}', case.board_id, case.board.title, case.board.author.username
            )
        return format_html('person <a href="/u/{}">{}</a>', case.person.username, case.person.username)

    @admin.display(description="reasons")
    def reasons(self, case):
        counts: dict[str, int] = {}
        for report in case.reports.all():
            counts[report.get_reason_display()] = counts.get(report.get_reason_display(), 0) + 1
        return ", ".join(f"{reason} ({n})" for reason, n in sorted(counts.items(), key=lambda item: -item[1]))

    @admin.display(description="what they wrote")
    def texts(self, case):
        return format_html_join(
            "",
            "<p>{}: {}</p>",
            ((r.reporter.username, r.text) for r in case.reports.select_related("reporter") if r.text),
        )

    @admin.action(
        description="Take down: hide the board, comment or picture, or suspend the person, and tell the reporters",
        permissions=["change"],
    )
    def take_down(self, request, queryset):
        self._close(request, queryset, ReportCase.Outcome.ACTIONED, "taken down")

    @admin.action(
        description="Dismiss: leave it up (bring back what the reports hid), and tell the reporters",
        permissions=["change"],
    )
    def dismiss(self, request, queryset):
        self._close(request, queryset, ReportCase.Outcome.DISMISSED, "dismissed")

    def _close(self, request, queryset, outcome, verb: str) -> None:
        done = sum(reports.case_close(case=case, outcome=outcome, staff=request.user) for case in queryset)
        skipped = queryset.count() - done
        self.message_user(
            request,
            f"{done} case{'s' if done != 1 else ''} {verb}."
            + (f" {skipped} were decided already and left as they are." if skipped else ""),
            messages.SUCCESS if done else messages.WARNING,
        )


@admin.register(Image)
class ImageAdmin(admin.ModelAdmin):
    """Uploaded pictures: staff hide one (every board that shows it draws a blank box, and its
    address stops answering) or show it again (feeds.services.images.image_hide), on the record."""

    list_display = ("id", "owner", "width", "height", "size", "state", "created_at", "picture")
    list_filter = ("state",)
    list_select_related = ("owner",)
    search_fields = ("id", "owner__username")
    readonly_fields = (
        "id",
        "owner",
        "file",
        "content_type",
        "width",
        "height",
        "size",
        "state",
        "created_at",
        "picture",
    )
    fields = readonly_fields
    actions = ["hide_images", "unhide_images"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="picture")
    def picture(self, image):
        if image.state != Image.State.PUBLISHED:
            return "(hidden)"
        return format_html('<a href="{}">open</a>', image_href(image.pk))

    @admin.action(description="Hide the selected pictures (on the record)", permissions=["change"])
    def hide_images(self, request, queryset):
        done = sum(image_services.image_hide(image=image, staff=request.user) for image in queryset)
        _report(self, request, done, queryset.count(), "hidden", "were hidden already", "picture")

    @admin.action(description="Show the selected hidden pictures again (on the record)", permissions=["change"])
    def unhide_images(self, request, queryset):
        done = sum(image_services.image_hide(image=image, hidden=False, staff=request.user) for image in queryset)
        _report(self, request, done, queryset.count(), "shown again", "were not hidden", "picture")


@admin.register(Comment)
class CommentAdmin(admin.ModelAdmin):
    """Comments, newest first: staff hide one everywhere (the board's count and its open pages
    follow, feeds.services.comments.comment_hide) or bring it back."""

    list_display = ("id", "board_id", "author", "state", "created_at", "short_text")
    list_filter = ("state",)
    list_select_related = ("author",)
    search_fields = ("=id", "=board__id", "author__username")
    ordering = ("-id",)
    readonly_fields = (
        "board",
        "author",
        "remote_handle",
        "reply_to",
        "thread",
        "text",
        "created_at",
        "edited_at",
        "state",
    )
    fields = readonly_fields
    actions = ["hide_comments", "unhide_comments"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="text")
    def short_text(self, comment):
        return comment.text[:80]

    @admin.action(description="Hide the selected comments everywhere", permissions=["change"])
    def hide_comments(self, request, queryset):
        done = sum(self._hide(request, comment, hidden=True) for comment in queryset.select_related("author"))
        self.message_user(request, f"{done} comment(s) hidden.")

    @admin.action(description="Show the selected hidden comments again", permissions=["change"])
    def unhide_comments(self, request, queryset):
        done = sum(self._hide(request, comment, hidden=False) for comment in queryset.select_related("author"))
        self.message_user(request, f"{done} comment(s) shown again.")

    @staticmethod
    def _hide(request, comment, *, hidden: bool) -> bool:
        """Hide or show one comment, on the staff record in the same transaction when it changed."""
        with transaction.atomic():
            changed = comment_services.comment_hide(comment_id=comment.pk, hidden=hidden)
            if changed:
                staff_record.staff_action_record(
                    staff=request.user,
                    action=StaffAction.Action.HIDE_COMMENT if hidden else StaffAction.Action.UNHIDE_COMMENT,
                    target=staff_record.comment_target(comment),
                )
        return bool(changed)


@admin.register(StaffAction)
class StaffActionAdmin(admin.ModelAdmin):
    """Staff actions on the record: read-only, for staff to read (nothing here adds, changes or
    deletes one; only STAFF_ACTIONS_RETENTION_DAYS does, through beat)."""

    list_display = ("created_at", "staff_name", "action", "target", "why")
    list_filter = ("action",)
    search_fields = ("staff_name", "target", "why")
    ordering = ("-created_at",)
    date_hierarchy = "created_at"
    show_full_result_count = False

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(FederatedHost)
class FederatedHostAdmin(admin.ModelAdmin):
    """Other servers (feeds.federation): staff block a domain here. Saving a host blocked rejects
    its inbound activities (403), stops deliveries there and removes its follows, likes, boosts
    and replies (feeds.federation.services.host_block)."""

    list_display = ("host", "blocked", "blocked_at", "reason", "failing_days")
    list_filter = ("blocked",)
    search_fields = ("host",)
    fields = ("host", "blocked", "reason", "failure_days")
    readonly_fields = ("failure_days",)
    actions = ("block", "unblock")

    @admin.display(description="days failing")
    def failing_days(self, host):
        return len(host.failure_days)

    def save_model(self, request, obj, form, change):
        was_blocked = FederatedHost.objects.filter(pk=obj.pk, blocked=True).exists()
        if obj.blocked:
            forgotten = self._block(request, obj.host, obj.reason)
            self.message_user(
                request, f"{obj.host} is blocked; {forgotten} of its actors' follows, likes and replies went."
            )
        else:
            with transaction.atomic():
                super().save_model(request, obj, form, change)
                if was_blocked:
                    self._record(request, StaffAction.Action.UNBLOCK_SERVER, obj.host, obj.reason)

    @admin.action(description="Block these servers (and remove what they left here)")
    def block(self, request, queryset):
        for host in queryset:
            self._block(request, host.host, host.reason)
        self.message_user(request, f"{queryset.count()} server(s) blocked.")

    @admin.action(description="Unblock these servers")
    def unblock(self, request, queryset):
        for host in queryset.filter(blocked=True):
            with transaction.atomic():
                federation.host_unblock(host.host)
                self._record(request, StaffAction.Action.UNBLOCK_SERVER, host.host, "")
        self.message_user(request, f"{queryset.count()} server(s) unblocked.", messages.SUCCESS)

    def _block(self, request, host: str, reason: str) -> int:
        """Block ``host`` (feeds.federation.services.host_block), on the staff record with its
        reason. Returns the remote actors whose traces went."""
        forgotten = federation.host_block(host, reason=reason)
        self._record(request, StaffAction.Action.BLOCK_SERVER, host, reason)
        return forgotten

    @staticmethod
    def _record(request, action: str, host: str, why: str) -> None:
        staff_record.staff_action_record(
            staff=request.user, action=action, target=staff_record.server_target(host), why=why
        )
