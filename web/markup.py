"""Engineers' notes: Markdown rendered to HTML that is safe to put in a page.

The notes are written by engineers but may quote customers' text (queries, error messages, mails):
everything the Markdown renderer emits, raw HTML included, goes through the nh3 sanitizer (the Rust
crate ammonia) with a short allow-list of tags and attributes, links limited to http, https and
mailto and marked ``rel="noopener noreferrer nofollow"``. No script, style, event attribute or image
survives (images would fetch from other origins, which the CSP forbids anyway).
"""

from __future__ import annotations

import markdown
import nh3
from django.utils.safestring import SafeString, mark_safe

ALLOWED_TAGS = {
    "a",
    "p",
    "br",
    "hr",
    "strong",
    "em",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "del",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "th": {"align"}, "td": {"align"}}
URL_SCHEMES = {"http", "https", "mailto"}
#: Markdown extensions: fenced code blocks and tables (Python-Markdown's bundled ones).
EXTENSIONS = ("fenced_code", "tables", "sane_lists")


def render_markdown(text: str) -> SafeString:
    """``text`` (Markdown, any bytes a user typed) as sanitised HTML, marked safe for templates."""
    html = markdown.markdown(text or "", extensions=list(EXTENSIONS), output_format="html")
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(clean)  # noqa: S308 - sanitised by nh3 just above
