"""Share links: who may open what (as a table), redaction of every byte a link serves, the shared
headers, the per-client limit on bad tokens, and the engineer's side (create, list, revoke, preview,
the API)."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.files import File
from django.test import Client, override_settings
from django.utils import timezone

from analyzer.isotime import iso_utc
from tests.web.conftest import make_tar
from tests.web.share_capture import (
    SECRETS,
    SERVER,
    SERVER_SECRETS,
    VMSTAT,
    processlist,
    server_processlist,
    server_ps,
    server_slave_status,
)
from web import tokenlinks
from web.cases import services
from web.ingest import tasks
from web.models import Case, CaseStatus, SampleIndex, ShareLink
from web.sharing import services as shares
from web.sharing.redaction.redactor import REDACT_ALL, Choices
from web.timeline import charts, moments

pytestmark = pytest.mark.django_db

NO_REDACTION = Choices(literals=False, hosts=False, users=False, schemas=False)


@pytest.fixture(autouse=True)
def _fresh_guess_counts():
    """Bad-token counts of the test client's address start and end at zero."""
    for ip in ("127.0.0.1", "192.0.2.10", "192.0.2.11"):
        cache.delete(f"share-misses:{ip}")
    yield
    for ip in ("127.0.0.1", "192.0.2.10", "192.0.2.11"):
        cache.delete(f"share-misses:{ip}")


@pytest.fixture
def case(tmp_path: Path, engineer) -> Case:
    path = make_tar(
        tmp_path / "acme.tgz",
        {
            "c/2026_04_21_16_51_41-processlist": processlist().encode(),
            "c/2026_04_21_16_51_41-vmstat": VMSTAT.encode(),
        },
    )
    with path.open("rb") as fh:
        case = services.case_create(user=engineer, file=File(fh), original_name="capture.tgz", enqueue=False)
    tasks.case_ingest(case_id=case.pk)
    case = Case.objects.get(pk=case.pk)
    assert case.status == CaseStatus.READY, case.failure_reason
    return case


def _link(case: Case, *, choices: Choices = REDACT_ALL, **kw) -> str:
    return shares.share_create(case=case, user=None, choices=choices, **kw).path


def _urls(case: Case, base: str) -> list[str]:
    """Every URL a link serves for this case: the page, status, the whole and a zoomed timeline
    (JSON and CSV), the report, the findings (JSON and CSV), and the moment at every sample of every
    source."""
    times = sorted(
        {
            round(ts.timestamp() * 1000)
            for ts in SampleIndex.objects.filter(case=case).values_list("ts", flat=True)
        }
    )
    assert times, "the capture has samples"
    zoom = f"?start={times[0] - 1000}&end={times[-1] + 1000}"
    return [
        base,
        f"{base}status.json",
        f"{base}timeline.json",
        f"{base}timeline.json{zoom}",
        f"{base}timeline.csv",
        f"{base}timeline.csv{zoom}",
        f"{base}report.json",
        f"{base}findings.json",
        f"{base}findings.csv",
        *(f"{base}moment.json?t={t}" for t in times),
    ]


def _served(client: Client, urls: list[str]) -> bytes:
    out = []
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        out.append(response.content)
    return b"\n".join(out)


# ------------------------------------------------------------------------------ redaction
def test_a_redacted_link_serves_no_literal_host_user_or_schema_in_any_byte(case: Case) -> None:
    base = _link(case)
    served = _served(Client(), _urls(case, base)).decode("utf-8").lower()
    leaks = [(kind, v) for kind, values in SECRETS.items() for v in values if v.lower() in served]
    assert leaks == []
    # What is served is still the case: its statements as fingerprints, the pseudonyms, the moment.
    assert "select id, total from orders where customer_email = ? and total > ?" in served
    assert "user-1" in served and "db-1" in served and "host-1" in served
    assert "update db-2.orders set note = ? where id = ?" in served  # the multi-line Info, in one
    assert "sending data" in served


