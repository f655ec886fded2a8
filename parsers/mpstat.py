"""Parse ``mpstat`` (sysstat) output: per-CPU utilisation, interrupts per CPU and per IRQ.

Accepts:
    sysstat 7 through 12 output of ``mpstat``, ``-P ALL``, ``-I SUM -P ALL`` (``intr/s`` per CPU),
    ``-I CPU`` / ``-I SCPU`` (one wide column per hard / soft IRQ), ``-I ALL``, ``-A`` (several
    sections a report; ``NODE`` sections are skipped and counted in ``meta``), ``-T`` (``CORE SOCK
    NODE`` columns ignored), ``-N``; old and new column sets (``%user``/``%sys`` of sysstat 7,
    ``%gnice`` or not, the trailing ``intr/s`` column of sysstat 7-9, which also fills
    ``mpstat_intr``); time of day in 24 h or 12 h (``03:14:20 PM``), or epoch seconds (sysstat's
    ``expected.mpstat-U``); banner dates ``MM/DD/YYYY``, ``MM/DD/YY``, ``DD/MM/YYYY`` (decided from
    the values, else MM/DD with a warning), ``DD.MM.YYYY``, ``YYYY-MM-DD`` (``S_TIME_FORMAT=ISO``);
    decimal commas (``0,56``); ``Average:`` blocks (skipped: they are not samples); lines prefixed
    by ``host: `` (pdsh: the first host is kept) or by a space; ``TS``/``zzz`` markers before
    reports (pt-stalk, OSWatcher, the Casebook collector).

Sample input (``mpstat -P ALL 1 2``, sysstat 12.6.1)::

    Linux 6.18.44-fc-v769 (vm) \t11/22/26 \t_x86_64_\t(2 CPU)

    12:26:24     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle
    12:26:25     all    0.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00  100.00
    12:26:25       0    0.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00  100.00
    12:26:25       1    0.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00  100.00

    Average:     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle
    Average:     all    1.01    0.00    2.02    0.00    0.00    0.00    0.00    0.00    0.00   96.97

Output (every frame has ``ts`` datetime64[ns, UTC], ``line_no`` int64 and ``since_boot`` bool: the
report averages since boot, which mpstat prints when run without an interval, seen as a header time
equal to the row time; keep it out of rates):
    ``mpstat_cpu``: ``cpu`` int64 (-1 for ``all``); ``usr nice sys iowait irq soft steal guest
    gnice idle`` float64, percent of CPU time (only the columns the capture has).
    ``mpstat_intr``: ``cpu``, ``intr_per_s`` float64 (interrupts per second, ``-I SUM`` or the
    sysstat 7-9 trailing column).
    ``mpstat_irq``: ``cpu``, ``irq`` str as a pandas Categorical (column name without ``/s``:
    ``LOC``, ``24``, ``NET_RX``), ``kind`` Categorical (``hard`` or ``soft``), ``per_s`` float64
    (interrupts per second); one row per CPU and IRQ, so ``-I CPU`` on 64 CPUs is long.
    The first non-empty frame comes first (the main series).
    ``ts_source``: ``ParsedSource.clock``: ``ts-marker`` when every report follows its own ``TS``
    or ``zzz`` marker; ``per-line`` for epoch-second rows (true UTC); ``header+time-of-day`` for
    time of day on the banner date (midnight roll-over handled; ``ts_is_local``).
    ``meta``: ``variant`` (``mpstat -I SUM -P ALL, decimal comma``), ``tool``, ``host``, ``kernel``,
    ``ncpu``, ``sysstat_date`` (ISO), ``date_order``, ``columns``, ``node_sections_skipped``,
    ``utc_offset_s`` (from ``TS`` markers, when present).

Warnings: ``ambiguous-date`` (DD/MM vs MM/DD undecidable: MM/DD assumed), ``unknown-date``,
``other-hosts`` (pdsh lines of other hosts dropped), ``bad-row`` (wrong field count), ``bad-number``,
``unknown-column``, ``stray-line``, ``no-banner``, ``no-start-time``, ``assumed-interval``, ``empty``.

Errors: ``ParseError`` when the member's first meaningful line is neither a sysstat banner, a
marker nor an mpstat header.

Source: sysstat ``mpstat.c`` / ``man 1 mpstat`` (12.6); kernel ``include/linux/interrupt.h``
(softirq names).

>>> src = parse(
...     [
...         "Linux 6.18.44-fc-v769 (vm) \\t11/22/26 \\t_x86_64_\\t(2 CPU)",
...         "",
...         "12:26:24     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle",
...         "12:26:25     all    2.04    0.00    4.08    0.00    0.00    0.00    0.00    0.00    0.00   93.88",
...         "12:26:25       0    2.02    0.00    4.04    0.00    0.00    0.00    0.00    0.00    0.00   93.94",
...     ],
...     member="mpstat.txt",
...     clock=ClockHints(),
... )
>>> src.clock.value, str(src.start), src.main[["cpu", "usr", "idle"]].values.tolist()
('header+time-of-day', '2026-11-22 12:26:25+00:00', [[-1.0, 2.04, 93.88], [0.0, 2.02, 93.94]])
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator

import numpy as np
import pandas as pd

from parsers._sysstat import Bucket, LineWarnings, Shapes, SysstatReader, line_numbers, read_table, to_floats
from parsers._sysstat_time import EPOCH_RE, HOST_PREFIX_RE, line_prefix, tod_seconds
from parsers.base import (
    Blocks,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    cuts_at_newlines_only,
    lines_of,
    safe_name,
)
from parsers.sensitive import SYSTEM

FORMAT = "mpstat"
TRAITS = FormatTraits(short_lines=True, unsigned=True, capped_pct=True, blocks=Blocks.ROWS, markers=False)

#: mpstat's column spellings across sysstat 7-12 -> frame column (percent of CPU time).
COLUMN_MAP: dict[str, str] = {
    "%usr": "usr",
    "%user": "usr",  # sysstat 7-9.0
    "%nice": "nice",
    "%sys": "sys",
    "%system": "sys",
    "%iowait": "iowait",
    "%irq": "irq",
    "%soft": "soft",
    "%steal": "steal",
    "%guest": "guest",
    "%gnice": "gnice",
    "%idle": "idle",
}
CPU_COLUMNS = ["usr", "nice", "sys", "iowait", "irq", "soft", "steal", "guest", "gnice", "idle"]
#: ``mpstat -T`` topology columns: not utilisation, ignored.
TOPOLOGY = frozenset({"CORE", "SOCK", "NODE"})
#: Kernel softirq names (``include/linux/interrupt.h`` softirq_to_name; BLOCK_IOPOLL before 4.4):
#: a per-IRQ section made of these is ``-I SCPU``.
SOFTIRQ_NAMES = frozenset(
    {
        "HI",
        "TIMER",
        "NET_TX",
        "NET_RX",
        "BLOCK",
        "BLOCK_IOPOLL",
        "IRQ_POLL",
        "TASKLET",
        "SCHED",
        "HRTIMER",
        "RCU",
    }
)
_INTR = "intr/s"


#: Tokens of a row's time of day before the CPU column: 1 (``16:51:43``, epoch), 2 (``03:14:20 PM``),
#: 3 in locales whose ``%X`` prints the zone (en_IN: ``12:38:33 PM IST``).
MAX_LEAD = 3


def sniff(head: list[str]) -> bool:
    """True when ``head`` has an mpstat header: ``CPU`` (or ``NODE``) followed by ``%usr``/``%user``/
    ``%idle`` or ``intr/s`` or per-IRQ ``N/s`` columns (after optional markers, banner, pdsh prefix).

    >>> sniff(["Linux 5.4 (h) \\t04/21/2026 \\t_x86_64_\\t(2 CPU)", "", "16:51:43  CPU  intr/s"])
    True
    >>> sniff(["avg-cpu:  %user   %nice %system %iowait  %steal   %idle"])
    False
    """
    for line in head:
        s = line.strip()
        m = HOST_PREFIX_RE.match(s)
        if m and ("CPU" in m["rest"] or "NODE" in m["rest"]):
            s = m["rest"]
        if "CPU" not in s and "NODE" not in s:
            continue
        toks = s.split()
        for i, t in enumerate(toks[: MAX_LEAD + 1]):
            if t in ("CPU", "NODE") and i + 1 < len(toks):
                if (
                    i
                    and tod_seconds(" ".join(toks[:i])) is None
                    and not EPOCH_RE.match(toks[0])
                    and toks[0] != "Average:"
                ):
                    break
                nxt = toks[i + 1]
                if nxt in ("%usr", "%user", "%idle", _INTR, "CORE") or (
                    nxt.endswith("/s") and len(toks) > i + 2
                ):
                    return True
    return False


def _header(s: str) -> tuple[int, str, list[str]] | None:
    """(lead, time text, columns) for an mpstat header line, or None."""
    toks = s.split()
    for i in range(min(MAX_LEAD + 1, len(toks))):
        if toks[i] in ("CPU", "NODE"):
            return i, " ".join(toks[:i]), toks[i:]
    return None


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Parse one mpstat member (any iterable of text lines) into ``mpstat_cpu``, ``mpstat_intr``
    and ``mpstat_irq`` (see the module docstring for columns and units).

    Raises ``ParseError`` when the member is not mpstat output.
    """
    st = _Reader(member)
    read = getattr(stream, "read", None)
    if read is not None:
        _walk_blocks(st, read)
    else:
        _walk_lines(st, st.lines(stream))
    src = st.result(FORMAT, clock, SHAPES)
    src.meta["node_sections_skipped"] = st.node_sections
    src.meta["variant"] = _variant(st, src)
    return src


