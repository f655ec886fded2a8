"""No function of the product runs over 80 lines (the guide's rule): Python under analyzer/, parsers/
and web/, and the browser's modules under static/js. A long function is split by what it does; the
few allowed to stay say why in docs/contributing.md ("Long functions")."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 80


def _python_lengths() -> dict[str, int]:
    out = {}
    for top in ("analyzer", "parsers", "web"):
        for path in (ROOT / top).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    out[f"{path.relative_to(ROOT)}:{node.name}"] = node.end_lineno - node.lineno + 1
    return out


def _js_lengths() -> dict[str, int]:
    """Top-level functions of the ES modules (``function name(`` at the start of a line to the first
    ``}`` at the start of a line after it: the house format)."""
    out = {}
    for path in (ROOT / "static" / "js").rglob("*.js"):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if m := re.match(r"(?:export )?(?:async )?function\*? (\w+)\(", line):
                end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("}"))
                out[f"{path.relative_to(ROOT)}:{m[1]}"] = end - i + 1
    return out


def test_no_function_runs_over_80_lines() -> None:
    lengths = {**_python_lengths(), **_js_lengths()}
    assert len(lengths) > 500
    long = {name: n for name, n in lengths.items() if n > MAX_LINES}
    assert not long, long
