"""Parse disk I/O counters (``/proc/diskstats``, ``vmstat -d``, ``vmstat -D``) and turn them into iostat's
rates.

Accepts:
    pt-stalk ``-diskstats`` (``TS <epoch> <date> <time>`` then ``cat /proc/diskstats`` every
    second; pt-diskstats captures with ``TS <epoch>`` or ``TS <epoch> <ISO-T>``), bare
    ``/proc/diskstats`` snapshots (a new one when a device comes round again); the kernel's 11
    (2.6-4.17), 15 (4.18+, discards) or 17 (5.5+, flushes) counters, and the 2.6.25- 7-field
    partition lines (skipped with a warning); ``vmstat -d`` and ``vmstat -d -t`` (procps, the same
    counters without the weighted time: no aqu-sz); ``vmstat -D`` (the sums over all disks, device
    ``(all disks)``).

Sample input (pt-stalk 3.7.1 ``-diskstats``, kernel 5.14)::

    TS 1776790303.009325313 2026-04-21 16:51:43
     259       0 nvme0n1 25218 34922 488418 4449 17 13 240 0 0 2896 4450 0 0 0 0 0 0
       8      16 sdb 98927 139534 9965987 73675 2181195 1028711 142324152 1061496 0 240671 1182863 0 0 0 0 1059596 47691

Output:
    ``diskstats`` (one row per device per snapshot): ``ts`` datetime64[ns, UTC], ``line_no`` int64,
    ``device`` string; the counters since boot as float64 (Documentation/admin-guide/iostats.rst):
    ``reads``, ``reads_merged``, ``sectors_read`` (512-byte), ``read_ms``, ``writes``,
    ``writes_merged``, ``sectors_written``, ``write_ms``, ``in_flight``, ``io_ms``, ``weighted_ms``;
    and from the previous snapshot of the same device, what ``iostat -x`` prints: ``r_per_s``,
    ``w_per_s``, ``rrqm_per_s``, ``wrqm_per_s`` (per second), ``r_bytes_per_s``,
    ``w_bytes_per_s`` (bytes/s), ``r_await``, ``w_await`` (ms per request, queue included),
    ``aqu_sz`` (requests in flight on average), ``util_pct`` (percent of time busy). NaN on a
    device's first snapshot, after a counter went backwards (reset), and for ``aqu_sz`` where
    ``vmstat -d`` has no weighted time.
    ``clock``: ``ts-marker``, ``per-line`` (``vmstat -d -t``) or ``inferred``.

Warnings: ``no-start-time``, ``assumed-interval``, ``old-partition-line``, ``odd-line``,
``counter-reset``.

Errors: ``ParseError`` (member, line) when the first meaningful line is neither a marker, a
``/proc/diskstats`` line nor a ``vmstat -d``/``-D`` header, or a counter is not a number.

Source: Linux Documentation/admin-guide/iostats.rst; sysstat iostat.c (``compute_ext_disk_stats``);
procps vmstat.c (``diskformat``, ``disksum_format``).

>>> src = parse(["TS 1776790303.0 2026-04-21 16:51:43", "8 0 sda 10 0 80 5 0 0 0 0 0 10 5",
...              "TS 1776790304.0 2026-04-21 16:51:44", "8 0 sda 110 0 880 205 0 0 0 0 1 510 1005"],
...             member="d", clock=ClockHints())
>>> src.main[["r_per_s", "r_bytes_per_s", "r_await", "aqu_sz", "util_pct"]].iloc[1].tolist()
[100.0, 409600.0, 2.0, 1.0, 50.0]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from parsers import _counters
from parsers.base import (
    Blocks,
    Clock,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    ParseWarning,
    TsMarker,
    parse_marker,
    raw_blocks,
    snapshot_times,
    text_chunks,
)
from parsers.sensitive import SYSTEM

FORMAT = "diskstats"
TRAITS = FormatTraits(short_lines=True, unsigned=True, capped_pct=False, blocks=Blocks.ROWS, markers=True)

COUNTERS = (
    "reads",
    "reads_merged",
    "sectors_read",
    "read_ms",
    "writes",
    "writes_merged",
    "sectors_written",
    "write_ms",
    "in_flight",
    "io_ms",
    "weighted_ms",
)
RATES = (
    "r_per_s",
    "w_per_s",
    "rrqm_per_s",
    "wrqm_per_s",
    "r_bytes_per_s",
    "w_bytes_per_s",
    "r_await",
    "w_await",
    "aqu_sz",
    "util_pct",
)
#: The kernel counts sectors of 512 bytes in /proc/diskstats whatever the device's block size.
SECTOR_BYTES = 512
#: /proc/diskstats fields after major, minor and name: 11 (2.6+), 15 (4.18+), 17 (5.5+), 20 (6.x).
FIELD_COUNTS = (11, 15, 17, 18, 20)
_MAX_FIELDS = 20
_DISKSTATS_LINE = re.compile(r"^\s*\d+\s+\d+\s+[^\s\d]\S*(?:\s+\d+){11,20}\s*$")
_VMSTAT_D_HEADER = re.compile(r"^disk-\s+-+reads-+")
_VMSTAT_BIG_D = re.compile(r"^\s*\d+ (disks|partitions|total reads)\s*$")
#: vmstat -D labels -> counter (procps vmstat.c disksum_format).
_SUM_LABELS = {
    "total reads": "reads", "merged reads": "reads_merged", "read sectors": "sectors_read",
    "milli reading": "read_ms", "writes": "writes", "merged writes": "writes_merged",
    "written sectors": "sectors_written", "milli writing": "write_ms", "inprogress IO": "in_flight",
    "milli spent IO": "io_ms", "milli weighted IO": "weighted_ms",
}  # fmt: skip


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds two ``/proc/diskstats`` lines, a ``vmstat -d`` header or the
    ``vmstat -D`` summary."""
    if any(_VMSTAT_D_HEADER.match(line) for line in head):
        return True
    if sum(1 for line in head if _VMSTAT_BIG_D.match(line)) >= 2:
        return True
    return sum(1 for line in head if _DISKSTATS_LINE.match(line)) >= 2


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read disk counters (lines of text) into the ``diskstats`` frame with iostat's rates.

    Raises ``ParseError`` naming the member and line when the input is not one of the accepted shapes.
    """
    warnings: list[ParseWarning] = []
    chunks = text_chunks(raw_blocks(stream), _cut_at_marker)
    first = next(chunks, None)
    if first is None or not first[1].strip():
        return _result(_empty(), member, Clock.INFERRED, warnings, False, "empty")
    head = first[1][:4096].split("\n")
    if any(_VMSTAT_D_HEADER.match(line) for line in head) or any(_VMSTAT_BIG_D.match(line) for line in head):
        text = first[1] + "".join(text for _, text in chunks)
        return _vmstat_d(text, member, clock, warnings)
    parts, markers = [], []
    for base, text in [first, *chunks]:
        frame, chunk_markers = _chunk(text, base, len(markers), member, warnings)
        parts.append(frame)
        markers += chunk_markers
    _counters.forget()
    frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    frame, clock_kind, local = _timed(frame, markers, clock, warnings)
    return _result(_with_rates(frame, warnings), member, clock_kind, warnings, local, "/proc/diskstats")


def _cut_at_marker(text: str) -> int:
    """End a chunk before its last marker line (a snapshot stays whole), else at a line end."""
    at = max(text.rfind("\nTS "), text.rfind("\nzzz "))
    return at + 1 if at > 0 else text.rfind("\n") + 1


def _chunk(
    text: str, base: int, snap0: int, member: str, warnings: list[ParseWarning]
) -> tuple[pd.DataFrame, list[TsMarker | None]]:
    """One chunk of ``/proc/diskstats`` snapshots: markers found by regex, the rest read by pandas'
    C reader; ``snapshot`` numbers continue from ``snap0``."""
    found = _counters.find_markers(text)
    lines = [m.group(0).rstrip("\n") for m in found]
    markers: list[TsMarker | None] = list(
        _counters.markers_of(lines, member, base, _counters.marker_lines(text, found))
    )
    try:
        df, line_idx, starts = _counters.read_rows(
            text,
            found,
            sep=r"\s+",
            names=["major", "minor", "device", *[f"f{i}" for i in range(_MAX_FIELDS)]],
            dtype={"device": "category"},  # counters inferred (int64, float64 where a kernel has fewer)
            on_bad_lines="error",
        )
        if any(df[f"f{i}"].dtype == object for i in range(_MAX_FIELDS)):
            raise ValueError("a counter is not a number")
    except (ValueError, pd.errors.ParserError) as exc:
        return _slow_chunk(text, base, snap0, member, warnings, markers, str(exc))
    blank = df["major"].isna().to_numpy()
    if not found:
        snap = _snapshots_by_repeat(df["device"].to_numpy(dtype=object), ~blank) + snap0
    else:
        snap = np.searchsorted(starts, line_idx, side="right") - 1 + snap0
        if (~blank & (snap < snap0)).any():
            markers.insert(0, None)  # rows before the first marker: a snapshot of their own
            snap = snap + 1
    keep = ~blank
    old_partition = df["f3"].notna().to_numpy() & df["f4"].isna().to_numpy()
    numeric = (
        pd.to_numeric(df["major"], errors="coerce").notna()
        & pd.to_numeric(df["minor"], errors="coerce").notna()
    )
    odd = keep & (~numeric.to_numpy() | (df["f10"].isna().to_numpy() & ~old_partition))
    if odd.any():
        return _slow_chunk(text, base, snap0, member, warnings, markers, "odd line")
    short = keep & df["f10"].isna().to_numpy()
    if short.any():
        i = int(line_idx[np.flatnonzero(short)[0]])
        warnings.append(
            ParseWarning(
                base + i, "old-partition-line", "partition line with 4 counters (kernel < 2.6.25) skipped"
            )
        )
        keep &= ~short
    if not keep.any() and not found and not df.empty:
        raise ParseError(member, base, text.split("\n", 1)[0], "not /proc/diskstats: no device line")
    out = pd.DataFrame(
        {
            "line_no": line_idx[keep] + base,
            "snapshot": snap[keep],
            "device": df["device"].to_numpy(dtype=object)[keep],
            **{name: df[f"f{i}"].to_numpy(dtype="float64")[keep] for i, name in enumerate(COUNTERS)},
        }
    )
    if not found and snap0 == 0:
        markers = [None] * (int(out["snapshot"].max()) + 1 if len(out) else 0)
    elif not found:
        markers = [None] * (int(out["snapshot"].max()) + 1 - snap0 if len(out) else 0)
    return out, markers


def _snapshots_by_repeat(devices: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Snapshot numbers for bare snapshots: a new one starts where the first device comes again."""
    snap = np.zeros(len(devices), dtype="int64")
    idx = np.flatnonzero(rows)
    if not len(idx):
        return snap
    first = devices[idx[0]]
    starts = idx[devices[idx] == first]
    snap[:] = np.searchsorted(starts, np.arange(len(devices)), side="right") - 1
    return np.maximum(snap, 0)


