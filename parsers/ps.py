"""Parse ``ps`` listings (procps / procps-ng) into per-thread snapshots: state, wait channel, CPU share.

Accepts:
    Any procps listing read by its header line, one or many snapshots:
    - ``ps -eLo pid,tid,ppid,user,stat,pcpu,comm,wchan:32`` (what ``collect.sh`` writes, each snapshot
      after a ``TS <epoch.ns> <YYYY-MM-DD HH:MM:SS>`` line) and any other ``-o`` column list;
    - ``ps -eLf`` (UID PID PPID LWP C NLWP STIME TTY TIME CMD), ``ps -elfL`` (F S ... WCHAN ... CMD);
    - ``ps -eaF`` (pt-stalk ``-ps``: no threads, no wchan -> ``tid`` = ``pid``, ``wchan`` missing);
    - ``ps alx`` / ``ps alxwww`` (F UID PID PPID PRI NI VSZ RSS WCHAN STAT TTY TIME COMMAND),
      ``ps -ef``, ``ps aux``, ``ps axo ...,wchan,lstart,...`` (``lstart`` = 5 tokens).
    Snapshots start after a ``TS``/OSWatcher ``zzz`` marker, or where the header line repeats.
    WCHAN cut short by the column width (``do_epo``) is kept as printed; ``-`` means none.
    Columns overflowing their width (``VSZ 8591369724``, ``PRI -100``) are read by token instead.
    ``ps auxm`` / ``ps -m`` listings (threads as ``-`` placeholder rows with no thread id) are
    rejected with ``ParseError``: capture threads with ``ps -eLo`` instead.

Sample input (``ps -eLo pid,tid,ppid,user,stat,pcpu,comm,wchan:32``, procps-ng 4.0.2, after the
collector's ``TS`` line)::

    TS 1795350437.084825799 2026-11-22 12:27:17
      PID   TID  PPID USER     STAT %CPU COMMAND         WCHAN
        1     1     0 root     S<Ll  0.6 process_api     -
     2189  2189     1 postgres Ss    0.0 postgres        poll_schedule_timeout.constprop.0
     3774  3774     1 mysql    Sl    8.3 mariadbd        poll_schedule_timeout.constprop.0
     3774  3779     1 mysql    Sl    0.0 mariadbd        futex_do_wait
     3774  3781     1 mysql    Sl    0.0 mariadbd        io_cqring_wait

Output: one frame, ``ps_threads``, one row per thread (per process when the listing has no threads):
    ``ts`` datetime64[ns, UTC] (the snapshot's time), ``line_no`` int64 (1-based line of the row),
    ``snapshot`` int64 (0-based), ``pid`` int64, ``tid`` int64 (TID/LWP/SPID; = ``pid`` without
    threads), ``ppid`` Int64 (NA when not listed), ``user`` category (USER, else UID: a name or a
    number as printed), ``stat`` category (STAT or S, full: ``Sl``, ``D<``), ``state`` category (its
    first letter: R, S, D, Z, T, I...), ``pcpu`` float64 (%CPU, or ``C`` as an integer percent),
    ``comm`` category (executable name: COMMAND/CMD in the middle of an ``-o`` list is ``comm`` as
    printed; a last COMMAND/CMD/ARGS column is the command line, reduced to the basename of its first
    token, kernel threads ``[kworker/0:1]`` kept as is), ``wchan`` category (``-`` -> ``""``; NA when
    the listing has no WCHAN). Columns not listed are NA. ``ts_source``: ``ParsedSource.clock`` is
    ``ts-marker`` (``TS`` epoch; OSWatcher ``zzz`` is wall clock, ``ts_is_local``) or ``inferred``
    (``ClockHints.start_local`` + snapshot x ``interval_s``; ``ts_is_local``).
    ``meta``: ``variant`` (``ps -eLo with wchan``, ``ps alx with wchan, no threads``), ``columns`` (header
    tokens), ``threads`` (bool), ``snapshots`` (list of ``(snapshot, first_line, last_line)``),
    ``utc_offset_s`` when a ``TS`` marker gives it.
    With ``parse(..., states=...)`` (what an ingest asks for): only the threads in those states and
    the first of each snapshot are rows, and ``ps_state_counts`` counts them all by state.

Warnings: ``bad-row`` (a row that cannot be read, dropped), ``unknown-column`` (header token not known,
    ignored), ``no-start-time`` (no marker and no start: timestamps count from the epoch),
    ``no-interval`` (several unmarked snapshots and no interval: 1 s assumed), ``empty``.
Errors: ``ParseError`` when no ps header precedes the first data row (``ps -ef | grep mysqld``
    output, a ``top`` table), when the header has no PID column, or on ``ps m`` placeholder rows.

Source: procps-ng ps(1) "STANDARD FORMAT SPECIFIERS" (headers and alignment), procps-ng 3.3.15 / 4.0.2.

>>> from parsers.base import ClockHints
>>> src = parse(["TS 1795350437.084825799 2026-11-22 12:27:17",
...     "  PID   TID  PPID USER     STAT %CPU COMMAND         WCHAN",
...     " 3774  3779     1 mysql    Sl    0.0 mariadbd        futex_do_wait",
...     " 3774  3781     1 mysql    D     1.5 mariadbd        -"], member="ps", clock=ClockHints())
>>> src.main[["tid", "state", "pcpu", "comm", "wchan"]].values.tolist()
[[3779, 'S', 0.0, 'mariadbd', 'futex_do_wait'], [3781, 'D', 1.5, 'mariadbd', '']]
>>> str(src.start), src.clock.value
('2026-11-22 12:27:17.084825799+00:00', 'ts-marker')
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from parsers._ps_frame import missing, state_of, to_frame
from parsers._ps_layout import LSTART_TOKENS, SPACE, TEXT_COLUMNS, WORD, Layout, Rows, fit, layout_of
from parsers.base import (
    Blocks,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    ParseWarning,
    TsMarker,
    first_of_snapshots,
    parse_marker,
    raw_blocks,
    snapshot_times,
    text_batches,
)
from parsers.sensitive import Sensitive

FORMAT = "ps"
TRAITS = FormatTraits(
    short_lines=False,
    unsigned=False,
    capped_pct=False,
    blocks=Blocks.VARYING_ROWS,
    markers=True,
    large_pieces=True,
)
FRAME = "ps_threads"

#: Headers that only ``top`` (PR, VIRT, RES, SHR, TIME+) or ``lsof`` (FD, NODE, DEVICE) print: a
#: head with one of them is not a ps listing even though it has a PID column.
NOT_PS = frozenset({"PR", "VIRT", "RES", "SHR", "TIME+", "FD", "NODE", "DEVICE", "SIZE/OFF", "NAME"})
#: Rows per vectorised chunk: bounds memory (the byte grid is rows x width) while amortising the
#: NumPy call overhead over thousands of rows.
CHUNK_ROWS = 65_536

_HEADER_TOKEN = re.compile(r"^[A-Z%][A-Z0-9%_+:/-]*$")
_COLUMNS = (
    "ts",
    "line_no",
    "snapshot",
    "pid",
    "tid",
    "ppid",
    "user",
    "stat",
    "state",
    "pcpu",
    "comm",
    "wchan",
)
#: The frame of thread counts by state that ``parse(..., states=...)`` adds.
COUNTS_FRAME = "ps_state_counts"


def _header_tokens(line: str) -> list[str] | None:
    """Header tokens when ``line`` looks like a ps header (uppercase tokens incl. PID), else None."""
    tokens = line.split()
    if len(tokens) < 2 or "PID" not in tokens:
        return None
    if not all(_HEADER_TOKEN.match(t) for t in tokens) or NOT_PS.intersection(tokens):
        return None
    return tokens


def sniff(head: list[str]) -> bool:
    """True when the first line that is not blank or a ``TS``/``zzz`` marker is a ps header.

    ``top -b`` heads start with ``top - HH:MM:SS up`` and its table has PR/VIRT/RES/SHR/TIME+, so
    neither is taken; ``ps -ef | grep`` output without a header is not taken either.
    """
    for line in head:
        if not line.strip() or parse_marker(line) is not None:
            continue
        return _header_tokens(line) is not None
    return False


# ---------------------------------------------------------------------------------------------
# parse: stream -> snapshots -> chunks
# ---------------------------------------------------------------------------------------------


def _frame(pieces: list[dict[str, object]]) -> pd.DataFrame:
    """One frame from the chunk pieces: arrays concatenated, categories united, ``state`` derived."""
    if not pieces:
        return _empty()

    def cat(col: str) -> np.ndarray:
        return np.concatenate([p[col] for p in pieces])

    frame = pd.DataFrame(
        {
            "line_no": cat("line_no"),
            "snapshot": cat("snapshot"),
            "pid": cat("pid").astype(np.int64),
            "tid": cat("tid").astype(np.int64),
            "ppid": pd.arrays.IntegerArray(cat("ppid").astype(np.int64), cat("ppid_na")),
            "pcpu": cat("pcpu").astype(np.float64),
        }
    )
    for col in TEXT_COLUMNS:
        frame[col] = union_categoricals([p[col] for p in pieces]) if len(pieces) > 1 else pieces[0][col]
    frame["state"] = state_of(frame["stat"])
    return frame


@dataclass(frozen=True, slots=True)
class _Held:
    """Rows left to type, copied out of their batch's buffer (``_gather``)."""

    data: np.ndarray  # uint8: the rows one after the other, each ending with \n
    starts: np.ndarray  # int64 offset of each row in ``data``
    lens: np.ndarray  # int64 length of each row (without \n)
    ascii_ok: np.ndarray  # bool
    nos: np.ndarray  # int64 1-based line numbers
    snaps: np.ndarray  # int64 snapshots


