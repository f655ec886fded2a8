"""CPU seconds of one member's pieces through the ingest's own piece work, and a digest of what it keeps.

Usage::

    .venv/bin/python bench/pieces.py MEMBER [MEMBER ...] [--format NAME] [--repeats 3] [--mb 0]

Each member (a capture file on disk, e.g. extracted from a ``bench/generate_bundle.py`` bundle) is
cut as the ingest cuts it (``parsers.ingest.cutting.split`` at its markers, ``piece_bytes`` for its
format and size) and every piece is run, in this process, through the steps a parse process runs
(``parsers.ingest.pieces.Work`` with the ingest's reducer ``analyzer.timeline.timeline.reduce_piece``):

- ``parse``: ``parse_piece`` with the reducer's ``parse_options``;
- ``reduce``: ``reduce_piece`` of the parsed piece;
- ``text``: the piece's new lines cut and compressed (``parsers.rawtext.chunks_of``).

Printed per member: MB, pieces, the process CPU seconds (user + system) of each step, the best of
``--repeats`` runs, MB per CPU second of the three together, and ``digest``: a hash of every frame
of every reduced piece (columns, dtypes, values: ``pandas.util.hash_pandas_object``) and of the
compressed text's line ranges. Two checkouts that print the same digest keep the same rows; a
faster reader must keep it. ``--mb N`` reads only the first N MB of each member (0: all of it);
``--piece-mib N`` cuts pieces of N MiB instead of the ingest's size for the member.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from analyzer.timeline.timeline import reduce_piece  # noqa: E402
from parsers import registry  # noqa: E402
from parsers.base import ClockHints  # noqa: E402
from parsers.ingest.cutting import piece_bytes, split  # noqa: E402
from parsers.ingest.pieces import Work, parse_piece  # noqa: E402
from parsers.rawtext import chunks_of  # noqa: E402


def _cpu() -> float:
    return time.process_time()


def _digest(h: hashlib._Hash, source) -> None:  # noqa: ANN001 - a ParsedSource
    for name, frame in source.frames.items():
        h.update(name.encode())
        h.update(repr([(c, str(t)) for c, t in frame.dtypes.items()]).encode())
        if len(frame):
            h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())


def run(path: Path, fmt: str | None, mb: float, piece_mb: float = 0.0) -> dict[str, object]:
    """One pass over ``path``'s pieces: CPU seconds per step, MB, pieces and the digest."""
    data = path.read_bytes()
    if mb:
        data = data[: int(mb * 1e6)]
        data = data[: data.rfind(b"\n") + 1]
    head = data[:65536].decode("utf-8", "replace").splitlines()[:50]
    module = registry.by_format(fmt) if fmt else registry.detect(head)
    if module is None:
        raise SystemExit(f"{path}: no format recognised; give --format")
    work = Work(reduce=reduce_piece, keep_text=True)
    options = work.options(module.FORMAT)
    size = int(piece_mb * (1 << 20)) or piece_bytes(0, len(data), module.FORMAT)
    clock = ClockHints()
    spent = {"parse": 0.0, "reduce": 0.0, "text": 0.0}
    h = hashlib.sha256()
    pieces = 0
    for piece in split(b"", io.BytesIO(data), piece_bytes=size):
        pieces += 1
        t0 = _cpu()
        parsed = parse_piece(module, piece, member=path.name, clock=clock, **options)
        t1 = _cpu()
        reduced = reduce_piece(parsed)
        t2 = _cpu()
        text = chunks_of(piece.data, piece.first_line + piece.overlap_lines, skip=piece.overlap_bytes)
        t3 = _cpu()
        spent["parse"] += t1 - t0
        spent["reduce"] += t2 - t1
        spent["text"] += t3 - t2
        _digest(h, reduced)
        h.update(repr([(c.line_start, c.line_end) for c in text]).encode())
    return {
        "format": module.FORMAT,
        "mb": len(data) / 1e6,
        "pieces": pieces,
        **spent,
        "digest": h.hexdigest()[:16],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("member", type=Path, nargs="+")
    p.add_argument("--format", default=None)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--mb", type=float, default=0.0)
    p.add_argument("--piece-mib", type=float, default=0.0, help="piece size (default: the ingest's)")
    args = p.parse_args()
    print(
        f"{'member':<22}{'format':<14}{'MB':>8}{'pieces':>8}{'parse s':>9}{'reduce s':>9}{'text s':>8}"
        f"{'MB/CPU s':>10}  digest"
    )
    for path in args.member:
        runs = [run(path, args.format, args.mb, args.piece_mib) for _ in range(max(1, args.repeats))]
        best = min(runs, key=lambda r: r["parse"] + r["reduce"] + r["text"])
        total = best["parse"] + best["reduce"] + best["text"]
        print(
            f"{path.name:<22}{best['format']:<14}{best['mb']:>8.1f}{best['pieces']:>8}{best['parse']:>9.2f}"
            f"{best['reduce']:>9.2f}{best['text']:>8.2f}{best['mb'] / total:>10.1f}  {best['digest']}"
        )


if __name__ == "__main__":
    main()