def test_a_redacted_links_verdict_names_its_own_redacted_findings(case: Case) -> None:
    report = Client().get(f"{_link(case)}report.json").json()
    verdict = report["verdict"]
    named = [verdict["root_cause"], *verdict["chain"], *verdict["explains"], *verdict["also_found"]]
    assert named and all(f in report["findings"] for f in named if f)


def test_the_same_case_without_redaction_serves_those_values(case: Case) -> None:
    """The search above can fail: unredacted, every one of those values is served somewhere."""
    base = _link(case, choices=NO_REDACTION)
    served = _served(Client(), _urls(case, base)).decode("utf-8").lower()
    missing = [(kind, v) for kind, values in SECRETS.items() for v in values if v.lower() not in served]
    assert missing == []


@pytest.mark.parametrize("kind", ["literals", "hosts", "users", "schemas"])
def test_each_kind_is_redacted_only_when_chosen(case: Case, kind: str) -> None:
    choices = Choices(**{k: k == kind for k in ("literals", "hosts", "users", "schemas")})
    served = _served(Client(), _urls(case, _link(case, choices=choices))).decode("utf-8").lower()
    for other, values in SECRETS.items():
        found = [v for v in values if v.lower() in served]
        if other == kind:
            assert found == [], other
        elif other != "literals" or kind != "schemas":  # (a schema inside a statement goes with it)
            assert found, other


def test_pseudonyms_are_the_same_everywhere_on_a_link(case: Case) -> None:
    base = _link(case)
    client = Client()
    at = round(
        SampleIndex.objects.filter(case=case, format="processlist").earliest("ts").ts.timestamp() * 1000
    )
    moment = client.get(f"{base}moment.json?t={at}").json()
    rows = {r["id"]: r for r in moment["processlist"]["rows"]}
    names = {(r["user"], r["host"], r["db"]) for r in rows.values()}
    assert ("user-1", "host-1:51234", "db-2") in names  # acme_checkout, 10.20.30.41, acmeshop_prod
    assert ("user-2", "host-3:33060", "db-1") in names  # acme_report, the FQDN, acme_billing
    raw = next(s for s in moment["raw"]["sources"] if s["format"] == "processlist")["lines"]
    assert "    User: user-1" in raw and "    Host: host-1:51234" in raw and "      db: db-2" in raw
    assert "    Info: update db-2.orders set note = ? where id = ?" in raw
    timeline = client.get(f"{base}timeline.json").json()
    labels = [s["label"] for c in timeline["charts"] for s in c["series"]]
    assert any("db-1.invoices" in label for label in labels)
    # The same link, asked again later, says the same.
    assert client.get(f"{base}moment.json?t={at}").json() == moment


def test_the_shared_page_reports_what_was_redacted(case: Case) -> None:
    html = Client().get(_link(case)).content.decode()
    report = re.search(r'<p id="redaction-report">(.*?)</p>', html, re.S).group(1)
    assert re.sub(r"\s+", " ", report).strip() == (
        'Redacted on this page: <span data-kind="literals">15 literals in 12 statements replaced by '
        "?</span>; "
        '<span data-kind="hosts">3 client hosts as host-N</span>; <span data-kind="users">2 MySQL users as '
        'user-N</span>; <span data-kind="schemas">2 schemas as db-N</span>.'
    )
    assert "the original bundle (not downloadable from this link)" in html


def test_the_stored_case_is_never_changed(case: Case) -> None:
    before = Client()
    _served(Client(), _urls(case, _link(case)))
    engineer = case.created_by
    before.force_login(engineer)
    at = round(
        SampleIndex.objects.filter(case=case, format="processlist").earliest("ts").ts.timestamp() * 1000
    )
    data = before.get(f"/cases/{case.pk}/moment.json?t={at}").json()
    assert any(r["user"] == "acme_checkout" for r in data["processlist"]["rows"])