def _walk_lines(st: _Reader, numbered: Iterable[tuple[int, str]]) -> None:
    """The line loop: a data row of the open section is appended as is; everything else goes to
    ``_Reader.line``. Rows are typed in bulk by ``flush``."""
    cur_rows = st.cur_rows
    for no, raw in numbered:
        if st.cur is not None and "0" <= raw[:1] <= "9" and "CPU" not in raw and "NODE" not in raw:
            if raw[: st.tlen] != st.tod:  # a new time of day: maybe a new report (plain `mpstat 1`)
                st.row_time(no, raw)
            cur_rows.append(raw)
            continue
        st.line(no, raw)
        cur_rows = st.cur_rows


#: Characters of a file read at a time by :func:`_walk_blocks`.
BLOCK_CHARS = 1 << 20
#: Where a line that is not a plain data row starts: after a line end, anything but a digit.
_NOT_DIGIT_LINE = re.compile(r"\n(?=[^0-9])")
#: Column names that make a digit-led line a header (``14:00:01  CPU  %usr ...``).
_HEADER_WORDS = ("CPU", "NODE")


def _walk_blocks(st: _Reader, read: Callable[[int], str]) -> None:
    """:func:`_walk_lines` for a file, block by block: the lines that are not plain data rows are
    found with one regex, and each run of data rows between them that shares one time of day is
    appended at once (a report of ``mpstat -P ALL`` is a run). Lines with a pdsh or blank prefix go
    to the line loop."""
    carry, no, first = "", 1, True
    while True:
        block = read(BLOCK_CHARS)
        text = carry + block
        if not text:
            return
        cut = text.rfind("\n") + 1 if block else len(text)
        if not cut:
            carry = text
            continue
        text, carry = text[:cut], text[cut:]
        if first:
            lead = next((line for line in text.split("\n") if line.strip()), None)
            if lead is None and block:
                carry, no = "", no + text.count("\n")  # leading blank lines
                continue
            first = False
            if lead is not None and line_prefix(lead)[0]:
                rest = itertools.chain([text + carry], iter(lambda: read(BLOCK_CHARS), ""))
                _walk_lines(st, st.lines(_renumbered(rest, no)))
                return
        no = _walk_text(st, text, no)
        if not block:
            return


