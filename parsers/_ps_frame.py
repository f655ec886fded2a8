"""The typed frame of a batch of ``ps`` rows (``parsers.ps``): raw byte columns
(``parsers._ps_layout.split_rows``) -> pid, tid, ppid, pcpu numbers, user/stat/comm/wchan
categories and the one-letter ``state``. Not a format.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from parsers._ps_layout import SPACE, TEXT_COLUMNS, Layout, Rows, basename, split_rows, split_tokens
from parsers.base import ParseError, ParseWarning

_NUMBERS = ("pid", "tid", "ppid", "pcpu")


# ---------------------------------------------------------------------------------------------
# to_frame: raw columns -> typed chunk frame
# ---------------------------------------------------------------------------------------------


# Byte -> digit value / multiplier / "not part of a number" lookup tables for _digits.
_DIG = np.zeros(256)
_DIG[ord("0") : ord("9") + 1] = np.arange(10)
_MUL = np.ones(256)
_MUL[ord("0") : ord("9") + 1] = 10.0
_JUNK = np.ones(256, dtype=bool)
_JUNK[[*range(ord("0"), ord("9") + 1), ord("."), SPACE]] = False


def _digits(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Numbers written in a (n, w) uint8 block (digits, at most one ``.``, blanks) -> float64, and
    the mask of cells holding anything else (read one by one by the caller)."""
    n, w = block.shape
    value = np.zeros(n)
    scale = np.ones(n)
    seen_dot = np.zeros(n, dtype=bool)
    bad = np.zeros(n, dtype=bool)
    for j in range(w):  # left to right: value = value * 10 + digit; scale counts decimals
        b = block[:, j]
        mul = _MUL[b]
        value = value * mul + _DIG[b]
        scale = np.where(seen_dot, scale * mul, scale)
        dot = b == ord(".")
        bad |= _JUNK[b] | (dot & seen_dot)
        seen_dot |= dot
    # a cell with no digit at all reads 0: only "0" (or "0.0") may do so
    zero = value == 0
    if zero.any():
        bad[zero] |= ~(block[zero] == ord("0")).any(axis=1)
    return value / scale, bad


def _cell_number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _text_category(codes: np.ndarray, uniques: list[str]) -> pd.Categorical:
    """Codes into ``uniques`` as a category of distinct texts; its categories are of string dtype
    even when there are none (a piece whose only row was cut short), so that the categories of the
    pieces of a member unite."""
    canon: dict[str, int] = {}
    remap = np.array([canon.setdefault(u, len(canon)) for u in uniques], dtype=np.int64)
    categories = pd.Index(list(canon), dtype="str")
    return pd.Categorical.from_codes(remap[codes] if len(codes) else codes, categories=categories)


def to_frame(layout: Layout, rows: Rows, member: str, warnings: list[ParseWarning]) -> dict[str, object]:
    """Type one chunk: pid/tid/ppid integers, pcpu float, text columns as categories (column arrays)."""
    raw, ok = split_rows(layout, rows)
    nos, snaps = rows.nos, rows.snaps
    fast_idx = np.flatnonzero(ok)
    slow_rows: list[tuple[int, dict[str, str]]] = []
    for i in np.flatnonzero(~ok):
        line = rows.text(int(i))
        if line.isspace():
            continue
        fields = split_tokens(layout, line)
        if fields is None:
            warnings.append(ParseWarning(int(nos[i]), "bad-row", f"cannot read ps row: {line[:80]!r}"))
        else:
            slow_rows.append((int(i), fields))
    slow_idx = np.array([i for i, _ in slow_rows], dtype=np.int64)
    order = np.concatenate([fast_idx, slow_idx])
    keep = np.ones(len(order), dtype=bool)
    cols: dict[str, object] = {}
    for out in _NUMBERS:
        if out in raw:
            cols[out] = _numbers(out, raw[out], slow_rows, order, keep, rows, member, warnings)
    for out in TEXT_COLUMNS:
        if out in raw:
            cols[out] = _texts(out, raw[out], slow_rows, layout)
    sel = np.argsort(order[keep], kind="stable")
    rows = order[keep][sel]
    n = len(rows)
    piece: dict[str, object] = {"line_no": nos[rows], "snapshot": snaps[rows]}
    for out in _NUMBERS:
        if out in cols:
            piece[out] = np.asarray(cols[out])[keep][sel]
    piece["tid"] = piece.get("tid", piece["pid"])
    piece["ppid_na"] = np.zeros(n, dtype=bool) if "ppid" in piece else np.ones(n, dtype=bool)
    piece["ppid"] = piece.get("ppid", np.zeros(n, dtype=np.int64))
    piece["pcpu"] = piece.get("pcpu", np.full(n, np.nan))
    for out in TEXT_COLUMNS:
        piece[out] = cols[out][keep][sel] if out in cols else missing(n)
    return piece


