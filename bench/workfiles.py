"""The fan-out's work files: size, write and read time of the pickles they were against the work-file
format (parsers/ingest/workfile.py: header, JSON, .npy arrays; no code), for one generated bundle.

Usage (from the project root; no database needed)::

    .venv/bin/python bench/workfiles.py [--minutes 2] [--part-mib 8] [--json]

A collection of ``--minutes`` (bench/generate_bundle.py) is planned as a fan-out would plan it
(``plan_bundle``, pieces kept in memory) with parts of ``--part-mib`` MiB, and every part parsed
(``parse_part`` with the ingest's reducer). The plan and every part's outcomes are then written and
read back both ways, in this process: ``pickle`` (protocol 5) + Zstandard level 3, as before, and
``workfile.dumps``/``loads`` (Zstandard level 3 inside). Times are the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import functools
import json
import pickle
import sys
import tempfile
import time
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from analyzer.timeline.timeline import reduce_piece  # noqa: E402
from parsers.ingest import workfile  # noqa: E402
from parsers.ingest.fanout import parse_part, plan_bundle  # noqa: E402
from parsers.ingest.pieces import Work  # noqa: E402
from tests.bundles import generated_collection  # noqa: E402


def _pickle_dumps(value: object) -> bytes:
    return zstandard.ZstdCompressor(level=3).compress(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def _pickle_loads(data: bytes) -> object:
    return pickle.loads(zstandard.ZstdDecompressor().decompress(data))  # noqa: S301 - our own bytes


def _best(fn, repeat: int) -> float:  # noqa: ANN001
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def measure(values: list[object], repeat: int) -> dict[str, dict[str, float]]:
    """Total bytes, write and read seconds of ``values`` (each one file) in both formats."""
    out = {}
    for fmt, dumps, loads in (
        ("pickle+zstd", _pickle_dumps, _pickle_loads),
        ("workfile", workfile.dumps, lambda data: workfile.loads(data, name="bench")),
    ):
        files = [dumps(v) for v in values]
        out[fmt] = {
            "bytes": sum(len(f) for f in files),
            "write_s": sum(_best(functools.partial(dumps, v), repeat) for v in values),
            "read_s": sum(_best(functools.partial(loads, f), repeat) for f in files),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=2)
    parser.add_argument("--part-mib", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        bundle = generated_collection(Path(tmp) / "collection.tar.gz", args.minutes)
        store: dict[str, bytes] = {}

        def put(data: bytes) -> str:
            store[str(len(store))] = data
            return str(len(store) - 1)

        plan = plan_bundle(bundle, put=put, reduce=reduce_piece, part_bytes=args.part_mib << 20)
    work = Work(reduce=reduce_piece)
    outcomes = [parse_part(part, get=store.__getitem__, work=work) for part in plan.parts]
    text = sum(len(v) for v in store.values())
    result = {
        "minutes": args.minutes,
        "text_bytes": text,
        "parts": len(plan.parts),
        "plan": measure([plan], args.repeat),
        "outcomes": measure(outcomes, args.repeat),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{args.minutes:g}-minute collection: {text / 2**20:.0f} MiB of text, {len(plan.parts)} part(s)")
    for what in ("plan", "outcomes"):
        for fmt, m in result[what].items():
            print(
                f"  {what:8} {fmt:12} {m['bytes'] / 1024:10,.0f} KiB"
                f"  write {m['write_s'] * 1000:8.1f} ms  read {m['read_s'] * 1000:8.1f} ms"
            )


if __name__ == "__main__":
    main()