def _renumbered(blocks: Iterable[str], first_no: int) -> Iterator[str]:
    """The lines of ``blocks`` after ``first_no - 1`` blank lines (so that ``SysstatReader.lines``
    numbers them as the member does)."""
    yield from itertools.repeat("\n", first_no - 1)
    carry = ""
    for block in blocks:
        lines = lines_of(carry + block)
        carry = lines.pop() if lines and not lines[-1].endswith("\n") else ""
        yield from lines
    if carry:
        yield carry


def _other_lines(text: str) -> list[int]:
    """Where the lines of ``text`` that are not plain data rows start, in order: blank lines and
    lines that start with anything but a digit, and lines naming a CPU or NODE column. Found with
    searches for a line end and for those two words, not line by line."""
    starts = {m.start() + 1 for m in _NOT_DIGIT_LINE.finditer(text)}
    if text and not "0" <= text[0] <= "9":
        starts.add(0)
    for word in _HEADER_WORDS:
        at = text.find(word)
        while at >= 0:
            starts.add(text.rfind("\n", 0, at) + 1)
            at = text.find(word, text.find("\n", at) + 1 or len(text))
    starts.discard(len(text))
    return sorted(starts)


def _walk_text(st: _Reader, text: str, no: int) -> int:
    """The lines of ``text`` (whole lines; the first is line ``no``) fed to the reader; returns the
    number of the line after them."""
    plain = cuts_at_newlines_only(text)  # its runs of rows may be cut with splitlines
    at = 0
    for start in _other_lines(text):
        if start > at:
            no = _rows(st, text[at:start], no, plain)
        end = text.find("\n", start) + 1 or len(text)
        if end - start == 1 and text[start] == "\n":
            st.close()  # a blank line ends the section, as Reader.line would
        else:
            st.line(no, text[start:end])
        no += 1
        at = end
    if at < len(text):
        no = _rows(st, text[at:], no, plain)
    return no


