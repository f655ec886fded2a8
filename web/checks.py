"""Casebook's own deployment checks (``manage.py check --deploy``), beside Django's."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register

#: The key settings.py falls back to on a development machine.
DEVELOPMENT_SECRET_KEY_PREFIX = "casebook-insecure-"
#: E-mail backends that send nothing: they write each mail where only this machine can read it (the
#: console: a log; web/mail.py: files under var/mail/). A password-reset link is a secret, and a
#: user waiting for it never gets it.
UNSENT_EMAIL_BACKENDS = (
    "django.core.mail.backends.console.EmailBackend",
    "django.core.mail.backends.filebased.EmailBackend",
    "web.mail.PrivateFileBackend",
)


@register(Tags.security, deploy=True)
def production_settings(app_configs: object = None, **kwargs: object) -> list[CheckMessage]:
    """A production deployment has its own secret key and a public URL that matches its scheme."""
    problems: list[CheckMessage] = []
    if settings.SECRET_KEY.startswith(DEVELOPMENT_SECRET_KEY_PREFIX):
        problems.append(
            Error(
                "CASEBOOK_SECRET_KEY is not set: the development key is in use.",
                hint="Set CASEBOOK_SECRET_KEY to a long random value, e.g. "
                "python -c 'import secrets; print(secrets.token_urlsafe(50))'.",
                id="casebook.E001",
            )
        )
    if settings.CASEBOOK_HTTPS and not settings.PUBLIC_URL.startswith("https://"):
        problems.append(
            Warning(
                f"CASEBOOK_PUBLIC_URL is {settings.PUBLIC_URL!r} while CASEBOOK_HTTPS is on.",
                hint="Links in reports would point to plain http; give the https address.",
                id="casebook.W001",
            )
        )
    if settings.EMAIL_BACKEND in UNSENT_EMAIL_BACKENDS:
        problems.append(
            Warning(
                f"CASEBOOK_EMAIL_BACKEND is {settings.EMAIL_BACKEND!r}: no mail is sent, each is written on "
                "this machine (password-reset links included).",
                hint="Send mail through an SMTP server: CASEBOOK_EMAIL_BACKEND="
                "django.core.mail.backends.smtp.EmailBackend and CASEBOOK_EMAIL_HOST (docs/security.md).",
                id="casebook.W002",
            )
        )
    return problems
