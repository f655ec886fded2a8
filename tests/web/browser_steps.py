"""Steps the browser tests share (Playwright pages on Debian's chromium): collect a page's errors,
log in as the ``engineer`` fixture's login."""

from __future__ import annotations

#: The ``engineer`` fixture's login (tests/web/conftest.py).
USERNAME, PASSWORD = "alice", "correct horse battery"


def page_errors(page) -> list[str]:  # noqa: ANN001 - a Playwright Page
    """A list that fills with the page's uncaught exceptions and console errors as they happen."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    return errors


def log_in(page, base_url: str, path: str = "/") -> None:  # noqa: ANN001 - a Playwright Page
    """Open ``path`` (the login page comes first), log in, and wait to be back on ``path``."""
    page.goto(f"{base_url}{path}")
    page.fill("#id_username", USERNAME)
    page.fill("#id_password", PASSWORD)
    page.click("#login-form button[type=submit]")
    page.wait_for_url(f"{base_url}{path}")