def _rows(st: _Reader, run: str, no: int, plain: bool) -> int:
    r"""A run of data rows (digit-led, no CPU/NODE; whole lines) starting at line ``no``; ``plain``:
    it holds no character ``str.splitlines`` would cut at besides ``\n``."""
    if not run.endswith("\n"):
        run += "\n"  # the last line of the member
    tod = run[: st.tlen]
    if plain and st.cur is not None and "\n" not in tod:
        rows = run.splitlines(keepends=True)
        if run.count("\n" + tod) == len(rows) - 1:  # every row at the same time of day
            if tod != st.tod:
                st.row_time(no, rows[0])
            st.cur_rows.extend(rows)
            return no + len(rows)
    rows = lines_of(run)
    _walk_lines(st, enumerate(rows, start=no))
    return no + len(rows)


#: The frames: name -> (bucket kind, leading columns, columns of the empty frame).
_CPU_NUMBER = {"cpu": "int64"}
SHAPES: Shapes = {
    "mpstat_cpu": ("cpu", ["cpu", *CPU_COLUMNS], {**_CPU_NUMBER, **dict.fromkeys(CPU_COLUMNS, "float64")}),
    "mpstat_intr": ("intr", ["cpu", "intr_per_s"], {**_CPU_NUMBER, "intr_per_s": "float64"}),
    "mpstat_irq": (
        "irq",
        ["cpu", "irq", "kind", "per_s"],
        {**_CPU_NUMBER, "irq": "category", "kind": "category", "per_s": "float64"},
    ),
}


def _variant(st: _Reader, src: ParsedSource) -> str:
    """``mpstat -I SUM -P ALL, decimal comma``: the options the sections show, old column sets,
    the locale."""
    kinds = {b.kind for b in st.buckets.values()}
    cols = {c for b in st.buckets.values() if b.kind == "cpu" for c in b.cols}
    irq_kinds = {_irq_kind(b.cols) for b in st.buckets.values() if b.kind == "irq"}
    flags = []
    if "intr" in kinds and irq_kinds >= {"hard", "soft"}:
        flags.append("-I ALL")
    else:
        flags += ["-I SUM"] if "intr" in kinds else []
        flags += [f"-I {'SCPU' if k == 'soft' else 'CPU'}" for k in sorted(irq_kinds)]
    if any(len(f) and (f["cpu"] >= 0).any() for f in src.frames.values()):
        flags.append("-P ALL")
    if cols & TOPOLOGY:
        flags.append("-T")
    if st.node_sections:
        flags.append("-N")
    clues = [" ".join(["mpstat", *flags])]
    if "%user" in cols or _INTR in cols:
        clues.append("old columns (" + ", ".join(c for c in ("%user", _INTR) if c in cols) + ")")
    if st.reports and all(r.tod and EPOCH_RE.match(r.tod) for r in st.reports[:3]):
        clues.append("epoch times")
    return ", ".join(clues + st.locale_clues(src.meta.get("date_order")))


