from django.contrib import admin
from django.db import connection

from feeds.models import Board


class TagFilter(admin.SimpleListFilter):
    """Filter by one tag, listing the 30 most used."""

    title = "tag"
    parameter_name = "tag"

    def lookups(self, request, model_admin):
        # A scan of all tags, for staff only; discovery's tag indexes will answer this from Redis.
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT tag, count(*) FROM {Board._meta.db_table}, unnest(tags) AS tag "
                "GROUP BY tag ORDER BY count(*) DESC, tag LIMIT 30"
            )
            return [(tag, f"{tag} ({count})") for tag, count in cursor.fetchall()]

    def queryset(self, request, queryset):
        return queryset.filter(tags__contains=[self.value()]) if self.value() else queryset


@admin.register(Board)
class BoardAdmin(admin.ModelAdmin):
    list_display = ("id", "title", "kind", "author", "state", "views", "created_at")
    list_filter = ("state", "kind", TagFilter)
    search_fields = ("title", "author__username", "=tags")
    list_select_related = ("author",)
    raw_id_fields = ("author",)
    readonly_fields = ("id", "created_at", "updated_at", "views")
    ordering = ("-id",)
    show_full_result_count = False
