"""The map is enough: in a copy of the repository, a newcomer's format, rule (in a family of its own
too), chart and API endpoint each touch only the files that the change's row of "Where things go" in
README.md and in ARCHITECTURE.md, and its section of docs/contributing.md, name; and the checks that
guard those files (the registry, the catalogue, the architecture test, the URLconf, the API schema and
its table, the share-every-format test) pass with them there.

The dummies are small on purpose: the format is a copy of a real parser under another name, the rules
fire on nothing, the chart reads an existing series, the endpoint answers a case's id. What is tested
is where they go, not what they do."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Not part of the product's source: the checkout's environment, history, caches and run files.
NOT_COPIED = shutil.ignore_patterns(".git", ".venv", "var", ".ruff_cache", "__pycache__")


#: A path written in backticks: a file or folder, or a Markdown file at the top.
PATH = re.compile(r"`([\w./<>-]+/[\w./<>-]*|[\w<>-]+\.md)`")
#: Where each document says where a change goes: the row of "Where things go" (README.md,
#: ARCHITECTURE.md) whose first cell is the change, the walk-through of docs/contributing.md.
DOCS = ("README.md", "ARCHITECTURE.md", "docs/contributing.md")
WALKS = {
    "an input format": "## 1. A new input format",
    "a rule": "## 2. A new rule",
    "a chart": "## 3. A new chart",
    "an API endpoint": "## 4. A new API endpoint",
}


def _row(change: str, doc: str = "README.md") -> list[str]:
    """The paths ``doc`` names for ``change``, code and tests: its row of "Where things go" (a row's
    first cell), or its walk-through (docs/contributing.md)."""
    text = (ROOT / doc).read_text()
    if doc == "docs/contributing.md":
        return PATH.findall(text.split(WALKS[change], 1)[1].split("\n## ", 1)[0])
    table = text.split("## Where things go", 1)[1].split("\n## ", 1)[0]
    row = next(line for line in table.splitlines() if line.startswith(f"| {change} |"))
    return PATH.findall(row)


def _allowed(path: str, named: list[str]) -> bool:
    """Whether ``path`` is one the row names: the path itself, a file under a named folder, or the
    file a ``<name>`` placeholder stands for."""
    for name in named:
        pattern = re.escape(name).replace(re.escape("<"), "<").replace(re.escape(">"), ">")
        pattern = re.sub(r"<[\w-]+>", r"[\\w-]+", pattern)
        if re.fullmatch(pattern, path) or (name.endswith("/") and path.startswith(name)):
            return True
    return False


class Copy:
    """A copy of the repository, with a record of every file a change wrote."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.touched: set[str] = set()

    def write(self, rel: str, text: str) -> None:
        (self.root / rel).write_text(text)
        self.touched.add(rel)

    def edit(self, rel: str, old: str, new: str) -> None:
        text = (self.root / rel).read_text()
        assert old in text, f"{rel}: {old!r} is no longer there"
        self.write(rel, text.replace(old, new, 1))

    def append(self, rel: str, text: str) -> None:
        self.write(rel, (self.root / rel).read_text() + text)

    def run(self, *args: str, env: dict[str, str] | None = None) -> str:
        env = {**os.environ, "PYTHONPATH": str(self.root), "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
        done = subprocess.run(args, cwd=self.root, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{' '.join(args)}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done.stdout


#: The dummy format's own line (a copy of pt-stalk's -trigger parser that reads this phrase instead).
DUMMY_PHRASE = "dummy sar net ran with"


def _add_format(c: Copy) -> None:
    source = (c.root / "parsers" / "ptstalk_trigger.py").read_text()
    assert 'FORMAT = "ptstalk_trigger"' in source and '"pt-stalk ran with"' in source
    source = source.replace('FORMAT = "ptstalk_trigger"', 'FORMAT = "dummy_sar_net"')
    c.write("parsers/dummy_sar_net.py", source.replace('"pt-stalk ran with"', f'"{DUMMY_PHRASE}"'))
    c.edit(
        "analyzer/timeline/frames.py", "_COLUMNS = {\n", '_COLUMNS = {\n    "dummy_sar_net": "ts line_no",\n'
    )
    c.edit(
        "tests/web/share_planted.py",
        '    pt["pasted-vmstat.txt"]',
        f'    pt["2026_11_27_15_52_53-dummy"] = b"2026_11_27_15_53_01 {DUMMY_PHRASE} --interval=1\\n"\n'
        '    pt["pasted-vmstat.txt"]',
    )
    c.edit(
        "parsers/registry.py", '    "ptstalk_output",\n)', '    "ptstalk_output",\n    "dummy_sar_net",\n)'
    )
    c.write(
        "tests/parsers/test_dummy_sar_net.py",
        "from parsers import registry\n\n\ndef test_registered() -> None:\n"
        '    assert registry.by_format("dummy_sar_net").FORMAT == "dummy_sar_net"\n',
    )


RULE = '''

# --- dummy-relay-log-space ----------------------------------------------------------------------
DUMMY_RELAY_TEXTS = RuleTexts(
    title="Relay logs fill {used_gib:.1f} GiB",
    explanation="The relay logs hold {used_gib:.1f} GiB that the SQL thread has not applied.",
    recommendation="See why the SQL thread is behind.",
    sources=("MySQL 8.4 Reference Manual, The Relay Log",),
)


@rule(key="dummy-relay-log-space", requires=("replica_status",))
def dummy_relay_log_space(tl: Timeline) -> Finding | None:
    """Never fires (no relay log is that large): a rule added where the map says rules go."""
    used = 0.0
    if used < float("inf"):
        return None
    return DUMMY_RELAY_TEXTS.finding(key="dummy-relay-log-space", severity=Severity.INFO, windows=(), evidence=())
'''


#: A family of its own: a module of analyzer/rules/, named in RULE_FAMILIES and on the map.
FAMILY = '''"""Dummy network rules: a family added where the map says families go."""

from __future__ import annotations

from analyzer.findings import Finding
from analyzer.rules.registry import rule
from analyzer.timeline.timeline import Timeline


@rule(key="dummy-link-full", requires=("netstat_s",))
def dummy_link_full(tl: Timeline) -> Finding | None:
    """Never fires."""
    return None
'''


def _add_rule(c: Copy) -> None:
    c.append("analyzer/rules/host.py", RULE)
    c.write("analyzer/rules/dummynet.py", FAMILY)
    c.edit("analyzer/engine.py", '    "statements",\n)', '    "statements",\n    "dummynet",\n)')
    families = "statements (the slow log's class against the pressure);"
    c.edit("ARCHITECTURE.md", families, f"{families[:-1]}, dummynet;")
    c.write(
        "tests/analyzer/rules/test_host_dummy.py",
        "from analyzer.engine import rules\n\n\ndef test_registered() -> None:\n"
        '    assert {"dummy-relay-log-space", "dummy-link-full"} <= set(rules())\n',
    )


def _add_chart(c: Copy) -> None:
    c.edit(
        "web/timeline/chartdefs.py",
        "CHARTS = (\n",
        (
            'CHARTS = (\n    ChartDef("dummy-blocked", "cpu", "Blocked b (vmstat)", "threads", '
            'series=(("vmstat.b", "b"),)),\n'
        ),
    )
    c.edit(
        "web/timeline/chartdefs.py",
        '    "vmstat.b": ("runqueue",),',
        '    "vmstat.b": ("runqueue", "dummy-blocked"),',
    )
    version = re.search(r"^VERSION = (\d+)$", (c.root / "web/timeline/charts.py").read_text(), re.M)
    assert version, "web/timeline/charts.py: VERSION = <n> is no longer there"
    c.edit("web/timeline/charts.py", version[0], f"VERSION = {int(version[1]) + 1}")  # the shape changed


ENDPOINT = '''

@extend_schema(
    operation_id="cases_dummy_thing",
    summary="A case's id, read through the one access check",
    parameters=[CASE_ID],
    responses={200: CaseStatusSerializer, **error_responses(404)},
)
@api_view(["GET"])
def case_dummy_thing_api(request: Request, case_id: int) -> Response:
    """The case's status (a dummy endpoint)."""
    return Response(selectors.case_status(selectors.case_for_user(user=request.user, case_id=case_id)))
'''


def _add_endpoint(c: Copy) -> None:
    c.append("web/api/cases.py", ENDPOINT)
    route = '    path("api/cases/<int:case_id>/status/", api.case_status_api, name="api-case-status"),\n'
    c.edit(
        "web/urls.py",
        route,
        route
        + '    path("api/cases/<int:case_id>/thing/", api.case_dummy_thing_api, name="api-case-thing"),\n',
    )
    c.edit(
        "docs/api.md",
        "| `GET /api/cases/{id}/findings/` |",
        "| `GET /api/cases/{id}/thing/` | a dummy |\n| `GET /api/cases/{id}/findings/` |",
    )
    c.edit(
        "tests/web/test_api_schema.py",
        '    "GET /api/cases/{case_id}/status/",\n',
        '    "GET /api/cases/{case_id}/status/",\n    "GET /api/cases/{case_id}/thing/",\n',
    )


CHANGES = {
    "an input format": _add_format,
    "a rule": _add_rule,
    "a chart": _add_chart,
    "an API endpoint": _add_endpoint,
}


@pytest.fixture(scope="module")
def changed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Copy, dict[str, set[str]]]:
    """A copy of the repository with the four changes made one after the other, as a newcomer would
    (the rule's row ends with regenerating the catalogue), and the files each change wrote."""
    copy = Copy(tmp_path_factory.mktemp("repo") / "casebook")
    shutil.copytree(ROOT, copy.root, ignore=NOT_COPIED, symlinks=True)
    touched = {}
    for change, make in CHANGES.items():
        copy.touched = set()
        make(copy)
        if change == "a rule":
            copy.write("docs/findings.md", copy.run(sys.executable, "-m", "analyzer.catalogue"))
        touched[change] = copy.touched
    return copy, touched


@pytest.mark.parametrize("doc", DOCS)
@pytest.mark.parametrize("change", CHANGES)
def test_a_change_touches_only_the_files_the_map_names(changed, change: str, doc: str) -> None:  # noqa: ANN001
    named = _row(change, doc)
    stray = sorted(p for p in changed[1][change] if not _allowed(p, named))
    assert not stray, f"{change}: touched {stray}, which {doc} does not name for it ({named})"


CHECK = """
import django, os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "web.settings")
django.setup()
from parsers import registry
from analyzer.engine import rules
from web.timeline import chartdefs
from tests.web.test_access import CASE_ROUTES
from tests.web.test_api_schema import test_every_operation_is_in_the_api_table
assert registry.by_format("dummy_sar_net")
assert {"dummy-relay-log-space", "dummy-link-full"} <= set(rules())
assert "dummy-blocked" in {c.id for c in chartdefs.CHARTS}
assert "/api/cases/{id}/thing/" in CASE_ROUTES, CASE_ROUTES
test_every_operation_is_in_the_api_table()
print("ok")
"""


def test_the_checks_pass_with_every_change_in_place(changed) -> None:  # noqa: ANN001
    copy = changed[0]
    assert copy.run(sys.executable, "-c", CHECK).strip() == "ok"
    copy.run(
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/test_architecture.py",
        "tests/analyzer/test_catalogue.py",
        "tests/test_citations.py",
        "tests/parsers/test_dummy_sar_net.py",
        "tests/analyzer/rules/test_host_dummy.py",
    )
    copy.run(sys.executable, "manage.py", "spectacular", "--validate", "--fail-on-warn", "--file", os.devnull)


def test_the_format_is_shared_and_the_chart_version_bumped_with_the_tests_passing(changed) -> None:  # noqa: ANN001
    """In the copy, on a database of its own: the share-every-format test, whole, with the new
    format's planted member (tests/web/share_planted.py): a redacted link leaks nothing of it; the
    declarations import and every frame of every format is registered; no test pins the chart VERSION
    the chart change bumped."""
    copy = changed[0]
    url = os.environ.get("CASEBOOK_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/casebook")
    copy.run(
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-n",
        "0",
        "-p",
        "no:cacheprovider",
        "tests/web/test_share_every_format.py",
        "tests/web/test_views.py::test_the_timeline_gives_chart_specs_on_one_axis",
        "tests/web/test_views.py::test_the_whole_timeline_is_served_from_the_overview_built_at_ingest",
        "tests/test_declarations.py",
        "tests/analyzer/test_declared_inputs.py::test_every_frame_and_series_of_a_fixture_is_registered",
        env={"CASEBOOK_DATABASE_URL": f"{url.rstrip('/')}_map_copy"},
    )