class _Reader(SysstatReader):
    """The reader's state between lines: section, report, time of day (the slow path)."""

    tool = "mpstat"
    kinds = ("cpu", "intr", "irq")

    def __init__(self, member: str) -> None:
        super().__init__(member)
        self.node_sections = 0
        self.tod: str | None = None  # time text of the rows being read
        self.tlen = 0  # its width: the header's time text
        self.header_time = ""
        self.report_key: tuple | None = None
        #: the last header read in full: its text after the time of day, and its section
        self.last_header: tuple[str, Bucket] | None = None

    def open(self, bucket: Bucket, no: int) -> None:
        super().open(bucket, no)
        self.tod = None

    def row_time(self, no: int, raw: str) -> None:
        """A row whose time differs from the previous row's: a new report unless it shares the run
        and time of the last one (``-A`` prints several sections per report)."""
        self.tod = tod = raw[: self.tlen]
        key = (self.run, tod)
        if key != self.report_key or self.fresh is not None:
            self.cut(no)
            self.report_key = key
            self.new_report(no, tod=tod, since_boot=tod == self.header_time)

    def line(self, no: int, raw: str) -> None:
        """Every line but a plain data row: blank, Average, marker, banner, header, odd rows."""
        s = raw.strip()
        c = s[:1]
        if self.cur is not None and "0" <= c <= "9" and "CPU" not in s and "NODE" not in s:
            # A data row with a leading space (or other oddity the hot loop skipped).
            if s[: self.tlen] != self.tod:
                self.row_time(no, s)
            self.cur_rows.append(s + "\n")
            return
        self.close()
        if not s or s.startswith("Average"):
            return
        known = self.known_header(s)
        if known is not None:
            self.header_time = s[: self.tlen]
            self.open(known, no)
            return
        if self.context_line(s, no):
            self.report_key = None  # the next rows open a report even at the same time of day
            return
        hdr = _header(s) if ("CPU" in s or "NODE" in s) else None
        if hdr is None:
            if not self.started:
                raise ParseError(
                    self.member, no, raw, "not mpstat output: expected a sysstat banner or an mpstat header"
                )
            self.warns.add(no, "stray-line", f"line not understood: {s[:60]!r}")
            return
        if not self.started:
            self.warns.add(
                no, "no-banner", "no sysstat banner before the first header: host, date and CPU count unknown"
            )
            self.started = True
        lead, self.header_time, toks = hdr
        self.tlen = len(self.header_time)
        cols = tuple(toks[1:])
        if toks[0] == "NODE":
            kind = "skip"
            self.node_sections += 1
        elif any(col in COLUMN_MAP for col in cols):
            kind = "cpu"
        elif cols == (_INTR,):
            kind = "intr"
        elif cols and all(col.endswith("/s") for col in cols):
            kind = "irq"
        else:
            kind = "skip"
            self.warns.add(no, "unknown-column", f"section with columns {' '.join(cols)[:60]!r} skipped")
        bkey = (kind, lead, cols)
        bucket = self.buckets.get(bkey)
        if bucket is None:
            bucket = self.buckets[bkey] = Bucket(kind, cols, lead=lead)
            if kind == "cpu":
                self.check_columns(no, cols, lambda col: col in COLUMN_MAP or col in TOPOLOGY or col == _INTR)
        self.last_header = (s[self.tlen :], bucket)
        self.open(bucket, no)

    def known_header(self, s: str) -> Bucket | None:
        """The section of ``s`` when it repeats the last header read in full at another time of
        day (every report of ``mpstat -P ALL`` repeats it); None otherwise."""
        last = self.last_header
        if last is not None and s[self.tlen :] == last[0] and last[1].kind != "skip":
            return last[1]
        return None

    def to_frame(self, b: Bucket) -> list[tuple[str, pd.DataFrame]]:
        return _to_frame(b, self.member, self.warns)


