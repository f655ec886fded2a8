"""Parse ``iostat`` (sysstat) output: per-device I/O statistics and the ``avg-cpu`` report.

Accepts:
    sysstat 7 through 12: the default report (``tps kB_read/s ...``, ``Blk_read/s`` of sysstat 7,
    ``kB_dscd/s`` of 12), ``-x``, ``-xm``, ``-dx``, ``-k``/``-m``, ``-t``, ``-y``, ``-s`` (short:
    ``tps kB/s rqm/s await areq-sz aqu-sz %util``), ``-h`` (human units ``222.1k``, ``1.5G`` with
    ``Device`` as the LAST column in sysstat 12; older ``-h`` with the device name on its own line);
    old extended columns (``rsec/s wsec/s`` in 512-byte sectors, ``avgrq-sz`` in sectors,
    ``avgqu-sz``, ``await``, ``svctm``) and sysstat 11/12 ones (``rkB/s``, ``rareq-sz``, ``aqu-sz``,
    ``%rrqm``, ``d/s dkB/s drqm/s %drqm d_await dareq-sz``, ``f/s f_await``); ``Device:`` with or
    without a colon; ``-t`` report times ``04/21/2026 04:51:43 PM``, ``11/22/26 12:26:28``,
    ``2026-04-21T16:51:43+0000`` (``S_TIME_FORMAT=ISO``: true UTC) and sysstat 7's ``Time:
    11:01:52``; banner dates as in ``parsers/_sysstat_time.py`` (``DD.MM.YYYY``, ISO, MM/DD vs DD/MM
    decided from the values); decimal commas; ``TS``/``zzz`` markers (pt-stalk, OSWatcher, the
    Casebook collector); lines prefixed by ``host: `` (pdsh: the first host is kept) or a space.

Sample input (``iostat -xt 1 2``, sysstat 12.6.1)::

    Linux 6.18.44-fc-v769 (vm) \t11/22/26 \t_x86_64_\t(2 CPU)

    11/22/26 12:26:28
    avg-cpu:  %user   %nice %system %iowait  %steal   %idle
              14.90    0.00    5.68    1.01    0.05   78.37

    Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s ...
    vda            160.51   4117.12    36.07  18.35    0.17    25.65  147.37   8741.23   179.86 ...

Output (every frame has ``ts`` datetime64[ns, UTC], ``line_no`` int64 and ``since_boot`` bool: the
first report of each run averages since boot unless ``-y`` was given, which the output cannot
show; keep it out of rates):
    ``iostat``: ``device`` str; ``r_per_s w_per_s d_per_s f_per_s rrqm_per_s wrqm_per_s
    drqm_per_s tps rqm_per_s`` (per second); ``r_bytes_per_s w_bytes_per_s d_bytes_per_s
    bytes_per_s`` (bytes/s whatever -k/-m/-h or sectors said); ``r_bytes w_bytes d_bytes`` (bytes
    since the previous report, default report); ``r_await w_await d_await f_await await svctm``
    (ms); ``aqu_sz`` (requests); ``rareq_sz_kib wareq_sz_kib dareq_sz_kib areq_sz_kib`` (KiB);
    ``rrqm_pct wrqm_pct drqm_pct util_pct`` (percent). Only the columns the capture has.
    ``iostat_cpu``: ``user nice system iowait steal idle`` (percent of CPU time).
    ``ts_source`` (``ParsedSource.clock``): ``ts-marker`` (a marker before every report),
    ``per-line`` (``-t`` stamps with a date; true UTC with an ISO offset, else ``ts_is_local``),
    ``header+time-of-day`` (``Time:`` lines on the banner date), or ``inferred``
    (``clock.start_local`` or the last marker plus ``clock.interval_s`` per report, ``ts_is_local``).
    ``meta``: ``variant`` (``sysstat 12 -x (r_await, aqu-sz, d/s, f/s)``, locale clues), ``tool``,
    ``host``, ``kernel``, ``ncpu``, ``sysstat_date``, ``date_order``, ``columns``, ``utc_offset_s``
    (markers or ISO stamps), ``pdsh_host``.

Warnings: ``ambiguous-date``, ``unknown-date``, ``other-hosts``, ``bad-row``, ``bad-number``,
``unknown-column`` (kept under a safe name), ``stray-line``, ``no-banner``, ``no-start-time``,
``assumed-interval``, ``empty``.

Errors: ``ParseError`` when the member's first meaningful line is neither a sysstat banner, a
marker, a ``-t`` stamp, an ``avg-cpu:`` nor a ``Device`` header.

Source: sysstat ``iostat.c`` / ``man 1 iostat`` (7.0, 10.2, 12.6); kernel
``Documentation/admin-guide/iostats.rst``.

>>> src = parse(
...     [
...         "Linux 6.18.44-fc-v769 (vm) \\t11/22/26 \\t_x86_64_\\t(2 CPU)",
...         "",
...         "Device             tps      kB/s    rqm/s   await  areq-sz  aqu-sz  %util",
...         "vda             337.51  23897.08   198.25    0.43    70.80    0.15   3.24",
...     ],
...     member="iostat.txt",
...     clock=ClockHints(start_local=pd.Timestamp("2026-11-22 12:26:50"), interval_s=1.0),
... )
>>> src.clock.value, str(src.start), src.main[["device", "bytes_per_s", "since_boot"]].values.tolist()
('inferred', '2026-11-22 12:26:50+00:00', [['vda', 24470609.92, True]])
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from parsers._sysstat import Bucket, LineWarnings, Shapes, SysstatReader, line_numbers, read_table, to_floats
from parsers._sysstat_time import HOST_PREFIX_RE, is_stamp
from parsers.base import Blocks, ClockHints, FormatTraits, ParsedSource, ParseError, safe_name
from parsers.sensitive import SYSTEM

FORMAT = "iostat"
TRAITS = FormatTraits(short_lines=True, unsigned=True, capped_pct=False, blocks=Blocks.DEVICES, markers=False)

KIB = 1024
MIB = 1024 * 1024
#: Linux block-layer sectors are 512 bytes whatever the device (iostat's rsec/s, avgrq-sz, Blk_*).
SECTOR = 512

#: iostat's column spellings (sysstat 7-12) -> (frame column, factor to the frame unit).
COLUMN_MAP: dict[str, tuple[str, float]] = {
    "r/s": ("r_per_s", 1),
    "w/s": ("w_per_s", 1),
    "d/s": ("d_per_s", 1),
    "f/s": ("f_per_s", 1),
    "tps": ("tps", 1),
    "rrqm/s": ("rrqm_per_s", 1),
    "wrqm/s": ("wrqm_per_s", 1),
    "drqm/s": ("drqm_per_s", 1),
    "rqm/s": ("rqm_per_s", 1),  # -s
    "%rrqm": ("rrqm_pct", 1),
    "%wrqm": ("wrqm_pct", 1),
    "%drqm": ("drqm_pct", 1),
    "rkB/s": ("r_bytes_per_s", KIB),
    "wkB/s": ("w_bytes_per_s", KIB),
    "dkB/s": ("d_bytes_per_s", KIB),
    "rMB/s": ("r_bytes_per_s", MIB),
    "wMB/s": ("w_bytes_per_s", MIB),
    "dMB/s": ("d_bytes_per_s", MIB),
    "rsec/s": ("r_bytes_per_s", SECTOR),
    "wsec/s": ("w_bytes_per_s", SECTOR),
    "kB/s": ("bytes_per_s", KIB),  # -s
    "MB/s": ("bytes_per_s", MIB),
    "kB_read/s": ("r_bytes_per_s", KIB),
    "kB_wrtn/s": ("w_bytes_per_s", KIB),
    "kB_dscd/s": ("d_bytes_per_s", KIB),
    "MB_read/s": ("r_bytes_per_s", MIB),
    "MB_wrtn/s": ("w_bytes_per_s", MIB),
    "MB_dscd/s": ("d_bytes_per_s", MIB),
    "Blk_read/s": ("r_bytes_per_s", SECTOR),
    "Blk_wrtn/s": ("w_bytes_per_s", SECTOR),
    "kB_read": ("r_bytes", KIB),
    "kB_wrtn": ("w_bytes", KIB),
    "kB_dscd": ("d_bytes", KIB),
    "MB_read": ("r_bytes", MIB),
    "MB_wrtn": ("w_bytes", MIB),
    "MB_dscd": ("d_bytes", MIB),
    "Blk_read": ("r_bytes", SECTOR),
    "Blk_wrtn": ("w_bytes", SECTOR),
    "rareq-sz": ("rareq_sz_kib", 1),
    "wareq-sz": ("wareq_sz_kib", 1),
    "dareq-sz": ("dareq_sz_kib", 1),
    "areq-sz": ("areq_sz_kib", 1),  # -s
    "avgrq-sz": ("areq_sz_kib", SECTOR / KIB),  # sectors before sysstat 11
    "aqu-sz": ("aqu_sz", 1),
    "avgqu-sz": ("aqu_sz", 1),
    "await": ("await", 1),
    "r_await": ("r_await", 1),
    "w_await": ("w_await", 1),
    "d_await": ("d_await", 1),
    "f_await": ("f_await", 1),
    "svctm": ("svctm", 1),
    "%util": ("util_pct", 1),
}
DEVICE_COLUMNS = [
    "device",
    "r_per_s",
    "w_per_s",
    "d_per_s",
    "f_per_s",
    "rrqm_per_s",
    "wrqm_per_s",
    "r_bytes_per_s",
    "w_bytes_per_s",
    "d_bytes_per_s",
    "r_await",
    "w_await",
    "d_await",
    "f_await",
    "await",
    "svctm",
    "aqu_sz",
    "rareq_sz_kib",
    "wareq_sz_kib",
    "util_pct",
]
#: ``avg-cpu:`` spellings -> iostat_cpu column (percent).
CPU_COLUMN_MAP: dict[str, str] = {
    "%user": "user",
    "%nice": "nice",
    "%system": "system",
    "%iowait": "iowait",
    "%steal": "steal",
    "%idle": "idle",
}
CPU_COLUMNS = list(CPU_COLUMN_MAP.values())
#: ``-h`` unit suffixes (sysstat ``common.c`` units[]): powers of 1024 bytes.
HUMAN_SUFFIX = {"B": 1, "k": KIB, "K": KIB, "M": MIB, "G": KIB**3, "T": KIB**4, "P": KIB**5}
_SPECIAL = ("avg-cpu", "Device", "TS ", "zzz", "Linux ")


def _is_device_header(toks: list[str]) -> bool:
    return bool(toks) and (toks[0] in ("Device:", "Device") or toks[-1] in ("Device:", "Device"))


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds an ``avg-cpu:`` header or a ``Device`` header with iostat columns.

    >>> sniff(["Linux 5.4 (h) \\t04/21/2026 \\t_x86_64_\\t(2 CPU)", "", "Device  r/s  w/s  %util"])
    True
    >>> sniff(["avg-cpu:  %user   %nice %system %iowait  %steal   %idle"])
    True
    >>> sniff(["Device:         rrqm/s   wrqm/s     r/s     w/s   rkB/s   wkB/s"])
    True
    >>> sniff(["16:51:43  CPU  intr/s"])
    False
    """
    for line in head:
        s = line.strip()
        m = HOST_PREFIX_RE.match(s)
        if m and m["host"] not in ("avg-cpu", "Device"):  # a pdsh `host: ` prefix, not iostat's own labels
            s = m["rest"].strip()
        if s.startswith("avg-cpu:") and "%user" in s:
            return True
        if "Device" in s:
            toks = s.split()
            if _is_device_header(toks) and any(t in COLUMN_MAP for t in toks):
                return True
    return False


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Parse one iostat member (any iterable of text lines) into ``iostat`` and ``iostat_cpu``
    (see the module docstring for columns and units).

    Raises ``ParseError`` when the member is not iostat output.
    """
    st = _Reader(member)
    # The hot loop: a device row of the open section is appended as is; everything else goes to
    # ``_Reader.line``. Rows are typed in bulk by ``flush``.
    rest = st.lines(stream)
    cur_rows = st.cur_rows
    for no, raw in rest:
        if st.cur is not None and raw[:1] not in _NOT_ROW_START:
            cur_rows.append(raw)
            continue
        st.line(no, raw)
        cur_rows = st.cur_rows
    src = st.result(FORMAT, clock, SHAPES)
    src.meta["variant"] = _variant(st, src)
    return src


#: The frames: name -> (bucket kind, leading columns, columns of the empty frame).
SHAPES: Shapes = {
    "iostat": ("dev", DEVICE_COLUMNS, {"device": "str"}),
    "iostat_cpu": ("cpu", CPU_COLUMNS, dict.fromkeys(CPU_COLUMNS, "float64")),
}
#: Extended-statistics columns by the sysstat generation that prints them (iostat.c, CHANGES):
#: 12 splits avgrq-sz into rareq-sz/wareq-sz, renames avgqu-sz to aqu-sz and adds discards (d/s)
#: and flushes (f/s); 10-11 print avgqu-sz and svctm next to r_await/w_await; older ones have no
#: r_await and count sectors (rsec/s) unless -k.
_SYSSTAT_12 = ("r_await", "aqu-sz", "d/s", "f/s")
_SYSSTAT_OLD = ("avgqu-sz", "svctm", "rsec/s")


def _variant(st: _Reader, src: ParsedSource) -> str:
    """``sysstat 12 -x (r_await, aqu-sz, d/s, f/s)``: generation and options the columns show, the
    locale."""
    dev_cols = {c for b in st.buckets.values() if b.kind == "dev" for c in b.cols}
    has_cpu = any(b.kind == "cpu" for b in st.buckets.values())
    letters = "d" if dev_cols and not has_cpu else "c" if has_cpu and not dev_cols else ""
    if dev_cols & {"await", "r_await", "%util", "aqu-sz", "avgqu-sz"}:
        letters += "x"
    letters += "s" if "rqm/s" in dev_cols else ""
    letters += "h" if any(b.device_last for b in st.buckets.values()) else ""
    letters += "m" if any("MB" in c for c in dev_cols) else ""
    letters += "t" if any(r.stamp for r in st.reports[:1]) else ""
    flags = f"-{letters}" if letters else ""
    if any(c.startswith(("Blk_", "rsec")) for c in dev_cols):
        flags += " (sectors)"
    new_cols = [c for c in _SYSSTAT_12 if c in dev_cols]
    old_cols = [c for c in _SYSSTAT_OLD if c in dev_cols]
    if dev_cols & {"aqu-sz", "rareq-sz", "kB_dscd/s", "MB_dscd/s"} or "h" in flags:
        gen = "sysstat 12"  # Device as the last -h column is sysstat 12 too
    else:
        gen = ("sysstat 10-11" if "r_await" in dev_cols else "sysstat <= 9") if old_cols else "iostat"
    cols = new_cols if gen == "sysstat 12" else old_cols
    head = " ".join(x for x in (gen, flags) if x) + (f" ({', '.join(cols)})" if cols else "")
    return ", ".join([head, *st.locale_clues(src.meta.get("date_order"))])


#: First characters of lines that may not be device rows (blank, avg-cpu values, ``avg-cpu:``,
#: ``Device``, ``TS``, ``Time:``, ``zzz``, ``Linux``): such lines take the careful path.
_NOT_ROW_START = frozenset({"", "\n", "\r", " ", "\t", "a", "D", "T", "z", "L"})


class _Reader(SysstatReader):
    """The reader's state between lines: report, pending ``avg-cpu`` values (the slow path)."""

    tool = "iostat"
    kinds = ("dev", "cpu")
    seen_as = {"dev": "device", "cpu": "avg-cpu"}

    def __init__(self, member: str) -> None:
        super().__init__(member)
        self.cpu_bucket: Bucket | None = None  # set while the next line holds avg-cpu values
        self.rep_has: set[str] = set()
        self.rep_open = False
        self.run_first = True

    def report(self, no: int, stamp: str | None = None) -> None:
        self.new_report(no, stamp=stamp, since_boot=self.run_first)
        self.run_first = False
        self.rep_open = True
        self.rep_has = set()

    def _begin(self, no: int) -> None:
        if not self.started:
            self.warns.add(
                no, "no-banner", "no sysstat banner before the first report: host, date and CPU count unknown"
            )
            self.started = True

    def line(self, no: int, raw: str) -> None:
        """Every line but a plain device row: blank, avg-cpu, marker, banner, stamp, headers."""
        s = raw.strip()
        if self.cur is not None and s and not s.startswith(_SPECIAL) and not is_stamp(s):
            self.cur_rows.append(s + "\n")  # a device row with a leading space, or named a..., D...
            return
        self.close()
        if not s:
            return
        if self.cpu_bucket is not None:
            b = self.cpu_bucket
            b.segs.append((no, 1, self.rep))
            b.rows.append(s + "\n")
            self.cpu_bucket = None
            return
        if self.context_line(s, no):
            self.rep_open = False
            self.run_first = self.run_first or s[0] == "L"  # a new run starts since boot
            return
        c = s[0]
        if ("0" <= c <= "9" or c == "T") and is_stamp(s):
            self.report(no, stamp=s)
            self.started = True
            return
        if s.startswith("avg-cpu:"):
            self._begin(no)
            if not self.rep_open or self.rep_has:
                self.report(no)
            self.rep_has.add("cpu")
            cols = tuple(s.split()[1:])
            key = ("cpu", cols, False)
            bucket = self.buckets.get(key)
            if bucket is None:
                bucket = self.buckets[key] = Bucket("cpu", cols)
                self.check_columns(no, cols, CPU_COLUMN_MAP.__contains__)
            self.cpu_bucket = bucket
            return
        toks = s.split()
        if "Device" in s and _is_device_header(toks):
            self._begin(no)
            if not self.rep_open or "dev" in self.rep_has:
                self.report(no)
            self.rep_has.add("dev")
            device_last = toks[0] not in ("Device:", "Device")
            cols = tuple(toks[:-1] if device_last else toks[1:])
            key = ("dev", cols, device_last)
            bucket = self.buckets.get(key)
            if bucket is None:
                bucket = self.buckets[key] = Bucket("dev", cols, device_last=device_last)
                self.check_columns(no, cols, COLUMN_MAP.__contains__)
            self.open(bucket, no)
            return
        if not self.started:
            raise ParseError(
                self.member,
                no,
                raw,
                "not iostat output: expected a sysstat banner, avg-cpu: or Device header",
            )
        self.warns.add(no, "stray-line", f"line not understood: {s[:60]!r}")

    def to_frame(self, b: Bucket) -> list[tuple[str, pd.DataFrame]]:
        return [(b.kind, _to_frame(b, self.member, self.warns))]