def _slow_chunk(
    text: str,
    base: int,
    snap0: int,
    member: str,
    warnings: list[ParseWarning],
    markers: list[TsMarker | None],
    why: str,
) -> tuple[pd.DataFrame, list[TsMarker | None]]:
    """Line by line, for a chunk with odd lines: each becomes a warning, or the error when no
    device line was read before it."""
    rows: list[list] = []
    out_markers: list[TsMarker | None] = []
    snap = snap0 - 1
    seen: set[str] = set()
    for i, line in enumerate(text.split("\n")):
        no = base + i
        if line.startswith(("TS ", "zzz ")):
            out_markers.append(parse_marker(line))
            snap += 1
            seen = set()
            continue
        tokens = line.split()
        if not tokens:
            continue
        if len(tokens) - 3 in FIELD_COUNTS or len(tokens) - 3 in (12, 13, 14, 16, 19):
            try:
                values = [float(t) for t in tokens[3:14]]
            except ValueError:
                raise ParseError(member, no, line, "a /proc/diskstats counter is not a number") from None
            if snap < snap0 or tokens[2] in seen:
                out_markers.append(None)
                snap += 1
                seen = set()
            seen.add(tokens[2])
            rows.append([no, snap, tokens[2], *values])
        elif len(tokens) == 7:
            warnings.append(ParseWarning(no, "old-partition-line", "partition line with 4 counters skipped"))
        elif not rows and snap0 == 0:
            raise ParseError(member, no, line, f"not /proc/diskstats ({why[:80]})")
        else:
            warnings.append(ParseWarning(no, "odd-line", f"not a /proc/diskstats line: {line[:80]!r}"))
    frame = pd.DataFrame(rows, columns=["line_no", "snapshot", "device", *COUNTERS])
    return frame.astype({"line_no": "int64", "snapshot": "int64", "device": "object"}), out_markers


