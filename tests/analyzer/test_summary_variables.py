"""The timeline's server variables from a pt-mysql-summary report when the bundle has no ``-variables``
(analyzer/timeline/timeline.py ``Timeline.from_sources``), and the evidence of a rule that reads one naming
the report's member and line (analyzer/engine.py).

The bundle is culprit-tablecache (table_open_cache 64 under 6 sessions reading 400 tables) without its
``-variables``, with the real report of a MariaDB 10.11 server whose table_open_cache was 64
(tests/fixtures/summaries/README.md) beside its pt-stalk collection, as a support bundle carries it.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from analyzer import engine
from analyzer.timeline.timeline import Timeline
from parsers.ingest.bundle import read_bundle

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REPORT = FIXTURES / "summaries" / "pt-mysql-summary-3.2.1_mariadb-10.11_source.out"
TABLE_CACHE_LINE = 160  # "                     Size | 64" under "# Table cache"


def _bundle(tmp_path: Path, *, variables: bool) -> Timeline:
    """culprit-tablecache with the report as ``tablecache/pt-mysql-summary.out``, its ``-variables``
    kept or not."""
    path = tmp_path / "bundle.tar.gz"
    with (
        tarfile.open(FIXTURES / "bundles" / "culprit-tablecache.tar.gz") as src,
        tarfile.open(path, "w:gz") as out,
    ):
        for member in src.getmembers():
            if member.isfile() and (variables or not member.name.endswith("-variables")):
                out.addfile(member, src.extractfile(member))
        data = REPORT.read_bytes()
        info = tarfile.TarInfo("tablecache/pt-mysql-summary.out")
        info.size = len(data)
        out.addfile(info, io.BytesIO(data))
    bundle = read_bundle(path)
    return Timeline.from_sources(
        bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
    )


def test_without_variables_the_reports_settings_are_the_timelines(tmp_path: Path) -> None:
    tl = _bundle(tmp_path, variables=False)
    assert tl.variables["table_open_cache"] == "64" and tl.variables["binlog_format"] == "ROW"
    assert tl.variables_from["table_open_cache"] == ("tablecache/pt-mysql-summary.out", TABLE_CACHE_LINE)
    assert "variables" in tl.inputs


def test_a_rule_that_needs_a_setting_is_evaluated_and_its_evidence_names_the_report(tmp_path: Path) -> None:
    out = engine.run(_bundle(tmp_path, variables=False), only=("table-cache-full",))
    assert out.not_evaluated == []
    [f] = out.findings
    assert f.title.endswith("(table_open_cache = 64)")
    setting = next(e for e in f.evidence if e.label == "variable table_open_cache")
    assert (setting.value, setting.member, setting.lines) == (
        "64",
        "tablecache/pt-mysql-summary.out",
        (160, 160),
    )
    [named] = f.culprit.evidence
    assert (named.member, named.lines) == ("tablecache/pt-mysql-summary.out", (160, 160))


def test_with_variables_the_report_is_not_read_for_settings(tmp_path: Path) -> None:
    tl = _bundle(tmp_path, variables=True)
    assert tl.variables_from == {}
    assert (tl.variables["log_bin"], tl.variables["binlog_format"]) == (
        "OFF",
        "MIXED",
    )  # not the report's ON, ROW
    [f] = engine.run(tl, only=("table-cache-full",)).findings
    setting = next(e for e in f.evidence if e.label == "variable table_open_cache")
    assert setting.member is None


def test_without_either_the_rule_is_not_evaluated() -> None:
    bundle = read_bundle(FIXTURES / "bundles" / "culprit-tablecache.tar.gz")
    sources = [s for s in bundle.sources if s.format != "variables"]
    out = engine.run(Timeline.from_sources(sources), only=("table-cache-full",))
    assert [n.missing for n in out.not_evaluated] == [("variables",)]
