"""The compare page names the slow log classes new since the last case of the same customer
(web/history/compare.py ``compare_classes``, ``last_case_of_customer``; templates/cases/compare.html)."""

from __future__ import annotations

import pytest
from django.test import Client

from analyzer.statements.querydigest import checksum
from web.history.compare import compare_classes
from web.models import Case, QueryClass

pytestmark = pytest.mark.django_db

OLD = "select status, n from orders where id = ?"
NEW = "select id, pad from items where pad like ? order by pad desc limit ?"


def _classes(case: Case, *fingerprints: str) -> None:
    for number, fp in enumerate(fingerprints):
        QueryClass.objects.create(
            case=case,
            number=number,
            member="vm-slow.log",
            checksum=checksum(fp),
            fingerprint=fp,
            query_time_s=10.0 - number,
            digest={"fingerprint": fp, "checksum": checksum(fp), "count": 7},
        )


def test_the_compare_page_names_a_class_new_since_the_last_case_of_the_customer(
    engineer, engineer_client: Client, api_client: Client
) -> None:
    team = engineer.teams.get()
    before = Case.objects.create(title="last week", team=team, customer="Acme")
    after = Case.objects.create(title="today", team=team, customer="acme")
    Case.objects.create(title="another customer", team=team, customer="Globex")
    _classes(before, OLD)
    _classes(after, NEW, OLD)
    page = engineer_client.get(f"/cases/{after.pk}/compare/").content.decode()
    assert f"/cases/{before.pk}/compare/?with={after.pk}" in page  # the last case of the same customer
    page = engineer_client.get(f"/cases/{before.pk}/compare/?with={after.pk}").content.decode()
    table = page.split('id="slow-log-new"', 1)[1].split("</table>", 1)[0]
    assert NEW in table and checksum(NEW) in table and OLD not in table
    body = engineer_client.get(f"/cases/{before.pk}/compare.json?with={after.pk}").json()
    assert [c["fingerprint"] for c in body["slow_log"]["new"]] == [NEW]
    assert body["slow_log"]["new_count"] == 1 and body["slow_log"]["gone_count"] == 0
    api = api_client.get("/api/compare/", {"base": before.pk, "other": after.pk}).json()
    assert api["slow_log"] == body["slow_log"]


def test_a_side_without_a_slow_log_is_not_compared() -> None:
    out = compare_classes(None, [{"checksum": "A", "fingerprint": "select ?"}])
    assert out["compared"] is False and out["new"] == [] and out["other_classes"] == 1
