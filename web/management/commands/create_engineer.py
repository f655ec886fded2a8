"""``manage.py create_engineer [--team NAME] [--team-admin] [--superuser]``: an engineer login, from
the environment or generated once, in a team.

An engineer is a plain account (``is_staff`` and ``is_superuser`` off): the Django admin is not
his. ``--team-admin`` makes him an admin of the team too (web/accounts/teams.py); ``--superuser`` makes a new
account a site admin (a Django superuser, who alone may use the admin), as ``createsuperuser`` does.

``CASEBOOK_ADMIN_USER`` (default ``engineer``) and ``CASEBOOK_ADMIN_PASSWORD``; without a password a
random one is generated and printed once, when the account is created. ``--team`` (default: the
default team, ``Default``) names the team the engineer joins; the team is made when it does not exist.
An existing account is left as is (its flags untouched, even with ``--superuser``), except that
it joins the team (and its admins with ``--team-admin``).
"""

from __future__ import annotations

import os
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from web.accounts import teams
from web.models import DEFAULT_TEAM_NAME, Team


class Command(BaseCommand):
    help = "Create an engineer login if it does not exist, in a team (--team); --superuser: a site admin."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--team",
            default=DEFAULT_TEAM_NAME,
            help=f"the team to join (made if new; default {DEFAULT_TEAM_NAME!r})",
        )
        parser.add_argument("--team-admin", action="store_true", help="an admin of the team as well")
        parser.add_argument(
            "--superuser", action="store_true", help="a new account is a site admin (Django superuser)"
        )

    def handle(self, *args: object, **opts: object) -> None:
        User = get_user_model()
        team_name = str(opts["team"]).strip()[:100] or DEFAULT_TEAM_NAME
        team, made = Team.objects.get_or_create(name=team_name)
        if made:
            self.stdout.write(f"created team '{team.name}'")
        username = os.environ.get("CASEBOOK_ADMIN_USER", "engineer")
        user = User.objects.filter(username=username).first()
        if user is not None:
            teams.member_add(team=team, user=user, admin=bool(opts["team_admin"]))
            self.stdout.write(f"engineer login '{username}' exists; member of team '{team.name}'")
            return
        password = os.environ.get("CASEBOOK_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        make = User.objects.create_superuser if opts["superuser"] else User.objects.create_user
        user = make(username=username, email="", password=password)
        teams.member_add(team=team, user=user, admin=bool(opts["team_admin"]))
        role = "site admin" if user.is_superuser else "team admin" if opts["team_admin"] else "engineer"
        shown = password if "CASEBOOK_ADMIN_PASSWORD" not in os.environ else "(from CASEBOOK_ADMIN_PASSWORD)"
        self.stdout.write(
            f"created {role} login: user '{username}', password {shown}  (shown once), team '{team.name}'"
        )
