"""Parse MySQL / MariaDB / Percona Server ``SHOW [FULL] PROCESSLIST`` captures: one row per session per snapshot.

Accepts:
    the three layouts of the ``mysql`` client: table (``mysql -t``, ``+----+`` borders; columns are
    cut at the border's ``+`` positions, so a ``|`` inside a value is kept; a multi-line Info is
    re-joined), vertical (``\\G``: ``*** 1. row ***`` then right-aligned ``Key: value`` lines; Info
    continues over lines until the next key; an optional leading blank on every line) and
    tab-separated (``mysql -B`` with its header line; ``\\n``, ``\\t``, ``\\\\`` escapes undone).
    Several snapshots in one member: one per ``TS`` marker (pt-stalk, Casebook collector), or, in older
    pt-stalk (3.2) captures without ``TS`` lines, a new snapshot wherever the row number falls back to
    1 (vertical) or a new table / header starts. Extra columns ``Time_ms``, ``Rows_sent``,
    ``Rows_examined``, ``Rows_read`` (Percona Server), ``Progress`` (MariaDB); ``NULL`` as text.

Sample input (``SHOW FULL PROCESSLIST\\G`` by pt-stalk 3.7.1, Percona Server 8.0.42)::

    TS 1776789801.009025316 2026-04-21 16:43:21
    *************************** 1. row ***************************
               Id: 6
             User: event_scheduler
             Host: localhost
               db: NULL
          Command: Daemon
             Time: 2460
            State: Waiting on empty queue
             Info: NULL
          Time_ms: 2459677
        Rows_sent: 0
    Rows_examined: 0

Output: frame ``processlist``, one row per session per snapshot:
    ``ts`` datetime64[ns, UTC] (the snapshot's time); ``line_no`` / ``line_end`` int64 (first and last
    line of the session in the member); ``snapshot`` int64 (0-based, in file order); ``id`` Int64
    (connection id); ``user``, ``host``, ``command`` string; ``time_s`` Int64 (seconds in the current
    state); ``state``, ``db``, ``info`` string (``NULL`` -> <NA>); and when captured: ``time_ms``
    float64 (ms), ``rows_sent``, ``rows_examined``, ``rows_read`` Int64, ``progress`` float64
    (percent, MariaDB). Another column is kept under its snake_case name (string) with a warning.
    ``ts_source``: ``marker`` (TS/zzz line) or ``inferred`` (``clock.start_local`` + snapshot x
    interval, interval = ``clock.interval_s`` or 1 s; ``ts_is_local`` is then True).
    Meta: ``variant`` (``processlist vertical (\\G), Percona columns Time_ms/Rows_*``), ``columns`` (the
    client's spelling), ``layout`` (``table``, ``vertical`` or ``tsv``), ``snapshots``, ``utc_offset_s``
    (from the first ``TS`` marker with a wall-clock part).

Warnings: ``unreadable-line`` (text that is neither a row, a header nor a marker, e.g. an
``ERROR 2013`` line), ``bad-row`` (a table row whose cells do not line up with the border),
``bad-number``, ``unknown-column``, ``no-start-time`` (no marker and no start hint: snapshot times
count from the Unix epoch), ``empty``.

Limits: when Info is the last column (classic 8-column listing) a non-NULL Info runs until the next
row header or marker, so a stray line printed right after the last row (other than after ``Info:
NULL``) joins that Info. A ``|`` at the start of a continuation line of a multi-line Info in table
layout is read as a new row (the table layout cannot tell them apart).

Errors: ``ParseError`` when no processlist header or row is found (line of the first text line).

>>> text = '''TS 1776789801.009025316 2026-04-21 16:43:21
... *************************** 1. row ***************************
...      Id: 47
...    User: root
...    Host: localhost
...      db: NULL
... Command: Query
...    Time: 0
...   State: init
...    Info: SHOW FULL PROCESSLIST'''
>>> src = parse(text.splitlines(), member="processlist", clock=ClockHints())
>>> row = src.main.iloc[0]
>>> str(row["ts"]), int(row["id"]), row["command"], row["info"], row["db"] is pd.NA
('2026-04-21 16:43:21.009025316+00:00', 47, 'Query', 'SHOW FULL PROCESSLIST', True)
>>> int(row["line_no"]), int(row["line_end"]), src.clock.value, src.meta["layout"]
(2, 10, 'ts-marker', 'vertical')
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from parsers.base import (
    CHUNK_CHARS,
    Clock,
    ClockHints,
    ParsedSource,
    ParseError,
    ParseWarning,
    TsMarker,
    cut_lines,
    first_of_snapshots,
    parse_marker,
    raw_blocks,
    safe_name,
    snapshot_times,
    text_chunks,
)

FORMAT = "processlist"
#: The frame of sessions per snapshot that ``parse(..., idle=...)`` adds.
SESSIONS_FRAME = "processlist_sessions"

#: The client's column spelling -> our column (parsers/__init__.py).
COLUMN_MAP: dict[str, str] = {
    "Id": "id",
    "User": "user",
    "Host": "host",
    "db": "db",
    "Command": "command",
    "Time": "time_s",
    "State": "state",
    "Info": "info",
    "Time_ms": "time_ms",
    "Rows_sent": "rows_sent",
    "Rows_examined": "rows_examined",
    "Rows_read": "rows_read",
    "Progress": "progress",
}
INT_COLUMNS = frozenset({"id", "time_s", "rows_sent", "rows_examined", "rows_read"})
FLOAT_COLUMNS = frozenset({"time_ms", "progress"})
#: Columns where the text ``NULL`` means SQL NULL (the client prints NULL for them; a user or host is
#: never NULL in SHOW PROCESSLIST, so a literal "NULL" there is left alone).
NULLABLE_TEXT = frozenset({"db", "state", "info"})

#: Where to look for the first header: registry.HEAD_LINES is 60; a long multi-line Info or a run of
#: error lines may push the first header further, but never past a few hundred lines.
DETECT_LINES = 400
DETECT_CHARS = 1 << 20

_ROW_HEADER = re.compile(r"^\s*\*+ (\d+)\. row \*+\s*$")
_KEY_LINE = re.compile(r"^(\s*)(\w+):(?: |$)")
_TABLE_HEADER = re.compile(r"^\|\s*Id\s*\|\s*User\s*\|")
_TSV_HEADER = re.compile(r"^\s*Id\tUser\t")
_BORDER = re.compile(r"^\+-[-+]*\+[ \t]*$")
_TABLE_EVENTS = re.compile(r"^(?:\+-[-+]*\+|TS [^\n]*|zzz [^\n]*)[ \t]*$", re.M)
_TSV_ESCAPE = re.compile(r"\\(.)")
_TSV_UNESCAPE = {"n": "\n", "t": "\t", "0": "\0", "\\": "\\", "r": "\r", "b": "\b", "Z": "\x1a"}


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds a processlist header: table ``| Id | User |``, ``-B`` ``Id<TAB>User``,
    or a vertical ``*** N. row ***`` followed by ``Id:`` and ``Command:`` keys.

    >>> sniff(["TS 1776789801.0 2026-04-21 16:43:21", "*************************** 1. row ***",
    ...        "     Id: 6", "   User: root", "Command: Sleep"])
    True
    >>> sniff(["*************************** 1. row ***", "THREAD_ID: 1", "PROCESSLIST_COMMAND: Sleep"])
    False
    """
    row = key_id = key_cmd = False
    for line in head:
        if _TABLE_HEADER.match(line) or _TSV_HEADER.match(line):
            return True
        if _ROW_HEADER.match(line):
            row = True
        elif row:
            key = _KEY_LINE.match(line)
            if key:
                key_id |= key.group(2) == "Id"
                key_cmd |= key.group(2) == "Command"
    return row and key_id and key_cmd


