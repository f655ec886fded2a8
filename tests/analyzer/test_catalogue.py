"""docs/findings.md is generated from the rules (``python -m analyzer.catalogue``) and must not drift."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

from analyzer import catalogue
from analyzer.engine import rules
from analyzer.texts import RuleTexts

ROOT = Path(__file__).resolve().parents[2]
FINDINGS_MD = ROOT / "docs" / "findings.md"


def test_docs_findings_md_is_the_catalogue_of_todays_rules() -> None:
    assert FINDINGS_MD.read_text() == catalogue.render(), (
        "docs/findings.md differs from the rules: run `.venv/bin/python -m analyzer.catalogue > "
        "docs/findings.md`"
    )


def test_the_module_prints_the_catalogue() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "analyzer.catalogue"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == catalogue.render()


def test_every_rule_has_its_section_and_every_rule_text_is_shown() -> None:
    text = catalogue.render()
    for key, spec in rules().items():
        assert f"\n### `{key}`\n" in text
        module = sys.modules[spec.fn.__module__]
        for name in vars(module):
            value = getattr(module, name)
            if isinstance(value, RuleTexts):
                assert value.title in text, f"{module.__name__}.{name} is in no rule's section"


def test_a_changed_rule_text_changes_the_catalogue(monkeypatch) -> None:
    import analyzer.rules.cpu as cpu

    before = catalogue.render()
    changed = dataclasses.replace(cpu.CPU_SATURATION, title="Another title")
    monkeypatch.setattr(cpu, "CPU_SATURATION", changed)
    after = catalogue.render()
    assert "**Title.** Another title" in after and after != before
