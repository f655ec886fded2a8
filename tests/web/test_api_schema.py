"""The API's OpenAPI schema: generated without a warning, valid, and true to the server. schemathesis
reads the schema the live server serves and sends each operation generated requests with an API
token (case ids mapped, half of the time, onto a real ingested case): no answer may be a server
error, and every status code, content type and body must be what the schema says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import schemathesis
from django.core.files import File
from django.core.management import call_command
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.web.conftest import PROCESSLIST_NO_TS, VMSTAT, make_tar
from web.cases import services
from web.ingest import tasks
from web.models import Case

#: Generated requests per operation: enough to reach every parameter's edge shapes, in seconds.
EXAMPLES_PER_OPERATION = 30
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.mark.django_db
def test_the_schema_generates_without_warnings_and_validates(tmp_path: Path) -> None:
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    text = out.read_text()
    for operation in ("cases_list", "cases_create", "cases_status", "cases_findings", "cases_compare"):
        assert f"operationId: {operation}" in text
    assert "scheme: bearer" in text and "basicAuth" not in text


@pytest.fixture
def ready_case_id(transactional_db, tmp_path: Path) -> int:
    """A ready case with vmstat and a processlist snapshot (small: one is made for every test)."""
    bundle = make_tar(
        tmp_path / "b.tgz",
        {
            "2026_04_21_16_51_41-vmstat": VMSTAT.encode(),
            "2026_04_21_16_51_41-processlist": PROCESSLIST_NO_TS.encode(),
        },
    )
    with bundle.open("rb") as fh:
        case = services.case_create(user=None, file=File(fh), original_name=bundle.name, enqueue=False)
    tasks.case_ingest(case_id=case.pk)
    return Case.objects.get(pk=case.pk, status="ready").pk


#: Every operation of the API as "METHOD path" (the test below fails when the schema serves another).
OPERATIONS = (
    "GET /api/cases/",
    "POST /api/cases/",
    "GET /api/cases/{case_id}/",
    "GET /api/cases/{case_id}/status/",
    "POST /api/cases/{case_id}/bundles/",
    "GET /api/cases/{case_id}/findings/",
    "GET /api/cases/{case_id}/series/",
    "GET /api/cases/{case_id}/moment/",
    "GET /api/cases/{case_id}/queries/",
    "GET /api/compare/",
    "GET /api/cases/{case_id}/shares/",
    "POST /api/cases/{case_id}/shares/",
    "GET /api/cases/{case_id}/shares/{share_id}/",
    "DELETE /api/cases/{case_id}/shares/{share_id}/",
    "GET /api/cases/{case_id}/resolution/",
    "POST /api/cases/{case_id}/resolution/",
    "DELETE /api/cases/{case_id}/resolution/",
    "GET /api/cases/{case_id}/events/",
    "GET /api/events/",
    "GET /api/upload-links/",
    "POST /api/upload-links/",
    "GET /api/upload-links/{link_id}/",
    "DELETE /api/upload-links/{link_id}/",
    "GET /api/trends/",
)


@pytest.fixture
def api_schema(live_server, ready_case_id: int, private_queue):
    """The schema the live server serves, with case ids mapped onto the ingested case half the time
    (a random id finds no case: only its 404 would be tested)."""
    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/schema/", timeout=60)

    def real(value: object) -> object:
        return ready_case_id if isinstance(value, int) and value % 2 == 0 else value

    @schema.hook
    def map_path_parameters(context, path_parameters):  # noqa: ANN001, ANN202 - schemathesis hook
        if path_parameters and "case_id" in path_parameters:
            path_parameters["case_id"] = real(path_parameters["case_id"])
        return path_parameters

    @schema.hook
    def map_query(context, query):  # noqa: ANN001, ANN202 - schemathesis hook
        for name in ("base", "other"):
            if query and name in query:
                query[name] = real(query[name])
        return query

    return schema


def test_the_schema_serves_every_operation(api_schema) -> None:
    served = {result.ok().label for result in api_schema.get_all_operations()}
    assert served == set(OPERATIONS)


#: A path parameter, whatever its name (``{id}`` in the docs, ``{case_id}`` in the schema).
PARAM = re.compile(r"{\w+}")


def _documented_operations() -> set[str]:
    """The operations docs/api.md's table lists: ``METHOD /path/`` with every ``{name}`` as ``{}`` and
    no query string (a row may name several methods: ``GET``, ``DELETE /api/upload-links/{id}/``)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    found = set()
    for cell in re.findall(r"^\| ([^|]+) \|", text, re.M):
        methods = re.findall(r"\b(GET|POST|PUT|PATCH|DELETE)\b", cell)
        paths = re.findall(r"(/api/[^\s`?]*)", cell)
        found |= {f"{m} {PARAM.sub('{}', p)}" for m in methods for p in paths[:1]}
    return found


def test_every_operation_is_in_the_api_table() -> None:
    """A new endpoint gets its row in docs/api.md, the reference readers use."""
    served = {PARAM.sub("{}", op) for op in OPERATIONS}
    missing = sorted(served - _documented_operations())
    assert not missing, f"docs/api.md's table lacks {missing}"


# schemathesis's own pytest integration (``schema.parametrize``) does not run under pytest 9 (it reads a
# node attribute pytest no longer has): each operation's strategy is driven by Hypothesis directly.
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
@pytest.mark.parametrize("operation", OPERATIONS)
def test_the_api_answers_as_its_schema_says(
    api_schema, live_server, api_token: str, operation: str, mode: GenerationMode
) -> None:
    """Positive: requests the schema allows; negative: requests it forbids (wrong types, missing
    fields...), which must be refused with a documented 4xx, never a server error."""
    method, path = operation.split(" ")
    strategy = api_schema[path][method].as_strategy(mode)

    @given(case=strategy)
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        database=None,
        derandomize=True,  # the same examples on every run: CI fails only for a change of the code
        suppress_health_check=list(HealthCheck),
    )
    def run(case) -> None:  # noqa: ANN001 - a schemathesis Case
        case.call_and_validate(
            base_url=live_server.url,
            headers={"Authorization": f"Bearer {api_token}"},
            checks=CHECKS,
            timeout=60,
        )

    run()
