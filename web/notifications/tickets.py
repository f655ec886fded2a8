"""A team's ticket links: ``Team.ticket_url_template`` (``https://tickets.example.com/browse/{ticket}``)
turns a case's ticket reference into a link.

The ticket is typed by engineers and may come from a customer's mail: it is percent-encoded whole
(``urllib.parse.quote`` with no safe character, so ``/``, ``?``, ``#`` and ``..`` cannot change the
path or add a query) before it is put in place of ``{ticket}``. Only http and https templates are
accepted (no ``javascript:``); the template is an admin's, checked when it is set.
"""

from __future__ import annotations

from urllib.parse import quote, urlsplit

PLACEHOLDER = "{ticket}"
MAX_TEMPLATE_CHARS = 300


class TicketTemplateError(ValueError):
    """A ticket URL template that cannot be used; the message says why."""


def check_template(template: str) -> str:
    """``template`` stripped, or "" (no links); raises ``TicketTemplateError`` unless it is an
    absolute http(s) URL with a host, no credentials, no whitespace, and ``{ticket}`` once."""
    template = (template or "").strip()
    if not template:
        return ""
    if len(template) > MAX_TEMPLATE_CHARS:
        raise TicketTemplateError(f"The template is longer than {MAX_TEMPLATE_CHARS} characters.")
    if template.count(PLACEHOLDER) != 1:
        raise TicketTemplateError("The template must contain {ticket} exactly once.")
    if any(c.isspace() or ord(c) < 32 for c in template):
        raise TicketTemplateError("The template must not contain spaces or control characters.")
    parts = urlsplit(template.replace(PLACEHOLDER, "T"))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TicketTemplateError("The template must be an http:// or https:// URL with a host.")
    if parts.username or parts.password:
        raise TicketTemplateError("The template must not carry a user name or password.")
    return template


def ticket_url(template: str, ticket: str) -> str | None:
    """The link of ``ticket`` under ``template``, or None (no template, no ticket, or a template
    that is not a valid http(s) one). The ticket is percent-encoded whole (UTF-8)."""
    ticket = (ticket or "").strip()
    if not ticket or not template:
        return None
    try:
        template = check_template(template)
    except TicketTemplateError:
        return None
    return template.replace(PLACEHOLDER, quote(ticket, safe=""))