@dataclass(slots=True)
class _State:
    """What carries from one batch of lines to the next."""

    member: str
    warnings: list[ParseWarning]
    #: ``parse(states=...)``: the states whose threads are typed; None: every thread
    states: frozenset[str] | None = None
    #: threads counted but not typed (``_counted``): (snapshot, state) -> threads
    untyped: dict[tuple[int, str], int] = field(default_factory=dict)
    #: snapshots whose first row was typed
    first_typed: set[int] = field(default_factory=set)
    pieces: list[dict[str, object]] = field(default_factory=list)
    layout: Layout | None = None
    snapshot: int = -1
    rows_in_snapshot: int = 0
    markers: list[TsMarker | None] = field(default_factory=list)
    snap_lines: list[list[int]] = field(default_factory=list)  # [first_line, last_line] per snapshot
    pending: list[tuple[np.ndarray, int]] = field(default_factory=list)  # (row indices, snapshot)
    held: list[_Held] = field(default_factory=list)  # rows to type, copied out of their batch
    held_rows: int = 0

    def new_snapshot(self, marker: TsMarker | None, line_no: int) -> None:
        self.snapshot += 1
        self.rows_in_snapshot = 0
        self.markers.append(marker)
        self.snap_lines.append([line_no, line_no])


def _emit(
    st: _State, buf: np.ndarray, starts: np.ndarray, lens: np.ndarray, hi: np.ndarray, base: int
) -> None:
    """Type the pending data rows of the current layout, in chunks of ``CHUNK_ROWS``; with
    ``states``, the threads only counted (``_counted``) are taken out first, and the few rows left
    of a chunk are held (copied out of the batch) to be typed with those of the next chunks."""
    if not st.pending:
        return
    idx = np.concatenate([r for r, _ in st.pending])
    snaps = np.concatenate([np.full(len(r), snap, dtype=np.int64) for r, snap in st.pending])
    st.pending.clear()

    def rows_of(a: int) -> Rows:
        sel = idx[a : a + CHUNK_ROWS]
        return Rows(buf, starts[sel], lens[sel], ~hi[sel], sel + base + 1, snaps[a : a + CHUNK_ROWS])

    if st.states is None or "stat" not in st.layout.src:
        for a in range(0, len(idx), CHUNK_ROWS):
            st.pieces.append(to_frame(st.layout, rows_of(a), st.member, st.warnings))
        return
    for a in range(0, len(idx), CHUNK_ROWS):
        rows = rows_of(a)
        typed = _counted(st, rows)
        if len(typed) > CHUNK_ROWS // 4:  # most of the chunk: typed here, after what is held
            _type_held(st)
            sub = Rows(
                buf,
                rows.starts[typed],
                rows.lens[typed],
                rows.ascii_ok[typed],
                rows.nos[typed],
                rows.snaps[typed],
            )
            st.pieces.append(to_frame(st.layout, sub, st.member, st.warnings))
        elif len(typed):
            data, at, typed_lens = _gather(buf, rows.starts[typed], rows.lens[typed])
            st.held.append(
                _Held(data, at, typed_lens, rows.ascii_ok[typed], rows.nos[typed], rows.snaps[typed])
            )
            st.held_rows += len(typed)
    if st.held_rows >= CHUNK_ROWS:
        _type_held(st)