def test_a_shared_case_shows_its_number_never_its_title(case: Case, engineer_client: Client) -> None:
    """The title is the engineers' name for the case (an upload link's case is titled by its customer and
    ticket): no answer of a link holds it, redacted or not, nor the customer or the ticket; the page is
    named "Case #<id>", its capture window beside it."""
    Case.objects.filter(pk=case.pk).update(
        title="Globex outage TCK-90210", customer="Globex", ticket="TCK-90210"
    )
    window = re.escape(iso_utc(case.window_start))
    preview = engineer_client.post(f"/cases/{case.pk}/shares/", {"days": 7}).content.decode()
    preview_url = re.search(r'href="(/cases/\d+/shares/\d+/preview/)"', preview)[1]
    for base, client in (
        (_link(case), Client()),
        (_link(case, choices=NO_REDACTION), Client()),
        (preview_url, engineer_client),
    ):
        served = _served(client, _urls(case, base)).decode()
        assert [w for w in ("Globex", "TCK-90210", "outage") if w in served] == [], base
        html = client.get(base).content.decode()
        assert f"<title>Case #{case.pk} · Casebook</title>" in html
        assert f'<h1 id="case-heading">Case #{case.pk}</h1>' in html
        assert re.search(rf'<span id="case-window" data-range-start="{window}" data-range-end="', html)
    assert "Globex outage TCK-90210" in engineer_client.get(f"/cases/{case.pk}/").content.decode()


# ------------------------------------------------------------------------------ access, as a table
def _expired(case: Case) -> str:
    made = shares.share_create(case=case, user=None)
    ShareLink.objects.filter(pk=made.share.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    return made.path


def _revoked(case: Case) -> str:
    made = shares.share_create(case=case, user=None)
    shares.share_revoke(share=made.share, user=None)
    return made.path


SUFFIXES = [
    "",
    "status.json",
    "timeline.json",
    "timeline.csv",
    "moment.json?t=1776790302000",
    "report.json",
    "findings.json",
    "findings.csv",
    "bundle/",
]


@pytest.mark.parametrize(
    ("who", "suffix", "status"),
    [("holder", s, 404 if s == "bundle/" else 200) for s in SUFFIXES]
    + [(who, s, 404) for who in ("expired", "revoked", "unknown") for s in SUFFIXES],
)
def test_access_through_a_token(case: Case, who: str, suffix: str, status: int) -> None:
    base = {
        "holder": lambda: _link(case),
        "expired": lambda: _expired(case),
        "revoked": lambda: _revoked(case),
        "unknown": lambda: "/s/" + "A" * 43 + "/",
    }[who]()
    response = Client().get(base + suffix)
    assert response.status_code == status


def test_unknown_expired_and_revoked_tokens_get_the_same_404(case: Case) -> None:
    answers = []
    for base in (_expired(case), _revoked(case), "/s/" + tokenlinks.new_token() + "/"):
        r = Client().get(base)
        answers.append(
            (r.status_code, r.content, sorted((k, v) for k, v in r.headers.items() if k != "Content-Length"))
        )
    assert answers[0] == answers[1] == answers[2]
    assert answers[0][0] == 404


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("/cases/{case}/", 302),  # to the login page
        ("/cases/{case}/timeline.json", 404),
        ("/cases/{case}/moment.json?t=1776790302000", 404),
        ("/cases/{case}/bundle/", 404),
        ("/cases/{case}/shares/{share}/preview/", 404),
        ("/cases/{case}/shares/{share}/preview/timeline.json", 404),
        ("/api/cases/{case}/shares/", 401),  # the API asks for a token
        ("/", 302),
    ],
)
def test_a_token_holder_reaches_nothing_but_the_link(case: Case, url: str, status: int) -> None:
    made = shares.share_create(case=case, user=None)
    client = Client()
    assert client.get(made.path).status_code == 200
    assert client.get(url.format(case=case.pk, share=made.share.pk)).status_code == status


def test_a_token_holder_cannot_create_or_revoke_links(case: Case) -> None:
    made = shares.share_create(case=case, user=None)
    client = Client()
    client.get(made.path)
    assert client.post(f"/cases/{case.pk}/shares/", {"days": 3}).status_code == 404
    assert client.post(f"/cases/{case.pk}/shares/{made.share.pk}/revoke/").status_code == 404
    assert ShareLink.objects.filter(case=case).count() == 1
    assert ShareLink.objects.get().revoked_at is None


