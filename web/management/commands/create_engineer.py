"""``manage.py create_engineer``: the first engineer login, from the environment or generated once.

``CASEBOOK_ADMIN_USER`` (default ``engineer``) and ``CASEBOOK_ADMIN_PASSWORD``; without a password a
random one is generated and printed once, when the account is created. An existing account is left as is.
"""

from __future__ import annotations

import os
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the first engineer login if it does not exist."

    def handle(self, *args: object, **opts: object) -> None:
        User = get_user_model()
        username = os.environ.get("CASEBOOK_ADMIN_USER", "engineer")
        if User.objects.filter(username=username).exists():
            self.stdout.write(f"engineer login '{username}' exists")
            return
        password = os.environ.get("CASEBOOK_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        User.objects.create_superuser(username=username, email="", password=password)
        shown = password if "CASEBOOK_ADMIN_PASSWORD" not in os.environ else "(from CASEBOOK_ADMIN_PASSWORD)"
        self.stdout.write(f"created engineer login: user '{username}', password {shown}  (shown once)")