def _gather(
    buf: np.ndarray, starts: np.ndarray, lens: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bytes of some rows of ``buf`` one after the other, each with its ``\\n`` (uint8), their
    starts there (int64) and their lengths."""
    size = lens + 1
    at = np.zeros(len(starts), dtype=np.int64)
    np.cumsum(size[:-1], out=at[1:])
    return buf[np.repeat(starts - at, size) + np.arange(int(size.sum()))], at, lens


def _type_held(st: _State) -> None:
    """Type the rows ``_emit`` held (those ``_counted`` left, from every chunk since the last call) in
    a few large chunks of whole held chunks, at most ``CHUNK_ROWS`` rows each; their warnings are
    given in the order of the held chunks, as if each had been typed on its own."""
    if not st.held:
        return
    held, st.held, st.held_rows = st.held, [], 0
    warnings: list[ParseWarning] = []
    a = 0
    while a < len(held):
        b, n = a + 1, len(held[a].lens)
        while b < len(held) and n + len(held[b].lens) <= CHUNK_ROWS:
            n += len(held[b].lens)
            b += 1
        st.pieces.append(to_frame(st.layout, _rows_of(held[a:b]), st.member, warnings))
        a = b
    chunk = np.searchsorted([int(h.nos[0]) for h in held], [w.line_no for w in warnings], side="right")
    st.warnings.extend(warnings[i] for i in np.argsort(chunk, kind="stable").tolist())


def _rows_of(held: list[_Held]) -> Rows:
    """Held chunks as the rows of one buffer (blank-padded as ``_scan``'s)."""
    offsets = np.cumsum([0] + [len(h.data) for h in held]).tolist()
    longest = max(int(h.lens.max()) for h in held)
    buf = np.concatenate([*(h.data for h in held), np.full(longest + 2 * WORD, SPACE, np.uint8)])

    def cat(name: str) -> np.ndarray:
        return np.concatenate([getattr(h, name) for h in held])

    starts = np.concatenate([h.starts + off for h, off in zip(held, offsets, strict=False)])
    return Rows(buf, starts, cat("lens"), cat("ascii_ok"), cat("nos"), cat("snaps"))


#: Bytes that are a digit / a digit or a blank.
_DIGIT = np.zeros(256, dtype=bool)
_DIGIT[ord("0") : ord("9") + 1] = True
_DIGIT_OR_BLANK = _DIGIT.copy()
_DIGIT_OR_BLANK[SPACE] = True


def _plain_digits(block: np.ndarray) -> np.ndarray:
    """Rows of a (n, w) uint8 block that hold digits and blanks only, at least one digit (a narrow
    block, as a PID's: looked up column by column)."""
    n, w = block.shape
    plain = np.ones(n, dtype=bool)
    digit = np.zeros(n, dtype=bool)
    for j in range(w):
        plain &= _DIGIT_OR_BLANK[block[:, j]]
        digit |= _DIGIT[block[:, j]]
    return plain & digit


#: Bytes that begin a STAT value as ``str.strip`` leaves it (printable ASCII but the blank); a row
#: whose STAT begins otherwise (a tab) is typed rather than counted.
_LETTER = np.zeros(256, dtype=bool)
_LETTER[ord("!") : ord("~") + 1] = True


def _counted(st: _State, rows: Rows) -> np.ndarray:
    """The rows of a chunk that ``to_frame`` types when ``parse`` was given ``states``: int64
    positions in ``rows``, ascending.

    The others are threads in another state (sleeping ``S`` and idle ``I`` threads: nine in ten on a
    busy server) on a well-formed row (every field in place, one token each, PID digits) that is not
    the first of its snapshot: they are only counted, by the first letter of their STAT, into
    ``st.untyped``; their other cells are not read (so a garbled %CPU there is not warned about). Any
    other row is typed, read, warned about or refused as without ``states`` (a ``ps m`` listing's
    ``-`` PID is refused)."""
    layout = st.layout
    assert layout is not None
    fitted = fit(layout, rows)
    fast = np.flatnonzero(fitted.ok)
    stat = fitted.block(rows, *fitted.bounds[layout.src["stat"]])
    # the first non-blank byte of each STAT (a fitted row's single-token field is never blank)
    letter = (
        stat[np.arange(len(stat)), np.argmax(stat != SPACE, axis=1)] if len(stat) else fast.astype(np.uint8)
    )
    other = _LETTER.copy()
    other[[ord(c) for c in st.states if len(c) == 1 and c.isascii()]] = False
    skip = other[letter]
    skip &= _plain_digits(fitted.block(rows, *fitted.bounds[layout.src["pid"]]))
    skip &= ~first_of_snapshots(rows.snaps, st.first_typed)[fast]
    if skip.any():  # threads per (snapshot, STAT letter), counted by bincount
        snaps = rows.snaps[fast[skip]]
        low = int(snaps.min())
        tally = np.bincount((snaps - low) * 256 + letter[skip])
        for pair, n in zip(np.flatnonzero(tally).tolist(), tally[tally > 0].tolist(), strict=True):
            key = (low + pair // 256, chr(pair % 256))
            st.untyped[key] = st.untyped.get(key, 0) + n
    keep = np.ones(len(rows.starts), dtype=bool)
    keep[fast[skip]] = False
    return np.flatnonzero(keep)


def _scan(st: _State, text: str, base: int) -> int:
    """Classify the lines of one batch (markers, headers, rows) on its byte buffer, then type its rows;
    returns the batch's lines.

    ``base``: lines before this batch. Only marker and header candidates (a line starting with
    ``T``/``z``, a line containing ``PID``) are looked at one by one.
    """
    data = text.encode("utf-8")
    buf = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(buf == 10)
    # blank tail so that every row's window of the widest row fits (see _grid)
    longest = int((ends - np.r_[0, ends[:-1] + 1]).max())
    buf = np.concatenate([buf, np.full(longest + 2 * WORD, SPACE, np.uint8)])
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    lens = ends - starts
    rows = np.flatnonzero(lens)  # blank-only lines are dropped when a row is read by token
    if text.isascii():
        hi = np.zeros(len(ends), dtype=bool)
    else:
        high = np.concatenate([[0], np.cumsum(buf >= 128)])
        hi = high[ends] > high[starts]
    first = buf[np.minimum(starts, len(buf) - 1)]
    cand = set(np.flatnonzero((first == ord("T")) | (first == ord("z"))).tolist())
    pid = np.flatnonzero(buf[: max(len(data) - 2, 0)] == ord("P"))  # lines with a "PID"
    pid = pid[(buf[pid + 1] == ord("I")) & (buf[pid + 2] == ord("D"))]
    cand.update(np.searchsorted(ends, pid).tolist())

    def take(lo: int, hi_line: int) -> None:  # data rows in lines [lo, hi_line)
        seg = rows[np.searchsorted(rows, lo) : np.searchsorted(rows, hi_line)]
        if not len(seg):
            return
        if st.layout is None:
            seg = seg[[not buf[starts[i] : ends[i]].tobytes().isspace() for i in seg]]  # blank-only lines
            if not len(seg):
                return
            i = int(seg[0])
            line = buf[starts[i] : ends[i]].tobytes().decode("utf-8", "replace")
            raise ParseError(
                st.member, base + i + 1, line, "no ps header (a line with PID and other column names)"
            )
        st.pending.append((seg, st.snapshot))
        st.rows_in_snapshot += len(seg)
        st.snap_lines[st.snapshot][1] = base + int(seg[-1]) + 1

    prev = 0
    for li in sorted(cand):
        line = buf[starts[li] : ends[li]].tobytes().decode("utf-8", "replace").rstrip()
        no = base + li + 1
        marker = parse_marker(line) if line[:1] in ("T", "z") else None
        if marker is not None:
            take(prev, li)
            st.new_snapshot(marker, no)
            prev = li + 1
        elif st.layout is not None and line == st.layout.header:
            take(prev, li)
            if st.rows_in_snapshot:
                st.new_snapshot(None, no)
            prev = li + 1
        elif "PID" in line and _header_tokens(line) is not None:
            take(prev, li)
            _emit(st, buf, starts, lens, hi, base)
            _type_held(st)
            st.layout = layout_of(line, st.member, no, st.warnings)
            if st.rows_in_snapshot or st.snapshot < 0:
                st.new_snapshot(None, no)
            prev = li + 1
    take(prev, len(ends))
    _emit(st, buf, starts, lens, hi, base)
    return len(ends)


def parse(
    stream: Iterable[str], *, member: str, clock: ClockHints, states: frozenset[str] | None = None
) -> ParsedSource:
    """Parse a ps listing (one or many snapshots) into ``ps_threads``; see the module docstring.

    ``stream``: text lines. ``states``: when given (and the listing has STAT or S), only the threads
    in these states (first letters: ``R``, ``D``...) and the first thread of each snapshot are rows
    of ``ps_threads`` (see ``_counted``), and a second frame, ``ps_state_counts`` (``ts``,
    ``line_no`` and ``line_end`` the first and last row of the snapshot, ``state``, ``threads``
    int64), counts every thread of each snapshot by state: a day of 2,000 mostly sleeping threads a
    second is counted, not typed row by row. Raises ``ParseError`` when the member is not a ps
    listing.
    """
    st = _State(member, [], states)
    base = 0  # lines before the batch
    for text in text_batches(raw_blocks(stream)):  # whole lines, a few MB at a time
        base += _scan(st, text, base)
    _type_held(st)
    warnings = st.warnings
    if st.layout is None:  # nothing but blank lines and markers
        warnings.append(ParseWarning(0, "empty", "no ps rows"))
    frame = _frame(st.pieces)
    times = snapshot_times(st.markers, clock, warnings)
    frame["ts"] = (
        times.ts[frame["snapshot"].to_numpy()] if len(frame) else pd.Series([], dtype="datetime64[ns, UTC]")
    )
    frame = frame[list(_COLUMNS)]
    frames = {FRAME: frame}
    if states is not None and st.layout is not None and "stat" in st.layout.src:
        frames = {FRAME: _kept(frame, states), COUNTS_FRAME: _counts(st, frame, times.ts)}
    meta: dict[str, object] = {
        "tool": "ps",
        "columns": [c.name for c in st.layout.cols] if st.layout else [],
        "threads": bool(st.layout is not None and "tid" in st.layout.src),
        "snapshots": [(i, a, b) for i, (a, b) in enumerate(st.snap_lines)],
    }
    if times.utc_offset_s is not None:
        meta["utc_offset_s"] = times.utc_offset_s
    meta["variant"] = _variant(st.layout)
    return ParsedSource(FORMAT, member, frames, times.clock, warnings, meta, times.ts_is_local)


def _kept(frame: pd.DataFrame, states: frozenset[str]) -> pd.DataFrame:
    """The rows of threads in ``states`` and the first row of each snapshot."""
    keep = frame["state"].isin(states).to_numpy(dtype=bool) | ~frame["snapshot"].duplicated().to_numpy()
    return frame if keep.all() else frame[keep].reset_index(drop=True)


def _counts(st: _State, frame: pd.DataFrame, ts: pd.DatetimeIndex) -> pd.DataFrame:
    """Threads per snapshot and state: the typed rows of ``frame`` and those ``_counted`` skipped."""
    typed = frame.groupby(["snapshot", "state"], observed=True).size()
    counts = dict(zip(typed.index.tolist(), typed.tolist(), strict=True))
    for key, n in st.untyped.items():
        counts[key] = counts.get(key, 0) + n
    keys = sorted(counts)
    snap = np.array([k[0] for k in keys], dtype=np.int64)
    first_row = frame.groupby("snapshot")["line_no"].min()  # the first row of a snapshot is typed
    return pd.DataFrame(
        {
            "ts": pd.Series(ts[snap] if len(snap) else [], dtype="datetime64[ns, UTC]"),
            "line_no": first_row.reindex(snap).to_numpy(dtype=np.int64),
            "line_end": np.array([st.snap_lines[k][1] for k in snap], dtype=np.int64),
            "state": pd.Series([k[1] for k in keys], dtype="string"),
            "threads": np.array([counts[k] for k in keys], dtype=np.int64),
        }
    )


#: Headers of the standard listings (procps-ng ps(1) "EXAMPLES"), by their column names.
KNOWN_LISTINGS: dict[str, str] = {
    "UID PID PPID LWP C NLWP STIME TTY TIME CMD": "ps -eLf",
    "F S UID PID PPID LWP C PRI NI ADDR SZ WCHAN STIME TTY TIME CMD": "ps -elfL",
    "UID PID PPID C SZ RSS PSR STIME TTY TIME CMD": "ps -eaF",
    "UID PID PPID C STIME TTY TIME CMD": "ps -ef",
    "F S UID PID PPID C PRI NI ADDR SZ WCHAN STIME TTY TIME CMD": "ps -elf",
    "F UID PID PPID PRI NI VSZ RSS WCHAN STAT TTY TIME COMMAND": "ps alx",
    "USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND": "ps aux",
}


def _variant(layout: Layout | None) -> str:
    """``ps -eLo with wchan``: the standard listing the header is, else ``-o`` (``-eLo`` with a
    thread id column); whether WCHAN and threads are there."""
    if layout is None:
        return "ps"
    names = " ".join(c.name for c in layout.cols)
    threads = "tid" in layout.src
    name = KNOWN_LISTINGS.get(names) or ("ps -eLo" if threads else "ps -o")
    clues = [name + (" with wchan" if "wchan" in layout.src else "")]
    if not threads:
        clues.append("no threads")
    if any(c.ntok == LSTART_TOKENS for c in layout.cols):
        clues.append("lstart")
    return ", ".join(clues)


def _empty() -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "line_no": np.zeros(0, np.int64),
            "snapshot": np.zeros(0, np.int64),
            "pid": np.zeros(0, np.int64),
            "tid": np.zeros(0, np.int64),
            "ppid": pd.array([], dtype="Int64"),
            "pcpu": np.zeros(0, np.float64),
        }
    )
    for col in (*TEXT_COLUMNS, "state"):
        frame[col] = missing(0)
    return frame


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = Sensitive(
    words=("linux", "mysql")
)  # command lines of MySQL tools; its USER is an operating system account (mysql, root), not a MySQL user
