"""Upload links: the tus 1.0 protocol against the spec (core + creation), the case a finished upload
makes (team, customer, ticket, creator, audit), a broken connection resumed, the one 404 for unknown,
expired, used-up and revoked links, the engineers' page and the API."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from tests.web.conftest import EXAMPLE_BUNDLE
from web.accounts import teams
from web.models import AuditEvent, Case, LinkTransfer, Team, UploadLink, default_team_id
from web.sharing.services import token_hash
from web.uploads import services, tasks, tus

pytestmark = pytest.mark.django_db
TUS = {"Tus-Resumable": "1.0.0"}
OFFSET_TYPE = "application/offset+octet-stream"


@pytest.fixture(autouse=True)
def _fresh_guess_counts():
    cache.delete("upload-link-misses:127.0.0.1")
    yield
    cache.delete("upload-link-misses:127.0.0.1")


@pytest.fixture
def made(engineer) -> services.NewUploadLink:
    return services.link_create(user=engineer, customer="ACME <b>", ticket="ZD-4711", uploads=1)


def _create(client: Client, token: str, length: int, name: str = "capture.tar.gz", **headers):
    meta = "filename " + base64.b64encode(name.encode()).decode()
    return client.post(
        f"/u/{token}/files/",
        headers={**TUS, "Upload-Length": str(length), "Upload-Metadata": meta, **headers},
    )


def _patch(client: Client, url: str, offset: int, body: bytes, content_type: str = OFFSET_TYPE, **headers):
    return client.generic(
        "PATCH",
        url,
        data=body,
        content_type=content_type,
        headers={**TUS, "Upload-Offset": str(offset), **headers},
    )


def test_token_is_256_bits_shown_once_stored_hashed(made) -> None:
    assert len(made.token) == 43 and made.path == f"/u/{made.token}/"
    row = UploadLink.objects.get(pk=made.link.pk)
    assert row.token_sha256 == hashlib.sha256(made.token.encode()).hexdigest()
    assert made.token not in json.dumps(list(UploadLink.objects.values()), default=str)


def test_options_says_version_extension_and_max_size(made) -> None:
    r = Client().options(f"/u/{made.token}/files/")
    assert r.status_code == 204
    assert r["Tus-Version"] == "1.0.0" and r["Tus-Extension"] == "creation" and r["Tus-Resumable"] == "1.0.0"
    assert int(r["Tus-Max-Size"]) == made.link.max_bytes


def test_upload_in_two_chunks_makes_the_case_in_the_links_team(made, engineer) -> None:
    data = EXAMPLE_BUNDLE.read_bytes()
    client = Client()
    r = _create(client, made.token, len(data), name="../../etc/ptstalk db1.tar.gz")
    assert r.status_code == 201 and r["Tus-Resumable"] == "1.0.0"
    url = r["Location"]
    assert url.startswith("http://testserver/u/") and not url.endswith("/")
    head = client.head(url, headers=TUS)
    assert (
        head.status_code == 200 and head["Upload-Offset"] == "0" and head["Upload-Length"] == str(len(data))
    )
    assert "no-store" in head["Cache-Control"]
    half = len(data) // 2
    r = _patch(client, url, 0, data[:half])
    assert r.status_code == 204 and r["Upload-Offset"] == str(half)
    assert client.head(url, headers=TUS)["Upload-Offset"] == str(half)
    r = _patch(client, url, half, data[half:])
    assert r.status_code == 204 and r["Upload-Offset"] == str(len(data))
    transfer = LinkTransfer.objects.get()
    assert transfer.name == "ptstalk_db1.tar.gz" and transfer.finished_at is not None
    assert not Path(transfer.temp_path).exists()
    case = Case.objects.select_related("upload").get(pk=transfer.case_id)
    assert case.team_id == made.link.team_id and case.created_by == engineer
    assert (case.customer, case.ticket) == ("ACME <b>", "ZD-4711")
    assert case.upload.sha256 == hashlib.sha256(data).hexdigest() and case.upload.size == len(data)
    event = AuditEvent.objects.get(action="case.uploaded", case_id=case.pk)
    assert event.actor_kind == "upload link" and event.detail["upload_link"] == made.link.pk
    status = client.get(url + "/status.json").json()
    assert status == {"status": "queued", "received": len(data), "length": len(data), "message": ""}
    assert set(status) == {"status", "received", "length", "message"}  # nothing about the case itself


def test_protocol_errors(made) -> None:
    client = Client()
    r = client.post(f"/u/{made.token}/files/", headers={"Upload-Length": "10"})
    assert r.status_code == 412 and r["Tus-Version"] == "1.0.0"
    assert client.post(f"/u/{made.token}/files/", headers=TUS).status_code == 400  # no Upload-Length
    assert client.post(f"/u/{made.token}/files/", headers={**TUS, "Upload-Length": "-5"}).status_code == 400
    url = _create(client, made.token, 10)["Location"]
    assert _patch(client, url, 0, b"abc", content_type="application/octet-stream").status_code == 415
    assert _patch(client, url, 3, b"abc").status_code == 409  # the offset received is 0
    assert _patch(client, url, 0, b"0123").status_code == 204
    r = _patch(client, url, 4, b"456789XYZ")  # 3 bytes past Upload-Length
    assert r.status_code == 413
    assert client.head(url, headers=TUS)["Upload-Offset"] == "4"  # nothing of that request kept
    assert client.delete(url, headers=TUS).status_code == 405


def test_length_over_the_links_maximum_is_refused_before_any_byte(engineer) -> None:
    made = services.link_create(user=engineer, max_bytes=1000)
    r = _create(Client(), made.token, 1001)
    assert r.status_code == 413
    assert not LinkTransfer.objects.exists()
    assert UploadLink.objects.get(pk=made.link.pk).uploads_used == 0


def test_broken_connection_keeps_what_arrived_and_resumes(made) -> None:
    data = EXAMPLE_BUNDLE.read_bytes()
    client = Client()
    url = _create(client, made.token, len(data))["Location"]
    stream = io.BytesIO(data[:70_000])

    def broken(n: int) -> bytes:  # a PATCH whose connection breaks after 70,000 bytes
        chunk = stream.read(n)
        if not chunk:
            raise ConnectionResetError("peer gone")
        return chunk

    transfer = LinkTransfer.objects.get()
    services.transfer_append(transfer=transfer, offset=0, read=broken)
    head = client.head(url, headers=TUS)
    assert head["Upload-Offset"] == "70000"
    r = _patch(client, url, 70_000, data[70_000:])
    assert r.status_code == 204
    case = Case.objects.select_related("upload").get(pk=LinkTransfer.objects.get().case_id)
    assert case.upload.sha256 == hashlib.sha256(data).hexdigest()


def test_an_empty_bundle_is_refused_as_for_engineers(made) -> None:
    client = Client()
    assert _create(client, made.token, 0).status_code == 400


def _answers(token: str, key: str = "nokey") -> list[tuple[int, bytes]]:
    client = Client()
    return [
        (r.status_code, r.content)
        for r in (
            client.get(f"/u/{token}/"),
            client.post(f"/u/{token}/files/", headers={**TUS, "Upload-Length": "10"}),
            client.options(f"/u/{token}/files/"),
            client.head(f"/u/{token}/files/{key}/", headers=TUS),
            client.get(f"/u/{token}/files/{key}/status.json"),
            client.get(f"/u/{token}/collect.sh"),
        )
    ]


def test_expired_used_up_and_revoked_answer_like_unknown(engineer, settings) -> None:
    settings.CASEBOOK_SHARE_GUESS_LIMIT = 1000
    unknown = _answers("x" * 43)
    assert {status for status, _ in unknown} == {404}
    expired = services.link_create(user=engineer)
    UploadLink.objects.filter(pk=expired.link.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    revoked = services.link_create(user=engineer)
    services.link_revoke(link=revoked.link, user=engineer)
    used = services.link_create(user=engineer, uploads=1)
    _create(Client(), used.token, 10)
    for made in (expired, revoked, used):
        assert _answers(made.token)[:3] == unknown[:3]
    live = services.link_create(user=engineer)
    assert Client().get(live.path).status_code == 200


def test_a_transfer_under_way_stops_when_the_link_is_revoked(made, engineer, settings) -> None:
    settings.CASEBOOK_SHARE_GUESS_LIMIT = 1000
    client = Client()
    url = _create(client, made.token, 10)["Location"]
    key = url.rstrip("/").rsplit("/", 1)[1]
    assert client.head(url, headers=TUS).status_code == 200  # used up, yet its transfer goes on
    services.link_revoke(link=made.link, user=engineer)
    assert _answers(made.token, key) == _answers("y" * 43, key)


def test_guessing_tokens_is_throttled(settings) -> None:
    settings.CASEBOOK_SHARE_GUESS_LIMIT = 3
    client = Client()
    for i in range(3):
        assert client.get(f"/u/guess{i}/").status_code == 404
    assert client.get("/u/guess9/").status_code == 429


def test_customer_page_shows_the_drop_zone_and_nothing_of_the_team(made) -> None:
    r = Client().get(made.path)
    body = r.content.decode()
    assert r.status_code == 200 and "no-store" in r["Cache-Control"] and r["Referrer-Policy"] == "no-referrer"
    assert 'id="upload-file"' in body and "tus.min.js" in body
    assert "ACME" not in body and "ZD-4711" not in body and "Upload links" not in body


def test_engineers_page_makes_lists_and_revokes(engineer_client, engineer) -> None:
    team = Team.objects.filter(members=engineer).first()
    r = engineer_client.post(
        "/upload-links/create/",
        {
            "customer": "<script>x</script>",
            "ticket": "T-1",
            "days": 3,
            "uploads": 2,
            "max_size_mb": 5,
            "team": team.pk,
        },
    )
    assert r.status_code == 201
    body = r.content.decode()
    assert "<script>x</script>" not in body and "&lt;script&gt;" in body
    link = UploadLink.objects.get()
    assert link.max_bytes == 5 * 1024 * 1024 and link.uploads_allowed == 2 and link.team == team
    url = body.split('id="upload-link-url" value="', 1)[1].split('"', 1)[0]
    token = url.rsplit("/u/", 1)[1].strip("/")
    assert token_hash(token) == link.token_sha256
    assert f"curl -fsS -o collect.sh {url}collect.sh && sudo sh collect.sh --duration 300 --upload {url}" in (
        body.replace("&amp;", "&")
    )
    script = Client().get(f"/u/{token}/collect.sh")
    assert script.status_code == 200 and b"--upload" in b"".join(script.streaming_content)
    assert AuditEvent.objects.filter(action="upload_link.created").count() == 1
    assert token not in engineer_client.get("/upload-links/").content.decode()
    assert engineer_client.post(f"/upload-links/{link.pk}/revoke/").status_code == 302
    assert UploadLink.objects.get().revoked_at is not None
    assert AuditEvent.objects.filter(action="upload_link.revoked").count() == 1
    assert Client().get(f"/u/{token}/").status_code == 404


def test_other_teams_cannot_see_or_revoke(other_client, made) -> None:
    assert other_client.post(f"/upload-links/{made.link.pk}/revoke/").status_code == 404
    assert made.link.customer not in other_client.get("/upload-links/").content.decode()


def test_api_create_list_revoke(api_client, engineer) -> None:
    r = api_client.post(
        "/api/upload-links/",
        {"customer": "ACME", "ticket": "ZD-1", "days": 7, "uploads": 2, "max_size": 10_000},
        content_type="application/json",
    )
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["url"].startswith("http://testserver/u/") and body["state"] == "active"
    assert (body["uploads_allowed"], body["max_size"], body["uploads_used"]) == (2, 10_000, 0)
    listed = api_client.get("/api/upload-links/").json()
    assert [row["id"] for row in listed] == [body["id"]] and "url" not in listed[0]
    r = api_client.delete(f"/api/upload-links/{body['id']}/")
    assert r.status_code == 200 and r.json()["state"] == "revoked"
    assert (
        api_client.post("/api/upload-links/", {"days": 0}, content_type="application/json").status_code == 400
    )
    assert (
        api_client.post(
            "/api/upload-links/", {"max_size": 10**15}, content_type="application/json"
        ).status_code
        == 400
    )


def test_metadata_parsing() -> None:
    assert tus.parse_metadata("filename YS50Z3o=,empty,bad !!!") == {"filename": "a.tgz", "empty": ""}
    assert services.clean_name("..") == "bundle" and services.clean_name("C:\\x\\y z.tgz") == "y_z.tgz"


def test_unfinished_transfers_of_dead_links_are_discarded(made, engineer) -> None:
    client = Client()
    url = _create(client, made.token, 10)["Location"]
    assert _patch(client, url, 0, b"0123").status_code == 204
    live = services.link_create(user=engineer)
    _create(client, live.token, 10)
    assert tasks.sweep_upload_links() == 0  # both links still answer
    UploadLink.objects.filter(pk=made.link.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert tasks.sweep_upload_links() == 1
    stale, kept = LinkTransfer.objects.order_by("pk")
    assert stale.finished_at is not None and "expired" in stale.error and not Path(stale.temp_path).exists()
    assert kept.finished_at is None and Path(kept.temp_path).exists()
    assert tasks.sweep_upload_links() == 0


def _out_of_team(maker, how: str) -> None:  # noqa: ANN001 - a user
    """``maker`` no longer an active member of the default team, the ways a site admin does it."""
    if how == "removed":
        Team.objects.get(pk=default_team_id()).members.remove(maker)
    elif how == "deactivated":
        get_user_model().objects.filter(pk=maker.pk).update(is_active=False)
    else:
        maker.delete()


@pytest.mark.parametrize("how", ["removed", "deactivated", "deleted"])
def test_an_upload_link_of_a_removed_member_takes_no_byte(engineer, settings, how: str) -> None:
    """Its cases would be made in his name, in a team he is no longer in: the link answers as a
    revoked one on every URL, the transfer under way included, before reading a byte."""
    settings.CASEBOOK_SHARE_GUESS_LIMIT = 1000
    fresh = services.link_create(user=engineer, uploads=2)
    under_way = services.link_create(user=engineer)
    client = Client()
    url = _create(client, under_way.token, 10)["Location"]
    key = url.rsplit("/", 1)[1]
    assert _patch(client, url, 0, b"0123").status_code == 204
    found = services.transfer_for(under_way.token, key)  # a PATCH that found it before the removal
    revoked = services.link_create(user=engineer)
    services.link_revoke(link=revoked.link, user=engineer)
    _out_of_team(engineer, how)
    assert _answers(fresh.token) == _answers(revoked.token) == _answers("x" * 43)
    assert _answers(under_way.token, key) == _answers("y" * 43, key)
    refused = _patch(client, url, 4, b"456789")
    assert (refused.status_code, refused.content) == (404, _answers("y" * 43)[0][1])
    with pytest.raises(services.TransferError) as raised:
        services.transfer_append(transfer=found, offset=4, read=io.BytesIO(b"456789").read)
    assert raised.value.status == 404
    transfer = LinkTransfer.objects.get()
    assert (transfer.offset, transfer.finished_at, transfer.case_id) == (4, None, None)
    assert Path(transfer.temp_path).read_bytes() == b"0123"
    assert UploadLink.objects.get(pk=fresh.link.pk).uploads_used == 0 and not Case.objects.exists()


def test_a_removed_members_links_are_inactive_with_the_reason_and_revoked_by_the_team_page(
    engineer, engineer_client
) -> None:
    team = Team.objects.get(pk=default_team_id())
    tess = get_user_model().objects.create_user("tess", password="correct horse battery")
    teams.member_add(team=team, user=tess, admin=True)
    carl = get_user_model().objects.create_user("carl", password="correct horse battery")
    team.members.add(carl)
    by_admin, by_page = (services.link_create(user=u, customer="ACME") for u in (carl, engineer))
    team.members.remove(carl)  # in the Django admin: nothing revoked, the link is inactive
    tess_client = Client()
    tess_client.force_login(tess)
    page = tess_client.get("/upload-links/").content.decode()
    row = page.split(f'data-link-id="{by_admin.link.pk}"', 1)[1].split("</tr>", 1)[0]
    assert '<td class="link-state">inactive <span' in row and "carl is no longer a member of Default." in row
    listed = {r["id"]: r for r in engineer_client.get("/api/upload-links/").json()}
    assert listed[by_admin.link.pk]["state"] == "inactive"
    assert listed[by_admin.link.pk]["inactive_reason"] == "carl is no longer a member of Default."
    assert (listed[by_page.link.pk]["state"], listed[by_page.link.pk]["inactive_reason"]) == ("active", "")
    assert tess_client.post(f"/teams/{team.pk}/members/{engineer.pk}/remove/").status_code == 302
    assert UploadLink.objects.get(pk=by_page.link.pk).revoked_by == tess
    event = AuditEvent.objects.get(action="upload_link.revoked")
    assert (event.actor_name, event.detail["upload_link"]) == ("tess", by_page.link.pk)
    assert UploadLink.objects.get(pk=by_admin.link.pk).revoked_at is None