def _split(
    b: Bucket, member: str, warns: LineWarnings
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cut a bucket's rows into (cpu, value matrix float64, line numbers, report ids).

    ``cpu`` is float64 from the fast path (``all`` as NaN) or text from the careful one. Values
    are the last ``n`` fields of a row (``-T`` rows of ``all`` leave CORE/SOCK/NODE blank). The
    fast path reads all rows with pandas; a bucket with any odd row is read row by row.
    """
    values_idx = [i for i, c in enumerate(b.cols) if c not in TOPOLOGY]
    nval = len(values_idx)
    ntop = len(b.cols) - nval
    nos, reps = line_numbers(b.segs)
    if len(nos) != len(b.rows):  # rows and their line numbers out of step: never expected
        raise ParseError(member, int(nos[0]) if len(nos) else 0, "", "internal: row count mismatch")
    if ntop == 0:
        fast = read_table(
            b.rows, b.lead + 1 + nval, skip=b.lead, text_cols=frozenset(range(b.lead)), all_col=b.lead
        )
        if fast is not None:
            mat = fast[1]
            return mat[:, 0], mat[:, 1:], nos, reps
    cpus: list[str] = []
    cells: list[str] = []
    keep: list[int] = []
    full = b.lead + 1 + len(b.cols)
    short = b.lead + 1 + nval
    for i, s in enumerate(b.rows):
        toks = s.split()
        if len(toks) != full and len(toks) != short:
            warns.add(int(nos[i]), "bad-row", f"expected {full} fields, found {len(toks)}")
            continue
        cpus.append(toks[b.lead])
        cells.extend(toks[len(toks) - nval :])
        keep.append(i)
    k = np.asarray(keep, dtype="int64")
    what = [b.cols[i] for i in values_idx]
    mat, good = to_floats(cells, len(keep), nval, nos[k], member, what, warns)
    return np.asarray(cpus, dtype=object)[good], mat[good], nos[k][good], reps[k][good]


def _cpu_numbers(cpu: np.ndarray, nos: np.ndarray, warns: LineWarnings) -> tuple[np.ndarray, np.ndarray]:
    """``all`` (or NaN from the fast path) -> -1, digits -> int; returns (cpu int64, good mask)
    warning about other text."""
    if cpu.dtype.kind == "f":
        return np.where(np.isnan(cpu), -1, cpu).astype("int64"), np.ones(len(cpu), dtype=bool)
    s = pd.Series(cpu, dtype="object")
    num = pd.to_numeric(s.where(s != "all", "-1"), errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    good = ~np.isnan(num)
    for i in np.flatnonzero(~good):
        warns.add(int(nos[i]), "bad-row", f"CPU {cpu[i]!r} is neither a number nor 'all'")
    return np.where(good, num, -2).astype("int64"), good


def _irq_kind(cols: Iterable[str]) -> str:
    """``soft`` for a per-IRQ section of softirq names (``-I SCPU``), else ``hard`` (``-I CPU``)."""
    return "soft" if all(c[:-2] in SOFTIRQ_NAMES for c in cols if c not in TOPOLOGY) else "hard"


def _to_frame(b: Bucket, member: str, warns: LineWarnings) -> list[tuple[str, pd.DataFrame]]:
    """Type one bucket: cpu sections -> ``cpu`` (+ ``intr`` from a trailing ``intr/s``), ``intr``,
    and per-IRQ sections -> long ``irq`` rows."""
    cpu_txt, mat, nos, reps = _split(b, member, warns)
    cpu, good = _cpu_numbers(cpu_txt, nos, warns)
    if not good.all():
        cpu, mat, nos, reps = cpu[good], mat[good], nos[good], reps[good]
    names = [c for c in b.cols if c not in TOPOLOGY]
    out: list[tuple[str, pd.DataFrame]] = []
    if b.kind == "cpu":
        data = {"_rep": reps, "line_no": nos, "cpu": cpu}
        intr = None
        for j, col in enumerate(names):
            if col == _INTR:
                intr = mat[:, j]
            else:
                data[COLUMN_MAP.get(col, safe_name(col))] = mat[:, j]
        out.append(("cpu", pd.DataFrame(data)))
        if intr is not None:
            out.append(("intr", pd.DataFrame({"_rep": reps, "line_no": nos, "cpu": cpu, "intr_per_s": intr})))
    elif b.kind == "intr":
        out.append(
            ("intr", pd.DataFrame({"_rep": reps, "line_no": nos, "cpu": cpu, "intr_per_s": mat[:, 0]}))
        )
    elif b.kind == "irq":
        irqs = [c[:-2] for c in names]
        kind = _irq_kind(names)
        ncol = len(irqs)
        out.append(
            (
                "irq",
                pd.DataFrame(
                    {
                        "_rep": np.repeat(reps, ncol),
                        "line_no": np.repeat(nos, ncol),
                        "cpu": np.repeat(cpu, ncol),
                        "irq": pd.Categorical.from_codes(np.tile(np.arange(ncol), len(cpu)), categories=irqs),
                        "kind": pd.Categorical.from_codes(
                            np.zeros(len(cpu) * ncol, dtype="int8"), categories=[kind]
                        ),
                        "per_s": mat.reshape(-1),
                    }
                ),
            )
        )
    return out


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SYSTEM  # numbers and names of the system only
