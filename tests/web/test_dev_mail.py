"""Mail in development (web/mail.py) and reset links in logs (web/logs.py): a password reset with the
default backend is written to a file of its own under the mail folder, readable by its owner only
(whatever the umask), and its link reaches no log line; a handler that is not in settings.LOGGING
writes no reset link either."""

from __future__ import annotations

import io
import logging
import os
import re
import stat
from pathlib import Path

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

RESET_LINK = re.compile(r"/accounts/reset/[A-Za-z0-9_-]+/[A-Za-z0-9:_-]+/")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_reset_mail_goes_to_an_owner_only_file_and_its_link_to_no_log(
    engineer, settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings.EMAIL_BACKEND = "web.mail.PrivateFileBackend"  # the default of settings.py (tests use locmem)
    settings.EMAIL_FILE_PATH = str(tmp_path / "var" / "mail")
    engineer.email = "alice@example.com"
    engineer.save(update_fields=["email"])
    old_umask = os.umask(0o022)  # the usual umask: Django's own file backend would make 0644 files
    try:
        with caplog.at_level(logging.DEBUG):
            response = Client().post("/accounts/password_reset/", {"email": "alice@example.com"})
    finally:
        os.umask(old_umask)
    assert response.status_code == 302
    folder = tmp_path / "var" / "mail"
    files = list(folder.iterdir())
    assert len(files) == 1 and _mode(folder) == 0o700 and _mode(files[0]) == 0o600
    link = RESET_LINK.search(files[0].read_text())
    assert link is not None
    assert Client().get(link.group(0), follow=True).status_code == 200  # a working link
    assert not any(RESET_LINK.search(r.getMessage()) for r in caplog.records)


def test_a_handler_outside_the_logging_settings_writes_no_reset_link() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)  # no SecretsFilter on it: only the record guard
    log = logging.getLogger("casebook.test.outside")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("mail: open %s", "http://127.0.0.1:8000/accounts/reset/Mg/cz4k1r-0e5a0d7f1c3b2a4e6d8f/")
        log.warning("no secret in %s", "this line")
    finally:
        log.removeHandler(handler)
    assert stream.getvalue().splitlines() == [
        "mail: open http://127.0.0.1:8000/accounts/reset/…/…/",
        "no secret in this line",
    ]