def test_the_shared_page_has_no_engineer_controls_or_links(case: Case) -> None:
    html = Client().get(_link(case)).content.decode()
    assert 'id="reanalyze-form"' not in html and 'id="share-form"' not in html
    assert 'id="download-bundle"' not in html
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert all(h.startswith(("/static/", "#", "/s/")) for h in hrefs), hrefs
    assert "/cases/" not in html and "Log out" not in html


def test_the_bundle_is_served_only_where_the_engineer_allowed_it(case: Case) -> None:
    base = _link(case, choices=NO_REDACTION, allow_bundle=True)
    html = Client().get(base).content.decode()
    assert f'href="{base}bundle/"' in html
    response = Client().get(f"{base}bundle/")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == case.upload.file.open("rb").read()
    with pytest.raises(ValueError):
        shares.share_create(case=case, user=None, allow_bundle=True)  # redacted: refused


def test_a_link_to_a_case_whose_overview_is_of_an_older_shape_gets_the_current_one(
    case: Case, engineer_client: Client
) -> None:
    """A link serves the stored overview through the case page's path, version check included:
    one stored before a shape change (``charts.VERSION``) is built again, not sent as it was."""
    current = case.charts_overview
    assert current["version"] == charts.VERSION and current["charts"] and current["windows"]
    older = {"version": charts.VERSION - 1, "charts": [], "sections": []}
    for choices in (NO_REDACTION, REDACT_ALL):
        Case.objects.filter(pk=case.pk).update(charts_overview=older)
        served = Client().get(f"{_link(case, choices=choices)}timeline.json").json()
        assert served["version"] == charts.VERSION, choices
        assert [c["id"] for c in served["charts"]] == [c["id"] for c in current["charts"]], choices
        assert Case.objects.get(pk=case.pk).charts_overview == current  # rebuilt once, kept
    Case.objects.filter(pk=case.pk).update(charts_overview=older)
    assert engineer_client.get(f"/cases/{case.pk}/timeline.json").json() == current


def test_a_view_is_counted_on_the_page_only(case: Case) -> None:
    made = shares.share_create(case=case, user=None)
    client = Client()
    client.get(made.path)
    client.get(f"{made.path}timeline.json")
    client.get(made.path)
    made.share.refresh_from_db()
    assert made.share.view_count == 2 and made.share.last_viewed_at is not None


def test_the_token_is_stored_only_as_its_hash(case: Case) -> None:
    made = shares.share_create(case=case, user=None)
    token = made.path.split("/")[2]
    assert len(token) >= 43  # 256 bits, URL-safe base64
    row = ShareLink.objects.filter(pk=made.share.pk).values().get()
    assert token not in json.dumps(row, default=str)
    assert row["token_sha256"] == shares.token_hash(token)


# ------------------------------------------------------------------------------ headers, rate limit
@pytest.mark.parametrize(
    "suffix",
    ["", "timeline.json", "timeline.csv", "report.json", "findings.csv", "moment.json?t=1776790302000"],
)
def test_shared_responses_send_noindex_no_referrer_and_the_strict_csp(
    case: Case, suffix: str, engineer_client
) -> None:
    engineer_csp = engineer_client.get(f"/cases/{case.pk}/")["Content-Security-Policy"]
    for base in (_link(case), "/s/" + "B" * 43 + "/"):
        r = Client().get(base + suffix)
        assert "noindex" in r["X-Robots-Tag"]
        assert r["Referrer-Policy"] == "no-referrer"
        assert r["Content-Security-Policy"] == engineer_csp
        assert "no-store" in r["Cache-Control"]


def test_the_shared_page_says_noindex_in_its_html(case: Case) -> None:
    html = Client().get(_link(case)).content.decode()
    assert '<meta name="robots" content="noindex, nofollow, noarchive">' in html


