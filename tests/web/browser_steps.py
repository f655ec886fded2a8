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


#: Resolves after two animation frames: whatever a resize, a zoom or a click scheduled has been laid
#: out and painted (Chart.js redraws on the frame after a resize).
TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"


def settle(page, width: int | None = None) -> None:  # noqa: ANN001 - a Playwright Page
    """Wait until the page is laid out again: the viewport at ``width`` (when given), then two frames
    painted. A condition, not a time: a busy machine only makes it take longer."""
    if width is not None:
        page.wait_for_function("w => window.innerWidth === w", arg=width)
    page.evaluate(TWO_FRAMES)


def settled_scroll_width(page, width: int) -> int:  # noqa: ANN001 - a Playwright Page
    """The document's scroll width once the page is laid out at ``width``: waits (up to 5 s) for it to
    come down to ``width``, then returns what it is, so the caller's assert shows the overflow."""
    settle(page, width)
    try:
        page.wait_for_function("w => document.documentElement.scrollWidth === w", arg=width, timeout=5_000)
    except Exception:  # noqa: BLE001 - Playwright's TimeoutError: the caller's assert says what is wide
        pass
    return page.evaluate("() => document.documentElement.scrollWidth")