def _out_name(col: str) -> str:
    return COLUMN_MAP.get(col) or safe_name(col)


# ---------------------------------------------------------------------------------------------
# Reading in chunks that end on a record boundary.
# ---------------------------------------------------------------------------------------------
def _cut_vertical(text: str) -> int:
    row = text.rfind(". row ***")
    row_start = text.rfind("\n", 0, row) + 1 if row > 0 else 0
    return max(row_start, text.rfind("\nTS ") + 1, text.rfind("\nzzz ") + 1)


def _cut_table(text: str) -> int:
    header = text.rfind("\n| Id ")
    top = text.rfind("\n", 0, header) + 1 if header > 0 else 0
    return max(top, text.rfind("\nTS ") + 1, text.rfind("\nzzz ") + 1)


# ---------------------------------------------------------------------------------------------
# State shared by the three layouts: markers, snapshots, collected rows.
# ---------------------------------------------------------------------------------------------
class _State:
    def __init__(self, member: str) -> None:
        self.member = member
        self.layout: str | None = None
        self.snapshot = -1
        self.rows_in_snapshot = 0
        self.snapshot_marker: dict[int, TsMarker] = {}
        self.markers: list[TsMarker] = []
        self.warnings: list[ParseWarning] = []
        self.columns: tuple[str, ...] | None = None  # vertical: keys learned from the first row
        self.vertical_re: re.Pattern[str] | None = None
        #: columns -> parts: (first lines, last lines, snapshots, one cell sequence per column: a
        #: float64 array of numbers already read, or the cells' text)
        self.groups: dict[tuple[str, ...], list[tuple[np.ndarray, np.ndarray, np.ndarray, list]]] = {}
        self.warned_columns: set[str] = set()
        self.tsv_escapes = False  # a backslash was seen in -B rows: undo the client's escapes
        #: table layout: aligned bodies of the chunk, read at its end (columns -> [(first line, rows,
        #: snapshot, text)])
        self.aligned: dict[tuple[str, ...], list[tuple[int, int, int, str]]] = {}
        #: vertical layout: the learned keys as the NumPy reading uses them (None: not learned yet)
        self.vertical_keys: _VerticalKeys | None = None
        #: ``parse(idle=...)``: Command values of sessions counted rather than typed (None: type all)
        self.idle: tuple[bytes, ...] | None = None
        #: sessions counted but not typed, per snapshot (``_untyped``)
        self.untyped: dict[int, int] = {}
        #: snapshots whose first row was typed
        self.first_typed: set[int] = set()

    def marker(self, marker: TsMarker) -> None:
        self.snapshot += 1
        self.rows_in_snapshot = 0
        self.snapshot_marker[self.snapshot] = marker
        self.markers.append(marker)

    def new_listing(self) -> None:
        """A table/header or row 1 without a marker: a new snapshot unless the marker just opened one."""
        if self.snapshot < 0 or self.rows_in_snapshot > 0:
            self.snapshot += 1
            self.rows_in_snapshot = 0

    def add(
        self,
        columns: tuple[str, ...],
        starts: Sequence[int],
        ends: Sequence[int],
        snaps: Sequence[int],
        rows: list | pd.DataFrame,
    ) -> None:
        """Rows as records (sequences of cells) or as a frame with columns 0..n-1."""
        if not len(rows):
            return
        if isinstance(rows, pd.DataFrame):
            cells = [rows[j].to_numpy() for j in range(len(columns))]
        else:
            cells = list(zip(*rows, strict=True))
        self.add_columns(columns, starts, ends, snaps, cells)

    def add_columns(
        self,
        columns: tuple[str, ...],
        starts: Sequence[int],
        ends: Sequence[int],
        snaps: Sequence[int],
        cells: list,
    ) -> None:
        """Rows as one cell sequence per column (``str`` cells, or a float64 array of numbers)."""
        if not len(starts):
            return
        for col in columns:
            if col not in COLUMN_MAP and col not in self.warned_columns:
                self.warned_columns.add(col)
                self.warnings.append(
                    ParseWarning(
                        int(starts[0]), "unknown-column", f"column {col!r} kept as {safe_name(col)!r}"
                    )
                )
        self.groups.setdefault(columns, []).append(
            (np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64), np.asarray(snaps), cells)
        )

    def odd(self, line_no: int, text: str) -> None:
        """Text between records: markers are handled by the caller; blank lines are fine; else warn."""
        for i, line in enumerate(text.split("\n")):
            stripped = line.strip()
            if stripped:
                self.warnings.append(
                    ParseWarning(line_no + i, "unreadable-line", f"skipped: {stripped[:80]!r}")
                )


# ---------------------------------------------------------------------------------------------
# Vertical (\G)
# ---------------------------------------------------------------------------------------------
def _lines_from(text: str) -> Iterator[str]:
    """The lines of ``text`` one by one (a chunk is a few MB; the keys are in its first lines)."""
    pos = 0
    while pos <= len(text):
        end = text.find("\n", pos)
        if end < 0:
            end = len(text)
        yield text[pos:end]
        pos = end + 1


def _learn_keys(text: str) -> tuple[tuple[str, ...], list[str]] | None:
    """Keys and their exact prefixes (``'      Id:'``) from the first row of ``text``."""
    lines = _lines_from(text)
    for line in lines:
        if _ROW_HEADER.match(line):
            break
    else:
        return None
    keys: list[str] = []
    prefixes: list[str] = []
    colon_at = None
    for line in lines:
        if _ROW_HEADER.match(line) or line.startswith(("TS ", "zzz ")):
            break
        m = _KEY_LINE.match(line)
        if not m:
            continue
        at = m.end(2)
        if colon_at is None:
            if m.group(2) != "Id":
                return None
            colon_at = at
        if at != colon_at:
            continue  # an Info line that happens to contain "word:"
        keys.append(m.group(2))
        prefixes.append(line[: at + 1])
    return (tuple(keys), prefixes) if keys else None


