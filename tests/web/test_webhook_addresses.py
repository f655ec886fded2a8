"""Where a webhook may connect (web/notifications/addresses.py): real receivers listening on loopback,
reached by every spelling of a loopback address, receive nothing; a name that resolved to a public
address when the webhook was saved and resolves to loopback at delivery (DNS rebinding) is refused at
delivery, on the address the connection would be made to; with the operator's switch on, the same
receiver gets the request through the checked connection, its Host header the URL's."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.web.receivers import Receiver
from web.models import Team, Webhook, WebhookDelivery, default_team_id
from web.notifications import webhooks

pytestmark = pytest.mark.django_db

#: A public address (a root name server's, IANA) a rebinding name first resolves to: never connected to.
PUBLIC = "198.41.0.4"


class _Receiver6:
    """A webhook receiver on the IPv6 loopback ``::1``, counting the requests it gets."""

    def __init__(self) -> None:
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's hook
                outer.requests += 1
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        class Server(ThreadingHTTPServer):
            address_family = socket.AF_INET6

        self.server = Server(("::1", 0), Handler)
        self.port = self.server.server_port
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver([])
    yield r
    r.close()


def _deliver(url: str) -> WebhookDelivery:
    hook = Webhook.objects.create(
        team=Team.objects.get(pk=default_team_id()), name="ops", url=url, secret="s" * 24
    )
    webhooks.deliver(webhook=hook, case=None, event="test", delivery="d1", attempt=1)
    return WebhookDelivery.objects.get(webhook=hook)


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "127.1",  # inet_aton's short form of 127.0.0.1
        "localhost",
        "[::ffff:127.0.0.1]",  # IPv4-mapped: a dual-stack socket reaches the IPv4 listener
        "[::127.0.0.1]",  # IPv4-compatible
        "[2002:7f00:1::1]",  # 6to4 of 127.0.0.1
        "[64:ff9b::7f00:1]",  # NAT64 of 127.0.0.1
    ],
)
def test_a_real_receiver_on_ipv4_loopback_gets_nothing(receiver: Receiver, settings, host: str) -> None:
    settings.CASEBOOK_WEBHOOK_ALLOW_PRIVATE = False
    port = receiver.server.server_port
    with pytest.raises(webhooks.WebhookUrlError):
        webhooks.check_url(f"http://{host}:{port}/hook")
    row = _deliver(f"http://{host}:{port}/hook")
    assert row.status_code is None and ("non-public" in row.error or "IPv4-compatible" in row.error)
    assert receiver.requests == []


def test_a_real_receiver_on_ipv6_loopback_gets_nothing(settings) -> None:
    settings.CASEBOOK_WEBHOOK_ALLOW_PRIVATE = False
    r6 = _Receiver6()
    try:
        row = _deliver(f"http://[::1]:{r6.port}/hook")
    finally:
        r6.close()
    assert row.status_code is None and "non-public address (::1)" in row.error and r6.requests == 0


@pytest.mark.parametrize(
    "url",
    [
        "http://[::ffff:169.254.169.254]/latest/meta-data/",
        "http://[::ffff:10.0.0.5]/x",
        "http://[2002:c0a8:101::1]/x",  # 6to4 of 192.168.1.1
        "http://[64:ff9b::a00:5]/x",  # NAT64 of 10.0.0.5
        "http://[::10.0.0.5]/x",
        "http://[fe80::1]/x",
        "http://[fd00::1]/x",
        "http://0.0.0.0/x",
        "http://100.64.0.1/x",  # carrier-grade NAT
    ],
)
def test_addresses_that_map_to_a_non_public_ipv4_are_refused(url: str, settings) -> None:
    settings.CASEBOOK_WEBHOOK_ALLOW_PRIVATE = False
    with pytest.raises(webhooks.WebhookUrlError):
        webhooks.check_url(url)


@pytest.fixture
def rebinding(monkeypatch) -> Iterator[list[str]]:  # noqa: ANN001
    """``hooks.rebind.test`` resolves to each address of the list in turn (the last one from then
    on), as a name server under an attacker's control answers; other names resolve as usual."""
    answers = [PUBLIC, "127.0.0.1"]
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if host == "hooks.rebind.test":
            address = answers.pop(0) if len(answers) > 1 else answers[0]
            return real(address, port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield answers


def test_a_name_that_resolves_to_loopback_at_delivery_is_refused(
    receiver: Receiver, rebinding: list[str], settings
) -> None:
    settings.CASEBOOK_WEBHOOK_ALLOW_PRIVATE = False
    url = f"http://hooks.rebind.test:{receiver.server.server_port}/hook"
    assert webhooks.check_url(url) == url  # saved while the name resolved to a public address
    row = _deliver(url)
    assert row.status_code is None and "non-public address (127.0.0.1)" in row.error
    assert receiver.requests == []


def test_with_private_addresses_allowed_the_checked_connection_keeps_the_host_header(
    receiver: Receiver, rebinding: list[str], settings
) -> None:
    settings.CASEBOOK_WEBHOOK_ALLOW_PRIVATE = True
    rebinding[:] = ["127.0.0.1"]
    port = receiver.server.server_port
    row = _deliver(f"http://hooks.rebind.test:{port}/hook")
    assert row.status_code == 200 and len(receiver.requests) == 1
    assert receiver.requests[0][0]["Host"] == f"hooks.rebind.test:{port}"
