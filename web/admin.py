"""The admin (site admins only: web/admin_site.py): user management (Django's own user admin, with
each user's teams), teams with their members and admins (a site admin adds members here without an
invitation), team invitations read-only, a read-mostly view of cases (team,
customer, ticket and tags editable), and the audit trail, read-only."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

from web import audit
from web.history.services import case_refresh_search
from web.models import AuditAction, AuditEvent, Case, Team, TeamInvitation

User = get_user_model()


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ("name", "member_count", "created_at")
    search_fields = ("name", "members__username")
    filter_horizontal = ("members", "admins")

    @admin.display(description="members")
    def member_count(self, team: Team) -> int:
        return team.members.count()


@admin.register(TeamInvitation)
class TeamInvitationAdmin(admin.ModelAdmin):
    """Team admins' invitations and their answers, read-only: only the invitee answers one (his
    settings page); a site admin who wants someone in a team adds him under *Teams*."""

    list_display = (
        "team",
        "user",
        "address",
        "invited_by",
        "state",
        "created_at",
        "expires_at",
        "answered_at",
    )
    list_filter = ("state", "team")
    search_fields = ("user__username", "address", "team__name")

    def has_add_permission(self, request) -> bool:  # noqa: ANN001
        return False

    def has_change_permission(self, request, obj=None) -> bool:  # noqa: ANN001
        return False


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

    def delete_model(self, request, obj: Case) -> None:
        audit.record(action=AuditAction.CASE_DELETED, request=request, case=obj, detail={"title": obj.title})
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset) -> None:
        for case in queryset:
            audit.record(
                action=AuditAction.CASE_DELETED, request=request, case=case, detail={"title": case.title}
            )
        super().delete_queryset(request, queryset)


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """The audit trail, read-only: nothing is added, changed or deleted here (nor anywhere)."""

    list_display = ("at", "action", "actor_name", "actor_kind", "team_id", "case_id", "client", "browser")
    list_filter = ("action", "actor_kind")
    search_fields = ("actor_name", "case_id")
    date_hierarchy = "at"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
