"""Parse ``/proc/interrupts`` snapshots into per-IRQ, per-CPU counters and rates.

Accepts:
    One or many ``cat /proc/interrupts`` snapshots, each after a ``TS <epoch[.ns]> [YYYY-MM-DD
    HH:MM:SS]`` or OSWatcher ``zzz`` marker (pt-stalk ``-interrupts``, the collector), or unmarked
    (a repeated ``CPU0 CPU1 ...`` header starts a new snapshot).
    - x86 kernels >= 4.x: ``IR-PCI-MSI 1572864-edge eth0-TxRx-0`` (chip, hwirq-type, devices);
      older kernels: ``IR-IO-APIC-edge timer``, ``PCI-MSI-edge eth0`` (chip-type in one token);
    - arm64 GIC: ``GICv3 27 Level arch_timer``, ``ITS-MSI 65536 Edge nvme0q0``; 32-bit ARM with a
      ``-`` chip, ``IPI0:`` rows and a ``FIQ:`` row with no counts;
    - named rows (NMI LOC SPU PMI IWI RTR RES CAL TLB TRM THR DFR MCE MCP HYP HRE HVS PIN NPI PIW,
      IPIn, ``Err``) and the single-total rows ERR and MIS;
    - offline CPUs: the header lists online CPUs only (``CPU0 ... CPU5 CPU7``); counts are mapped
      to the CPU numbers of the header, never to positions.

Sample input (``cat /proc/interrupts``, Linux 6.18, 2 vCPU Firecracker guest, after the collector's
``TS`` line)::

    TS 1795350429.710517035 2026-11-22 12:27:09
               CPU0       CPU1
     24:          1          0  IO-APIC   5-edge      ACPI:Ged
     26:          0         15  IO-APIC   4-edge      ttyS0
     36:          0      91894 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0
    LOC:      38356      39781   Local timer interrupts
    RES:      15535      10912   Rescheduling interrupts
    ERR:          0

Output:
    ``interrupts``: one row per (snapshot, IRQ, CPU): ``ts`` datetime64[ns, UTC], ``line_no`` int64,
    ``snapshot`` int64, ``irq`` category (``24``, ``LOC``, ``IPI1``...), ``cpu`` int64 (CPU number;
    -1 for the single total of ERR/MIS/Err), ``count`` int64 (raw counter since boot), ``per_s``
    float64 (interrupts per second since the previous snapshot of the same IRQ and CPU; NaN for the
    first, after a counter reset, or when the interval is 0; a 32-bit wrap is corrected).
    ``interrupts_desc``: one row per IRQ (per description, when it changes): ``ts``, ``line_no``,
    ``irq``, ``chip`` (``IO-APIC``, ``IR-PCI-MSI``, ``GICv3``, ``-``), ``hwirq`` (``2``, ``1572864``
    or ""), ``type`` (``edge``, ``fasteoi``, ``Level``... as printed, or ""), ``devices`` (``eth0-TxRx-0``;
    the description for named rows: ``Local timer interrupts``). ``ParsedSource.clock``:
    ``ts-marker`` or ``inferred`` (start + snapshot x interval, ``ts_is_local``).
    ``meta``: ``variant`` (``/proc/interrupts arm64, CPU6 offline``), ``ncpu`` (CPUs in the header),
    ``cpus`` (their numbers), ``offline_cpus`` (numbers missing below the highest), ``arch`` (``x86``,
    ``arm64``, ``arm`` or ``unknown``), ``snapshots`` (``(snapshot, first_line, last_line)``),
    ``utc_offset_s`` when a ``TS`` marker gives it.

Warnings: ``short-row`` (fewer counts than CPUs, not ERR/MIS: mapped to the first CPUs),
    ``extra-counts`` (more counts than header CPUs, as ARM IPI rows on old kernels: the extra ones
    numbered after the last header CPU), ``counter-reset`` (a counter went backwards and is not a
    32-bit wrap: rate NaN), ``zero-interval``, ``bad-row``, ``no-start-time``, ``no-interval``, ``empty``.
Errors: ``ParseError`` when the first line that is not a marker is not a ``CPUn`` header, or when
    rows appear before any header.

Source: Documentation/filesystems/proc.rst ("/proc/interrupts"), kernel/irq/proc.c
``show_interrupts()`` and arch/x86/kernel/irq.c ``arch_show_interrupts()``.

>>> from parsers.base import ClockHints
>>> src = parse(["TS 1795350429.7 2026-11-22 12:27:09", "           CPU0       CPU1",
...     " 24:          1          0  IO-APIC   5-edge      ACPI:Ged", "LOC:  100  200   Local timer interrupts",
...     "TS 1795350431.7 2026-11-22 12:27:11", "           CPU0       CPU1",
...     " 24:          1          0  IO-APIC   5-edge      ACPI:Ged", "LOC:  300  260   Local timer interrupts"],
...     member="interrupts", clock=ClockHints())
>>> src.main[src.main.irq == "LOC"][["snapshot", "cpu", "count", "per_s"]].values.tolist()
[[0.0, 0.0, 100.0, nan], [0.0, 1.0, 200.0, nan], [1.0, 0.0, 300.0, 100.0], [1.0, 1.0, 260.0, 30.0]]
>>> src.frames["interrupts_desc"].iloc[0][["irq", "chip", "hwirq", "type", "devices"]].tolist()
['24', 'IO-APIC', '5', 'edge', 'ACPI:Ged']
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from parsers._interrupts_cells import fast_counts as _fast_counts
from parsers._interrupts_cells import slow_counts as _slow_counts
from parsers.base import (
    Blocks,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    ParseWarning,
    TsMarker,
    parse_marker,
    snapshot_times,
)
from parsers.sensitive import SYSTEM

FORMAT = "interrupts"
TRAITS = FormatTraits(
    short_lines=False,
    unsigned=True,
    capped_pct=False,
    blocks=Blocks.ROWS,
    markers=True,
    large_pieces=False,  # no gain, and its frames (a row per CPU per line) are the most memory a parse holds
    small_pieces=True,  # 4 MiB pieces: the same CPU per MB as 8 MiB, half the memory while parsed
)
FRAME = "interrupts"
DESC_FRAME = "interrupts_desc"

#: Rows the kernel prints as one system-wide total (atomic counters), not per CPU: cpu = -1.
TOTAL_ROWS = frozenset({"ERR", "MIS", "Err"})
#: Offline CPUs named one by one in ``meta["variant"]``; more are summarised with ``...``.
MAX_CPUS_NAMED = 4
#: Interrupt flow types as printed after the chip (``Edge``/``Level`` on GIC, lower case on x86).
TYPE_WORDS = frozenset({"edge", "level", "fasteoi", "simple", "percpu", "percpu-devid", "none"})
#: Pre-4.x x86 kernels glue the flow handler to the chip name: ``IR-IO-APIC-edge``, ``PCI-MSI-edge``.
_GLUED_TYPE = re.compile(r"^(?P<chip>.+?)-(?P<type>edge|level|fasteoi|simple|percpu)$", re.IGNORECASE)
#: x86 >= 4.x prints hwirq and type as one token: ``512000-edge``.
_HWIRQ_TYPE = re.compile(r"^(?P<hwirq>\d+)-(?P<type>[A-Za-z][\w-]*)$")
_CPU_TOKEN = re.compile(r"^CPU(\d+)$")
_TOTAL = np.array([-1], dtype=np.int64)

#: Most counters are ``unsigned int`` in the kernel (kstat_irqs_cpu, irq_stat fields): they wrap at
#: 2**32. A drop from above 2**31 is read as a wrap when the corrected delta is plausible.
COUNTER_WRAP = 2**32
WRAP_FROM = 2**31
#: Fastest plausible rate of one IRQ on one CPU: ~10x a busy NIC queue vector without coalescing
#: (~1 M/s); a "wrap" needing more than this is a reset (reboot, CPU hot-plug) instead.
MAX_PLAUSIBLE_PER_S = 10_000_000


def _cpu_header(line: str) -> list[int] | None:
    """CPU numbers of a ``CPU0 CPU1 ...`` header line, or None."""
    tokens = line.split()
    if not tokens:
        return None
    cpus = []
    for t in tokens:
        m = _CPU_TOKEN.match(t)
        if not m:
            return None
        cpus.append(int(m.group(1)))
    return cpus


def sniff(head: list[str]) -> bool:
    """True when the first line that is not blank or a ``TS``/``zzz`` marker is ``CPU0 CPU1 ...``."""
    for line in head:
        if not line.strip() or parse_marker(line) is not None:
            continue
        return _cpu_header(line) is not None
    return False


def _describe(numeric: bool, desc: list[str]) -> tuple[str, str, str, str]:
    """(chip, hwirq, type, devices) from the tokens after the counts of one row."""
    if not numeric or not desc:
        return "", "", "", " ".join(desc)
    chip, hwirq, kind = desc[0], "", ""
    i = 1
    m = _HWIRQ_TYPE.match(desc[1]) if len(desc) > 1 else None
    if m:
        hwirq, kind, i = m["hwirq"], m["type"], 2
    elif len(desc) > 2 and desc[1].isdigit() and desc[2].lower() in TYPE_WORDS:
        hwirq, kind, i = desc[1], desc[2], 3
    elif len(desc) > 1 and desc[1].lower() in TYPE_WORDS:
        kind, i = desc[1], 2
    else:
        g = _GLUED_TYPE.match(chip)
        if g:
            chip, kind = g["chip"], g["type"]
    return chip, hwirq, kind, " ".join(desc[i:])


@dataclass(slots=True)
class _Acc:
    """Rows collected so far, and per-snapshot bookkeeping.

    A row's counts stay in its line until the end: ``row_lines`` (1-based) with ``spans`` (start
    and end of the count text in the line, between the ``IRQ:`` label and the description) and ``ks``
    (how many counts the text holds).
    """

    member: str
    warnings: list[ParseWarning]
    cpus: np.ndarray | None = None
    snapshot: int = -1
    rows_in_snapshot: int = 0
    markers: list[TsMarker | None] = field(default_factory=list)
    snap_lines: list[list[int]] = field(default_factory=list)
    headers: list[list[int]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # one per row
    row_lines: list[int] = field(default_factory=list)
    row_snaps: list[int] = field(default_factory=list)
    row_cpus: list[np.ndarray] = field(default_factory=list)
    ks: list[int] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)
    desc: dict[str, tuple[str, ...]] = field(default_factory=dict)
    desc_rows: list[tuple[int, int, str, tuple[str, str, str, str]]] = field(default_factory=list)
    warned: set[tuple[str, str]] = field(default_factory=set)

    def new_snapshot(self, marker: TsMarker | None, line_no: int) -> None:
        self.snapshot += 1
        self.rows_in_snapshot = 0
        self.markers.append(marker)
        self.snap_lines.append([line_no, line_no])

    def warn_once(self, line_no: int, code: str, label: str, message: str) -> None:
        if (code, label) not in self.warned:
            self.warned.add((code, label))
            self.warnings.append(ParseWarning(line_no, code, message))


@dataclass(frozen=True, slots=True)
class _Known:
    """How the last row of an IRQ ended: the text after its counts (``tail``: blank-led or empty),
    how many counts it had and the CPUs they map to. A later row of that IRQ that ends with the same
    tail has the same description, and the same shape when its count text holds ``k`` numbers, which
    ``_interrupts_cells.fast_counts`` checks for all rows at once."""

    tail: str
    k: int
    cpus: np.ndarray
    #: ``tail`` and the line's ``\n``: what the line as read ends with (no ``\r`` before it)
    tail_nl: str


def _split(acc: _Acc, no: int, line: str, colon: int, label: str) -> _Known | None:
    """One IRQ row read token by token: its count text, CPU numbers and description.

    Returns what a later row of the same IRQ must look like to skip this work, or None when the row
    is not the plain kind (one count per header CPU, or a single total).
    """
    tokens = line[colon + 1 :].split()
    cpus = acc.cpus
    n = len(cpus)
    plain = True
    if (
        label in TOTAL_ROWS
        and tokens[:1]
        and tokens[0].isdigit()
        and (len(tokens) == 1 or not tokens[1].isdigit())
    ):
        k, row_cpus = 1, _TOTAL  # one system-wide total, whatever the number of CPUs
    elif (len(tokens) == n or (len(tokens) > n and not tokens[n].isdigit())) and tokens[n - 1].isdigit():
        k, row_cpus = n, cpus  # the common case: one count per header CPU (all digits: see _drop_bad)
    else:
        plain = False
        k = 0
        while k < len(tokens) and tokens[k].isdigit():
            k += 1
        if k < n:
            row_cpus = cpus[:k]
            if k:
                acc.warn_once(
                    no, "short-row", label, f"{label}: {k} counts for {n} CPUs: mapped to the first {k}"
                )
        else:
            extra = np.arange(int(cpus.max()) + 1, int(cpus.max()) + 1 + k - n, dtype=np.int64)
            row_cpus = np.concatenate([cpus, extra])
            acc.warn_once(
                no,
                "extra-counts",
                label,
                f"{label}: {k} counts for {n} header CPUs: the extra ones numbered {extra[0]}..{extra[-1]}",
            )
    desc = tuple(tokens[k:])
    if acc.desc.get(label) != desc:
        acc.desc[label] = desc
        acc.desc_rows.append((acc.snapshot, no, label, _describe(label.isdigit(), list(desc))))
    if not k:
        return None  # FIQ: a row with a description and no counts
    # the k-th count ends before the last len(desc) tokens (rsplit keeps the text before them whole)
    end = len(line.rsplit(None, len(desc))[0]) if desc else len(line.rstrip())
    acc.labels.append(label)
    acc.row_lines.append(no)
    acc.row_snaps.append(acc.snapshot)
    acc.row_cpus.append(row_cpus)
    acc.ks.append(k)
    acc.spans.append((colon + 1, end))
    acc.rows_in_snapshot += 1
    acc.snap_lines[acc.snapshot][1] = no
    return _Known(line[end:], k, row_cpus, line[end:] + "\n") if plain else None


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Parse ``/proc/interrupts`` snapshots into ``interrupts`` and ``interrupts_desc``.

    ``stream``: text lines (see the module docstring). Raises ``ParseError`` when the member is not
    ``/proc/interrupts``.
    """
    lines = stream if isinstance(stream, list) else list(stream)
    acc = _scan(member, lines, fast=True)
    counts = _fast_counts(acc, lines)
    if counts is None:  # a row unlike the one before it of its IRQ: every row read token by token
        acc = _scan(member, lines, fast=False)
    return _result(acc, lines, counts, clock)


