"""Who is asking: the client's address (behind a proxy too), that address truncated for keeping, and
the family of its browser. Used by the share links' guess limit, the password-reset throttle, the
audit trail and ``/readyz``.
"""

from __future__ import annotations

import ipaddress
import re

from django.conf import settings
from django.http import HttpRequest

#: Prefix lengths an address is truncated to before it is kept (the audit trail): a /24 of IPv4 and
#: a /48 of IPv6 name a site or a provider's block, not a person's machine.
IPV4_KEPT_PREFIX = 24
IPV6_KEPT_PREFIX = 48


def client_ip(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or behind a proxy (CASEBOOK_BEHIND_PROXY) the last
    address of X-Forwarded-For (the one the proxy added; earlier ones are the client's say).
    At most 64 characters; "" when unknown."""
    if settings.CASEBOOK_BEHIND_PROXY:
        forwarded = [a.strip() for a in request.headers.get("X-Forwarded-For", "").split(",") if a.strip()]
        if forwarded:
            return forwarded[-1][:64]
    return request.META.get("REMOTE_ADDR", "")[:64]


def truncated_address(address: str) -> str:
    """``address`` as the network it belongs to: IPv4 to its /24, IPv6 to its /48 (an IPv4-mapped
    IPv6 address as IPv4); "" for anything that is not an IP address.

    >>> truncated_address("203.0.113.77")
    '203.0.113.0/24'
    >>> truncated_address("2001:db8:abcd:12:1::5")
    '2001:db8:abcd::/48'
    >>> truncated_address("::ffff:198.51.100.9")
    '198.51.100.0/24'
    >>> truncated_address("not an address")
    ''
    """
    try:
        ip = ipaddress.ip_address(address.strip().split("%", 1)[0])
    except ValueError:
        return ""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    prefix = IPV4_KEPT_PREFIX if ip.version == 4 else IPV6_KEPT_PREFIX
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


def is_loopback(address: str) -> bool:
    """Whether ``address`` is a loopback address (127.0.0.0/8, ::1, or IPv4-mapped loopback)."""
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


#: (family, pattern) in the order they are tried: Edge and Opera say "Chrome/" too, Chrome says
#: "Safari/" too, so the more specific tokens come first (tokens as the browsers' User-Agent strings
#: carry them: Edg/ for Chromium Edge, EdgA/EdgiOS on mobile, CriOS/FxiOS on iOS).
BROWSER_FAMILIES = (
    ("curl", re.compile(r"^curl/")),
    ("python-requests", re.compile(r"^python-requests/")),
    ("Edge", re.compile(r"\b(?:Edg|Edge|EdgA|EdgiOS)/")),
    ("other", re.compile(r"\b(?:OPR|Opera|SamsungBrowser)/")),
    ("Firefox", re.compile(r"\b(?:Firefox|FxiOS)/")),
    ("Chrome", re.compile(r"\b(?:Chrome|Chromium|CriOS|HeadlessChrome)/")),
    ("Safari", re.compile(r"\bVersion/[\d.]+.*\bSafari/")),
)


def browser_family(user_agent: str) -> str:
    """The family of a User-Agent header: Chrome, Firefox, Safari, Edge, curl, python-requests, or
    other (anything else, an empty header included). Only the family: no version, no platform.

    >>> browser_family("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36")
    'Chrome'
    >>> browser_family("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0")
    'Edge'
    >>> browser_family("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15")
    'Safari'
    >>> browser_family("curl/7.88.1"), browser_family("python-requests/2.32.3"), browser_family("")
    ('curl', 'python-requests', 'other')
    """
    ua = (user_agent or "")[:512]
    for family, pattern in BROWSER_FAMILIES:
        if pattern.search(ua):
            return family
    return "other"
