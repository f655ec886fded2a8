"""The registry: every format module declares its traits beside FORMAT, and the checks read them there."""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path

import pandas as pd
import pytest

from parsers import damage, registry
from parsers.base import Blocks, Clock, FormatTraits, ParsedSource

PARSERS = Path(registry.__file__).parent


def _module(name: str, **attrs: object) -> types.ModuleType:
    mod = types.ModuleType(f"parsers.{name}")
    mod.__dict__.update(attrs)
    return mod


def test_every_format_module_declares_its_traits_right_after_its_format() -> None:
    for mod in registry.parsers():
        body = ast.parse(Path(mod.__file__).read_text()).body
        names = [
            stmt.targets[0].id
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)
            else None
            for stmt in body
        ]
        at = names.index("FORMAT")
        assert names[at + 1] == "TRAITS", f"{mod.__name__}: TRAITS is not the statement after FORMAT"
        assert isinstance(mod.TRAITS, FormatTraits)


def test_a_format_module_without_traits_is_refused_when_the_registry_loads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bare = _module("untraited", FORMAT="untraited", sniff=lambda head: False, parse=None)
    monkeypatch.setitem(sys.modules, "parsers.untraited", bare)
    with pytest.raises(
        registry.FormatDeclarationError, match=r"parsers/untraited\.py does not declare TRAITS"
    ):
        registry.load(["vmstat", "untraited"])


def test_traits_of_another_type_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    odd = _module("oddtraits", FORMAT="oddtraits", TRAITS={"unsigned": True}, sniff=None, parse=None)
    monkeypatch.setitem(sys.modules, "parsers.oddtraits", odd)
    with pytest.raises(registry.FormatDeclarationError, match="TRAITS as a parsers.base.FormatTraits"):
        registry.load(["oddtraits"])


def test_a_format_module_without_its_sensitive_fields_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A format that has not said which of its fields hold statements, users, hosts or schemas could not be
    redacted on a share link: the registry refuses it like one without TRAITS."""
    from parsers.vmstat import TRAITS

    silent = _module("silent", FORMAT="silent", TRAITS=TRAITS, sniff=lambda head: False, parse=None)
    monkeypatch.setitem(sys.modules, "parsers.silent", silent)
    with pytest.raises(
        registry.FormatDeclarationError, match=r"parsers/silent\.py does not declare SENSITIVE"
    ):
        registry.load(["vmstat", "silent"])


def test_the_registry_refuses_at_import_a_module_it_names_without_traits(tmp_path: Path) -> None:
    """Import time, in a fresh interpreter: a copy of parsers/ whose vmstat lost its TRAITS line."""
    import shutil
    import subprocess

    copy = tmp_path / "parsers"
    shutil.copytree(PARSERS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    # The slow log's parser forms its classes with the analyzer's fingerprint as it streams.
    shutil.copytree(
        PARSERS.parent / "analyzer", tmp_path / "analyzer", ignore=shutil.ignore_patterns("__pycache__")
    )
    vmstat = copy / "vmstat.py"
    text = vmstat.read_text()
    start = text.index("TRAITS = FormatTraits(")
    vmstat.write_text(text[:start] + text[text.index("\n)\n", start) + 3 :])
    run = subprocess.run(
        [sys.executable, "-c", "import parsers.registry"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1
    assert "FormatDeclarationError: parsers/vmstat.py does not declare TRAITS" in run.stderr


def _source(fmt: str) -> ParsedSource:
    frame = pd.DataFrame(
        {
            "ts": pd.to_datetime(["2026-11-22 12:30:00", "2026-11-22 12:30:01"], utc=True),
            "line_no": [3, 4],
            "free_kib": [10.0, -5.0],
            "busy_pct": [50.0, 130.0],
        }
    )
    return ParsedSource(fmt, "m", {"main": frame}, Clock.PER_LINE)


@pytest.mark.parametrize(
    ("traits", "codes", "missing"),
    [
        (
            FormatTraits(
                short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False
            ),
            [],
            0,
        ),
        (
            FormatTraits(
                short_lines=False, unsigned=True, capped_pct=False, blocks=Blocks.NONE, markers=False
            ),
            ["impossible-value"],
            1,
        ),
        (
            FormatTraits(
                short_lines=False, unsigned=True, capped_pct=True, blocks=Blocks.NONE, markers=False
            ),
            ["impossible-value", "impossible-value"],
            2,
        ),
    ],
)
def test_the_damage_checks_follow_what_the_format_declares(
    traits: FormatTraits, codes: list[str], missing: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(registry._BY_FORMAT, "dummy", _module("dummy", FORMAT="dummy", TRAITS=traits))
    source = _source("dummy")
    damage.check_source(source, now=pd.Timestamp("2026-11-23", tz="UTC"))
    assert [w.code for w in source.warnings] == codes
    assert int(source.main[["free_kib", "busy_pct"]].isna().sum().sum()) == missing


def test_a_short_line_format_has_its_long_lines_cut_at_4_kib() -> None:
    assert registry.traits("vmstat").short_lines
    assert damage.max_line_chars("vmstat") == damage.SHORT_LINE_CHARS == 4096
    assert damage.max_line_chars("processlist") == damage.MAX_LINE_CHARS


def test_every_format_is_named_as_its_module() -> None:
    assert [mod.FORMAT for mod in registry.parsers()] == [
        mod.__name__.split(".")[-1] for mod in registry.parsers()
    ]


@pytest.mark.parametrize(("old", "new"), sorted(registry.FORMERLY.items()))
def test_a_format_name_stored_before_the_rename_still_finds_its_parser(old: str, new: str) -> None:
    assert registry.by_format(old) is registry.by_format(new)
    assert registry.traits(old) is registry.by_format(new).TRAITS
