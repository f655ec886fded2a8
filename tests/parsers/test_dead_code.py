"""Nothing defined at the top of a parsers/ module is left unused by the product (tests do not count)."""

from __future__ import annotations

import ast
import collections
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: What a format module declares for the registry, used by name through the module.
DECLARED = {"FORMAT", "TRAITS", "sniff", "parse", "main"}


def _names_used() -> collections.Counter[str]:
    """Every name of the product's Python code (manage.py and its folders; tests left out), defined or
    used: names, attributes, imported names (f-strings included)."""
    used: collections.Counter[str] = collections.Counter()
    paths = [ROOT / "manage.py"]
    for folder in ("parsers", "analyzer", "web", "bench", "scripts"):
        paths += (ROOT / folder).rglob("*.py")
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Name):
                used[node.id] += 1
            elif isinstance(node, ast.Attribute):
                used[node.attr] += 1
            elif isinstance(node, ast.alias):
                used[node.name.rsplit(".", 1)[-1]] += 1
            elif isinstance(node, ast.FunctionDef | ast.ClassDef):
                used[node.name] += 1
    return used


def test_every_top_level_name_of_parsers_is_used() -> None:
    used = _names_used()
    unused = []
    for path in sorted((ROOT / "parsers").rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            else:
                continue
            unused += [
                f"{path.relative_to(ROOT)}:{node.lineno} {n}"
                for n in names
                if n not in DECLARED and used[n] < 2
            ]
    assert not unused, "\n".join(unused)