def _numbers(
    out: str,
    block: np.ndarray,
    slow_rows: list[tuple[int, dict[str, str]]],
    order: np.ndarray,
    keep: np.ndarray,
    rows: Rows,
    member: str,
    warnings: list[ParseWarning],
) -> np.ndarray:
    """Column ``out`` as numbers for the rows in ``order`` (the fixed-width ``block`` of the fast
    rows, then the cells of ``slow_rows``): int64, float64 for ``pcpu``. A cell that is no number
    clears its row in ``keep`` with a ``bad-row`` warning; a ``-`` PID (``ps m``'s thread rows)
    refuses the member (``ParseError(whole=True)``)."""
    num, bad = _digits(block)
    cells = {j: block[j].tobytes().decode("ascii").strip() for j in np.flatnonzero(bad)}
    tail = [f[out] for _, f in slow_rows]
    cells.update({len(num) + k: v for k, v in enumerate(tail)})
    num = np.concatenate([num, np.zeros(len(tail))])
    bad = np.concatenate([bad, np.zeros(len(tail), dtype=bool)])
    for j, cell in cells.items():
        value = _cell_number(cell)
        bad[j] = value is None
        num[j] = 0.0 if value is None else value
    for j in np.flatnonzero(bad & keep):
        row = int(order[j])
        cell = cells[int(j)]
        if out == "pid" and cell == "-":
            raise ParseError(
                member,
                int(rows.nos[row]),
                rows.text(row),
                "ps m thread rows ('-' PID) carry no thread id: capture threads with ps -eLo",
                whole=True,
            )
        warnings.append(ParseWarning(int(rows.nos[row]), "bad-row", f"{out} {cell!r} is not a number"))
    keep &= ~bad
    return num if out == "pcpu" else num.astype(np.int64)


def _texts(
    out: str, raw: tuple[np.ndarray, list[bytes]], slow_rows: list[tuple[int, dict[str, str]]], layout: Layout
) -> pd.Categorical:
    """Text column ``out`` as a category: the factorized fast rows' values, then the slow rows'
    (``comm`` of a free-form command as its executable's name, ``wchan`` ``-`` as "")."""
    codes, uniq = raw
    texts = [u.decode("ascii").strip() for u in uniq]
    if out == "comm" and layout.free_last:
        texts = [basename(t) for t in texts]
    if out == "wchan":
        texts = ["" if t == "-" else t for t in texts]
    if slow_rows:
        extra = []
        for _, f in slow_rows:
            v = f[out]
            if out == "comm" and layout.free_last:
                v = basename(v)
            elif out == "wchan" and v == "-":
                v = ""
            extra.append(v)
        codes = np.concatenate([codes, np.arange(len(texts), len(texts) + len(extra))])
        texts = texts + extra
    return _text_category(codes, texts)


def state_of(stat: pd.Series) -> pd.Categorical:
    """First letter of each STAT value, computed once per distinct STAT."""
    if not len(stat.cat.categories):
        return missing(len(stat))
    cats = list(stat.cat.categories)
    letters = [s[:1] for s in cats]
    uniq = list(dict.fromkeys(letters))
    remap = np.array([uniq.index(x) for x in letters] + [-1], dtype=np.int64)
    return pd.Categorical.from_codes(remap[stat.cat.codes.to_numpy()], categories=uniq)


def missing(n: int) -> pd.Categorical:
    """A text column the listing does not have: all NA, string categories."""
    return pd.Categorical.from_codes(np.full(n, -1, dtype=np.int64), categories=pd.Index([], dtype="str"))
