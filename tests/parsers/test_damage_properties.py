"""Property-based layer of the damage tests (Hypothesis): any line put into a real capture is read
or named, never an exception.

For each format of the fixture collections (tests/fixtures/bundles: the example collection
ptstalk-mariadb-tmptables.tar.gz and the others, made by running pt-stalk and MariaDB here: 24
formats), the member's first lines with one arbitrary line inserted (any Unicode text, NUL and control
characters included, up to a few KiB) are parsed the way every piece is parsed
(``parsers.ingest.pieces.parse_piece``): the result is a source, or a ``ParseError`` naming a line of the
text; every warning names a line of the text (0: the whole member). The damage shared machinery is tested
directly too: ``clip_long_lines``, ``drop_second_copy`` and ``pg_safe``.
"""

from __future__ import annotations

import json
import tarfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsers import damage, registry
from parsers.base import ClockHints, ParseError
from parsers.ingest.cutting import Piece
from parsers.ingest.pieces import parse_piece
from tests.conftest import FIXTURES

BUNDLE = FIXTURES / "bundles" / "ptstalk-mariadb-tmptables.tar.gz"
#: Lines of each member kept around the inserted one (a few snapshots: fast examples).
HEAD_LINES = 120
#: The member of each format, by the end of its name, and the fixture bundle that holds it (each
#: made by running pt-stalk and MariaDB here): every format the fixture bundles hold.
SOURCES = {
    **dict.fromkeys(
        (
            "vmstat", "iostat", "mpstat", "ps", "processlist", "mysqladmin", "interrupts", "meminfo",
            "diskstats", "procvmstat", "netstat_s", "top", "variables", "innodbstatus1", "opentables1",
            "output",
        ),
        BUNDLE.name,
    ),
    **dict.fromkeys(
        ("df", "numastat", "slabinfo", "netstat", "sysctl", "log_error"), "ptstalk-mariadb-fullfs-crash.tar.gz"
    ),
    "transactions": "culprit-ftwrl.tar.gz",
    "waits": "culprit-rowlock.tar.gz",
}  # fmt: skip
SUFFIXES = tuple(SOURCES)


def _heads() -> dict[str, list[str]]:
    out = {}
    for suffix, bundle in SOURCES.items():
        with tarfile.open(FIXTURES / "bundles" / bundle) as tar:
            member = next(m for m in tar if m.isfile() and m.name.endswith("-" + suffix))
            text = tar.extractfile(member).read().decode("utf-8", "replace")
        out[suffix] = text.splitlines(keepends=True)[:HEAD_LINES]
    return out


HEADS = _heads()
LINE = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=4096).map(
    lambda s: s.replace("\n", " ")
)


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_every_member_taken_is_read_undamaged(suffix: str) -> None:
    """The property below is only worth something on members detected and read as they are."""
    lines = HEADS[suffix]
    module = registry.detect([ln.rstrip("\n") for ln in lines[: registry.HEAD_LINES]])
    assert module is not None, f"{suffix}: not detected"
    parse_piece(module, Piece("".join(lines).encode(), 1, last=True), member=suffix, clock=ClockHints())


@pytest.mark.parametrize("suffix", SUFFIXES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=LINE, where=st.floats(min_value=0, max_value=1))
def test_any_line_is_read_or_named(suffix: str, line: str, where: float) -> None:
    lines = list(HEADS[suffix])
    at = int(where * len(lines))
    lines.insert(at, line + "\n")
    text = "".join(lines)
    module = registry.detect([ln.rstrip("\n") for ln in lines[: registry.HEAD_LINES]])
    if module is None:  # the line took the place of what detection reads: not this format any more
        return
    try:
        parsed = parse_piece(module, Piece(text.encode(), 1, last=True), member=suffix, clock=ClockHints())
    except ParseError as exc:
        assert 1 <= exc.line_no <= len(lines)
        return
    assert all(0 <= w.line_no <= len(lines) for w in parsed.warnings), parsed.warnings


@given(st.text(max_size=200), st.integers(min_value=1, max_value=4))
def test_pg_safe_leaves_no_nul_nor_surrogate(text: str, depth: int) -> None:
    value: object = text
    for _ in range(depth):
        value = {text: [value]}
    out = damage.pg_safe(value)
    flat = repr(out)
    assert "\x00" not in flat
    json_text = json.dumps(out)
    assert "\\u0000" not in json_text
    json_text.encode("utf-8")  # no lone surrogate: PostgreSQL's text takes it


@given(st.lists(st.text(alphabet="ab \t", max_size=10), min_size=3, max_size=30))
def test_a_member_written_twice_is_read_once(lines: list[str]) -> None:
    body = "".join(line + "\n" for line in lines)
    text, warnings = damage.drop_second_copy(body + body)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and len(lines) - first >= damage.MIN_COPY_LINES:
        assert len(text.strip()) <= len(body.strip()) and [w.code for w in warnings] == ["written-twice"]
        assert (body + body).startswith(text)


def test_a_long_line_is_cut_and_named() -> None:
    text = "a\n" + "x" * (damage.MAX_LINE_CHARS + 10) + "\nb\n"
    clipped, warnings = damage.clip_long_lines(text, "processlist")
    assert clipped.splitlines() == ["a", "x" * damage.MAX_LINE_CHARS, "b"]
    assert [(w.line_no, w.code) for w in warnings] == [(2, "long-line")]
    short, warnings = damage.clip_long_lines("1 2\n" + "9" * 5000 + "\n", "vmstat")
    assert len(short.splitlines()[1]) == damage.SHORT_LINE_CHARS and warnings[0].line_no == 2