def _scan(member: str, lines: list[str], *, fast: bool) -> _Acc:
    """Walk the lines: markers, headers and rows. With ``fast``, a row of an IRQ that ends like the
    previous row of that IRQ only has its count text located (its tokens are checked afterwards):
    looked up first, on the line as read, before any other test; and the rows after a header that
    are those of the snapshot before, line for line, are located all at once (:class:`_Snapshot`)."""
    acc = _Acc(member, [])
    known: dict[str, _Known] = {}
    header: list[int] | None = None
    last_header: tuple[str, list[int] | None] = ("", None)
    labels, row_lines, row_snaps, row_cpus = acc.labels, acc.row_lines, acc.row_snaps, acc.row_cpus
    ks, spans = acc.ks, acc.spans
    same: _Snapshot | None = None  # with ``fast``: the rows of the last snapshot, if all known
    since = (0, 0)  # the last header's line, and how many rows were read before it
    numbered = enumerate(lines, start=1)
    for no, raw in numbered:
        if fast and known:
            colon = raw.find(":")
            if colon >= 0 and not raw.startswith(("TS", "zzz")):
                label = raw[:colon].strip()
                seen = known.get(label)
                # a row (it has a colon: no header; no marker) ending with the tail and "\n" alone;
                # the bookkeeping of _known_row, inline: this is the loop over every row
                if seen is not None and raw.endswith(seen.tail_nl) and (seen.tail or raw[-2:-1] != "\r"):
                    labels.append(label)
                    row_lines.append(no)
                    row_snaps.append(acc.snapshot)
                    row_cpus.append(seen.cpus)
                    ks.append(seen.k)
                    spans.append((colon + 1, len(raw) - len(seen.tail_nl)))
                    acc.rows_in_snapshot += 1
                    acc.snap_lines[acc.snapshot][1] = no
                    continue
        line = raw.rstrip("\r\n")
        if not line or line.isspace():
            continue
        if line.startswith(("TS", "zzz")):
            marker = parse_marker(line)
            if marker is not None:
                acc.new_snapshot(marker, no)
                continue
        elif line.lstrip().startswith("CPU"):
            if line != last_header[0]:  # a capture repeats one header: read once
                last_header = (line, _cpu_header(line))
            cpus = last_header[1]
            if cpus is not None:
                acc.cpus = np.array(cpus, dtype=np.int64)
                acc.headers.append(cpus)
                if cpus != header:
                    known.clear()  # counts map to other CPUs now
                    header, same = cpus, None
                elif fast:
                    same = _Snapshot.of(same, acc, known, lines, since)
                if acc.rows_in_snapshot or acc.snapshot < 0:
                    acc.new_snapshot(None, no)
                since = (no, len(labels))
                if same is not None and same.read(acc, lines, no):
                    next(itertools.islice(numbered, same.width - 1, None), None)  # past its rows
                continue
        if acc.cpus is None:
            raise ParseError(member, no, line, "not /proc/interrupts: expected a 'CPU0 CPU1 ...' header")
        _row(acc, known, no, line, fast)
    return acc