def _vertical_regex(keys: tuple[str, ...], prefixes: list[str]) -> re.Pattern[str]:
    row_header = r"[ \t]*\*+ (\d+)\. row \*+[ \t]*\n"
    end_of_row = r"[ \t]*\*+ \d+\. row \*+[ \t]*$|(?:TS|zzz) "
    parts = [row_header]
    for i, (key, prefix) in enumerate(zip(keys, prefixes, strict=True)):
        if key == "Info":
            stop = re.escape(prefixes[i + 1]) if i + 1 < len(keys) else end_of_row
            # NULL cannot span lines: whatever follows it (an `ERROR 2013` line) is not Info.
            value = f"NULL(?=\\n)|[^\\n]*(?:\\n(?!{stop})[^\\n]*)*"
            parts.append(f"{re.escape(prefix)} ?({value})\\n")
        else:
            parts.append(f"{re.escape(prefix)} ?([^\\n]*)\\n")
    row = "".join(parts)
    return re.compile(f"^(?:(?P<marker>(?:TS|zzz) [^\\n]*)\\n|(?P<row>{row}))", re.M)


def _vertical_chunk(first: int, text: str, state: _State) -> None:
    """Rows of a vertical chunk: read as bytes with NumPy when the chunk is regular (see
    :func:`_vertical_fast`), else with the row regex, line by line."""
    if state.vertical_re is None:
        learned = _learn_keys(text)
        if learned is None:
            return _no_rows(first, text, state)
        state.columns = learned[0]
        state.vertical_re = _vertical_regex(*learned)
        state.vertical_keys = _VerticalKeys(*learned)
    if _vertical_fast(first, text, state):
        return None
    return _vertical_regex_chunk(first, text, state)


def _vertical_regex_chunk(first: int, text: str, state: _State) -> None:
    """The rows of a chunk with the row regex: any text between rows is named (``unreadable-line``)."""
    regex = state.vertical_re
    assert regex is not None
    columns = state.columns
    starts: list[int] = []
    ends: list[int] = []
    snaps: list[int] = []
    rows: list[tuple] = []
    pos = 0
    line_no = first
    for m in regex.finditer(text):
        start = m.start()
        if start > pos:
            gap = text[pos:start]
            state.odd(line_no, gap.rstrip("\n"))
            line_no += gap.count("\n")
        if m.group("marker") is not None:
            marker = parse_marker(m.group("marker"))
            if marker is None:
                state.odd(line_no, m.group("marker"))
            else:
                state.marker(marker)
            line_no += 1
        else:
            groups = m.groups()
            # groups: (marker, row, row_number, values...)
            if groups[2] == "1":
                state.new_listing()
            elif state.snapshot < 0:
                state.snapshot = 0
            n_lines = m.group(0).count("\n")
            starts.append(line_no)  # the session's lines start with its `*** N. row ***` header
            ends.append(line_no + n_lines - 1)
            snaps.append(state.snapshot)
            rows.append(groups[3:])
            state.rows_in_snapshot += 1
            line_no += n_lines
        pos = m.end()
    if pos < len(text):
        state.odd(line_no, text[pos:].rstrip("\n"))
    state.add(columns, starts, ends, snaps, rows)
    return None


# ---------------------------------------------------------------------------------------------
# Vertical (\G) chunks read as bytes with NumPy
# ---------------------------------------------------------------------------------------------
#: Bytes after a chunk's text, so that reads of up to 64 bytes from a line start stay in the buffer.
_PAD = b"\n" * 64
#: Longest byte pattern compared at a line start (row header parts, key prefixes).
_MAX_PATTERN = 48
#: A row header as the mysql client prints it (no blanks around it): stars, number, ``. row``, stars.
_HEADER_SHAPE = re.compile(r"(\*+) [0-9]+\. row (\*+)")
#: Where a multi-line Info that is the last column stops (the row regex's ``end_of_row``).
_END_OF_INFO = re.compile(r"[ \t]*\*+ \d+\. row \*+[ \t]*$|(?:TS|zzz) ")
#: Numbers of at most this many digits are exact in float64, where ``float()`` and
#: ``pd.to_numeric`` read them alike; longer ones are left to those.
_MAX_DIGITS = 15
_POW10 = np.array([float(10**k) for k in range(_MAX_DIGITS + 1)])
_DIGIT, _DOT, _SPACE = 48, 46, 32


class _VerticalKeys:
    """The keys of the first row (``'      Id:'`` prefixes) as :func:`_vertical_fast` compares them."""

    def __init__(self, keys: tuple[str, ...], prefixes: list[str]) -> None:
        self.keys = keys
        self.prefixes = [p.encode("utf-8") for p in prefixes]
        self.info = keys.index("Info") if "Info" in keys else -1
        #: the Info of a row runs until a line that starts with the next key's prefix (None: Info is
        #: the last key and runs until the next row or marker)
        self.stop = prefixes[self.info + 1] if 0 <= self.info < len(keys) - 1 else None
        self.kinds = [
            "int" if _out_name(k) in INT_COLUMNS else "float" if _out_name(k) in FLOAT_COLUMNS else "text"
            for k in keys
        ]
        self.usable = len(set(keys)) == len(keys) and all(len(p) <= _MAX_PATTERN for p in self.prefixes)


