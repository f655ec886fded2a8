"""``manage.py create_engineer [--team NAME]``: the first engineer login, from the environment or
generated once, in a team.

``CASEBOOK_ADMIN_USER`` (default ``engineer``) and ``CASEBOOK_ADMIN_PASSWORD``; without a password a
random one is generated and printed once, when the account is created. ``--team`` (default: the
default team, ``Default``) names the team the engineer joins; the team is made when it does not exist.
An existing account is left as is, except that it joins the team.
"""

from __future__ import annotations

import os
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from web.models import DEFAULT_TEAM_NAME, Team


class Command(BaseCommand):
    help = "Create the first engineer login if it does not exist, in a team (--team)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--team",
            default=DEFAULT_TEAM_NAME,
            help=f"the team to join (made if new; default {DEFAULT_TEAM_NAME!r})",
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
            team.members.add(user)
            self.stdout.write(f"engineer login '{username}' exists; member of team '{team.name}'")
            return
        password = os.environ.get("CASEBOOK_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        user = User.objects.create_superuser(username=username, email="", password=password)
        team.members.add(user)
        shown = password if "CASEBOOK_ADMIN_PASSWORD" not in os.environ else "(from CASEBOOK_ADMIN_PASSWORD)"
        self.stdout.write(
            f"created engineer login: user '{username}', password {shown}  (shown once), team '{team.name}'"
        )