class _Snapshot:
    """The rows of a snapshot whose IRQs were all known (plain, one row each, on consecutive lines
    after the header): a later snapshot whose lines start with the same ``IRQ:`` labels, in the same
    order, and end as the known rows of those IRQs has its rows bookkept at once, as the loop of
    :func:`_scan` would one by one (a capture lists the same IRQs every time)."""

    __slots__ = ("prefixes", "tails", "bare", "labels", "cpus", "ks", "starts", "cut", "width", "end")

    def __init__(self, prefixes: list[str], seen: list[_Known], labels: list[str]) -> None:
        self.prefixes, self.labels, self.width = prefixes, labels, len(labels)
        self.tails = [k.tail_nl for k in seen]
        self.bare = [j for j, k in enumerate(seen) if not k.tail]  # their line must not end in "\r\n"
        self.cpus, self.ks = [k.cpus for k in seen], [k.k for k in seen]
        self.starts = [len(p) for p in prefixes]  # after the colon
        self.cut = [len(t) for t in self.tails]
        self.end = -1  # how many rows were read when this snapshot's rows were last read at once

    @classmethod
    def of(
        cls,
        last: _Snapshot | None,
        acc: _Acc,
        known: dict[str, _Known],
        lines: list[str],
        since: tuple[int, int],
    ) -> _Snapshot | None:
        """The rows read since the header at line ``since[0]`` (from row ``since[1]`` on), or None
        unless they are all known rows, one per IRQ, on the lines right after that header."""
        if last is not None and last.end == len(acc.labels):
            return last  # read at once: the same rows
        header, first = since
        width = len(acc.labels) - first
        if not width or acc.row_lines[first] != header + 1 or acc.row_lines[-1] != header + width:
            return None
        labels = acc.labels[first:]
        seen = [known.get(label) for label in labels]
        if None in seen or len(set(labels)) != width:
            return None
        prefixes = [
            lines[no - 1][:a] for no, (a, _) in zip(acc.row_lines[first:], acc.spans[first:], strict=True)
        ]
        if any(p.startswith(("TS", "zzz")) for p in prefixes):
            return None
        return cls(prefixes, seen, labels)  # type: ignore[arg-type]

    def read(self, acc: _Acc, lines: list[str], header: int) -> bool:
        """Bookkeep the lines after the header at line ``header`` as these rows, when they are."""
        block = lines[header : header + self.width]
        if (
            len(block) < self.width
            or not all(map(str.startswith, block, self.prefixes))
            or not all(map(str.endswith, block, self.tails))
            or any(block[j][-2:-1] == "\r" for j in self.bare)
        ):
            return False
        acc.labels.extend(self.labels)
        acc.row_lines.extend(range(header + 1, header + 1 + self.width))
        acc.row_snaps.extend(itertools.repeat(acc.snapshot, self.width))
        acc.row_cpus.extend(self.cpus)
        acc.ks.extend(self.ks)
        acc.spans.extend(zip(self.starts, map(operator.sub, map(len, block), self.cut), strict=True))
        acc.rows_in_snapshot += self.width
        acc.snap_lines[acc.snapshot][1] = header + self.width
        self.end = len(acc.labels)
        return True


