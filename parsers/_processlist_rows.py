"""The columns of a processlist and the rows its three layouts (``parsers.processlist``) collect.

``State`` carries markers, snapshots and collected rows from one chunk to the next; the table and
tab-separated readers (``parsers._processlist_table``) and the ``\\G`` chunk reader
(``parsers._vertical_chunks.read_chunk``) fill it; ``parsers.processlist.parse`` types it. Not a format.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from parsers._bytes import Bytes, numbers_of
from parsers._vertical_chunks import VerticalKeys
from parsers.base import ParseWarning, TsMarker, first_of_snapshots, parse_marker, safe_name

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


def out_name(col: str) -> str:
    """Our column name for the client's ``col`` (``COLUMN_MAP``, else its snake_case)."""
    return COLUMN_MAP.get(col) or safe_name(col)


#: The User of the server's own threads (replication and Galera appliers, the event scheduler, delayed
#: inserts): they hold no lock a client waits for (MySQL 8.4, "The INFORMATION_SCHEMA PROCESSLIST Table").
SERVER_USERS = (b"system user", b"event_scheduler", b"DELAYED")


def _longest(rows: np.ndarray, time_s: np.ndarray, snaps: np.ndarray) -> np.ndarray:
    """Of ``rows`` (row indices), the first with the longest Time of each snapshot."""
    order = np.lexsort((rows, -np.nan_to_num(time_s[rows], nan=-1.0), snaps[rows]))
    leads = np.ones(len(order), dtype=bool)
    leads[1:] = snaps[rows[order]][1:] != snaps[rows[order]][:-1]
    return rows[order[leads]]


#: Bytes of User, Host and Command an untyped session is grouped by (``State._tally``), with each
#: cell's length: two users alike in their first 16 bytes and their length, or two hosts in their
#: first 32, are counted as one (the names are read from one row). The Command of an untyped session
#: is one of the idle commands (``Sleep``): told apart by its length.
ACCOUNT_KEY_BYTES = (16, 32, 0)
COLON = 58
#: A TCP port has at most 5 digits.
PORT_DIGITS = 5
#: The accounts' Time columns (``State._tally``): whole seconds, in 32-bit floats exact to 2**24 s
#: (194 days; a sum past it within one part in 2**24): a dense capture counts hundreds of thousands.
TIME_DTYPE = np.float32
_ALL_BYTES = np.uint64(2**64 - 1)
_HASH_PRIME = np.uint64(1099511628211)  # the 64-bit FNV prime


