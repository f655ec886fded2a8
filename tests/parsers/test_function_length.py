"""No function of parsers/ runs over 80 lines (the house rule): a long one is cut into named steps."""

from __future__ import annotations

import ast
from pathlib import Path

import parsers

#: The longest function, docstring included, in lines.
MAX_FUNCTION_LINES = 80


def test_no_function_in_parsers_runs_over_80_lines() -> None:
    root = Path(parsers.__file__).parent
    long = [
        f"{path.relative_to(root.parent)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path in sorted(root.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, "\n".join(long)