def _row(acc: _Acc, known: dict[str, _Known], no: int, line: str, fast: bool) -> None:
    """One IRQ row (``line`` without its end of line) read by :func:`_split`; with ``fast``, what a
    later row of its IRQ must look like is remembered in ``known``."""
    colon = line.find(":")
    if colon < 0:
        acc.warnings.append(ParseWarning(no, "bad-row", f"no 'IRQ:' label: {line.strip()[:80]!r}"))
        return
    label = line[:colon].strip()
    if not fast:
        _split(acc, no, line, colon, label)
        return
    seen = known.get(label)
    if seen is not None and line.endswith(seen.tail):
        _known_row(acc, no, label, seen, colon + 1, len(line) - len(seen.tail))
        return
    again = _split(acc, no, line, colon, label)
    if again is None:
        known.pop(label, None)
    else:
        known[label] = again


def _known_row(acc: _Acc, no: int, label: str, seen: _Known, start: int, end: int) -> None:
    """A row of line ``no`` shaped as ``seen``, its count text at ``[start, end)`` of the line."""
    acc.labels.append(label)
    acc.row_lines.append(no)
    acc.row_snaps.append(acc.snapshot)
    acc.row_cpus.append(seen.cpus)
    acc.ks.append(seen.k)
    acc.spans.append((start, end))
    acc.rows_in_snapshot += 1
    acc.snap_lines[acc.snapshot][1] = no


