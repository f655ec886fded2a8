"""Parse ``netstat -s`` snapshots (pt-stalk ``-netstat_s``) into network counters with per-second rates.

Accepts:
    net-tools ``netstat -s`` (1.60 and 2.10: prose lines ``757639 total packets received``,
    ``Quick ack mode was activated 8 times``, and ``Name: value`` lines for the counters it has no
    sentence for, e.g. ``TCPBacklogCoalesce: 223``; the old ``segments send out`` spelling), after
    ``TS`` markers (pt-stalk) or bare (a new snapshot at each ``Ip:``). ``nstat -az`` style
    ``TcpExtListenOverflows 12 0.0`` lines are not this format.

Sample input (pt-stalk 3.7.1 ``-netstat_s``, net-tools 2.10, kernel 5.14)::

    TS 1776790303.009325313 2026-04-21 16:51:43
    Tcp:
        81 active connection openings
        1363338 segments sent out
        0 segments retransmitted
    TcpExt:
        57 TCP sockets finished time wait in fast timer
        Quick ack mode was activated 8 times
        TCPBacklogCoalesce: 223

Output:
    ``netstat_s`` (long: one row per counter per snapshot): ``ts`` datetime64[ns, UTC] (the
    snapshot's marker), ``line_no`` int64, ``field`` category: the kernel's SNMP/TcpExt name where
    the sentence is a known one (``RetransSegs``, ``OutSegs``, ``InSegs``, ``ListenOverflows``,
    ``ListenDrops``, ``ActiveOpens``, ``PassiveOpens``, ``AttemptFails``, ``EstabResets``,
    ``CurrEstab``, ``OutRsts``, ``InErrs``, ``TCPTimeouts``, ``TCPLostRetransmit``), else
    ``Section: sentence`` with ``#`` for the number (``TcpExt: # delayed acks sent``) or
    ``Section: Name``; ``value`` float64 (the counter since boot; CurrEstab is a gauge);
    ``per_s`` float64 (per second since the previous snapshot; NaN on the first and where the value
    fell).

Warnings: ``no-start-time``, ``assumed-interval``.

Errors: ``ParseError`` (member, line) when no section header (``Ip:``, ``Tcp:`` ...) is found
before the first counter line, or a marker is unreadable.

Source: net-tools statistics.c (the sentences), kernel net/ipv4/proc.c (``/proc/net/snmp``,
``/proc/net/netstat`` names), RFC 4022 (TCP MIB).

>>> src = parse(["TS 1776790303.0 2026-04-21 16:51:43", "Tcp:", "    100 segments sent out",
...   "    1 segments retransmitted", "TS 1776790304.0 2026-04-21 16:51:44", "Tcp:",
...   "    300 segments sent out", "    5 segments retransmitted"], member="n", clock=ClockHints())
>>> src.main[src.main.ts == src.main.ts.max()][["field", "per_s"]].values.tolist()
[['OutSegs', 200.0], ['RetransSegs', 4.0]]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from parsers import _counters
from parsers.base import (
    Blocks,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    ParseWarning,
    raw_blocks,
    text_chunks,
)
from parsers.sensitive import SYSTEM

FORMAT = "netstat_s"
TRAITS = FormatTraits(short_lines=True, unsigned=True, capped_pct=False, blocks=Blocks.ROWS, markers=True)

#: A value: a number standing alone (the ``3`` of ``InType3:`` belongs to the name).
_VALUE = re.compile(r"(?<![A-Za-z0-9_.])\d+(?![A-Za-z0-9_.])")
_SECTION = re.compile(r"^([A-Za-z][A-Za-z0-9]*):\s*$")
_FIRST = re.compile(r"^Ip:\s*$", re.M)
#: net-tools sentences -> the kernel's counter names (net-tools statistics.c; old spellings too).
KNOWN = {
    "Tcp: # active connection openings": "ActiveOpens",
    "Tcp: # active connections openings": "ActiveOpens",
    "Tcp: # passive connection openings": "PassiveOpens",
    "Tcp: # failed connection attempts": "AttemptFails",
    "Tcp: # connection resets received": "EstabResets",
    "Tcp: # connections established": "CurrEstab",
    "Tcp: # segments received": "InSegs",
    "Tcp: # segments sent out": "OutSegs",
    "Tcp: # segments send out": "OutSegs",
    "Tcp: # segments retransmitted": "RetransSegs",
    "Tcp: # segments retransmited": "RetransSegs",
    "Tcp: # bad segments received": "InErrs",
    "Tcp: # bad segments received.": "InErrs",
    "Tcp: # resets sent": "OutRsts",
    "TcpExt: # times the listen queue of a socket overflowed": "ListenOverflows",
    "TcpExt: # SYNs to LISTEN sockets dropped": "ListenDrops",
    "TcpExt: # SYNs to LISTEN sockets ignored": "ListenDrops",
    "TcpExt: # other TCP timeouts": "TCPTimeouts",
    "TcpExt: TCPTimeouts: #": "TCPTimeouts",
    "TcpExt: TCPLostRetransmit: #": "TCPLostRetransmit",
    "TcpExt: ListenOverflows: #": "ListenOverflows",
    "TcpExt: ListenDrops: #": "ListenDrops",
}


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds ``netstat -s`` sections: ``Ip:`` or ``Tcp:`` alone on a line and an
    indented counter sentence such as ``segments received`` or ``total packets received``."""
    sections = {line.strip() for line in head if _SECTION.match(line.strip())}
    prose = any(
        re.match(r"^\s+\d+ (total packets received|segments received|active connection)", line)
        for line in head
    )
    return bool(sections & {"Ip:", "Tcp:", "Icmp:"}) and prose


