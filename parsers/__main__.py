"""Show what a parser makes of one capture file, without Django.

Usage::

    python -m parsers FILE [--format NAME] [--csv | --json] [--frame NAME]

``FILE`` is one capture (``vmstat 1`` output, a pt-stalk ``2026_04_21_16_43_19-iostat``, an OSWatcher
``.dat``...), plain or compressed as a single file (gzip, bzip2, xz, zstd: read transparently by
``parsers.ingest.archive.walk``, which sees a lone file as a one-member bundle). It is read the way an
upload reads a member (``parsers.ingest.bundle.opened`` and ``read_one``): UTF-16 transcoded, the
damage checks of ``parsers/damage.py``, a capture pasted into a note (prose or ``#`` lines around a
table, whatever the file's name) read again without the note. The format is detected from the
content by ``parsers.registry.detect`` exactly as an upload would be, unless ``--format`` names
it (``vmstat``, ``mpstat``, ``iostat``, ``ps``, ``interrupts``, ``processlist``, ``mysqladmin``...).
The clock hints are the ones the bundle reader would use for the file's name
(``parsers.layout.place``: a pt-stalk prefix gives the start time and a 1 s interval).

Output (stdout):

- default: a short summary: format and variant, layout and clock hints, clock provenance, sample
  count and window, every frame with its row count and columns, the first warnings.
- ``--json``: one document ``{format, member, hints: {layout, start_local, interval_s, utc_offset_s},
  clock, ts_is_local, samples, start, end, meta, warnings: [{line, code, message}], frames: {name:
  {rows, columns}}, frame, rows}`` where ``frame`` names the chosen frame and ``rows`` holds its rows as
  records (``ts`` and every other time in ISO 8601 with nanoseconds and offset; missing values as ``null``).
- ``--csv``: the chosen frame as CSV with a header; ``ts`` in ISO 8601, the other columns named as
  the parsers name them (units in the names: ``free_kib``, ``r_bytes_per_s``, ``await``...).

``--frame NAME`` picks the frame for ``--json`` / ``--csv`` (default: the main one, the first).

Times are what the parser returns: UTC, except when ``ts_is_local`` is true (the source is read in
the server's wall clock and nothing in one file says the UTC offset; the bundle reader shifts such
sources once another member reveals it).

Exit status: 0 on success; 1 when the parser raises ``ParseError`` (its message names the member and
the line) or the file is a corrupt compressed stream; 2 when the format is not recognised, the file
is missing or is an archive (tar, zip: use ``parsers.ingest.bundle.read_bundle``), or an option names an
unknown format or frame.

>>> _iso(pd.Timestamp("2026-04-21 16:43:21.009025316", tz="UTC"))
'2026-04-21T16:43:21.009025316+00:00'
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TextIO

import numpy as np
import pandas as pd

from parsers import registry
from parsers.base import ParsedSource, ParseError
from parsers.ingest.archive import BundleError, Member, Refused, walk
from parsers.ingest.bundle import clock_hints, opened, read_one
from parsers.layout import Placement, place

#: Warnings listed by the human summary (the JSON document carries all of them).
SUMMARY_WARNINGS = 5
#: Exit codes: 1 for a parse failure (the input is wrong), 2 for a usage problem (nothing to parse).
EXIT_PARSE_ERROR = 1
EXIT_USAGE = 2


class CliError(Exception):
    """A one-line message for stderr and the exit status to leave with."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _iso(value: object) -> str | None:
    """A timestamp as ISO 8601 with its offset, keeping nanoseconds; None for NaT/None."""
    if value is None or value is pd.NaT:
        return None
    ts = pd.Timestamp(value)  # type: ignore[arg-type]
    return None if pd.isna(ts) else ts.isoformat()


def _plain(value: object) -> object:
    """``json.dumps`` fallback: NumPy scalars, timestamps, sets and other oddities found in ``meta``."""
    if isinstance(value, pd.Timestamp | np.datetime64):
        return _iso(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, set | frozenset | tuple):
        return sorted(value, key=str) if isinstance(value, set | frozenset) else list(value)
    if isinstance(value, pd.Timedelta):
        return value.total_seconds()
    return str(value)


def _clean(value: object) -> object:
    """``value`` with float NaN/inf replaced by None at any depth (JSON has no NaN)."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, float | np.floating) and not np.isfinite(value):
        return None
    return value


def _frame_for_output(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with every datetime column as ISO 8601 text (None where missing)."""
    out = frame.copy()
    for name in out.columns:
        if pd.api.types.is_datetime64_any_dtype(out[name].dtype):
            out[name] = out[name].map(_iso).astype(object)
    return out


def _records(frame: pd.DataFrame) -> list[dict[str, object]]:
    """Rows as dicts with plain Python values; NaN/NA/NaT become None."""
    out = _frame_for_output(frame).astype(object)
    out = out.where(out.notna(), None)
    return out.to_dict("records")


def _read_one(path: Path, fmt: str | None) -> tuple[ParsedSource, Placement]:
    """Parse the single capture at ``path`` the way the bundle reader parses a member."""
    if not path.is_file():
        raise CliError(f"{path}: no such file", EXIT_USAGE)
    module = None
    if fmt is not None:
        try:
            module = registry.by_format(fmt)
        except KeyError:
            known = ", ".join(m.FORMAT for m in registry.parsers())
            raise CliError(f"unknown format {fmt!r} (known: {known})", EXIT_USAGE) from None
    try:
        first = next(walk(path))
        # walk() yields a lone (possibly compressed) file as one Member of unknown size; members of
        # a tar or zip carry their size from the archive's header.
        if isinstance(first, Refused) or first.size is not None:
            raise CliError(
                f"{path}: an archive (tar or zip); this command reads one capture file "
                "(parsers.ingest.bundle.read_bundle reads a whole bundle)",
                EXIT_USAGE,
            )
        return _parse_member(first, module, path)
    except BundleError as exc:
        raise CliError(f"{path}: {exc}", EXIT_PARSE_ERROR) from exc


