"""Four leaks closed, tried on a running instance as an auditor would: a real gunicorn and a real worker
(``scripts/start web`` and ``worker``) on the test database, the team Red (Rita its admin, Rob and Ron
its engineers) and Ben of Blue.

1. A customer sends a bundle through Rob's upload link (tus over HTTP); its case, titled by the link's
   customer and ticket, is analysed by the worker. A share link of it is named "Case #<id>" with its
   capture window, and none of its answers holds the title, the customer or the ticket.
2. Rob is removed from Red in the Django admin: his other link, a transfer under way on it included,
   answers every URL as a revoked link does, and takes no byte; Red's page of upload links says why it
   is inactive. Ron, removed on the team page, has his link revoked.
3. Rita invites Ben (another team) and an address nobody holds, by e-mail: the same answer, and
   nothing names Ben on her pages or in her trail.
4. Rita makes an API token: it is in the answer (no-store) and in no session row, before and after.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session

from analyzer.isotime import iso_utc
from tests.servers import wait_for
from tests.web.conftest import EXAMPLE_BUNDLE, processes_on_test_db
from web.accounts import teams
from web.models import Case, LinkTransfer, Team, UploadLink
from web.sharing import services as shares
from web.uploads import services as upload_links

PASSWORD = "correct horse battery staple"
TUS = {"Tus-Resumable": "1.0.0"}
CUSTOMER, TICKET = "Initech", "TCK-4471"


@pytest.fixture(autouse=True)
def _no_miss_left(redis_client) -> Iterator[None]:  # noqa: ANN001
    """The 404s this test asks for count against 127.0.0.1's guess limit in the processes' cache
    (prefix ``casebook``) for ten minutes: cleared, so the next live test starts at zero."""
    yield
    for key in redis_client.scan_iter(match="casebook:*:upload-link-misses:*", count=1000):
        redis_client.delete(key)


def _people() -> dict[str, object]:
    User = get_user_model()
    red, blue = Team.objects.create(name="Red"), Team.objects.create(name="Blue")
    made: dict[str, object] = {"red": red, "blue": blue}
    for name, team, admin in (
        ("rita", red, True),
        ("rob", red, False),
        ("ron", red, False),
        ("ben", blue, False),
    ):
        user = User.objects.create_user(name, password=PASSWORD, email=f"{name}@example.com")
        teams.member_add(team=team, user=user, admin=admin)
        made[name] = user
    return made


def _post(session: requests.Session, base: str, path: str, data: dict[str, str] | None = None, **kw):  # noqa: ANN202
    return session.post(
        f"{base}{path}",
        data={**(data or {}), "csrfmiddlewaretoken": session.cookies["csrftoken"]},
        headers={"Referer": f"{base}/"},
        timeout=30,
        **kw,
    )


def _send(base: str, token: str, body: bytes) -> requests.Response:
    """A customer's tus upload of ``body`` through the link of ``token``: POST, then one PATCH."""
    made = requests.post(
        f"{base}/u/{token}/files/", headers={**TUS, "Upload-Length": str(len(body))}, timeout=30
    )
    assert made.status_code == 201, made.text
    return requests.patch(
        made.headers["Location"],
        data=body,
        headers={**TUS, "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"},
        timeout=60,
    )


def _answers(base: str, token: str, key: str) -> list[tuple[int, bytes]]:
    """What every URL of a link answers: the page, OPTIONS, POST, HEAD and PATCH of tus, the status."""
    files = f"{base}/u/{token}/files/"
    patch = {**TUS, "Upload-Offset": "4", "Content-Type": "application/offset+octet-stream"}
    return [
        (r.status_code, r.content)
        for r in (
            requests.get(f"{base}/u/{token}/", timeout=30),
            requests.options(files, timeout=30),
            requests.post(files, headers={**TUS, "Upload-Length": "10"}, timeout=30),
            requests.head(f"{files}{key}", headers=TUS, timeout=30),
            requests.patch(f"{files}{key}", data=b"456789", headers=patch, timeout=30),
            requests.get(f"{files}{key}/status.json", timeout=30),
        )
    ]