def _layout(skeleton: str) -> list[tuple[int, str]]:
    """Per value of a snapshot's skeleton (its text with values as ``#``): (line offset, field)."""
    out: list[tuple[int, str]] = []
    section = ""
    for offset, line in enumerate(skeleton.split("\n")):
        stripped = line.strip()
        if not stripped:
            continue
        if not line[:1].isspace() and (m := _SECTION.match(stripped)):
            section = m.group(1)
            continue
        n = stripped.count("#")
        for k in range(n):
            key = f"{section}: {stripped}" + (f" ({k + 1})" if n > 1 else "")
            out.append((offset, KNOWN.get(key, key)))
    return out


#: Every digit as ``#``: a snapshot's shape, the key of its layout (``str.translate`` runs at C speed).
_DIGIT_TO_HASH = str.maketrans("0123456789", "##########")
_DIGITS = re.compile(r"\d+")
_POWERS = 10.0 ** np.arange(23)


def _digit_runs(text: str) -> tuple[np.ndarray, np.ndarray]:
    """The start offset and value of every run of ASCII digits in ``text``, in order (values float64,
    exact below 2**53): NumPy on the bytes of a whole chunk, where a regex over a one-hour member
    would be the parser's whole time. Offsets are the text's when it is ASCII (the caller checks)."""
    a = np.frombuffer(_counters.bytes_of(text), dtype=np.uint8)
    digit = (a >= 48) & (a <= 57)
    before = np.concatenate(([False], digit[:-1]))
    after = np.concatenate((digit[1:], [False]))
    starts = np.flatnonzero(digit & ~before)
    ends = np.flatnonzero(digit & ~after) + 1
    lengths = ends - starts
    pos = np.flatnonzero(digit)
    run = np.repeat(np.arange(len(starts)), lengths)
    power = np.minimum(np.repeat(ends - 1, lengths) - pos, len(_POWERS) - 1)
    weights = (a[pos] - 48) * _POWERS[power]
    return starts, np.bincount(run, weights=weights, minlength=len(starts))


_by_skeleton: dict[str, tuple[np.ndarray, np.ndarray, list[str]]] = {}


def _layout_of(snap: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """For a snapshot shape: which digit runs are values (not the ``3`` of ``InType3``), the line
    offset and field name of each value. Shapes differ when a counter gains a digit; their skeleton
    (values as ``#``, digits of names kept) does not, and its layout is reused."""
    skeleton = _VALUE.sub("#", snap)
    known = _by_skeleton.get(skeleton)
    if known is not None:
        return known
    runs = list(_DIGITS.finditer(snap))
    values = {m.start() for m in _VALUE.finditer(snap)}
    value_idx = np.array([i for i, m in enumerate(runs) if m.start() in values], dtype="int64")
    layout = _layout(skeleton)
    offsets = np.array([o for o, _ in layout], dtype="int64")
    if len(_by_skeleton) > 1000:  # bounded: a member of another shape every snapshot
        _by_skeleton.clear()
    _by_skeleton[skeleton] = (value_idx, offsets, [f for _, f in layout])
    return _by_skeleton[skeleton]


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read ``netstat -s`` snapshots into the long ``netstat_s`` frame; see the module docstring."""
    warnings: list[ParseWarning] = []
    layouts: dict[str, tuple[np.ndarray, np.ndarray, list[str]]] = {}
    markers, snap_of, lines, fields, values = [], [], [], [], []
    for base, text in text_chunks(raw_blocks(stream), _counters.cut_at_marker):
        run_starts, run_values = _digit_runs(text) if text.isascii() else (None, None)
        for marker, first, start, end in _counters.snapshots(text, base, member, _FIRST):
            markers.append(marker)
            snap = text[start:end]
            if not snap.strip():
                continue
            shape = snap.translate(_DIGIT_TO_HASH)
            layout = layouts.get(shape)
            if layout is None:
                layout = layouts[shape] = _layout_of(snap)
                head = next((ln for ln in snap.split("\n") if ln.strip()), "")
                if layout[2] and not _SECTION.match(head.strip()):
                    raise ParseError(
                        member,
                        first,
                        head,
                        "not netstat -s: a counter line before any section (Ip:, Tcp: ...)",
                    )
            value_idx, offsets, names = layout
            if not names:
                continue
            if run_starts is not None:
                lo = int(np.searchsorted(run_starts, start))
                nums = run_values[lo + value_idx]
            else:  # non-ASCII text: offsets of bytes and characters differ
                nums = np.asarray(_VALUE.findall(snap), dtype="float64")
            snap_of.append(np.full(len(names), len(markers) - 1, dtype="int64"))
            lines.append(first + offsets)
            fields.extend(names)
            values.append(nums)
    _counters.forget()
    frame, times = _counters.finish(markers, snap_of, lines, fields, values, clock, warnings)
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={"netstat_s": frame},
        clock=times.clock,
        warnings=warnings,
        meta={"variant": f"netstat -s, {len(markers)} snapshots, {frame['field'].nunique()} counters"},
        ts_is_local=times.ts_is_local,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SYSTEM  # numbers and names of the system only
