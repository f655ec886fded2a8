"""A redacted share link audited on a running instance: a real gunicorn and a real worker
(``scripts/start web`` and ``worker``) on the test database. The engineer uploads, through the API, a
bundle holding a member of every registered format with planted values in every field that can hold
one, and the shapes an audit found leaking with their passwords (tests/web/share_planted.py); the case carries
internal details (customer, ticket, notes, a resolution). A share link made through the API with every
redaction on serves, through every endpoint a customer can reach (page, status, timeline JSON and CSV, report,
findings JSON and CSV, the moment of every host at every sample instant), none of the planted values, none of
the internal details, and only the keys its allow-list names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import requests

from tests.servers import wait_for
from tests.web.conftest import processes_on_test_db
from tests.web.share_planted import PASSWORDS, PLANTED, bundle
from tests.web.test_share_every_format import ALLOWED, _paths, _urls
from web.models import Case

#: What engineers record about a case, which a customer's link never shows.
INTERNAL = {
    "customer": "zz-internal-customer-31",
    "ticket": "ZZ-TICKET-7731",
    "notes": "zz internal note: customer is on the old contract",
    "resolution": "zz internal resolution: raised innodb_buffer_pool_size",
}


@pytest.fixture(scope="module")
def planted_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bundle(tmp_path_factory.mktemp("audit") / "planted.tgz")


def _status(base: str, headers: dict[str, str], case_id: int) -> str:
    return requests.get(f"{base}/api/cases/{case_id}/status/", headers=headers, timeout=30).json()["status"]


def test_a_redacted_link_on_a_running_instance_serves_no_planted_value_and_no_internal_field(
    transactional_db, tmp_path: Path, settings, redis_client, planted_bundle: Path
) -> None:
    with processes_on_test_db(tmp_path, settings, redis_client) as stack:
        stack.run("migrate")
        stack.start_web()
        stack.start("worker")
        base, headers = stack.base_url, stack.api_headers()

        answer = stack.upload(planted_bundle, "planted values in every format")
        assert answer.status_code == 201, answer.text
        case_id = answer.json()["id"]
        wait_for("the case ready", lambda: _status(base, headers, case_id) in ("ready", "failed"), 600)
        assert _status(base, headers, case_id) == "ready"
        Case.objects.filter(pk=case_id).update(**INTERNAL, resolution_category="config")

        made = requests.post(
            f"{base}/api/cases/{case_id}/shares/", headers=headers, json={"days": 7}, timeout=30
        )
        assert made.status_code == 201, made.text
        link = made.json()["url"]
        path = "/" + link.split("/", 3)[3]
        assert re.fullmatch(r"/s/[\w-]+/", path)

        served: list[str] = []
        customer = requests.Session()  # no account: what anyone holding the link gets
        for url in _urls(Case.objects.get(pk=case_id), path):
            response = customer.get(f"{base}{url}", timeout=60)
            assert response.status_code == 200, (url, response.status_code)
            if url == path:
                assert response.headers.get("Referrer-Policy") == "no-referrer"
                assert "noindex" in response.headers.get("X-Robots-Tag", "") + response.text
            served.append(response.text)
            name = url.split("?")[0].rsplit("/", 1)[-1]
            if name.endswith(".json"):
                keys = _paths(response.json())
                assert keys <= ALLOWED[name], (url, sorted(keys - ALLOWED[name]))
        text = "\n".join(served).lower()
        planted = [(kind, v) for kind, values in PLANTED.items() for v in values if v.lower() in text]
        assert planted == []  # the audit's shapes among them (PLANTED["audit"])
        assert [p for p in PASSWORDS if p.lower() in text] == []
        internal = [k for k, v in INTERNAL.items() if v.lower() in text]
        assert internal == []
        # The link still shows the case: the statements as fingerprints, pseudonyms in place of names.
        assert "update orders set n=n+? where email=? and id=?" in text
        assert "user-1" in text and "server-1" in text
        report = json.loads(served[_urls(Case.objects.get(pk=case_id), path).index(f"{path}report.json")])
        assert report["verdict"] is not None and report["findings"]
