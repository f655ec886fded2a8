"""Names that cannot be mistyped (issue 40): a rule's declared inputs (``@rule``), a chart's series and
prefixes and the evidence charts' keys are checked against the registries of frames
(analyzer/timeline/frames.py) and series (``analyzer.timeline.series.SERIES``) when the module that
declares them is imported. Each test plants a typo in a module and imports it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from analyzer.rules.registry import registered, rule
from analyzer.timeline.frames import DeclarationError

ROOT = Path(__file__).resolve().parent.parent

RULE_MODULE = """
from analyzer.rules.registry import rule


@rule(key="planted-typo", requires=("vmstat",), optional=({name!r},))
def planted_typo(tl):
    return None
"""


def _import(path: Path, name: str) -> None:
    """Import the module at ``path`` under ``name`` (removed again from ``sys.modules``)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)


def test_a_rule_declaring_a_mistyped_frame_fails_at_import(tmp_path: Path) -> None:
    (tmp_path / "planted_rules.py").write_text(RULE_MODULE.format(name="iosat"))
    with pytest.raises(DeclarationError, match=r"'iosat' is not a frame .*did you mean 'iostat'"):
        _import(tmp_path / "planted_rules.py", "planted_rules")
    assert "planted-typo" not in registered()


def test_known_inputs_are_accepted() -> None:
    """Frames, ``variables`` and ``ncpu`` pass (the decorator made, not applied: nothing registered)."""
    rule(
        key="planted-ok",
        requires=("vmstat", "ncpu"),
        optional=("variables",),
        any_of=(("iostat", "diskstats"),),
    )
    assert "planted-ok" not in registered()


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        ('("vmstat.r", "r")', '("vmstat.rr", "r")', r"chart 'runqueue': 'vmstat.rr' is not a series"),
        ('prefix="iostat.util_pct:"', 'prefix="iostat.utl_pct:"', r"'iostat.utl_pct:' is not the prefix"),
        ('also="iostat.w_await:"', 'also="iostat.w_awat:"', r"'iostat.w_awat:' is not the prefix"),
        ('"vmstat.cs": ("system",)', '"vmstat.css": ("system",)', r"'css' is not a column of the frame"),
        ('"netstat_s": ("netstat",)', '"netstat": ("netstat",)', r"'netstat' is not a frame"),
        (
            '"procvmstat": ("vmstat-reclaim",)',
            '"procvmstat": ("vmstat-recl",)',
            r"'vmstat-recl' is not the id",
        ),
    ],
)
def test_a_mistyped_chart_or_evidence_chart_fails_at_import(
    tmp_path: Path, old: str, new: str, error: str
) -> None:
    source = (ROOT / "web" / "timeline" / "chartdefs.py").read_text()
    assert old in source, f"{old!r} is no longer in web/timeline/chartdefs.py"
    (tmp_path / "planted_chartdefs.py").write_text(source.replace(old, new, 1))
    with pytest.raises(DeclarationError, match=error):
        _import(tmp_path / "planted_chartdefs.py", "planted_chartdefs")
    _import(ROOT / "web" / "timeline" / "chartdefs.py", "chartdefs_as_it_is")  # and without the typo