def test_four_leaks_are_closed_on_a_running_instance(
    transactional_db, tmp_path: Path, settings, redis_client
) -> None:
    people = _people()
    red, rob, ron = people["red"], people["rob"], people["ron"]
    sent = upload_links.link_create(user=rob, customer=CUSTOMER, ticket=TICKET)
    orphan = upload_links.link_create(user=rob, customer=CUSTOMER, uploads=2)
    rons = upload_links.link_create(user=ron, customer="Ron's customer")
    revoked = upload_links.link_create(user=rob)
    upload_links.link_revoke(link=revoked.link, user=rob)
    with processes_on_test_db(tmp_path, settings, redis_client, CASEBOOK_SHARE_GUESS_LIMIT="1000") as stack:
        stack.run("migrate")
        stack.start_web()
        stack.start("worker")
        base = stack.base_url
        rita = stack.login_session("rita", PASSWORD)

        # 1. The customer's bundle through the link, analysed; its share link shows no title.
        assert _send(base, sent.token, EXAMPLE_BUNDLE.read_bytes()).status_code == 204
        case_id = LinkTransfer.objects.get(link=sent.link).case_id
        assert Case.objects.get(pk=case_id).title == f"{CUSTOMER} {TICKET}"
        wait_for("the case analysed", lambda: Case.objects.get(pk=case_id).status in ("ready", "failed"), 600)
        case = Case.objects.get(pk=case_id)
        assert case.status == "ready", case.failure_reason
        link = shares.share_create(case=case, user=people["rita"]).path
        customer = requests.Session()
        served = {
            suffix: customer.get(f"{base}{link}{suffix}", timeout=60)
            for suffix in ("", "status.json", "report.json", "findings.json", "findings.csv", "timeline.json")
        }
        assert {s: r.status_code for s, r in served.items() if r.status_code != 200} == {}
        text = "\n".join(r.text for r in served.values())
        assert [w for w in (CUSTOMER, TICKET) if w in text] == []
        page = served[""].text
        assert f"<title>Case #{case_id} · Casebook</title>" in page
        assert f'<h1 id="case-heading">Case #{case_id}</h1>' in page
        window = iso_utc(case.window_start)
        assert f'<span id="case-window" data-range-start="{window}"' in page

        # 2. Rob removed in the Django admin: his link takes nothing, like a revoked one.
        started = requests.post(
            f"{base}/u/{orphan.token}/files/", headers={**TUS, "Upload-Length": "10"}, timeout=30
        )
        url = started.headers["Location"]
        key = url.rsplit("/", 1)[1]
        first = requests.patch(
            url,
            data=b"0123",
            headers={**TUS, "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"},
            timeout=30,
        )
        assert first.status_code == 204
        red.members.remove(rob)
        assert _answers(base, orphan.token, key) == _answers(base, revoked.token, key)
        assert {status for status, _ in _answers(base, orphan.token, key)} == {404}
        transfer = LinkTransfer.objects.get(key=key)
        assert transfer.offset == 4 and Path(transfer.temp_path).read_bytes() == b"0123"
        assert UploadLink.objects.get(pk=orphan.link.pk).uploads_used == 1  # the started one only
        listed = rita.get(f"{base}/upload-links/", timeout=30).text
        row = listed.split(f'data-link-id="{orphan.link.pk}"', 1)[1].split("</tr>", 1)[0]
        assert "inactive" in row and "rob is no longer a member of Red." in row
        # Ron removed on the team page: his link revoked by Rita.
        assert _post(rita, base, f"/teams/{red.pk}/members/{ron.pk}/remove/").ok
        assert UploadLink.objects.get(pk=rons.link.pk).revoked_by == people["rita"]
        assert requests.get(f"{base}{rons.path}", timeout=30).status_code == 404

        # 3. Invitations by e-mail: the same answer for Ben's address and for nobody's.
        said = {}
        for address in ("ben@example.com", "nobody@example.com"):
            answer = _post(rita, base, f"/teams/{red.pk}/invitations/", {"name": address})
            notices = re.findall(r'<li class="notice notice--\w+">(.*?)</li>', answer.text, re.S)
            said[address] = [n.replace(address, "<address>") for n in notices]
        assert said["ben@example.com"] == said["nobody@example.com"] and said["nobody@example.com"]
        team_page = rita.get(f"{base}/teams/{red.pk}/", timeout=30).text
        trail = rita.get(f"{base}/teams/{red.pk}/events.csv", timeout=30).text
        assert "ben@example.com" in team_page and "ben@example.com" in trail  # the address Rita typed
        assert not re.search(r"\bben\b", (team_page + trail).replace("ben@example.com", ""))  # his user name

        # 4. An API token: in the answer, never in the session store.
        made = _post(rita, base, "/settings/tokens/", {"name": "nightly"})
        assert made.status_code == 201 and "no-store" in made.headers["Cache-Control"]
        (token,) = re.findall(r'id="new-token-value">(cb_[\w-]{43})<', made.text)
        stored = [s.session_data + str(s.get_decoded()) for s in Session.objects.all()]
        assert stored and [s for s in stored if token in s] == []
        assert token not in rita.get(f"{base}/settings/", timeout=30).text
        assert [s for s in Session.objects.all() if token in str(s.get_decoded())] == []
        cached = [redis_client.get(k) or b"" for k in redis_client.scan_iter(match="casebook:*", count=1000)]
        assert [v for v in cached if token.encode() in v] == []
        answer = requests.get(f"{base}/api/cases/", headers={"Authorization": f"Bearer {token}"}, timeout=30)
        assert answer.status_code == 200