def _result(acc: _Acc, lines: list[str], counts: np.ndarray | None, clock: ClockHints) -> ParsedSource:
    """Type the collected rows, compute rates, build both frames and the meta."""
    warnings = acc.warnings
    if acc.cpus is None:
        warnings.append(ParseWarning(0, "empty", "no /proc/interrupts snapshot"))
    times = snapshot_times(acc.markers, clock, warnings)
    snap_ns = times.ts_ns
    if counts is None:
        counts = _slow_counts(acc, lines)
    reps = np.array(acc.ks, dtype=np.int64)
    snaps, ts_ns = _snapshots_of_counts(np.asarray(acc.row_snaps, dtype=np.int64), reps, snap_ns)
    names = sorted(set(acc.labels))  # the categories pd.Categorical(acc.labels) would have
    code = {label: i for i, label in enumerate(names)}
    codes = np.fromiter(map(code.__getitem__, acc.labels), dtype=np.int64, count=len(acc.labels))
    labels = pd.Categorical.from_codes(codes, categories=pd.Index(names, dtype="str"))  # narrow codes
    irq = pd.Categorical.from_codes(np.repeat(labels.codes, reps), categories=labels.categories)
    cpu = np.concatenate(acc.row_cpus) if acc.row_cpus else np.zeros(0, dtype=np.int64)
    line_no = np.repeat(np.asarray(acc.row_lines, dtype=np.int64), reps)
    per_s = _rates(irq.codes, cpu, snaps, counts, ts_ns, line_no, names, warnings)
    # the arrays are this frame's own: no copy
    frame = pd.DataFrame(
        {
            "ts": pd.DatetimeIndex(ts_ns, dtype="datetime64[ns, UTC]", copy=False),
            "line_no": line_no,
            "snapshot": snaps,
            "irq": irq,
            "cpu": cpu,
            "count": counts,
            "per_s": per_s,
        },
        copy=False,
    )
    d = acc.desc_rows
    desc = pd.DataFrame(
        {
            "ts": pd.DatetimeIndex(
                snap_ns[np.array([max(s, 0) for s, *_ in d], dtype=np.int64)] if len(snap_ns) else [],
                dtype="datetime64[ns, UTC]",
            ),
            "line_no": np.array([no for _, no, *_ in d], dtype=np.int64),
            "irq": pd.Categorical([label for *_, label, _ in d]),
            "chip": [x[3][0] for x in d],
            "hwirq": [x[3][1] for x in d],
            "type": [x[3][2] for x in d],
            "devices": [x[3][3] for x in d],
        }
    )
    cpus = acc.headers[0] if acc.headers else []
    meta: dict[str, object] = {
        "tool": "/proc/interrupts",
        "ncpu": len(cpus),
        "cpus": cpus,
        "offline_cpus": sorted(set(range(max(cpus) + 1)) - set(cpus)) if cpus else [],
        "arch": _arch(acc),
        "snapshots": [(i, a, b) for i, (a, b) in enumerate(acc.snap_lines)],
    }
    if times.utc_offset_s is not None:
        meta["utc_offset_s"] = times.utc_offset_s
    meta["variant"] = _variant(meta, acc)
    frames = {FRAME: frame, DESC_FRAME: desc}
    return ParsedSource(FORMAT, acc.member, frames, times.clock, warnings, meta, times.ts_is_local)