def _parse_member(member: Member, module: ModuleType | None, path: Path) -> tuple[ParsedSource, Placement]:
    """The member read as the bundle reader reads one (``parsers.ingest.bundle``: the same opening,
    detection and ``read_one``: damage checks, a capture pasted into a note read again without the
    note)."""
    where = place(member.name)
    raw, first, head, _ = opened(member)
    if module is None:
        module = registry.detect(head)
        if module is None:
            first = next((ln for ln in head if ln.strip()), "")[:80]
            what = f"first line: {first!r}" if first else "empty"
            raise CliError(f"{path}: format not recognised ({what})", EXIT_USAGE)
    hints = clock_hints(member, where)
    try:
        source = read_one(module, first, raw, member=member.name, clock=hints)
    except ParseError as exc:
        raise CliError(str(exc), EXIT_PARSE_ERROR) from exc  # names the member and the line
    return source, where


def _hints(where: Placement) -> dict[str, object]:
    """The ``ClockHints`` given to the parser, with the layout they came from."""
    return {
        "layout": where.layout,
        "start_local": None if where.start_local is None else where.start_local.isoformat(),
        "interval_s": where.interval_s,
        "utc_offset_s": None,  # one file alone never tells the bundle reader the offset
    }


def _pick_frame(source: ParsedSource, name: str | None) -> str:
    if name is None:
        return next(iter(source.frames))
    if name not in source.frames:
        raise CliError(f"{source.member}: no frame {name!r} (frames: {', '.join(source.frames)})", EXIT_USAGE)
    return name


def document(source: ParsedSource, where: Placement, frame: str) -> dict[str, object]:
    """The ``--json`` document for ``source`` with the rows of ``frame`` (see the module docstring)."""
    return {
        "format": source.format,
        "member": source.member,
        "hints": _hints(where),
        "clock": str(source.clock),
        "ts_is_local": source.ts_is_local,
        "samples": source.samples,
        "start": _iso(source.start),
        "end": _iso(source.end),
        "meta": _clean(source.meta),
        "warnings": [w.as_dict() for w in source.warnings],
        "frames": {
            name: {"rows": len(df), "columns": list(df.columns)} for name, df in source.frames.items()
        },
        "frame": frame,
        "rows": _records(source.frames[frame]),
    }


def summary(source: ParsedSource, where: Placement) -> str:
    """The default human-readable summary of ``source`` (several lines, no trailing newline)."""
    variant = source.meta.get("variant")
    lines = [
        f"member:   {source.member}",
        f"format:   {source.format}" + (f" ({variant})" if variant else ""),
    ]
    hint = f"layout:   {where.layout}"
    if where.start_local is not None:
        hint += f", start {where.start_local:%Y-%m-%d %H:%M:%S} (server wall clock, from the file name)"
    if where.interval_s is not None:
        hint += f", interval {where.interval_s:g} s"
    lines.append(hint)
    clock = f"clock:    {source.clock}"
    if source.ts_is_local:
        clock += " (server wall clock shown as UTC: one file does not give the UTC offset)"
    lines.append(clock)
    if source.samples:
        lines.append(f"samples:  {source.samples}, {_iso(source.start)} .. {_iso(source.end)}")
    else:
        lines.append("samples:  0")
    lines.append("frames:")
    for name, df in source.frames.items():
        lines.append(f"  {name}: {len(df)} rows; {', '.join(map(str, df.columns))}")
    lines.append(f"warnings: {len(source.warnings)}")
    for w in source.warnings[:SUMMARY_WARNINGS]:
        lines.append(f"  line {w.line_no} [{w.code}] {w.message}")
    if len(source.warnings) > SUMMARY_WARNINGS:
        lines.append(f"  ... {len(source.warnings) - SUMMARY_WARNINGS} more (see --json)")
    return "\n".join(lines)


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m parsers",
        description=(__doc__ or "").split("\n\n>>>")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", type=Path, help="one capture file (plain, .gz, .bz2, .xz or .zst)")
    parser.add_argument("--format", help="parse as this format instead of detecting it")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--csv", action="store_true", help="print the chosen frame as CSV")
    out.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--frame", help="frame for --csv/--json (default: the main one)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None) -> int:
    """Run the command line; returns the exit status (see the module docstring)."""
    args = _arguments(argv)
    out = stdout or sys.stdout
    try:
        source, where = _read_one(args.file, args.format)
        frame = _pick_frame(source, args.frame)
    except CliError as exc:
        print(f"python -m parsers: {exc}", file=sys.stderr)
        return exc.status
    if args.json:
        json.dump(document(source, where, frame), out, indent=1, default=_plain, allow_nan=False)
        out.write("\n")
    elif args.csv:
        _frame_for_output(source.frames[frame]).to_csv(out, index=False, lineterminator="\n")
    else:
        out.write(summary(source, where) + "\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `python -m parsers big.txt --csv | head`: stop quietly
        sys.stderr.close()
        sys.exit(0)