def _timed(
    frame: pd.DataFrame, markers: list[TsMarker | None], clock: ClockHints, warnings: list[ParseWarning]
) -> tuple[pd.DataFrame, Clock, bool]:
    times = snapshot_times(markers, clock, warnings, interval_code="assumed-interval")
    snaps = frame["snapshot"].to_numpy(dtype="int64")
    ts = times.ts_ns[snaps] if len(snaps) else np.zeros(0, dtype="int64")
    frame.insert(0, "ts", pd.DatetimeIndex(ts.view("datetime64[ns]"), tz="UTC"))
    return frame, times.clock, times.ts_is_local


def _with_rates(frame: pd.DataFrame, warnings: list[ParseWarning]) -> pd.DataFrame:
    """Add iostat's per-second columns from each device's previous snapshot (vectorised)."""
    if not len(frame):
        return frame.assign(**{c: pd.Series([], dtype="float64") for c in RATES})
    codes, _ = pd.factorize(frame["device"])
    ts = frame["ts"].to_numpy(dtype="datetime64[ns]").view("int64")
    order = np.lexsort((ts, codes))
    prev = np.r_[-1, order[:-1]]
    has_prev = np.r_[False, codes[order][1:] == codes[order][:-1]]
    c = {name: frame[name].to_numpy(dtype="float64") for name in COUNTERS}
    dt = np.full(len(frame), np.nan)
    dt[order[has_prev]] = (ts[order[has_prev]] - ts[prev[has_prev]]) / 1e9
    dt[dt <= 0] = np.nan

    def delta(name: str) -> np.ndarray:
        d = np.full(len(frame), np.nan)
        d[order[has_prev]] = c[name][order[has_prev]] - c[name][prev[has_prev]]
        return d

    d = {name: delta(name) for name in COUNTERS if name != "in_flight"}
    reset = np.zeros(len(frame), dtype=bool)
    for values in d.values():
        reset |= values < 0
    if reset.any():
        i = int(np.flatnonzero(reset)[0])
        warnings.append(
            ParseWarning(
                int(frame["line_no"].iloc[i]), "counter-reset", "a disk counter went backwards: no rate there"
            )
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = {
            "r_per_s": d["reads"] / dt,
            "w_per_s": d["writes"] / dt,
            "rrqm_per_s": d["reads_merged"] / dt,
            "wrqm_per_s": d["writes_merged"] / dt,
            "r_bytes_per_s": d["sectors_read"] * SECTOR_BYTES / dt,
            "w_bytes_per_s": d["sectors_written"] * SECTOR_BYTES / dt,
            "r_await": np.where(d["reads"] > 0, d["read_ms"] / d["reads"], 0.0),
            "w_await": np.where(d["writes"] > 0, d["write_ms"] / d["writes"], 0.0),
            "aqu_sz": d["weighted_ms"] / (dt * 1000.0),
            "util_pct": np.minimum(d["io_ms"] / (dt * 10.0), 100.0),
        }
    for name, values in rates.items():
        values = np.where(reset | np.isnan(dt), np.nan, values)
        frame[name] = values
    return frame.drop(columns=["snapshot"])


def _vmstat_d(text: str, member: str, clock: ClockHints, warnings: list[ParseWarning]) -> ParsedSource:
    """``vmstat -d`` (per device, optionally ``-t``) or ``vmstat -D`` (sums): a Python loop, these
    captures are a few devices a sample."""
    rows: list[list] = []
    markers: list[TsMarker | None] = []
    stamps: list[pd.Timestamp | None] = []
    summing: dict[str, float] = {}
    seen: set[str] = set()
    pending = False  # a marker was read and no snapshot has used it yet
    big_d = False

    def new_snapshot(stamp: pd.Timestamp | None = None) -> None:
        nonlocal pending
        if not pending:
            markers.append(None)
            stamps.append(stamp)
        pending = False
        seen.clear()

    def flush(line_no: int) -> None:
        if summing:
            rows.append(
                [line_no, len(markers) - 1, "(all disks)", *[summing.get(k, np.nan) for k in COUNTERS]]
            )
            summing.clear()

    for i, line in enumerate(text.split("\n"), start=1):
        tokens = line.split()
        if not tokens or _VMSTAT_D_HEADER.match(line) or tokens[0] == "total":
            continue
        if line.startswith(("TS ", "zzz ")) and (marker := parse_marker(line)) is not None:
            flush(i)
            markers.append(marker)
            stamps.append(None)
            pending = True
            continue
        m = re.match(r"^\s*(\d+) (.+?)\s*$", line)
        if m and m.group(2) in (*_SUM_LABELS, "disks", "partitions"):
            big_d = True
            if m.group(2) == "disks":
                flush(i)
                new_snapshot()
            elif m.group(2) in _SUM_LABELS:
                summing[_SUM_LABELS[m.group(2)]] = float(m.group(1))
            continue
        if len(tokens) in (11, 13) and all(t.isdigit() for t in tokens[1:11]):
            if not markers or tokens[0] in seen:
                new_snapshot(pd.Timestamp(f"{tokens[11]} {tokens[12]}") if len(tokens) == 13 else None)
            pending = False
            seen.add(tokens[0])
            v = [float(t) for t in tokens[1:11]]
            # vmstat -d: reads (total merged sectors ms), writes (same), IO (cur, sec): sec is io_ticks / 1000
            rows.append([i, len(markers) - 1, tokens[0], *v[:9], v[9] * 1000.0, np.nan])
            continue
        if not rows and not summing:
            raise ParseError(member, i, line, "not vmstat -d/-D output")
        warnings.append(ParseWarning(i, "odd-line", f"not a vmstat -d line: {line[:80]!r}"))
    flush(0)
    frame = pd.DataFrame(rows, columns=["line_no", "snapshot", "device", *COUNTERS]).astype(
        {"line_no": "int64", "snapshot": "int64"}
    )
    if stamps and all(s is not None for s in stamps):
        ts = pd.DatetimeIndex(stamps).as_unit("ns").tz_localize("UTC")
        frame.insert(0, "ts", ts[frame["snapshot"].to_numpy()])
        kind, local = Clock.PER_LINE, True
    else:
        frame, kind, local = _timed(frame, markers, clock, warnings)
    variant = "vmstat -D (sums over all disks)" if big_d else "vmstat -d (no weighted time: no aqu-sz)"
    return _result(_with_rates(frame, warnings), member, kind, warnings, local, variant)


def _empty() -> pd.DataFrame:
    cols = {"ts": "datetime64[ns, UTC]", "line_no": "int64", "device": "object"}
    cols.update(dict.fromkeys((*COUNTERS, *RATES), "float64"))
    return pd.DataFrame({c: pd.Series([], dtype=d) for c, d in cols.items()})


def _result(
    frame: pd.DataFrame, member: str, clock: Clock, warnings: list[ParseWarning], local: bool, variant: str
) -> ParsedSource:
    frame["device"] = frame["device"].astype("category")
    devices = frame["device"].nunique()
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={"diskstats": frame},
        clock=clock,
        warnings=warnings,
        meta={"variant": f"{variant}, {devices} devices", "devices": int(devices)},
        ts_is_local=local,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SYSTEM  # numbers and names of the system only
