"""Fixed-width reads of a chunk's UTF-8 bytes with NumPy: many offsets at once, digit runs as float64,
many ``[start, end)`` ranges as texts.

The NumPy reading of regular ``\\G`` chunks (``parsers._vertical``) stands on these; not a format.
"""

from __future__ import annotations

import numpy as np

#: Bytes after a chunk's text, so that reads of up to 64 bytes from a line start stay in the buffer.
_PAD = b"\n" * 64
#: Longest byte pattern compared at a line start (row header parts, key prefixes).
MAX_PATTERN = 48
#: Numbers of at most this many digits are exact in float64, where ``float()`` and
#: ``pd.to_numeric`` read them alike; longer ones are left to those.
_MAX_DIGITS = 15
_POW10 = np.array([float(10**k) for k in range(_MAX_DIGITS + 1)])
DIGIT, _DOT, SPACE = 48, 46, 32
_ALL = np.uint64(2**64 - 1)


class Bytes:
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
        """True for each offset of ``at`` where ``pattern`` (at most ``MAX_PATTERN`` bytes) starts."""
        width = -(-len(pattern) // 8) * 8
        words = self.take(at, width).view("<u8")
        want = np.frombuffer(pattern.ljust(width, b"\0"), dtype="<u8")
        mask = np.frombuffer((b"\xff" * len(pattern)).ljust(width, b"\0"), dtype="<u8")
        hit = np.ones(len(at), dtype=bool)
        for j in range(width // 8):  # word by word: a quarter of the time of masking the whole block
            word = words[:, j] if mask[j] == _ALL else words[:, j] & mask[j]
            hit &= word == want[j]
        return hit


#: Weight of each byte of a right-aligned 16-byte window read as a decimal number.
_WEIGHTS = np.array([float(10 ** (15 - j)) for j in range(16)])


def numbers_of(chunk: Bytes, vs: np.ndarray, ve: np.ndarray, decimal: bool) -> np.ndarray | None:
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
    digit = (cells - DIGIT) <= 9  # uint8: below "0" wraps around
    if decimal:
        dot = (cells == _DOT) & inside
        if not (digit | dot | ~inside).all():
            return None
        n_dot = dot.sum(axis=1)
        at = np.where(n_dot == 1, dot.argmax(axis=1), -1)
        # one dot at most, with a digit on each side
        if (n_dot > 1).any() or ((n_dot == 1) & ((at == 16 - w) | (at == 15))).any():
            return None
        values = np.where(inside & ~dot, cells - DIGIT, 0).astype(np.float64)
        whole = values @ _WEIGHTS
        left = (values * (column < at[:, None])) @ _WEIGHTS  # digits left of a dot, one place too high
        number = (whole - left + left / 10) / _POW10[np.where(n_dot == 1, 15 - at, 0)]
    else:
        if not (digit | ~inside).all():
            return None
        number = np.where(inside, cells - DIGIT, 0).astype(np.float64) @ _WEIGHTS
    number[missing] = np.nan
    return number


def texts_of(buf: np.ndarray, ranges: list[tuple[np.ndarray, np.ndarray]]) -> list[list[str]]:
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
