"""Where a webhook may connect: public addresses only, checked on the address actually connected to.

A webhook URL is typed by a team admin; the server POSTs to it. Without a check it could reach what
only the server reaches (a database on loopback, a cloud's metadata service on 169.254.169.254, an
office network). So an address is refused unless it is global, and an IPv6 address is refused when
it carries an IPv4 address that is not: IPv4-mapped (``::ffff:a.b.c.d``), 6to4 (``2002:aabb:ccdd::/16``),
NAT64 (``64:ff9b::/96``, RFC 6052) and Teredo (``2001::/32``) carry one; IPv4-compatible addresses
(``::a.b.c.d``, deprecated by RFC 4291 section 2.5.5.1) are refused outright.

The check is made where the connection is made (``pinned_session``): the host name is resolved once,
at delivery, every address it resolves to is checked, and the socket connects to the checked address
itself. A name that resolved to a public address when the URL was saved and to a private one now
(DNS rebinding) is refused; no second lookup between check and connect exists to be raced. The
request keeps its URL's host: the ``Host`` header, TLS SNI and the certificate check name the host,
not the address.
"""

from __future__ import annotations

import ipaddress
import socket

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError
from urllib3.util.connection import create_connection

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
#: NAT64's well-known prefix (RFC 6052): the last 32 bits are the IPv4 address reached.
NAT64 = ipaddress.ip_network("64:ff9b::/96")


class AddressRefused(ValueError):  # noqa: N818 - read as "the address is refused"
    """A webhook host that resolves to an address a webhook may not reach; the message says which."""


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 ``address`` carries (IPv4-mapped, 6to4, NAT64, Teredo's client),
    else None.

    >>> str(embedded_ipv4(ipaddress.ip_address("::ffff:10.1.2.3")))
    '10.1.2.3'
    >>> str(embedded_ipv4(ipaddress.ip_address("2002:7f00:1::1")))
    '127.0.0.1'
    >>> str(embedded_ipv4(ipaddress.ip_address("64:ff9b::a9fe:a9fe")))
    '169.254.169.254'
    >>> embedded_ipv4(ipaddress.ip_address("2606:4700::1111")) is None
    True
    """
    if address.version != 6:
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.teredo is not None:
        return address.teredo[1]
    return None


def refused_reason(address: IPAddress) -> str | None:
    """Why a webhook may not connect to ``address``, or None when it may.

    >>> refused_reason(ipaddress.ip_address("::127.0.0.1"))
    'an IPv4-compatible IPv6 address'
    >>> refused_reason(ipaddress.ip_address("::ffff:192.168.0.1"))
    'a non-public address (192.168.0.1)'
    >>> refused_reason(ipaddress.ip_address("93.184.215.14")) is None
    True
    """
    if address.version == 6 and int(address) >> 32 == 0 and int(address) > 1:
        return "an IPv4-compatible IPv6 address"
    carried = embedded_ipv4(address)
    for candidate in (carried, address):  # the IPv4 one first: the message names what is reached
        if candidate is not None and not candidate.is_global:
            return f"a non-public address ({candidate})"
    return None


def checked_address(host: str, port: int) -> str:
    """Resolve ``host`` now and return the address to connect to: the first it resolves to, once
    every address it resolves to is allowed (``refused_reason``; any address when the operator set
    ``CASEBOOK_WEBHOOK_ALLOW_PRIVATE``). Raises ``AddressRefused`` when one is not, or the name does
    not resolve."""
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise AddressRefused(f"The host {host!r} cannot be resolved.") from exc
    addresses = [ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos]
    if not settings.CASEBOOK_WEBHOOK_ALLOW_PRIVATE:
        for address in addresses:
            reason = refused_reason(address)
            if reason is not None:
                raise AddressRefused(
                    f"The host {host!r} resolves to {reason}; an operator allows those with "
                    "CASEBOOK_WEBHOOK_ALLOW_PRIVATE."
                )
    if not addresses:
        raise AddressRefused(f"The host {host!r} cannot be resolved.")
    return str(addresses[0])


class _PinnedConnection:
    """urllib3's connection, resolving and checking its host when it connects and connecting to the
    checked address (``checked_address``); ``host`` stays the URL's (Host header, SNI, certificate)."""

    def _new_conn(self) -> socket.socket:
        address = checked_address(self.host, self.port)
        try:
            return create_connection(
                (address, self.port),
                self.timeout,
                source_address=self.source_address,
                socket_options=self.socket_options,
            )
        except TimeoutError as exc:
            raise ConnectTimeoutError(self, f"Connection to {self.host} timed out.") from exc
        except OSError as exc:
            raise NewConnectionError(self, f"Failed to establish a new connection: {exc}") from exc


class _PinnedHTTPConnection(_PinnedConnection, HTTPConnection):
    pass


class _PinnedHTTPSConnection(_PinnedConnection, HTTPSConnection):
    pass


class _PinnedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _PinnedHTTPConnection


class _PinnedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _PinnedHTTPSConnection


class _PinnedAdapter(HTTPAdapter):
    def init_poolmanager(self, *args: object, **kwargs: object) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _PinnedHTTPPool, "https": _PinnedHTTPSPool}


def pinned_session() -> requests.Session:
    """A ``requests`` session whose every connection is checked where it is made (``checked_address``):
    ``AddressRefused`` comes out of its ``post`` for a refused address. No proxy from the environment
    (a proxy would make the connection in our stead, unchecked)."""
    session = requests.Session()
    session.trust_env = False
    adapter = _PinnedAdapter(max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
