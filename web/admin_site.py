"""The Django admin for site admins only (issue 20, roles).

Casebook has three roles: an engineer (a member of teams), a team admin (web/accounts/teams.py) and a site
admin, a Django superuser made only by ``createsuperuser`` or ``create_engineer --superuser``. The
admin shows every team's cases, users and their flags: only an active superuser may use it. Anyone
else, ``is_staff`` or not, is sent to the admin's login page, which says the account is not
authorized, and sees no admin page.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.http import HttpRequest


class CasebookAdminSite(admin.AdminSite):
    """Django's admin site, refused to everyone but active superusers."""

    site_header = "Casebook administration"
    site_title = "Casebook admin"

    def has_permission(self, request: HttpRequest) -> bool:
        user = request.user
        return bool(user.is_active and user.is_superuser)


class CasebookAdminConfig(AdminConfig):
    """``django.contrib.admin`` with ``CasebookAdminSite`` as ``admin.site`` (INSTALLED_APPS)."""

    default_site = "web.admin_site.CasebookAdminSite"