def _snapshots_of_counts(
    row_snaps: np.ndarray, reps: np.ndarray, snap_ns: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The snapshot and the time (int64 ns) of each count: ``row_snaps`` (the snapshot of each row, in
    file order, so in runs) repeated ``reps`` (counts of each row) times; ``snap_ns``: time of each
    snapshot. Repeated run by run: a few long runs, not a row at a time."""
    if not len(row_snaps):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, row_snaps[1:] != row_snaps[:-1]])
    per_run = np.add.reduceat(reps, starts)
    run_snaps = row_snaps[starts]
    return np.repeat(run_snaps, per_run), np.repeat(snap_ns[run_snaps], per_run)


def _delta_rate(cur: np.ndarray, prev: np.ndarray, dt: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Rate from ``prev`` to ``cur`` counts over ``dt`` seconds, written into ``out``; returns the
    mask of counter resets.

    A counter that went backwards from above 2**31 is a 32-bit wrap when the corrected delta is
    plausible (``MAX_PLAUSIBLE_PER_S``); otherwise a reset: NaN. NaN too where ``dt`` is not > 0.
    """
    delta = cur - prev
    back = delta < 0
    if back.any():
        wrapped = delta + COUNTER_WRAP
        wrap = back & (prev >= WRAP_FROM) & (prev < COUNTER_WRAP) & (wrapped <= MAX_PLAUSIBLE_PER_S * dt)
        delta = np.where(wrap, wrapped, delta)
        reset = back & ~wrap
    else:
        reset = back
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(delta, dt, out=out)
    no_time = ~(dt > 0)
    if no_time.any() or reset.any():
        np.copyto(out, np.nan, where=reset | no_time)
    return reset


def _rates(
    irq: np.ndarray,
    cpu: np.ndarray,
    snaps: np.ndarray,
    counts: np.ndarray,
    ts_ns: np.ndarray,
    line_no: np.ndarray,
    names: list[str],
    warnings: list[ParseWarning],
) -> np.ndarray:
    """Per-second rate of each counter since its previous snapshot; wraps corrected, resets NaN.

    ``irq``: category codes per row (any integer dtype); the other arrays one value per row.
    """
    n = len(counts)
    if n == 0:
        return np.full(n, np.nan)
    nsnap = int(snaps[-1] - snaps[0]) + 1
    width = int(np.searchsorted(snaps, snaps[0], side="right"))  # snaps ascend: rows in file order
    if (
        n == width * nsnap
        and (irq.reshape(nsnap, width) == irq[:width]).all()
        and (cpu.reshape(nsnap, width) == cpu[:width]).all()
    ):
        # every snapshot lists the same counters in the same order: previous = one snapshot back
        c = counts.reshape(nsnap, width)
        t = ts_ns.reshape(nsnap, width)[:, :1]
        per_s = np.empty(n)
        per_s[:width] = np.nan
        reset = _delta_rate(c[1:], c[:-1], (t[1:] - t[:-1]) / 1e9, per_s.reshape(nsnap, width)[1:])
        hit = np.flatnonzero(reset) + width
        zero = np.flatnonzero(np.diff(t[:, 0]) <= 0)
        zero_rows = zero * width + width
    else:
        per_s = np.full(n, np.nan)
        key = irq.astype(np.int64) * (int(cpu.max()) + 2) + (cpu + 1)
        order = np.lexsort((snaps, key))  # by counter, then time; stable within a snapshot
        k, c, t = key[order], counts[order], ts_ns[order]
        same = np.flatnonzero(k[1:] == k[:-1]) + 1  # rows with a previous snapshot of their counter
        rate = np.empty(len(same))
        reset = _delta_rate(c[same], c[same - 1], (t[same] - t[same - 1]) / 1e9, rate)
        per_s[order[same]] = rate
        hit = order[same[reset]]
        zero_rows = order[same[t[same] <= t[same - 1]]]
    if len(zero_rows):
        warnings.append(
            ParseWarning(
                int(line_no[zero_rows].min()), "zero-interval", "two snapshots with the same time: no rate"
            )
        )
    for snap in np.unique(snaps[hit]):
        rows = np.sort(hit[snaps[hit] == snap])
        examples = ", ".join(f"{names[irq[r]]} cpu{cpu[r]}" for r in rows[:3])
        warnings.append(
            ParseWarning(
                int(line_no[rows[0]]),
                "counter-reset",
                f"{len(rows)} counter(s) went backwards, not a 32-bit wrap ({examples}): rate left NaN",
            )
        )
    return per_s


def _variant(meta: dict[str, object], acc: _Acc) -> str:
    """``/proc/interrupts arm64, CPU6 offline``: architecture, offline CPUs, old chip names."""
    clues = [f"/proc/interrupts {meta['arch']}"]
    offline = meta["offline_cpus"]
    if offline:
        shown = ",".join(str(c) for c in offline[:MAX_CPUS_NAMED])
        more = "..." if len(offline) > MAX_CPUS_NAMED else ""
        clues.append(f"CPU{'s' if len(offline) > 1 else ''}{shown}{more} offline")
    if any(d and _GLUED_TYPE.match(d[0]) for label, d in acc.desc.items() if label.isdigit()):
        clues.append("pre-4.x chip-type names")
    return ", ".join(clues)


def _arch(acc: _Acc) -> str:
    """A guess from the row names and chips: x86 (LOC/TLB rows, IO-APIC), arm64 (GICv3/ITS), arm."""
    labels = set(acc.desc)
    chips = {d[3][0] for d in acc.desc_rows}
    if labels & {"LOC", "TLB", "NMI", "RES"} or any("APIC" in ch for ch in chips):
        return "x86"
    if any(ch.startswith(("GICv3", "GICv4", "ITS")) for ch in chips):
        return "arm64"
    if any(label.startswith("IPI") for label in labels) or "-" in chips:
        return "arm"
    return "unknown"


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SYSTEM  # numbers and names of the system only