def _human(cells: list[str], nos: np.ndarray, ncols: int, what: list[str], warns: LineWarnings) -> tuple:
    """``-h`` cells (``222.1k``, ``1.5G``, ``8.59``) -> (float matrix, good-row mask); a suffixed
    cell becomes bytes (powers of 1024), a plain one stays as printed."""
    s = pd.Series(cells, dtype="object").astype("string")
    last = s.str[-1]
    mult = last.map(HUMAN_SUFFIX).astype("float64").fillna(1.0).to_numpy()
    has = last.isin(list(HUMAN_SUFFIX)).to_numpy(dtype=bool)
    num_txt = s.where(~has, s.str[:-1]).str.replace(",", ".", regex=False)
    num = pd.to_numeric(num_txt, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    nrows = len(cells) // ncols if ncols else 0
    bad = np.isnan(num).reshape(nrows, ncols)
    for i in np.flatnonzero(bad.any(axis=1)):
        j = int(np.flatnonzero(bad[i])[0])
        warns.add(int(nos[i]), "bad-number", f"{what[j]!r}: {cells[i * ncols + j]!r} is not a number")
    return (num * mult).reshape(nrows, ncols), has.reshape(nrows, ncols), ~bad.any(axis=1)


def _split(
    b: Bucket, member: str, warns: LineWarnings
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Cut a bucket's rows into (device names, value matrix, line numbers, report ids, suffix mask).

    The fast path reads every row with pandas; odd rows (field count, ``-h`` units, an old ``-h``
    device name alone on its line) are read row by row. ``suffix mask`` marks ``-h`` cells that
    carried a unit (already in bytes).
    """
    ncol = len(b.cols)
    nos, reps = line_numbers(b.segs)
    if len(nos) != len(b.rows):  # rows and their line numbers out of step: never expected
        raise ParseError(member, int(nos[0]) if len(nos) else 0, "", "internal: row count mismatch")
    if b.kind == "cpu":
        fast = read_table(b.rows, ncol)
        if fast is not None:
            return np.empty(len(b.rows), dtype=object), fast[1], nos, reps, None
    elif not b.device_last:
        fast = read_table(b.rows, ncol + 1, text_cols=frozenset({0}))
        if fast is not None:
            return fast[0][0], fast[1], nos, reps, None
    names: list[str] = []
    cells: list[str] = []
    keep: list[int] = []
    pending_name: str | None = None
    pending_at = 0
    width = ncol if b.kind == "cpu" else ncol + 1
    for i, s in enumerate(b.rows):
        toks = s.split()
        if b.kind == "dev" and not b.device_last and len(toks) == 1:
            pending_name, pending_at = toks[0], i  # old -h: the name alone, values on the next line
            continue
        at = i
        if pending_name is not None and len(toks) == ncol:
            toks, at = [pending_name, *toks], pending_at
        pending_name = None
        if len(toks) != width:
            warns.add(int(nos[i]), "bad-row", f"expected {width} fields, found {len(toks)}")
            continue
        if b.kind == "cpu":
            names.append("")
            cells.extend(toks)
        elif b.device_last:
            names.append(toks[-1])
            cells.extend(toks[:-1])
        else:
            names.append(toks[0])
            cells.extend(toks[1:])
        keep.append(at)
    k = np.asarray(keep, dtype="int64")
    human = b.device_last or any(c[-1:] in HUMAN_SUFFIX for c in cells[:ncol])
    if human and b.kind == "dev":
        mat, has, good = _human(cells, nos[k], ncol, list(b.cols), warns)
        return np.asarray(names, dtype=object)[good], mat[good], nos[k][good], reps[k][good], has[good]
    mat, good = to_floats(cells, len(keep), ncol, nos[k], member, list(b.cols), warns)
    return np.asarray(names, dtype=object)[good], mat[good], nos[k][good], reps[k][good], None


def _to_frame(b: Bucket, member: str, warns: LineWarnings) -> pd.DataFrame:
    """Type one bucket: device rows with units converted (bytes/s, KiB, ms), or avg-cpu rows."""
    names, mat, nos, reps, has_unit = _split(b, member, warns)
    data: dict[str, object] = {"_rep": reps, "line_no": nos}
    if b.kind == "cpu":
        for j, col in enumerate(b.cols):
            data[CPU_COLUMN_MAP.get(col, safe_name(col))] = mat[:, j]
        return pd.DataFrame(data)
    data["device"] = names
    for j, col in enumerate(b.cols):
        name, factor = COLUMN_MAP.get(col, (safe_name(col), 1))
        v = mat[:, j]
        if has_unit is not None:
            # -h: a suffixed cell is already bytes; bytes -> the frame unit, plain cells as printed.
            if name.endswith("_kib"):
                v = np.where(has_unit[:, j], v / KIB, v * factor)
            elif "bytes" in name:
                v = np.where(has_unit[:, j], v, v * factor)
            else:
                v = v * factor
        elif factor != 1:
            v = v * factor
        data[name] = v
    return pd.DataFrame(data)


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SYSTEM  # numbers and names of the system only