def _without_port(chunk: Bytes, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The lengths of Host cells without the client port MySQL appends (``10.0.0.7:51234``): cut at
    a ``:`` followed by 1 to ``PORT_DIGITS`` digits that end the cell (``localhost`` and a socket keep
    theirs). Reads the last bytes of each cell only."""
    out = lengths.copy()
    open_ = np.ones(len(lengths), dtype=bool)  # still reading digits back from the end
    for k in range(1, PORT_DIGITS + 2):
        inside = open_ & (lengths > k)
        b = chunk.buf[np.where(inside, starts + lengths - k, 0)]
        colon = inside & (b == COLON) & (k > 1)
        out[colon] = lengths[colon] - k
        open_ &= inside & (b >= 48) & (b <= 57)
    return out


class State:
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
        self.vertical_keys: VerticalKeys | None = None
        #: ``parse(idle=...)``: Command values of sessions counted rather than typed (None: type all)
        self.idle: tuple[bytes, ...] | None = None
        #: sessions counted but not typed, per snapshot (``typed_rows``)
        self.untyped: dict[int, int] = {}
        #: snapshots whose first row was typed
        self.first_typed: set[int] = set()
        #: the untyped sessions by account (``typed_rows``), a dict of columns per chunk: snapshot,
        #: account (an index into ``account_names``), sessions, Time min, max and sum in s
        self.accounts: list[dict[str, np.ndarray]] = []
        #: (User, Host without its port, Command) of each account, decoded once (``_tally``)
        self.account_names: list[tuple[str, str, str]] = []
        #: each account's hash key (``_tally``) -> its index in ``account_names``
        self._account_index: dict[int, int] = {}

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

    def kind(self, key: str) -> str:
        """How the column ``key`` (the client's spelling) is read: ``int``, ``float`` or ``text``."""
        name = out_name(key)
        return "int" if name in INT_COLUMNS else "float" if name in FLOAT_COLUMNS else "text"

    def no_rows(self, first: int, text: str) -> None:
        """A chunk before any row: its markers are taken, any other text is named (``unreadable-line``)."""
        for i, line in enumerate(text.split("\n")):
            stripped = line.strip()
            if stripped.startswith(("TS ", "zzz ")) and (marker := parse_marker(stripped)) is not None:
                self.marker(marker)
            elif stripped:
                self.warnings.append(
                    ParseWarning(first + i, "unreadable-line", f"skipped: {stripped[:80]!r}")
                )

    def typed_rows(
        self,
        chunk: Bytes,
        layout: VerticalKeys,
        vs: list[np.ndarray | None],
        ve: list[np.ndarray | None],
        snaps: np.ndarray,
        long_info: np.ndarray,
        lines: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """The rows of a vertical chunk to type when ``parse`` was given ``idle`` (their indices), the
        others counted into ``self.untyped``; None: type them all (no ``idle``, no Command or Time key,
        or a Time cell that is not a plain number).

        Counted, not typed: the sessions whose Command is one of ``self.idle``, but the first and the
        last row of each snapshot, the server's own threads (``SERVER_USERS``: a replica's or Galera's
        appliers, whose State says why it is behind; a handful), of each snapshot's idle client
        sessions the first with the longest Time (a possible lock holder), and a row whose Info spans
        lines. Their other cells are not read
        (``vs``/``ve`` hold the cell ranges of Command and Time only).
        The first and last rows are those of the chunk (a snapshot may run over two): more rows than
        needed, never fewer."""
        if self.idle is None:
            return None
        if "Command" not in layout.keys or "Time" not in layout.keys:
            return None
        command, at = layout.keys.index("Command"), layout.keys.index("Time")
        width = ve[command] - vs[command]
        idle = np.zeros(len(snaps), dtype=bool)
        for name in self.idle or ():
            idle |= (width == len(name)) & chunk.starts_with(vs[command], name)
        if not idle.any():
            return None
        time_s = numbers_of(chunk, vs[at], ve[at], False)
        if time_s is None:
            return None
        idle[long_info] = False
        edge = first_of_snapshots(snaps, self.first_typed)
        edge[:-1] |= snaps[1:] != snaps[:-1]  # and the last row of each snapshot in the chunk
        edge[-1] = True
        server = self._server_rows(chunk, layout, vs, ve)
        if server is not None:  # the server's own threads stay typed: a handful, their State says why
            idle &= ~server
        skip = idle & ~edge
        skip[_longest(np.flatnonzero(idle), time_s, snaps)] = False  # a client: a possible lock holder
        for snap, n in zip(*np.unique(snaps[skip], return_counts=True), strict=True):
            self.untyped[int(snap)] = self.untyped.get(int(snap), 0) + int(n)
        if "User" in layout.keys and "Host" in layout.keys:
            keys = [layout.keys.index(k) for k in ("User", "Host", "Command")]
            self._tally(chunk, [(vs[k], ve[k]) for k in keys], snaps, time_s, np.flatnonzero(skip), lines)
        return np.flatnonzero(~skip)

    @staticmethod
    def _server_rows(
        chunk: Bytes, layout: VerticalKeys, vs: list[np.ndarray | None], ve: list[np.ndarray | None]
    ) -> np.ndarray | None:
        """Rows whose User is one of the server's own (``SERVER_USERS``); None without User cells."""
        if "User" not in layout.keys:
            return None
        user = layout.keys.index("User")
        if vs[user] is None or ve[user] is None:
            return None
        width = ve[user] - vs[user]
        server = np.zeros(len(width), dtype=bool)
        for name in SERVER_USERS:
            server |= (width == len(name)) & chunk.starts_with(vs[user], name)
        return server

    def _tally(
        self,
        chunk: Bytes,
        cells: list[tuple[np.ndarray, np.ndarray]],
        snaps: np.ndarray,
        time_s: np.ndarray,
        rows: np.ndarray,
        lines: np.ndarray | None,
    ) -> None:
        """Count the untyped ``rows`` by (snapshot, User, Host without its port, Command) into
        ``self.accounts``, with their Time's min, max and sum and the first line of each group
        (``lines``, a row's first line; 0 without): who holds the idle connections is
        kept though the rows are not. Grouped on a 64-bit hash of the cells' first ``ACCOUNT_KEY_BYTES``
        bytes each (the names are read whole from one row of each group), vectorised: no Python step
        per row."""
        if not len(rows) or any(start is None for start, _ in cells):
            return
        parts, key = [], np.zeros(len(rows), dtype=np.uint64)
        for (start, end), width in zip(cells, ACCOUNT_KEY_BYTES, strict=True):
            a, n = start[rows], end[rows] - start[rows]
            if width == ACCOUNT_KEY_BYTES[1]:
                n = _without_port(chunk, a, n)
            parts.append((a, n))
            if not width:
                continue
            words = chunk.take(a, width).view("<u8")  # the cell's first bytes as 64-bit words
            key = (key ^ n.astype(np.uint64)) * _HASH_PRIME
            for j in range(width // 8):  # a 64-bit hash of the cells (FNV-style: xor, then multiply)
                cut = n - 8 * j  # the bytes of this word inside the cell; those past its end are masked
                mask = np.where(
                    cut >= 8, _ALL_BYTES, (np.uint64(1) << (np.clip(cut, 0, 7) * 8).astype(np.uint64)) - 1
                )
                key = (key ^ (words[:, j] & mask)) * _HASH_PRIME
        unique, first, account = np.unique(key, return_index=True, return_inverse=True)
        group = snaps[rows].astype(np.int64) * len(first) + account
        order = np.argsort(group, kind="stable")
        grouped = group[order]
        at = order[np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])]
        starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
        t = np.nan_to_num(time_s[rows], nan=0.0)[order]
        counts = np.diff(np.r_[starts, len(order)])
        sums = np.add.reduceat(t, starts)
        lows = np.minimum.reduceat(t, starts)
        highs = np.maximum.reduceat(t, starts)
        index = [self._account_index.get(k) for k in unique.tolist()]  # each account decoded once a piece
        for j, i in enumerate(first.tolist()):
            if index[j] is None:
                index[j] = self._account_index[int(unique[j])] = len(self.account_names)
                self.account_names.append(
                    tuple(  # type: ignore[arg-type]
                        chunk.padded[int(a[i]) : int(a[i]) + int(n[i])].decode("utf-8", "replace")
                        for a, n in parts
                    )
                )
        self.accounts.append(
            {
                "snapshot": snaps[rows[at]].astype(np.int64),
                "line_no": lines[rows[at]].astype(np.int64)
                if lines is not None
                else np.zeros(len(at), dtype=np.int64),
                "account": np.asarray(index, dtype=np.int32)[account[at]],
                "sessions": counts.astype(np.int32),
                "time_min_s": lows.astype(TIME_DTYPE),
                "time_max_s": highs.astype(TIME_DTYPE),
                "time_sum_s": sums.astype(TIME_DTYPE),
            }
        )