def test_token_guessing_is_limited_per_client(case: Case, settings) -> None:
    settings.CASEBOOK_SHARE_GUESS_LIMIT = 3
    good = _link(case)
    guesser, other = Client(REMOTE_ADDR="192.0.2.10"), Client(REMOTE_ADDR="192.0.2.11")
    assert guesser.get(good).status_code == 200  # a good token is not a guess
    for _ in range(3):
        assert guesser.get("/s/" + tokenlinks.new_token() + "/").status_code == 404
    blocked = guesser.get(good)
    assert blocked.status_code == 429 and int(blocked["Retry-After"]) > 0
    assert guesser.get("/s/" + tokenlinks.new_token() + "/timeline.json").status_code == 429
    assert other.get(good).status_code == 200


# ------------------------------------------------------------------------------ engineer's side
def test_an_engineer_creates_previews_lists_and_revokes_a_link(case: Case, engineer_client: Client) -> None:
    response = engineer_client.post(
        f"/cases/{case.pk}/shares/",
        {
            "label": "ACME ticket 4711",
            "days": 7,
            "redact_literals": "on",
            "redact_hosts": "on",
            "redact_users": "on",
            "redact_schemas": "on",
        },
    )
    assert response.status_code == 201
    url = re.search(r'id="share-url" value="([^"]+)"', response.content.decode()).group(1)
    assert url.startswith("http://testserver/s/")
    share = ShareLink.objects.get(case=case)
    assert (share.label, share.created_by.username) == ("ACME ticket 4711", "alice")
    assert timedelta(days=6, hours=23) < share.expires_at - timezone.now() <= timedelta(days=7)

    # The preview is exactly what the customer gets (but for the preview note and the links' URLs).
    preview_base = f"/cases/{case.pk}/shares/{share.pk}/preview/"
    token_base = url.removeprefix("http://testserver")
    for suffix in ("timeline.json", "report.json", "moment.json?t=1776790302000"):
        got = engineer_client.get(preview_base + suffix).content.decode().replace(preview_base, token_base)
        assert got == Client().get(token_base + suffix).content.decode(), suffix
    page = engineer_client.get(preview_base).content.decode()
    assert 'id="share-preview-note"' in page and "acme_checkout" not in page
    assert ShareLink.objects.get(pk=share.pk).view_count == 0  # previews are not views

    Client().get(token_base)
    listing = engineer_client.get(f"/cases/{case.pk}/").content.decode()
    row = re.search(rf'<tr data-share-id="{share.pk}">(.*?)</tr>', listing, re.S).group(1)
    assert "ACME ticket 4711" in row and "alice" in row and "literals, hosts, users, schemas" in row
    assert '<td class="num">1</td>' in row and "active" in row

    assert engineer_client.post(f"/cases/{case.pk}/shares/{share.pk}/revoke/").status_code == 302
    assert Client().get(token_base).status_code == 404


def test_a_redacted_link_with_the_bundle_is_refused_by_the_form(case: Case, engineer_client: Client) -> None:
    response = engineer_client.post(
        f"/cases/{case.pk}/shares/", {"days": 7, "redact_hosts": "on", "allow_bundle": "on"}
    )
    assert response.status_code == 400 and not ShareLink.objects.exists()


def test_the_api_creates_lists_and_revokes_links(case: Case, engineer_client: Client) -> None:
    created = engineer_client.post(
        f"/api/cases/{case.pk}/shares/", {"days": 5, "label": "by script"}, content_type="application/json"
    )
    assert created.status_code == 201
    body = created.json()
    assert (
        body["url"].startswith("http://testserver/s/")
        and body["redaction"] == "literals, hosts, users, schemas"
    )
    assert Client().get(body["url"]).status_code == 200
    listed = engineer_client.get(f"/api/cases/{case.pk}/shares/").json()
    assert [r["id"] for r in listed] == [body["id"]] and "url" not in listed[0]
    revoked = engineer_client.delete(f"/api/cases/{case.pk}/shares/{body['id']}/")
    assert revoked.status_code == 200 and revoked.json()["state"] == "revoked"
    assert Client().get(body["url"]).status_code == 404
    bad = engineer_client.post(
        f"/api/cases/{case.pk}/shares/", {"allow_bundle": True}, content_type="application/json"
    )
    assert bad.status_code == 400


