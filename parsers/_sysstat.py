"""The streaming reader the sysstat parsers share (``parsers/mpstat.py``, ``parsers/iostat.py``).

:class:`SysstatReader`: banners, markers, reports, sections of rows waiting to be typed, capped line
warnings, with the fast table reader (:func:`read_table`, pandas' C reader) and the careful one
(:func:`to_floats`). Banners, dates and the report clock are ``parsers/_sysstat_time.py``.

Source: sysstat ``common.c`` (banner, ``S_TIME_FORMAT``), ``mpstat.c``, ``iostat.c`` (12.6).
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from parsers._sysstat_time import (
    DATE_DOT,
    DATE_ISO,
    DATE_SLASH,
    Banner,
    Report,
    line_prefix,
    parse_banner,
    resolve_times,
)
from parsers.base import (
    ClockHints,
    ParsedSource,
    ParseError,
    ParseWarning,
    TsMarker,
    empty_frame,
    parse_marker,
    safe_name,
    to_number,
    with_newlines,
)

#: Rows gathered before converting to typed columns: bounds memory on multi-GB members, and a
#: few MB of rows at a time reuse the same memory (one flush of 200,000 rows ran 10 % slower).
FLUSH_ROWS = 50_000
#: Stop listing individual bad lines after this many (one summary warning follows).
MAX_LINE_WARNINGS = 50


class LineWarnings:
    """Collects per-line warnings, capping their number (one summary past ``MAX_LINE_WARNINGS``)."""

    def __init__(self) -> None:
        self.items: list[ParseWarning] = []
        self.dropped: dict[str, int] = {}

    def add(self, line_no: int, code: str, message: str) -> None:
        if len(self.items) < MAX_LINE_WARNINGS:
            self.items.append(ParseWarning(line_no, code, message))
        else:
            self.dropped[code] = self.dropped.get(code, 0) + 1

    def finish(self) -> list[ParseWarning]:
        out = list(self.items)
        for code, count in self.dropped.items():
            out.append(ParseWarning(0, code, f"{count} more lines with {code!r} not listed"))
        return out


def read_table(
    rows: list[str],
    ncols: int,
    *,
    skip: int = 0,
    text_cols: frozenset[int] = frozenset(),
    all_col: int | None = None,
) -> tuple[list[np.ndarray], np.ndarray] | None:
    """Fast path: read whitespace-separated ``rows`` (each ending in a newline) with pandas' C reader.

    Of columns ``skip..ncols-1`` returns (the ``text_cols`` as object arrays, the others as one float64
    matrix, ``all`` in ``all_col`` read as NaN); None when any row is odd (field count, a cell that is not
    a number), so the caller takes the careful row-by-row path. Decimal commas are read on purpose
    (``decimal=","``) when the first row shows them.
    """
    dec = "," if "," in rows[0] else "."
    if len(rows[0].split()) != ncols:
        return None  # the reader would take the first row's field count for every row
    used = range(skip, ncols)  # the leading columns (a time of day) are not converted at all
    with warnings.catch_warnings():
        # A damaged row mixes types in its column: the fast path is then left (below), so pandas's
        # DtypeWarning says nothing the careful path does not say with the row's line number.
        warnings.simplefilter("ignore", pd.errors.DtypeWarning)
        try:
            df = pd.read_csv(
                io.BytesIO("".join(rows).encode("utf-8")),  # the C reader's own input: no text copy
                sep=r"\s+",
                header=None,
                engine="c",
                usecols=used,
                keep_default_na=False,
                na_values={all_col: ["all"]} if all_col is not None else [],
                decimal=dec,
                dtype={i: str for i in text_cols if i in used} or None,
            )
        except (ValueError, pd.errors.ParserError):
            return None
    if df.shape != (len(rows), len(used)):
        return None
    num = [i for i in range(skip, ncols) if i not in text_cols]
    if any(df[i].dtype.kind not in "fiu" for i in num):
        return None
    mat = df[num].to_numpy(dtype="float64")
    check = [j for j, i in enumerate(num) if i != all_col]
    if np.isnan(mat[:, check]).any():
        return None
    texts = [df[i].to_numpy(dtype=object) for i in range(skip, ncols) if i in text_cols]
    return texts, mat


def line_numbers(segs: list[tuple[int, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Expand ``(first line, row count, report)`` segments into per-row line numbers and reports."""
    if not segs:
        return np.zeros(0, dtype="int64"), np.zeros(0, dtype="int64")
    a = np.asarray(segs, dtype="int64")
    counts = a[:, 1]
    offsets = np.arange(int(counts.sum()), dtype="int64") - np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(a[:, 0], counts) + offsets, np.repeat(a[:, 2], counts)


