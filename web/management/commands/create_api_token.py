"""``manage.py create_api_token USERNAME [--name NAME]``: a personal API token for an engineer, printed
once on stdout (the only line), for provisioning scripts and test harnesses that cannot click through
the settings page. Listed and revoked on that page like any other token (web/accounts/services.py)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from web import audit
from web.accounts.services import TokenLimitError, api_token_create


class Command(BaseCommand):
    help = "Make an API token for an engineer and print it (only its hash is kept)."

    def add_arguments(self, parser) -> None:  # noqa: ANN001 - argparse's parser
        parser.add_argument("username")
        parser.add_argument("--name", default="created with manage.py create_api_token")

    def handle(self, *args: object, **opts: object) -> None:
        try:
            user = get_user_model().objects.get(username=opts["username"], is_active=True)
        except get_user_model().DoesNotExist as exc:
            raise CommandError(f"no active user {opts['username']!r}") from exc
        try:
            row, token = api_token_create(user=user, name=str(opts["name"]))
        except TokenLimitError as exc:
            raise CommandError(str(exc)) from exc
        audit.record_token_created(None, user=user, token=row)
        self.stdout.write(token)
