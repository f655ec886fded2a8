"""The rule families are declared (``analyzer.engine.RULE_FAMILIES``) and imported strictly: a family
whose module is missing or misspelt stops the import of the engine instead of leaving its rules unrun."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import analyzer
from analyzer import engine

ANALYZER = Path(analyzer.__file__).parent
REPO = ANALYZER.parent


def test_every_module_of_analyzer_rules_is_a_declared_family_and_back() -> None:
    modules = {p.stem for p in (ANALYZER / "rules").glob("*.py")} - {"__init__", "registry"}
    assert modules == set(engine.RULE_FAMILIES)


def test_every_declared_family_registers_rules() -> None:
    families = {spec.fn.__module__.rsplit(".", 1)[1] for spec in engine.rules().values()}
    assert families == set(engine.RULE_FAMILIES)


def _import_engine_from_copy(tmp_path: Path, edit) -> subprocess.CompletedProcess[str]:
    """Import ``analyzer.engine`` in a fresh interpreter from a copy of analyzer/ changed by ``edit``."""
    copy = tmp_path / "analyzer"
    shutil.copytree(ANALYZER, copy, ignore=shutil.ignore_patterns("__pycache__"))
    edit(copy)
    code = "import analyzer.engine as e; print(e.__file__, len(e.rules()))"
    path = f"{tmp_path}:{REPO}"  # the copied analyzer first; parsers/ from the checkout
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_unchanged_copy_imports_with_every_rule(tmp_path: Path) -> None:
    done = _import_engine_from_copy(tmp_path, lambda copy: None)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(tmp_path / "analyzer" / "engine.py"), str(len(engine.rules()))]


def test_a_misspelt_family_is_an_error_at_import(tmp_path: Path) -> None:
    def misspell(copy: Path) -> None:
        source = (copy / "engine.py").read_text()
        assert '    "replication",\n' in source
        (copy / "engine.py").write_text(source.replace('    "replication",\n', '    "replicaton",\n'))

    done = _import_engine_from_copy(tmp_path, misspell)
    assert done.returncode != 0
    assert "ModuleNotFoundError: No module named 'analyzer.rules.replicaton'" in done.stderr


@pytest.mark.parametrize("family", ["irq", "counters"])
def test_a_missing_family_module_is_an_error_at_import(tmp_path: Path, family: str) -> None:
    done = _import_engine_from_copy(tmp_path, lambda copy: (copy / "rules" / f"{family}.py").unlink())
    assert done.returncode != 0
    assert f"No module named 'analyzer.rules.{family}'" in done.stderr
