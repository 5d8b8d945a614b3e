from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin

from feeds import services as board_services
from social.models import ApiToken, Follow, User


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    list_display = ("username", "is_active", "is_staff", "followers_count", "following_count", "boards_count", "date_joined")
    readonly_fields = ("followers_count", "following_count", "boards_count")
    fieldsets = DjangoUserAdmin.fieldsets + (("Counts", {"fields": readonly_fields}),)
    actions = ["suspend_users", "unsuspend_users"]

    def has_delete_permission(self, request, obj=None):
        # A deletion would cascade in PostgreSQL only and leave the person's boards in Redis
        # feeds and indexes; suspension (below) is how staff take someone off the site.
        return False

    @admin.action(description="Suspend selected users", permissions=["change"])
    def suspend_users(self, request, queryset):
        """No more sign-in or tokens, and every board of theirs hidden (feeds.services.user_suspend)."""
        people = [user for user in queryset if user.pk != request.user.pk and user.is_active]
        if queryset.filter(pk=request.user.pk).exists():
            self.message_user(request, "You cannot suspend yourself; you were left out.", messages.WARNING)
        boards = sum(board_services.user_suspend(user=user) for user in people)
        self.message_user(request, f"{len(people)} user{'s' if len(people) != 1 else ''} suspended, "
                                   f"{boards} board{'s' if boards != 1 else ''} hidden with them.",
                          messages.SUCCESS if people else messages.WARNING)

    @admin.action(description="Lift suspension", permissions=["change"])
    def unsuspend_users(self, request, queryset):
        """Sign-in again, and the boards the suspension hid come back (feeds.services.user_unsuspend)."""
        people = [user for user in queryset if not user.is_active]
        boards = sum(board_services.user_unsuspend(user=user) for user in people)
        self.message_user(request, f"Suspension lifted for {len(people)} user{'s' if len(people) != 1 else ''}, "
                                   f"{boards} board{'s' if boards != 1 else ''} back.",
                          messages.SUCCESS if people else messages.WARNING)


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
