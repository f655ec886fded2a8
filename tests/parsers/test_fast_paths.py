"""The NumPy fast paths of the parsers read exactly what their careful paths read.

Several parsers read the regular bulk of a capture with one vectorised pass over its bytes and fall
back to a careful row-by-row path for anything irregular (processlist ``_vertical_chunks._vertical_fast``,
mysqladmin ``_mysqladmin_cells.matrix``/``cells``, interrupts ``_fast_counts``, mpstat ``_walk_blocks``
and its repeated headers). Each capture below is parsed twice, once as shipped and once with every fast path
of its format turned off, and the two results must be identical: frames (values, dtypes, line numbers),
warnings, clock and meta. A second set of tests checks that the fast paths really run on regular captures, so
the comparison is not between two runs of the careful path.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest

from parsers import _mysqladmin_cells, _vertical_chunks, interrupts, mpstat, registry
from parsers.base import ClockHints, ParsedSource
from tests.conftest import FIXTURES, SAMPLES

HINTS = ClockHints(start_local=pd.Timestamp("2026-04-21 16:43:19"), interval_s=1.0)


def _mpstat_line_by_line(st: mpstat._Reader, read) -> None:
    mpstat._walk_lines(st, st.lines(mpstat._renumbered(iter(lambda: read(1 << 16), ""), 1)))


#: format -> (module, function, what the function returns to decline, or a careful replacement)
FAST_PATHS: dict[str, list[tuple[object, str, object]]] = {
    "processlist": [(_vertical_chunks, "_vertical_fast", False)],
    "mysqladmin": [(_mysqladmin_cells, "matrix", None), (_mysqladmin_cells, "cells", None)],
    "interrupts": [(interrupts, "_fast_counts", None)],
    "mpstat": [(mpstat, "_walk_blocks", _mpstat_line_by_line), (mpstat._Reader, "known_header", None)],
}


def _captures() -> Iterator[tuple[str, Path]]:
    """(format, path) of every fixture and every real sample whose content is one of FAST_PATHS."""
    roots = [FIXTURES] + ([SAMPLES] if SAMPLES.is_dir() else [])
    for path in sorted(itertools.chain.from_iterable(r.rglob("*") for r in roots)):
        if not path.is_file() or path.suffix in {".md", ".sh", ".gz", ".py", ".html", ".json"}:
            continue
        if path.name.startswith(
            "pasted_"
        ):  # a capture inside a note: read once the note is stripped (pieces.py)
            continue
        with path.open(encoding="utf-8", errors="replace") as fh:
            head = [line.rstrip("\r\n") for line in itertools.islice(fh, registry.HEAD_LINES)]
        module = registry.detect(head)
        if module is not None and module.FORMAT in FAST_PATHS:
            yield module.FORMAT, path


CAPTURES = list(_captures())


def _parse(fmt: str, path: Path) -> ParsedSource:
    with path.open(encoding="utf-8", errors="replace", newline=None) as fh:
        return registry.by_format(fmt).parse(fh, member=path.name, clock=HINTS)


def _careful(monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    for module, name, decline in FAST_PATHS[fmt]:
        replacement = decline if callable(decline) else (lambda *a, _d=decline, **k: _d)
        monkeypatch.setattr(module, name, replacement)


def _assert_same(fast: ParsedSource, careful: ParsedSource) -> None:
    assert fast.frames.keys() == careful.frames.keys()
    for name in fast.frames:
        pd.testing.assert_frame_equal(fast.frames[name], careful.frames[name], check_exact=True, obj=name)
    assert fast.warnings == careful.warnings
    assert fast.clock == careful.clock
    assert repr(fast.meta) == repr(careful.meta)


def test_the_corpus_holds_every_format_with_a_fast_path() -> None:
    assert {fmt for fmt, _ in CAPTURES} == set(FAST_PATHS)


@pytest.mark.parametrize(
    ("fmt", "path"), CAPTURES, ids=[f"{fmt}:{p.relative_to(p.parents[1])}" for fmt, p in CAPTURES]
)
def test_fast_and_careful_paths_read_the_same(monkeypatch: pytest.MonkeyPatch, fmt: str, path: Path) -> None:
    fast = _parse(fmt, path)
    _careful(monkeypatch, fmt)
    _assert_same(fast, _parse(fmt, path))


def _spy(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[object]:
    """Record what ``module.name`` returns on each call."""
    results: list[object] = []
    real: Callable[..., object] = getattr(module, name)

    def wrapper(*args: object, **kwargs: object) -> object:
        got = real(*args, **kwargs)
        results.append(got)
        return got

    monkeypatch.setattr(module, name, wrapper)
    return results


@pytest.mark.parametrize(
    ("fmt", "fixture", "module", "name"),
    [
        ("processlist", "processlist/mariadb-10.11.19_vertical_ts.txt", _vertical_chunks, "_vertical_fast"),
        ("mysqladmin", "mysqladmin/mariadb-10.11_ts-markers_ext_subset.txt", _mysqladmin_cells, "matrix"),
        ("interrupts", "interrupts/linux-6.18_proc-interrupts_3snap.txt", interrupts, "_fast_counts"),
        ("mpstat", "mpstat/mpstat-12.6.1_P-ALL_ts-markers.txt", mpstat, "_rows"),
    ],
)
def test_the_fast_path_reads_a_regular_capture(
    monkeypatch: pytest.MonkeyPatch, fmt: str, fixture: str, module: object, name: str
) -> None:
    results = _spy(monkeypatch, module, name)
    _parse(fmt, FIXTURES / fixture)
    assert results and all(r is not None and r is not False for r in results)


def _irregular(text: str, every: int, odd: str) -> str:
    """``text`` with ``odd`` inserted after every ``every``-th line."""
    lines = text.splitlines(keepends=True)
    return "".join(line + (odd if i % every == every - 1 else "") for i, line in enumerate(lines))


@pytest.mark.parametrize(
    ("fmt", "fixture", "odd"),
    [
        # a stray line inside vertical rows: the fast path declines that chunk
        ("processlist", "processlist/mariadb-10.11.19_vertical_ts.txt", "garbage in the middle\n"),
        # a value that is not a number in a status table
        ("mysqladmin", "mysqladmin/mariadb-10.11_ts-markers_ext_subset.txt", "| Odd_status | 12,5 |\n"),
        # an IRQ row with a count that is not a number
        ("interrupts", "interrupts/linux-6.18_proc-interrupts_3snap.txt", " 99:  12x  7  IO-APIC  x\n"),
        # a stray line and a form feed inside the runs of rows
        ("mpstat", "mpstat/mpstat-12.6.1_P-ALL.txt", "12:00:00 AM  junk\x0c here\n"),
    ],
)
def test_irregular_text_is_read_alike_by_both_paths(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fmt: str, fixture: str, odd: str
) -> None:
    path = tmp_path / "capture.txt"
    path.write_text(_irregular((FIXTURES / fixture).read_text(), 7, odd))
    fast = _parse(fmt, path)
    assert fast.warnings, "the odd lines must be reported"
    _careful(monkeypatch, fmt)
    _assert_same(fast, _parse(fmt, path))


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(lambda t: "\n\n\n" + t, id="leading blank lines"),
        pytest.param(lambda t: t.rstrip("\n"), id="no newline at the end"),
        pytest.param(
            lambda t: "".join("db1: " + line for line in t.splitlines(keepends=True)), id="pdsh prefix"
        ),
        pytest.param(lambda t: t.replace("\n", "\r\n"), id="CRLF line ends"),
    ],
)
def test_mpstat_blocks_read_every_shape_as_lines_do(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shape
) -> None:
    path = tmp_path / "mpstat.txt"
    path.write_text(shape((FIXTURES / "mpstat/mpstat-12.6.1_P-ALL_ts-markers.txt").read_text()), newline="")
    fast = _parse("mpstat", path)
    assert fast.samples > 1
    _careful(monkeypatch, "mpstat")
    _assert_same(fast, _parse("mpstat", path))