class _Bytes:
    """A chunk's UTF-8 bytes (``_PAD`` after them) with fixed-width reads at many offsets at once."""

    def __init__(self, data: bytes) -> None:
        self.padded = data + _PAD
        self.buf = np.frombuffer(self.padded, dtype=np.uint8)
        self._views: dict[int, np.ndarray] = {}

    def take(self, at: np.ndarray, width: int) -> np.ndarray:
        """``buf[a : a + width]`` for each ``a`` in ``at``, as a (len(at), width) uint8 array."""
        view = self._views.get(width)
        if view is None:  # one item of `width` bytes at every byte offset (overlapping items)
            view = np.ndarray(
                shape=(len(self.padded) - width + 1,), dtype=f"V{width}", buffer=self.padded, strides=(1,)
            )
            self._views[width] = view
        return view[at].view(np.uint8).reshape(len(at), width)

    def starts_with(self, at: np.ndarray, pattern: bytes) -> np.ndarray:
        """True for each offset of ``at`` where ``pattern`` (at most ``_MAX_PATTERN`` bytes) starts."""
        width = -(-len(pattern) // 8) * 8
        words = self.take(at, width).view("<u8")
        want = np.frombuffer(pattern.ljust(width, b"\0"), dtype="<u8")
        mask = np.frombuffer((b"\xff" * len(pattern)).ljust(width, b"\0"), dtype="<u8")
        if width == 8:
            return (words[:, 0] & mask[0]) == want[0]
        return ((words & mask) == want).all(axis=1)


#: Weight of each byte of a right-aligned 16-byte window read as a decimal number.
_WEIGHTS = np.array([float(10 ** (15 - j)) for j in range(16)])


def _numbers_of(chunk: _Bytes, vs: np.ndarray, ve: np.ndarray, decimal: bool) -> np.ndarray | None:
    """Cells ``buf[vs:ve]`` as float64 when each is ``NULL``, empty, digits (at most ``_MAX_DIGITS``)
    or, with ``decimal``, digits ``.`` digits (as many in all); None when a cell is anything else
    (``float()`` then reads the text, and names the bad cells).

    Exact: the digits make an integer below 2**53 (a sum of exact products), divided once by a
    power of ten, which rounds as ``float()`` does."""
    w = ve - vs
    if not len(w) or int(w.max()) > _MAX_DIGITS or int(ve.min()) < 16:
        return None
    cells = chunk.take(ve - 16, 16)  # each cell at the right end of a 16-byte window
    column = np.arange(16)
    missing = (w == 0) | ((w == 4) & (cells[:, 12:] == np.frombuffer(b"NULL", np.uint8)).all(axis=1))
    inside = (column >= 16 - w[:, None]) & ~missing[:, None]
    digit = (cells - _DIGIT) <= 9  # uint8: below "0" wraps around
    if decimal:
        dot = (cells == _DOT) & inside
        if not (digit | dot | ~inside).all():
            return None
        n_dot = dot.sum(axis=1)
        at = np.where(n_dot == 1, dot.argmax(axis=1), -1)
        # one dot at most, with a digit on each side
        if (n_dot > 1).any() or ((n_dot == 1) & ((at == 16 - w) | (at == 15))).any():
            return None
        values = np.where(inside & ~dot, cells - _DIGIT, 0).astype(np.float64)
        whole = values @ _WEIGHTS
        left = (values * (column < at[:, None])) @ _WEIGHTS  # digits left of a dot, one place too high
        number = (whole - left + left / 10) / _POW10[np.where(n_dot == 1, 15 - at, 0)]
    else:
        if not (digit | ~inside).all():
            return None
        number = np.where(inside, cells - _DIGIT, 0).astype(np.float64) @ _WEIGHTS
    number[missing] = np.nan
    return number


def _texts_of(buf: np.ndarray, ranges: list[tuple[np.ndarray, np.ndarray]]) -> list[list[str]]:
    """Each ``(vs, ve)`` of ``ranges`` as the list of the UTF-8 texts ``buf[vs:ve]``; every ``ve`` is
    at a newline and no text holds one (one gather, one decode, one split for all; 32-bit offsets:
    a chunk is a few MB)."""
    starts = np.concatenate([r[0] for r in ranges]).astype(np.int32)
    lens = (np.concatenate([r[1] for r in ranges]) + 1).astype(np.int32) - starts  # each with its newline
    offsets = np.cumsum(lens, dtype=np.int32) - lens
    index = np.repeat(starts - offsets, lens)
    index += np.arange(len(index), dtype=np.int32)
    flat = buf[index].tobytes().decode("utf-8").split("\n")
    out = []
    at = 0
    for vs, _ in ranges:
        out.append(flat[at : at + len(vs)])
        at += len(vs)
    return out


def _untyped(
    chunk: _Bytes,
    layout: _VerticalKeys,
    vs: list[np.ndarray],
    ve: list[np.ndarray],
    snaps: np.ndarray,
    long_info: np.ndarray,
    state: _State,
) -> np.ndarray | None:
    """The rows of a vertical chunk to type when ``parse`` was given ``idle`` (their indices), the
    others counted into ``state.untyped``; None: type them all (no Command or Time key, or a Time
    cell that is not a plain number).

    Counted, not typed: the sessions whose Command is one of ``state.idle``, but the first and the
    last row of each snapshot and, of each snapshot's idle sessions, the first with the longest
    Time (a possible lock holder), and a row whose Info spans lines. Their other cells are not read.
    The first and last rows are those of the chunk (a snapshot may run over two): more rows than
    needed, never fewer."""
    if "Command" not in layout.keys or "Time" not in layout.keys:
        return None
    command, at = layout.keys.index("Command"), layout.keys.index("Time")
    width = ve[command] - vs[command]
    idle = np.zeros(len(snaps), dtype=bool)
    for name in state.idle or ():
        idle |= (width == len(name)) & chunk.starts_with(vs[command], name)
    if not idle.any():
        return None
    time_s = _numbers_of(chunk, vs[at], ve[at], False)
    if time_s is None:
        return None
    idle[long_info] = False
    edge = first_of_snapshots(snaps, state.first_typed)
    edge[:-1] |= snaps[1:] != snaps[:-1]  # and the last row of each snapshot in the chunk
    edge[-1] = True
    rows = np.flatnonzero(idle)
    order = np.lexsort((rows, -np.nan_to_num(time_s[rows], nan=-1.0), snaps[rows]))
    leads = np.ones(len(order), dtype=bool)
    leads[1:] = snaps[rows[order]][1:] != snaps[rows[order]][:-1]
    longest = rows[order[leads]]
    skip = idle & ~edge
    skip[longest] = False
    for snap, n in zip(*np.unique(snaps[skip], return_counts=True), strict=True):
        state.untyped[int(snap)] = state.untyped.get(int(snap), 0) + int(n)
    return np.flatnonzero(~skip)


def _vertical_fast(first: int, text: str, state: _State) -> bool:
    """Read a vertical chunk with NumPy on its UTF-8 bytes, when it is regular: only ``TS``/``zzz``
    markers and rows; every row header exactly ``*** N. row ***`` with the stars of the chunk's
    first header and no blanks around; every key line where the learned keys put it, with its exact
    prefix; a multi-line Info only where the row regex reads the same lines into it. Then the rows,
    cells, snapshots and line numbers are those of :func:`_vertical_regex_chunk`; False (nothing
    done) for any other chunk, which that function reads."""
    layout = state.vertical_keys
    if layout is None or not layout.usable or not text.endswith("\n"):
        return False
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    size = len(data)
    chunk = _Bytes(data)
    buf = chunk.buf
    ends = np.flatnonzero(buf[:size] == 10)  # the newline of each line
    n_lines = len(ends)
    starts = np.empty(n_lines, dtype=np.int64)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    lead = buf[starts]
    headers = np.flatnonzero(lead == ord("*"))
    if not len(headers):
        return False
    maybe = np.flatnonzero((lead == ord("T")) | (lead == ord("z")))
    marks = maybe[chunk.starts_with(starts[maybe], b"TS ") | chunk.starts_with(starts[maybe], b"zzz ")]
    # Row headers: the stars of the first one, digits, no blanks.
    h0 = int(headers[0])
    shape = _HEADER_SHAPE.fullmatch(data[starts[h0] : ends[h0]].decode("utf-8"))
    if shape is None:
        return False
    head = shape.group(1).encode() + b" "
    tail = b". row " + shape.group(2).encode()
    if len(head) > _MAX_PATTERN or len(tail) > _MAX_PATTERN:
        return False
    h_start, h_end = starts[headers], ends[headers]
    n_digits = h_end - h_start - len(head) - len(tail)
    if n_digits.min() < 1 or n_digits.max() > 18:
        return False
    if not (chunk.starts_with(h_start, head).all() and chunk.starts_with(h_end - len(tail), tail).all()):
        return False
    widest = int(n_digits.max())
    digits = buf[(h_start + len(head))[:, None] + np.arange(widest)]
    if not (((digits - _DIGIT) <= 9) | (np.arange(widest) >= n_digits[:, None])).all():
        return False
    row_one = (n_digits == 1) & (digits[:, 0] == ord("1"))
    # Records: the chunk starts with one; a marker is one line; a row runs to the next record.
    records = np.sort(np.concatenate([headers, marks]))
    if records[0] != 0:
        return False
    following = np.empty_like(records)
    following[:-1] = records[1:]
    following[-1] = n_lines
    is_mark = lead[records] != ord("*")
    if (following[is_mark] - records[is_mark] != 1).any():
        return False
    row_end = following[~is_mark]  # the line after each row
    n_keys = len(layout.keys)
    extra = row_end - headers - 1 - n_keys  # lines of a multi-line Info past its first
    if extra.min() < 0 or (layout.info < 0 and extra.any()):
        return False
    key_lines = []
    for k, prefix in enumerate(layout.prefixes):
        line = headers + 1 + k + (extra if k > layout.info >= 0 else 0)
        if not chunk.starts_with(starts[line], prefix).all():
            return False
        key_lines.append(line)
    # Cells: after the prefix and one optional blank, to the end of the line.
    vs = [starts[line] + len(p) for line, p in zip(key_lines, layout.prefixes, strict=True)]
    vs = [v + (buf[v] == _SPACE) for v in vs]
    ve = [ends[line] for line in key_lines]
    long_info = np.flatnonzero(extra)
    if len(long_info):
        i = layout.info
        info_line = key_lines[i][long_info]
        more = extra[long_info]
        for r, line, n in zip(long_info.tolist(), info_line.tolist(), more.tolist(), strict=True):
            for cont in range(line + 1, line + n + 1):
                body = data[starts[cont] : ends[cont]].decode("utf-8")
                if (body.startswith(layout.stop)) if layout.stop is not None else _END_OF_INFO.match(body):
                    return False  # the row regex ends the Info there
            if layout.stop is None and data[vs[i][r] : ve[i][r]] == b"NULL":
                return False  # `Info: NULL` cannot span lines: the lines after it are not Info
        whole_info = [
            data[a:b].decode("utf-8") for a, b in zip(vs[i][long_info], ends[info_line + more], strict=True)
        ]
        ve[i] = ve[i].copy()
        vs[i] = vs[i].copy()
        vs[i][long_info] = ve[i][long_info]  # read as empty below, then replaced by the whole text
    # Snapshots: markers and rows numbered 1 in line order, the rows between them counted at once.
    snaps = np.empty(len(headers), dtype=np.int64)
    done = 0

    def rows_until(stop: int) -> None:
        nonlocal done
        if stop > done:
            if state.snapshot < 0:
                state.snapshot = 0
            snaps[done:stop] = state.snapshot
            state.rows_in_snapshot += stop - done
            done = stop

    ones = np.flatnonzero(row_one)
    marks_at = np.searchsorted(headers, marks)  # rows before each marker
    events = sorted([(int(m), -1, int(r)) for m, r in zip(marks, marks_at, strict=True)])
    events += [(int(headers[r]), 1, int(r)) for r in ones]
    events.sort()
    for line, kind, r in events:
        rows_until(r)
        if kind < 0:
            body = data[starts[line] : ends[line]].decode("utf-8")
            marker = parse_marker(body)
            if marker is None:
                state.odd(first + line, body)
            else:
                state.marker(marker)
        else:
            state.new_listing()
            snaps[r] = state.snapshot
            state.rows_in_snapshot += 1
            done = r + 1
    rows_until(len(headers))
    if state.idle is not None:
        rows = _untyped(chunk, layout, vs, ve, snaps, long_info, state)
        if rows is not None:
            vs = [v[rows] for v in vs]
            ve = [v[rows] for v in ve]
            headers, row_end, snaps = headers[rows], row_end[rows], snaps[rows]
            long_info = np.searchsorted(rows, long_info)
    cells: list = [None] * n_keys
    texts = []
    for k, kind in enumerate(layout.kinds):
        if kind != "text":
            cells[k] = _numbers_of(chunk, vs[k], ve[k], kind == "float")
        if cells[k] is None:
            texts.append(k)
    for k, values in zip(texts, _texts_of(buf, [(vs[k], ve[k]) for k in texts]), strict=True):
        cells[k] = values
    if len(long_info):
        info = cells[layout.info]
        for r, value in zip(long_info.tolist(), whole_info, strict=True):
            info[r] = value
    state.add_columns(layout.keys, first + headers, first + row_end - 1, snaps, cells)
    return True


# ---------------------------------------------------------------------------------------------
# Table (mysql -t)
# ---------------------------------------------------------------------------------------------
def _cells(line: str, plus: list[int], info: int) -> list[str] | None:
    """Cut one logical row by the border's ``+`` positions; the Info cell absorbs any length difference."""
    n = len(plus) - 1
    d = len(line) - (plus[-1] + 1)
    if d == 0 and all(line[p] == "|" for p in plus):
        return [line[plus[i] + 1 : plus[i + 1]].strip() for i in range(n)]
    # Misaligned (multi-line Info, wide characters): cells left of Info from the left, right of it
    # from the right end.
    if any(line[p] != "|" for p in plus[: info + 1]) or any(
        p + d >= len(line) or line[p + d] != "|" for p in plus[info + 1 :]
    ):
        return None
    cells = [line[plus[i] + 1 : plus[i + 1]].strip() for i in range(info)]
    value = line[plus[info] + 2 : plus[info + 1] + d - 1].rstrip(" ")
    cells.append(value)
    cells.extend(line[plus[i] + 1 + d : plus[i + 1] + d].strip() for i in range(info + 1, n))
    return cells


def _table_rows(
    first: int, body: str, plus: list[int], info: int, state: _State, columns: tuple[str, ...]
) -> None:
    """Rows between the header's closing border and the table's last border.

    A body whose every line is one row cut only at the border's ``|`` (no multi-line value, no ``|``
    inside a cell, no wide character, no carriage return, which the C reader would take for a line
    end) waits in ``state.aligned`` for one C read per chunk (``_aligned_rows``); any other body is
    cut row by row at the border's ``+`` positions.
    """
    lines = body.split("\n")
    width = plus[-1] + 1
    if (
        body.startswith("|")
        and "\r" not in body
        and body.count("|") == len(lines) * len(plus)
        and body.count("\n|") == len(lines) - 1
        and set(map(len, lines)) == {width}
    ):
        state.aligned.setdefault(columns, []).append((first, len(lines), state.snapshot, body))
        state.rows_in_snapshot += len(lines)
        return
    starts: list[int] = []
    ends: list[int] = []
    snaps: list[int] = []
    rows: list[list[str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        j = i + 1
        while j < len(lines) and not lines[j].startswith("|"):
            j += 1  # continuation lines of a multi-line value
        logical = "\n".join(lines[i:j]).rstrip(" \t") if j > i + 1 else line.rstrip(" \t")
        if logical.strip():
            cells = _cells(logical, plus, info) if logical.startswith("|") else None
            if cells is None:
                state.warnings.append(
                    ParseWarning(first + i, "bad-row", f"cells do not line up with the border: {line[:80]!r}")
                )
            else:
                starts.append(first + i)
                ends.append(first + j - 1)
                snaps.append(state.snapshot)
                rows.append(cells)
                state.rows_in_snapshot += 1
        i = j
    state.add(columns, starts, ends, snaps, rows)


def _stripped(values: pd.Series) -> np.ndarray:
    """Cells without their padding, each distinct cell stripped once (users, hosts, states and
    statements repeat from snapshot to snapshot)."""
    codes, uniques = pd.factorize(values.to_numpy(dtype=object))
    return np.array([u.strip() for u in uniques], dtype=object)[codes]


def _aligned_rows(state: _State) -> None:
    """Read the aligned table bodies of a chunk (``state.aligned``) with one C ``read_csv`` per
    column set, ``|`` as separator; cells are stripped of their padding."""
    for columns, bodies in state.aligned.items():
        n = len(columns)
        counts = np.array([b[1] for b in bodies], dtype=np.int64)
        firsts = np.array([b[0] for b in bodies], dtype=np.int64)
        starts = np.repeat(firsts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
        snaps = np.repeat(np.array([b[2] for b in bodies], dtype=np.int64), counts)
        raw = pd.read_csv(
            io.BytesIO(("\n".join(b[3] for b in bodies)).encode()),
            sep="|",
            header=None,
            names=list(range(n + 2)),  # empty cells before the first and after the last |
            dtype=str,
            quoting=3,
            na_filter=False,
            engine="c",
        )
        cells = pd.DataFrame({j: _stripped(raw[j + 1]) for j in range(n)})
        state.add(columns, starts, starts, snaps, cells)
    state.aligned.clear()


def _table_chunk(first: int, text: str, state: _State) -> None:
    events = list(_TABLE_EVENTS.finditer(text))
    # Line number of every event: count newlines between consecutive events (C speed).
    pos = 0
    line_no = first
    k = 0
    while k < len(events):
        m = events[k]
        gap = text[pos : m.start()]
        if gap.strip():
            state.odd(line_no, gap.rstrip("\n"))
        line_no += gap.count("\n")
        line = m.group(0)
        if not line.startswith("+"):
            marker = parse_marker(line)
            if marker is None:
                state.odd(line_no, line)
            else:
                state.marker(marker)
            pos = m.end() + 1
            line_no += 1
            k += 1
            continue
        # A table: top border, header line, border, rows..., bottom border.
        if k + 1 >= len(events) or not events[k + 1].group(0).startswith("+"):
            state.odd(line_no, line)
            pos, line_no, k = m.end() + 1, line_no + 1, k + 1
            continue
        header_text = text[m.end() + 1 : events[k + 1].start()]
        header_lines = header_text.rstrip("\n").split("\n")
        if len(header_lines) != 1 or not _TABLE_HEADER.match(header_lines[0]):
            state.odd(line_no, line)
            pos, line_no, k = m.end() + 1, line_no + 1, k + 1
            continue
        border = line.rstrip(" \t")
        plus = [i for i, ch in enumerate(border) if ch == "+"]
        columns = tuple(c.strip() for c in header_lines[0].rstrip(" \t").strip("|").split("|"))
        if len(columns) != len(plus) - 1:
            state.odd(line_no + 1, header_lines[0])
            pos, line_no, k = events[k + 1].end() + 1, line_no + 3, k + 2
            continue
        info = columns.index("Info") if "Info" in columns else len(columns) - 1
        state.new_listing()
        body_start = events[k + 1].end() + 1
        body_line = line_no + 3
        if k + 2 < len(events) and events[k + 2].group(0).startswith("+"):
            bottom = events[k + 2]
            body = text[body_start : bottom.start()].rstrip("\n")
            if body:
                _table_rows(body_line, body, plus, info, state, columns)
            line_no = body_line + text.count("\n", body_start, bottom.start()) + 1
            pos = bottom.end() + 1
            k += 3
        else:  # no bottom border (capture cut short): rows run to the next event or the chunk end
            stop = events[k + 2].start() if k + 2 < len(events) else len(text)
            body = text[body_start:stop].rstrip("\n")
            if body:
                _table_rows(body_line, body, plus, info, state, columns)
            line_no = body_line + text.count("\n", body_start, stop)
            pos = stop
            k += 2
    rest = text[pos:]
    if rest.strip():
        state.odd(line_no, rest.rstrip("\n"))
    _aligned_rows(state)


# ---------------------------------------------------------------------------------------------
# Tab-separated (mysql -B)
# ---------------------------------------------------------------------------------------------
# Lines of a -B capture that are not rows: markers, header lines, blank lines.
_TSV_ODD = re.compile(r"\n((?:TS |zzz |[ \t]*Id\t)[^\n]*|[ \t]*)(?=\n)")


def _tsv_chunk(first: int, text: str, state: _State) -> None:
    """Rows go to one C ``read_csv`` per column set; only markers, headers and blanks are seen in Python."""
    pieces: list[
        tuple[int, int, int, int, int, tuple[str, ...]]
    ] = []  # pos, end, line, count, snapshot, cols
    pos = 0
    line_no = first
    for m in _TSV_ODD.finditer("\n" + text):
        start = m.start()
        if start > pos:
            n = text.count("\n", pos, start)
            if state.columns is None:
                state.odd(line_no, text[pos:start].rstrip("\n"))
            else:
                pieces.append((pos, start, line_no, n, state.snapshot, state.columns))
                state.rows_in_snapshot += n
            line_no += n
        line = m.group(1)
        stripped = line.strip()
        if stripped.startswith("Id\t"):
            state.columns = tuple(f.strip() for f in stripped.split("\t"))
            state.new_listing()
        elif stripped.startswith(("TS ", "zzz ")) and (marker := parse_marker(stripped)) is not None:
            state.marker(marker)
        elif stripped:
            state.odd(line_no, line)
        line_no += 1
        pos = m.end()
    if pos < len(text):
        n = text.count("\n", pos)
        if state.columns is None:
            state.odd(line_no, text[pos:].rstrip("\n"))
        else:
            pieces.append((pos, len(text), line_no, n, state.snapshot, state.columns))
            state.rows_in_snapshot += n
    for columns in dict.fromkeys(p[5] for p in pieces):
        group = [p for p in pieces if p[5] == columns]
        counts = np.array([p[3] for p in group], dtype=np.int64)
        firsts = np.array([p[2] for p in group], dtype=np.int64)
        line_nos = np.repeat(firsts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
        snaps = np.repeat(np.array([p[4] for p in group], dtype=np.int64), counts)
        data = "".join(text[p[0] : p[1]] for p in group)
        state.tsv_escapes |= "\\" in data
        rows = _tsv_rows(data, columns, line_nos, state)
        if rows is None:
            continue
        records, keep = rows
        kept = line_nos[keep]
        state.add(columns, kept, kept, snaps[keep], records)


def _tsv_rows(
    data: str, columns: tuple[str, ...], line_nos: np.ndarray, state: _State
) -> tuple[list, np.ndarray] | None:
    """Split -B rows: C ``read_csv`` when every row has the header's field count, else line by line."""
    n = len(columns)
    numeric = [
        j for j, col in enumerate(columns) if _out_name(col) in INT_COLUMNS or _out_name(col) in FLOAT_COLUMNS
    ]
    options = {"sep": "\t", "header": None, "names": list(range(n)), "engine": "c", "skip_blank_lines": False}
    options["quoting"] = 3  # csv.QUOTE_NONE: mysql -B never quotes, it escapes
    try:
        # Numbers typed by the C reader (NULL and "" are SQL NULL); a cell that is not a number
        # (ValueError) sends the chunk to the all-text reading, where it is named.
        raw = pd.read_csv(
            io.BytesIO(data.encode()),
            dtype={j: "float64" if j in numeric else str for j in range(n)},
            keep_default_na=False,
            na_values={j: ["NULL", ""] for j in numeric},
            **options,
        )
    except (ValueError, pd.errors.ParserError):
        try:
            raw = pd.read_csv(io.BytesIO(data.encode()), dtype=str, na_filter=False, **options)
        except pd.errors.ParserError:
            raw = None
    # every row has the header's field count: none too long (no ParserError) and none too short
    if raw is not None and len(raw) == len(line_nos) and data.count("\t") == len(line_nos) * (n - 1):
        return raw, np.ones(len(line_nos), dtype=bool)
    # Some row has a wrong field count: split line by line to name it.
    lines = data.split("\n")[: len(line_nos)]
    records = []
    keep = np.zeros(len(lines), dtype=bool)
    for i, line in enumerate(lines):
        fields = line.split("\t")
        if len(fields) == n:
            records.append(fields)
            keep[i] = True
        else:
            state.warnings.append(
                ParseWarning(
                    int(line_nos[i]), "bad-row", f"expected {n} tab-separated fields, found {len(fields)}"
                )
            )
    return records, keep


def _no_rows(first: int, text: str, state: _State) -> None:
    for i, line in enumerate(text.split("\n")):
        stripped = line.strip()
        if stripped.startswith(("TS ", "zzz ")) and (marker := parse_marker(stripped)) is not None:
            state.marker(marker)
        elif stripped:
            state.warnings.append(ParseWarning(first + i, "unreadable-line", f"skipped: {stripped[:80]!r}"))


# ---------------------------------------------------------------------------------------------
# Typing
# ---------------------------------------------------------------------------------------------
#: The client options each layout comes from.
LAYOUT_NAMES = {"table": "table (mysql -t)", "vertical": "vertical (\\G)", "tsv": "tab-separated (mysql -B)"}
#: Columns that name the server flavour (SHOW PROCESSLIST in the Percona Server and MariaDB manuals).
FLAVOUR_COLUMNS = (
    ("Percona", ("Time_ms", "Rows_sent", "Rows_examined", "Rows_read")),
    ("MariaDB", ("Progress",)),
)


def _variant(layout: str, columns: list[str], markers: bool) -> str:
    """``processlist vertical (\\G), Percona columns Time_ms/Rows_*``: layout, flavour columns, markers."""
    clues = [f"processlist {LAYOUT_NAMES.get(layout, layout)}"]
    for flavour, names in FLAVOUR_COLUMNS:
        seen = [c for c in names if c in columns]
        if seen:
            rows = [c for c in seen if c.startswith("Rows_")]
            shown = [c for c in seen if not c.startswith("Rows_")] + (["Rows_*"] if len(rows) > 1 else rows)
            clues.append(f"{flavour} column{'s' if len(seen) > 1 else ''} {'/'.join(shown)}")
    if not markers:
        clues.append("no TS markers")
    return ", ".join(clues)


def _detect_layout(text: str) -> str | None:
    for line in text.split("\n", DETECT_LINES)[:DETECT_LINES]:
        if _TABLE_HEADER.match(line):
            return "table"
        if _TSV_HEADER.match(line):
            return "tsv"
        if _ROW_HEADER.match(line):
            return "vertical"
    return None


def _is_numbers(cells: object) -> bool:
    return isinstance(cells, np.ndarray) and cells.dtype.kind == "f"


def _objects(cells: object) -> np.ndarray:
    """A part's cells of one column as an object array (numbers read already as Python floats)."""
    if isinstance(cells, np.ndarray):
        return cells.astype(object) if cells.dtype != object else cells
    out = np.empty(len(cells), dtype=object)  # type: ignore[arg-type]
    out[:] = cells
    return out


def _typed(columns: tuple[str, ...], parts: list, layout: str, state: _State) -> pd.DataFrame:
    """The frame of one column set from its parts (``_State.add_columns``): numbers read already
    are kept, the text of number columns is read by :func:`_numbers`, text is ``string``."""
    starts = np.concatenate([p[0] for p in parts])
    ends = np.concatenate([p[1] for p in parts])
    snaps = np.concatenate([p[2] for p in parts]).astype(np.int64)
    out: dict[str, object] = {"line_no": starts, "line_end": ends, "snapshot": snaps}
    for j, col in enumerate(columns):
        name = _out_name(col)
        cells = [p[3][j] for p in parts]
        if name in INT_COLUMNS or name in FLOAT_COLUMNS:
            if all(_is_numbers(c) for c in cells):  # read already (vertical, -B): NaN for NULL
                values = pd.Series(np.concatenate(cells) if len(cells) > 1 else cells[0])
                num = values
            else:
                values = pd.Series(np.concatenate([_objects(c) for c in cells]), dtype=object)
                num = _numbers(values, col, starts, state)
            if name in INT_COLUMNS:
                fraction = ((num.to_numpy() % 1) != 0) & ~np.isnan(num.to_numpy())
                if fraction.any():
                    for i in np.flatnonzero(fraction):
                        state.warnings.append(
                            ParseWarning(
                                int(starts[i]), "bad-number", f"{col}: {values.iat[i]!r} is not a number"
                            )
                        )
                    num = num.mask(fraction)
            out[name] = num.astype("Int64") if name in INT_COLUMNS else num.astype("float64")
            continue
        text = np.concatenate([_objects(c) for c in cells]) if len(cells) > 1 else _objects(cells[0])
        if layout == "tsv" and state.tsv_escapes:
            values = pd.Series(text, dtype=object)
            has_escape = values.str.contains("\\", regex=False).fillna(False).to_numpy()
            if has_escape.any():
                values = values.copy()
                values[has_escape] = values[has_escape].map(
                    lambda v: _TSV_ESCAPE.sub(lambda e: _TSV_UNESCAPE.get(e.group(1), e.group(1)), v)
                )
            text = values.to_numpy(dtype=object)
        if name in NULLABLE_TEXT:
            null = text == "NULL"
            if null.any():
                text = np.where(null, None, text)
        out[name] = pd.Series(text, dtype="string")
    return pd.DataFrame(out)


def _numbers(values: pd.Series, col: str, starts: np.ndarray, state: _State) -> pd.Series:
    """Number cells as float64: ``""`` and ``NULL`` are SQL NULL (NaN), anything else must parse
    (``float()`` accepts surrounding blanks) or is warned about (``bad-number``) and left NaN."""
    missing = values.isna().to_numpy() | values.isin(["", "NULL"]).to_numpy()
    try:
        return pd.Series(np.where(missing, np.nan, values.to_numpy(dtype=object)).astype(np.float64))
    except (TypeError, ValueError):  # some cell is not a number: find and name them (rare)
        num = pd.to_numeric(values, errors="coerce")
    missing |= values.astype(str).str.strip().isin(["", "NULL"]).to_numpy()
    for i in np.flatnonzero(num.isna().to_numpy() & ~missing):
        state.warnings.append(
            ParseWarning(int(starts[i]), "bad-number", f"{col}: {values.iat[i]!r} is not a number")
        )
    return num.reset_index(drop=True)


def _empty() -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "ts": pd.Series([], dtype="datetime64[ns, UTC]"),
            "line_no": pd.Series([], dtype="int64"),
            "line_end": pd.Series([], dtype="int64"),
            "snapshot": pd.Series([], dtype="int64"),
        }
    )
    for col in ("Id", "User", "Host", "db", "Command", "Time", "State", "Info"):
        name = COLUMN_MAP[col]
        frame[name] = pd.Series([], dtype="Int64" if name in INT_COLUMNS else "string")
    frame["ts_source"] = pd.Series([], dtype="object")
    return frame


def parse(
    stream: Iterable[str] | io.TextIOBase,
    *,
    member: str,
    clock: ClockHints,
    idle: frozenset[str] | None = None,
) -> ParsedSource:
    """Parse a processlist capture (see the module docstring for layouts, columns and units).

    ``stream``: text lines (with or without newlines) or a text file object. ``idle``: when given,
    Command values (``Sleep``) of sessions that a vertical capture's regular rows count rather than
    type (see ``_untyped``: the first and last row of each snapshot and its longest-idle session
    stay), and a second frame, ``processlist_sessions`` (``ts``, ``line_no`` and ``line_end`` the
    first and last row of the snapshot, ``sessions`` int32), counts every session of each snapshot:
    a day of 1,000 mostly idle sessions a second is counted, not typed row by row. Raises
    ``ParseError`` with the first text line's number when no processlist header or row is found.
    """
    state = _State(member)
    state.idle = tuple(sorted(c.encode("utf-8") for c in idle)) if idle is not None else None
    handlers = {"table": (_cut_table, _table_chunk), "vertical": (_cut_vertical, _vertical_chunk)}
    blocks = raw_blocks(stream, CHUNK_CHARS)
    head: list[str] = []
    size = 0
    layout = None
    # Read until a header shows the layout (or DETECT_CHARS without one: not a processlist).
    for block in blocks:
        head.append(block)
        size += len(block)
        layout = _detect_layout("".join(head))
        if layout is not None or size >= DETECT_CHARS:
            break
    first_block = "".join(head)
    if layout is None:
        stripped = [(i, ln) for i, ln in enumerate(first_block.split("\n"), start=1) if ln.strip()]
        if not stripped:
            warnings = [ParseWarning(0, "empty", "no processlist header or row")]
            meta: dict[str, object] = {"columns": [], "layout": None, "snapshots": 0}
            return ParsedSource(
                FORMAT, member, {"processlist": _empty()}, Clock.INFERRED, warnings, meta, True
            )
        line_no, line = next(((i, ln) for i, ln in stripped if parse_marker(ln.strip()) is None), stripped[0])
        raise ParseError(member, line_no, line, "no processlist header (table, -B or \\G) found")
    state.layout = layout
    cut, handle = handlers.get(layout, (cut_lines, _tsv_chunk))

    def all_blocks() -> Iterator[str]:
        yield first_block
        yield from blocks

    for first, text in text_chunks(all_blocks(), cut):
        handle(first, text, state)

    frames = [_typed(cols, parts, layout, state) for cols, parts in state.groups.items()]
    df = (
        pd.concat(frames, ignore_index=True, sort=False)
        if frames
        else _empty().drop(columns=["ts", "ts_source"])
    )
    df = df.sort_values("line_no", kind="stable", ignore_index=True)
    n_snap = state.snapshot + 1
    warnings = state.warnings
    marks = [state.snapshot_marker.get(s) for s in range(n_snap)]
    times = snapshot_times(marks, clock, warnings, interval_code=None)
    snap_ts = times.ts
    snap_source = np.array(["inferred" if m is None else "marker" for m in marks], dtype=object)
    snapshot = df["snapshot"].to_numpy(dtype=np.int64)
    df.insert(0, "ts", snap_ts[snapshot] if len(df) else pd.Series([], dtype="datetime64[ns, UTC]"))
    df["ts_source"] = snap_source[snapshot] if len(df) else pd.Series([], dtype="object")
    columns = list(dict.fromkeys(c for cols in state.groups for c in cols))
    meta = {"tool": "mysql client", "columns": columns, "layout": layout, "snapshots": n_snap}
    if times.utc_offset_s is not None:
        meta["utc_offset_s"] = times.utc_offset_s
    meta["variant"] = _variant(layout, columns, bool(state.markers))
    warnings.sort(key=lambda w: w.line_no)
    frames = {"processlist": df}
    if idle is not None:
        frames[SESSIONS_FRAME] = _sessions(df, state.untyped)
    return ParsedSource(FORMAT, member, frames, times.clock, warnings, meta, times.ts_is_local)


def _sessions(df: pd.DataFrame, untyped: dict[int, int]) -> pd.DataFrame:
    """Sessions per snapshot: the typed rows of ``df`` and those ``_untyped`` counted."""
    snap = df["snapshot"].to_numpy(dtype=np.int64)  # in line order: snapshots never go back
    first = np.flatnonzero(np.diff(snap, prepend=-1)) if len(snap) else np.zeros(0, dtype=np.int64)
    sessions = np.diff(first, append=len(snap)) + np.array([untyped.get(int(x), 0) for x in snap[first]])
    return pd.DataFrame(
        {
            "ts": df["ts"].iloc[first].reset_index(drop=True),
            "line_no": df["line_no"].to_numpy(dtype=np.int64)[first],
            "line_end": np.maximum.reduceat(df["line_end"].to_numpy(dtype=np.int64), first)
            if len(first)
            else np.zeros(0, dtype=np.int64),
            "sessions": sessions.astype(np.int32),
        }
    )
