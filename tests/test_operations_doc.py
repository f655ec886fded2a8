"""The configuration table of docs/operations.md is the configuration the code reads.

Every ``CASEBOOK_*`` variable that web/settings.py reads (the first argument of its ``env*`` helpers
and of ``os.environ.get``) is a row read by ``web/settings.py``, and every such row is read there;
every ``CASEBOOK_*`` variable read from the environment anywhere else (Python under web/, parsers/,
analyzer/; the shell scripts/start and scripts/run) has a row, and each row names files that read it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPERATIONS = ROOT / "docs" / "operations.md"
SETTINGS = ROOT / "web" / "settings.py"
SHELL_SCRIPTS = (ROOT / "scripts" / "start", ROOT / "scripts" / "run")
VARIABLE = re.compile(r"CASEBOOK_[A-Z0-9_]+")


def _table() -> dict[str, set[str]]:
    """variable -> the files of its *read by* cell, from the table under "## Configuration"."""
    text = OPERATIONS.read_text()
    section = text.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"`CASEBOOK_[A-Z0-9_]+`", cells[0]):
            name = cells[0].strip("`")
            assert name not in rows, f"{name} has two rows"
            rows[name] = set(re.findall(r"`([^`]+)`", cells[2]))
    return rows


def _env_reads(path: Path) -> set[str]:
    """``CASEBOOK_*`` names passed as the first argument of a call (``envint("CASEBOOK_X", ...)``,
    ``os.environ.get("CASEBOOK_X")``) or looked up as ``os.environ["CASEBOOK_X"]`` in ``path``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        arg = None
        if isinstance(node, ast.Call) and node.args:
            arg = node.args[0]
        elif isinstance(node, ast.Subscript):
            arg = node.slice
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and VARIABLE.fullmatch(arg.value):
            found.add(arg.value)
    return found


def _python_env_readers() -> dict[str, set[str]]:
    readers: dict[str, set[str]] = {}
    for top in ("web", "parsers", "analyzer"):
        for path in (ROOT / top).rglob("*.py"):
            for name in _env_reads(path) if "CASEBOOK_" in path.read_text() else ():
                readers.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return readers


def test_every_variable_the_settings_read_is_in_the_table_and_back() -> None:
    table = _table()
    read = _env_reads(SETTINGS)
    assert len(read) > 30
    in_table = {name for name, files in table.items() if "web/settings.py" in files}
    assert read - in_table == set(), "read by web/settings.py, missing from docs/operations.md"
    assert in_table - read == set(), "in docs/operations.md as read by web/settings.py, which does not"


def test_every_variable_read_elsewhere_is_in_the_table_with_its_readers() -> None:
    table = _table()
    readers = _python_env_readers()
    for script in SHELL_SCRIPTS:
        for name in re.findall(r"\$\{(CASEBOOK_[A-Z0-9_]+)", script.read_text()):
            readers.setdefault(name, set()).add(str(script.relative_to(ROOT)))
    for name, files in readers.items():
        assert name in table, f"{name} (read by {sorted(files)}) is missing from docs/operations.md"
    for name, files in table.items():
        for file in files:
            assert (ROOT / file).is_file(), f"{name}: {file} does not exist"
            assert name in (ROOT / file).read_text(), f"{name}: {file} does not read it"
