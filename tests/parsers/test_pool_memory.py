"""A parse process is held to the memory its ``Work`` allows (``Work.memory_bytes``, RLIMIT_DATA): a
member whose parse needs more is not used, with that reason, and only that member; so is one whose
parse process is killed outright. The rest of the bundle is read as always."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from parsers.base import ParsedSource
from parsers.ingest.bundle import read_bundle
from parsers.ingest.pieces import Work
from parsers.ingest.pool import PiecePool
from tests.bundles import make_tar
from tests.parsers.test_pieces import _processlist

LIMIT_BYTES = 512 << 20
#: Far past the limit, and nothing the machine could not give a process without one.
SWELL_BYTES = 3 << 30


MEMBERS = ("c/first-processlist", "c/hostile-processlist", "c/last-processlist")


def _in_parse_process() -> bool:
    return sys.argv[0].endswith(os.path.join("ingest", "pool.py"))  # python -m parsers.ingest.pool


def _swell(source: ParsedSource) -> ParsedSource:
    """A reducer: in a parse process, the hostile member swells past any limit (as a hostile
    member's parse might); it would be let through where there is none."""
    if _in_parse_process() and "hostile" in source.member:
        held = bytearray(SWELL_BYTES)
        held[:: 1 << 20] = b"x" * len(held[:: 1 << 20])
    return source


def _killed(source: ParsedSource) -> ParsedSource:
    """A reducer: in a parse process, the hostile member's process is killed (as the kernel's OOM
    killer would)."""
    if _in_parse_process() and "hostile" in source.member:
        os.kill(os.getpid(), signal.SIGKILL)
    return source


def _read(
    tmp_path: Path, reduce: object, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[str], dict[str, str]]:
    """Three processlist captures, each in many pieces, read by two parse processes."""
    text = _processlist(200, 3).encode()  # past the 64 KiB head read first: cut in many pieces
    path = make_tar(tmp_path / "b.tgz", dict.fromkeys(MEMBERS, text))
    monkeypatch.setattr("parsers.ingest.cutting.piece_bytes", lambda *_, **__: 6000)
    bundle = read_bundle(path, reduce=reduce, processes=2, memory_bytes=LIMIT_BYTES)  # type: ignore[arg-type]
    return [s.member for s in bundle.sources], {n.member: n.reason for n in bundle.not_used}


def test_a_member_past_the_memory_limit_is_not_used_and_the_others_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    members, not_used = _read(tmp_path, _swell, monkeypatch)
    assert members == ["c/first-processlist", "c/last-processlist"]
    assert not_used == {
        "c/hostile-processlist": (
            "processlist: the parse process ran out of memory reading it (its limit: 512 MiB)"
        )
    }


def test_a_member_whose_parse_process_is_killed_is_not_used_and_the_others_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    members, not_used = _read(tmp_path, _killed, monkeypatch)
    assert members == ["c/first-processlist", "c/last-processlist"]
    assert not_used["c/hostile-processlist"].startswith(
        "processlist: the parse process ended (exit status -9)"
    )


def test_the_limit_is_the_parse_process_data_segment() -> None:
    with PiecePool(1, work=Work(memory_bytes=LIMIT_BYTES)) as pool:
        pool.warm()
        pool.ready()
        [child] = pool._all
        limits = Path(f"/proc/{child.proc.pid}/limits").read_text()
    [line] = [line for line in limits.splitlines() if line.startswith("Max data size")]
    assert line.split()[3:5] == [str(LIMIT_BYTES), "unlimited"]