def test_the_api_answers_404_for_an_unknown_case(engineer_client: Client) -> None:
    assert engineer_client.get("/api/cases/999999/shares/").status_code == 404


def test_links_keep_working_while_redis_is_unreachable(case: Case) -> None:
    good = _link(case)  # its vocabulary collected while Redis was there
    away = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
        }
    }
    with override_settings(CACHES=away):
        assert Client().get(good).status_code == 200
        assert Client().get("/s/" + "C" * 43 + "/").status_code == 404
        assert Client().get(_link(case)).status_code == 200  # a new link: collected without the cache


def test_a_value_cut_short_in_a_chart_label_or_a_long_statement_is_redacted(
    tmp_path: Path, engineer, monkeypatch
) -> None:
    """Chart labels are cut at 80 characters and statements at moments.MAX_INFO_CHARS: what is left
    of a schema name there ("acme_") is not served either."""
    columns = "a" * 61  # "select <61 a> from acme_billing...": the schema starts at character 74
    statement = f"SELECT {columns} FROM acme_billing.invoices WHERE id = 5"
    pl = "".join(
        f"TS {1776790301 + i}.500000000 2026-04-21 16:51:{41 + i:02d}\n"
        + "".join(
            f"*************************** {n}. row ***************************\n"
            f"     Id: {n}\n   User: acme_report\n   Host: 10.20.30.41:{5000 + n}\n     db: acme_billing\n"
            f"Command: Query\n   Time: 1\n  State: Sending data\n   Info: {statement}\n"
            for n in range(1, 4)
        )
        for i in range(3)
    )
    path = make_tar(tmp_path / "long.tgz", {"c/2026_04_21_16_51_41-processlist": pl.encode()})
    with path.open("rb") as fh:
        case = services.case_create(user=engineer, file=File(fh), original_name="long.tgz", enqueue=False)
    tasks.case_ingest(case_id=case.pk)
    base = _link(case)
    timeline = Client().get(f"{base}timeline.json").json()
    labels = [s["label"] for c in timeline["charts"] for s in c["series"] if c["id"] == "fingerprints"]
    assert labels == [f"select {columns} from ?…"]
    monkeypatch.setattr(moments, "MAX_INFO_CHARS", len(f"SELECT {columns} FROM acme_bi"))
    moment = Client().get(f"{base}moment.json?t=1776790302500").json()
    assert {r["info"] for r in moment["processlist"]["rows"]} == {f"select {columns} from ?…"}
    served = _served(Client(), _urls(case, base)).decode().lower()
    assert "acme_" not in served and "acme_bi" not in served


def test_values_named_like_the_pages_fields_do_not_break_it(case: Case) -> None:
    """A schema called "case" or a user called "findings" is data: the page's structure (its context,
    its JSON field names) stays as it is."""
    made = shares.share_create(case=case, user=None)
    words = ["case", "findings", "urls", "share", "status", "sources", "charts", "label", "data"]
    vocabulary = {**made.share.vocabulary, "users": words, "schemas": ["casebook", "series"]}
    ShareLink.objects.filter(pk=made.share.pk).update(vocabulary=vocabulary)
    page = Client().get(made.path)
    assert page.status_code == 200
    assert 'id="findings"' in page.content.decode() and 'id="redaction-report"' in page.content.decode()
    timeline = Client().get(f"{made.path}timeline.json").json()
    assert timeline["charts"] and all({"id", "title", "series"} <= set(c) for c in timeline["charts"])
    report = Client().get(f"{made.path}report.json").json()
    assert {"case", "findings", "sources", "status"} <= set(report)


# ------------------------------------------------------------------ the server's name, IPv6, passwords
@pytest.fixture
def server_case(tmp_path: Path, engineer) -> Case:
    path = make_tar(
        tmp_path / "db-prod-17.tgz",
        {
            "c/2026_04_21_16_51_41-hostname": f"{SERVER}\n".encode(),
            "c/2026_04_21_16_51_41-processlist": server_processlist().encode(),
            "c/2026_04_21_16_51_41-ps": server_ps().encode(),
            "c/2026_04_21_16_51_41-slave-status": server_slave_status().encode(),
        },
    )
    with path.open("rb") as fh:
        case = services.case_create(
            user=engineer, file=File(fh), original_name="pt-stalk-db-prod-17.tgz", enqueue=False
        )
    tasks.case_ingest(case_id=case.pk)
    case = Case.objects.get(pk=case.pk)
    assert case.status == CaseStatus.READY, case.failure_reason
    assert case.host == SERVER
    return case


