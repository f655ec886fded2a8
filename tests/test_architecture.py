"""ARCHITECTURE.md and docs/contributing.md name real paths: every `path` they write in backticks
exists in the repository (a `<name>` placeholder stands for a file one adds, and is skipped), and
every package of web/ is on the map."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("ARCHITECTURE.md", "docs/contributing.md", "README.md")
#: A backticked token that names a file or folder of the repository: under one of its top folders, or
#: one of its top files (a bare ``views.py`` or a URL such as ``cases/create/`` is not a path).
PATHISH = re.compile(
    r"^(parsers|analyzer|web|templates|static|scripts|bench|tests|docs)/[\w./-]*$|^[A-Z]+\.md$"
)


def _named_paths(text: str) -> set[str]:
    tokens = set(re.findall(r"`([^`\s]+)`", text))
    return {t for t in tokens if "<" not in t and PATHISH.match(t) and not t.startswith(("/", "http"))}


def _map_block(text: str) -> str:
    """The first fenced block of ARCHITECTURE.md: the tree of the code."""
    return text.split("```", 2)[1]


@pytest.mark.parametrize("doc", DOCS)
def test_every_path_named_exists(doc: str) -> None:
    named = _named_paths((ROOT / doc).read_text())
    assert named, f"{doc} names no path"
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"{doc} names paths that do not exist: {missing}"


def _map_entries() -> tuple[list[str], dict[str, str]]:
    """Each line of the map's tree names files (``name.py``) or folders (``name/``) under the folder
    it is indented in: (every path named, each folder's description)."""
    stack: list[tuple[int, str]] = []
    paths: list[str] = []
    described: dict[str, str] = {}
    for line in _map_block((ROOT / "ARCHITECTURE.md").read_text()).splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        base = stack[-1][1] if stack else ""
        # the names before the first run of two spaces (the description follows)
        head, *rest = re.split(r"\s{2,}", line.strip(), maxsplit=1)
        names = head.split() if all(re.fullmatch(r"[\w./-]+", n) for n in head.split()) else []
        paths += [base + name for name in names]
        if len(names) == 1 and names[0].endswith("/"):
            stack.append((indent, base + names[0]))
            described[base + names[0]] = rest[0] if rest else ""
    return paths, described


def test_every_file_of_the_map_exists() -> None:
    paths, _ = _map_entries()
    assert len(paths) > 40
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, f"the map in ARCHITECTURE.md names what does not exist: {missing}"


@pytest.mark.parametrize("top", ["analyzer", "web"])
def test_every_module_is_on_the_map(top: str) -> None:
    """Every module of analyzer/ and web/ (migrations aside) has its line in the map, or is named in
    the description of its folder's line (``management/commands/  analyze, create_engineer...``)."""
    paths, described = _map_entries()
    named = set(paths)
    absent = []
    for module in sorted((ROOT / top).rglob("*.py")):
        rel = module.relative_to(ROOT)
        if module.name == "__init__.py" or "migrations" in rel.parts:
            continue
        folder = f"{rel.parent}/"
        if str(rel) not in named and not re.search(rf"\b{module.stem}\b", described.get(folder, "")):
            absent.append(str(rel))
    assert not absent, f"modules missing from the map in ARCHITECTURE.md: {absent}"


def test_the_readme_table_names_real_paths() -> None:
    """README's "Where things go" names files that exist (``<name>`` stands for one you add)."""
    text = (ROOT / "README.md").read_text()
    table = text.split("## Where things go", 1)[1].split("\n## ", 1)[0]
    named = _named_paths(table)
    assert len(named) > 15, named
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"README's table names paths that do not exist: {missing}"


def test_every_web_package_is_on_the_map() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text()
    packages = sorted(
        p.name for p in (ROOT / "web").iterdir() if (p / "__init__.py").exists() and p.name != "migrations"
    )
    assert packages, "web/ has no packages"
    absent = [p for p in packages if f"  {p}/" not in _map_block(text)]
    assert not absent, f"web/ packages missing from the map in ARCHITECTURE.md: {absent}"


def _web_modules() -> dict[str, Path]:
    return {
        ".".join(p.relative_to(ROOT).with_suffix("").parts): p
        for p in (ROOT / "web").rglob("*.py")
        if "migrations" not in p.parts
    }


def _imports(tree: ast.Module, modules: dict[str, Path]) -> list[tuple[str, list[str]]]:
    """(module of web imported, names taken) for every import of ``tree``, at any depth."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "web":
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                out.append((child, []) if child in modules else (node.module, [alias.name]))
        elif isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names if a.name.split(".")[0] == "web"]
    return out


def test_no_module_of_web_imports_a_private_name() -> None:
    modules = _web_modules()
    private = [
        f"{mod} imports {name} from {target}"
        for mod, path in modules.items()
        for target, names in _imports(ast.parse(path.read_text()), modules)
        for name in names
        if name.startswith("_") and name != "__future__"
    ]
    assert not private, private


def test_the_modules_of_web_import_each_other_without_a_loop() -> None:
    """Module-level and function-level imports alike: a loop held together by an import inside a
    function is still a loop. (web/__init__.py only hands the Celery app on.)"""
    modules = _web_modules()
    graph = {
        mod: {t for t, _ in _imports(ast.parse(path.read_text()), modules) if t in modules and t != mod}
        for mod, path in modules.items()
        if mod != "web.__init__"
    }
    state: dict[str, int] = {}
    loops = []

    def visit(mod: str, trail: list[str]) -> None:
        state[mod] = 1
        for nxt in sorted(graph.get(mod, ())):
            if state.get(nxt) == 1:
                loops.append(" -> ".join([*trail[trail.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[mod] = 2

    for mod in sorted(graph):
        if mod not in state:
            visit(mod, [mod])
    assert not loops, loops
