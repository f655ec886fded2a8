"""The admin: user management (Django's own user admin, with each user's teams), teams and their
members, and a read-mostly view of cases (team, customer, ticket and tags editable)."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

from web.history.services import case_refresh_search
from web.models import Case, Team

User = get_user_model()


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ("name", "member_count", "created_at")
    search_fields = ("name", "members__username")
    filter_horizontal = ("members",)

    @admin.display(description="members")
    def member_count(self, team: Team) -> int:
        return team.members.count()


class TeamMembershipInline(admin.TabularInline):
    model = Team.members.through
    extra = 1
    verbose_name = "team"
    verbose_name_plural = "teams"


admin.site.unregister(User)


@admin.register(User)
class EngineerAdmin(UserAdmin):
    """Django's user admin, plus the user's teams."""

    inlines = (TeamMembershipInline,)


@admin.register(Case)
class CaseAdmin(admin.ModelAdmin):
    list_display = ("id", "title", "team", "customer", "ticket", "host", "status", "created_at")
    list_filter = ("team", "status")
    search_fields = ("title", "customer", "ticket", "host")
    fields = (
        "title",
        "team",
        "customer",
        "ticket",
        "tags",
        "notes",
        "host",
        "status",
        "created_by",
        "created_at",
    )
    readonly_fields = ("host", "status", "created_by", "created_at")
    list_select_related = ("team",)

    def save_model(self, request, obj: Case, form, change: bool) -> None:
        super().save_model(request, obj, form, change)
        case_refresh_search(case_id=obj.pk)  # title, customer, ticket or tags may have changed