def _leaks(served: str, kinds: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(k, v) for k in kinds for v in SERVER_SECRETS[k] if v.lower() in served.lower()]


def test_a_redacted_link_serves_no_server_name_ipv6_address_or_password(server_case: Case) -> None:
    served = _served(Client(), _urls(server_case, _link(server_case))).decode()
    assert _leaks(served, ("servers", "addresses", "passwords")) == []
    assert "server-1" in served  # the page's host, the title, the report, a pt-stalk path
    assert "--dest=/tmp/pt/collected/server-1/" in served and "--password=***" in served
    assert "/bin/mysqladmin -uuser-1 -p*** -P3306" in served
    assert "-q -? /var/run/?-ens33.pid" in served  # dhclient's -pf: a word ps does not print of its own


def test_passwords_are_masked_on_a_link_without_redaction(server_case: Case) -> None:
    served = _served(Client(), _urls(server_case, _link(server_case, choices=NO_REDACTION))).decode()
    assert _leaks(served, ("passwords",)) == []
    assert [v for v in SERVER_SECRETS["servers"] + SERVER_SECRETS["addresses"] if v not in served] == []
    assert "IDENTIFIED BY '***'" in served and "SOURCE_PASSWORD='***'" in served
    assert "--password *** --single-transaction" in served
    assert "-pf /var/run/dhclient-ens33.pid" in served  # dhclient's -pf is not a password
    assert (
        "mysqlsh acme_admin:***@db-src-03.acme-corp.internal:3306" in served
    )  # MySQL Shell's user:password@


def test_the_servers_name_is_a_pseudonym_the_same_everywhere(server_case: Case) -> None:
    base = _link(server_case)
    client = Client()
    page = client.get(base).content.decode()
    assert '<span class="mono">server-1</span>' in page
    assert (
        '<span data-kind="servers">2 servers (its own name, its replication source or cluster) as '
        "server-N</span>"
    ) in page
    assert client.get(f"{base}report.json").json()["host"] == "server-1"
    at = round(
        SampleIndex.objects.filter(case=server_case, format="processlist").earliest("ts").ts.timestamp()
        * 1000
    )
    moment = client.get(f"{base}moment.json?t={at}").json()
    # 10.20.30.44 (a client of a server listening on IPv6: ::ffff:10.20.30.44) and 2001:db8:ac::7
    hosts = {r["host"] for r in moment["processlist"]["rows"]}
    assert hosts == {"", "localhost", "host-1:40100", "host-2:51234"}
    raw = [line for s in moment["raw"]["sources"] for line in s["lines"]]
    assert "    Host: host-1:40100" in raw and "    Host: host-2:51234" in raw
    # db-prod-17 (the case's host) and db-src-03 (its source), in sorted order
    assert "                  Master_Host: server-2" in raw
    assert "              Master_Log_File: server-2-bin.000042" in raw
    assert "               Relay_Log_File: server-1-relay-bin.000007" in raw
    assert any("mysql -uuser-1 -p -h host-" in line and "%eth0" not in line for line in raw)


def test_a_link_made_before_server_names_were_collected_gets_them(server_case: Case) -> None:
    made = shares.share_create(case=server_case, user=None)
    older = {k: v for k, v in made.share.vocabulary.items() if k not in ("servers", "version")}
    ShareLink.objects.filter(pk=made.share.pk).update(vocabulary=older)
    served = _served(Client(), _urls(server_case, made.path)).decode()
    assert _leaks(served, ("servers",)) == [] and "server-1" in served
    assert ShareLink.objects.get(pk=made.share.pk).vocabulary["servers"] == [
        SERVER,
        "db-src-03.acme-corp.internal",
    ]
