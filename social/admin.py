from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin

from social.models import ApiToken, Follow, User


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    list_display = (
        "username",
        "is_active",
        "is_staff",
        "followers_count",
        "following_count",
        "boards_count",
        "date_joined",
    )
    readonly_fields = ("followers_count", "following_count", "boards_count")
    fieldsets = DjangoUserAdmin.fieldsets + (("Counts", {"fields": readonly_fields}),)

    def has_delete_permission(self, request, obj=None):
        # A deletion would cascade in PostgreSQL only and leave the person's boards in Redis
        # feeds and indexes; suspension (feeds.admin) is how staff take someone off the site.
        return False


@admin.register(Follow)
class FollowAdmin(admin.ModelAdmin):
    list_display = ("follower", "followee", "created_at")
    search_fields = ("follower__username", "followee__username")
    list_select_related = ("follower", "followee")
    raw_id_fields = ("follower", "followee")
    ordering = ("-created_at",)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("user", "created_at", "expires_at")
    search_fields = ("user__username",)
    readonly_fields = ("user", "key_hash", "created_at", "expires_at")