def to_floats(
    cells: list[str],
    nrows: int,
    ncols: int,
    nos: np.ndarray,
    member: str,
    what: list[str],
    warns: LineWarnings,
) -> tuple[np.ndarray, np.ndarray]:
    """Careful path: ``cells`` (row-major strings) -> (float64 matrix, good-row mask) via
    ``base.to_number``; rows with a cell that is not a number are warned about and dropped."""
    line_nos = np.repeat(nos, ncols)
    try:
        flat = to_number(cells, member=member, column=",".join(what), line_nos=line_nos).to_numpy()
        return flat.reshape(nrows, ncols), np.ones(nrows, dtype=bool)
    except ParseError:
        s = pd.Series(cells, dtype="object").astype("string").str.replace(",", ".", regex=False)
        flat = pd.to_numeric(s, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
        mat = flat.reshape(nrows, ncols)
        bad = np.isnan(mat) & (pd.Series(cells).str.len().to_numpy().reshape(nrows, ncols) > 0)
        bad_rows = bad.any(axis=1)
        for i in np.flatnonzero(bad_rows):
            j = int(np.flatnonzero(bad[i])[0])
            warns.add(int(nos[i]), "bad-number", f"{what[j]!r}: {cells[i * ncols + j]!r} is not a number")
        return mat, ~bad_rows


def finish_frame(
    parts: list[pd.DataFrame], head: list[str], ts_ns: np.ndarray, boot: np.ndarray
) -> pd.DataFrame:
    """Concatenate chunk frames (with ``_rep``), add ``ts``/``since_boot`` from their report, order
    by line."""
    if not parts:
        return empty_frame(since_boot="bool")
    df = pd.concat(parts, ignore_index=True)
    rep = df.pop("_rep").to_numpy()
    ts = pd.to_datetime(ts_ns[rep], unit="ns", utc=True)
    df.insert(0, "ts", ts)
    df.insert(2, "since_boot", boot[rep])
    if not df["line_no"].is_monotonic_increasing:
        df = df.sort_values("line_no", kind="stable", ignore_index=True)
    first = [c for c in ["ts", "line_no", "since_boot", *head] if c in df.columns]
    rest = [c for c in df.columns if c not in first]
    return df[first + rest]


# ---------------------------------------------------------------------------------------------
# The streaming reader both parsers share
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Bucket:
    """Rows of one section shape (kind + header columns) waiting to be typed; ``segs`` holds
    ``(first line, row count, report)`` runs of consecutive rows."""

    kind: str  # mpstat: cpu, intr, irq, skip; iostat: dev, cpu
    cols: tuple[str, ...]
    lead: int = 0  # mpstat: tokens before the CPU column (1 for 24 h / epoch, 2 for AM/PM)
    device_last: bool = False  # iostat -h of sysstat 12: ``Device`` is the last column
    rows: list[str] = field(default_factory=list)
    segs: list[tuple[int, int, int]] = field(default_factory=list)


#: A frame to build: name -> (bucket kind, leading columns in order, columns and dtypes of the frame
#: when the member has no such rows).
Shapes = dict[str, tuple[str, list[str], dict[str, str]]]


class SysstatReader:
    """A sysstat parser's state between lines: banners, markers, reports, the open section and the
    buckets of rows waiting to be typed. A parser subclasses it with ``line`` (every line its hot
    loop does not append as a row) and ``to_frame`` (type one bucket), and drives it::

        st = Reader(member)
        rest = st.lines(stream)
        for no, raw in rest:
            if <raw is a plain row of st.cur>: st.cur_rows.append(raw) ...
            else: st.line(no, raw)
        return st.result(FORMAT, clock, shapes)
    """

    tool = "sysstat"
    kinds: tuple[str, ...] = ()
    #: bucket kind -> key of ``meta["columns"]``
    seen_as: dict[str, str] = {}

    def __init__(self, member: str) -> None:
        self.member = member
        self.warns = LineWarnings()
        self.banners: list[Banner] = []
        self.reports: list[Report] = []
        self.markers: list[TsMarker] = []
        self.buckets: dict[tuple, Bucket] = {}
        self.parts: dict[str, list[pd.DataFrame]] = {k: [] for k in self.kinds}
        self.columns_seen: dict[str, list[str]] = {}
        self.unknown: set[str] = set()
        self.cur: Bucket | None = None
        self.cur_rows: list[str] = []
        self.seg_no = 0
        self.seg_len = 0
        self.rep = -1
        self.fresh: TsMarker | None = None  # a marker no report has taken yet
        self.run = -1  # index of the banner in force
        self.started = False
        self.pending = 0
        self.decimal_comma = False
        self.host: str | None = None
        self.other_hosts: dict[str, int] = {}

    def line(self, no: int, raw: str) -> None:
        raise NotImplementedError

    def to_frame(self, b: Bucket) -> list[tuple[str, pd.DataFrame]]:
        raise NotImplementedError

    def lines(self, stream: Iterable[str]) -> Iterator[tuple[int, str]]:
        """Read the first non-blank line of ``stream`` (``line``) and return the numbered lines after
        it, each ending in ``\\n``, without the prefix every line carries (judged on that first line:
        ``host: `` of pdsh/clush, or a space); lines of other pdsh hosts are counted in
        ``other_hosts`` and skipped. Leading blank lines are dropped."""
        it = enumerate(with_newlines(stream), start=1)
        for no, raw in it:
            if raw.strip():
                prefix, self.host = line_prefix(raw)
                self.line(no, raw[len(prefix) :])
                return self._unprefixed(it, prefix) if prefix else it
        return iter(())

    def _unprefixed(self, it: Iterator[tuple[int, str]], prefix: str) -> Iterator[tuple[int, str]]:
        plen = len(prefix)
        for no, raw in it:
            if raw.startswith(prefix):
                yield no, raw[plen:]
            elif self.host is None:
                yield no, raw
            else:
                h = raw.split(":", 1)[0]
                self.other_hosts[h] = self.other_hosts.get(h, 0) + 1
                self.gap(no)

    def marker(self, mk: TsMarker) -> None:
        self.markers.append(mk)
        self.fresh = mk
        self.started = True

    def banner(self, b: Banner) -> None:
        self.banners.append(b)
        self.run = len(self.banners) - 1
        self.started = True

    def context_line(self, s: str, no: int) -> bool:
        """Record ``s`` when it is a ``TS``/``zzz`` marker (``marker``) or a sysstat banner
        (``banner``); False for any other line."""
        c = s[:1]
        if c in ("T", "z"):
            mk = parse_marker(s)
            if mk is not None:
                self.marker(mk)
                return True
        if c == "L":
            b = parse_banner(s, no)
            if b is not None:
                self.banner(b)
                return True
        return False

    def new_report(self, no: int, **kw: object) -> Report:
        """A report (sample) starting at line ``no``; it takes the marker seen since the last one."""
        r = Report(self.run, no, self.fresh, **kw)
        self.reports.append(r)
        self.rep = len(self.reports) - 1
        self.fresh = None
        return r

    def open(self, bucket: Bucket, no: int) -> None:
        """Rows of ``bucket`` follow the header at line ``no``."""
        self.cur = bucket
        self.cur_rows = bucket.rows
        self.seg_no, self.seg_len = no + 1, len(bucket.rows)

    def cut(self, no: int) -> None:
        """The rows of the open section before line ``no`` form a run; the next run starts at ``no``."""
        cur = self.cur
        n = len(cur.rows) - self.seg_len
        if n:
            cur.segs.append((self.seg_no, n, self.rep))
            self.pending += n
        self.seg_no, self.seg_len = no, len(cur.rows)

    def close(self) -> None:
        """End the open section's run of rows, flushing when enough rows wait."""
        if self.cur is not None:
            self.cut(0)
        self.cur = None
        self.cur_rows = []
        if self.pending >= FLUSH_ROWS:
            self.flush()

    def gap(self, no: int) -> None:
        """A line of another pdsh host inside a section: rows resume after it."""
        if self.cur is not None:
            self.cut(no + 1)

    def check_columns(self, no: int, cols: Iterable[str], known: Callable[[str], bool]) -> None:
        """Warn once per column the parser does not know (it is kept under ``safe_name``)."""
        for col in cols:
            if not known(col) and col not in self.unknown:
                self.unknown.add(col)
                self.warns.add(no, "unknown-column", f"column {col!r} kept as {safe_name(col)!r}")

    def flush(self) -> None:
        """Type every pending bucket (``to_frame``) into ``parts`` and empty it."""
        for b in self.buckets.values():
            if b.rows and b.kind != "skip":
                key = " ".join(b.cols)
                seen = self.columns_seen.setdefault(self.seen_as.get(b.kind, b.kind), [])
                if key not in seen:
                    seen.append(key)
                self.decimal_comma = self.decimal_comma or "," in b.rows[0]
                for kind, df in self.to_frame(b):
                    if len(df):
                        self.parts[kind].append(df)
            b.rows.clear()
            b.segs.clear()
        self.pending = 0

    def locale_clues(self, order: str | None) -> list[str]:
        """What the capture shows of the locale it ran in: decimal comma, 12 h times, date form."""
        clues = []
        if self.decimal_comma:
            clues.append("decimal comma")
        times = [r.tod or r.stamp or "" for r in self.reports[:3]]
        if any(t[-2:].upper() in ("AM", "PM") for t in times):
            clues.append("12 h AM/PM times")
        raw = self.banners[0].date_raw if self.banners else ""
        if DATE_DOT.match(raw):
            clues.append("DD.MM.YYYY dates")
        elif DATE_SLASH.match(raw) and order == "DMY":
            clues.append("DD/MM/YYYY dates")
        elif DATE_ISO.match(raw):
            clues.append("ISO dates")
        return clues

    def result(self, fmt: str, clock: ClockHints, shapes: Shapes) -> ParsedSource:
        """Close the member: type what waits, time the reports, build the frames (the first
        non-empty one first) and the meta."""
        self.close()
        self.flush()
        warnings = self.warns.finish()
        if self.other_hosts:
            names = ", ".join(sorted(self.other_hosts))
            dropped = sum(self.other_hosts.values())
            warnings.append(
                ParseWarning(0, "other-hosts", f"kept host {self.host!r}; dropped {dropped} lines of {names}")
            )
        reports = self.reports
        if not reports:
            warnings.append(ParseWarning(0, "empty", f"no {self.tool} report in the member"))
        tr = resolve_times(reports, self.banners, clock, all_markers=self.markers)
        ts_ns = tr.ts_ns if len(tr.ts_ns) else np.zeros(1, dtype="int64")
        boot = np.array([r.since_boot for r in reports] or [False], dtype=bool)
        frames = {
            name: finish_frame(self.parts[kind], head, ts_ns, boot)
            if self.parts[kind]
            else empty_frame(since_boot="bool", **empty)
            for name, (kind, head, empty) in shapes.items()
        }
        nonempty = [k for k, v in frames.items() if len(v)]
        if nonempty:
            frames = {
                nonempty[0]: frames[nonempty[0]],
                **{k: v for k, v in frames.items() if k != nonempty[0]},
            }
        meta: dict[str, object] = {"tool": self.tool, **tr.meta}
        if self.banners:
            b = self.banners[0]
            meta.update(host=b.host, kernel=b.kernel, ncpu=b.ncpu)
        if self.host is not None:
            meta["pdsh_host"] = self.host
        meta["columns"] = self.columns_seen
        return ParsedSource(
            format=fmt,
            member=self.member,
            frames=frames,
            clock=tr.clock,
            warnings=tr.warnings + warnings,
            meta=meta,
            ts_is_local=tr.ts_is_local,
        )
