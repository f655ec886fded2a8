"""Write a pt-stalk collection of the kernel counter members for the parser benchmark.

    .venv/bin/python bench/generate_context.py OUT.tar.gz [--seconds 3600] [--disks 8]
    .venv/bin/python bench/run.py OUT.tar.gz --skip-ingest

``-diskstats``, ``-netstat_s`` and ``-procvmstat`` as pt-stalk writes them (``TS <epoch.ns> <date>
<time>`` then ``cat /proc/diskstats`` / ``netstat -s`` / ``cat /proc/vmstat``) every second for
``--seconds``: the lines of the captures in tests/fixtures/context (this machine's kernel 6.18,
net-tools 2.10), with ``--disks`` sd devices and every counter advanced each second. The numbers are
made up; the shapes (field counts, sentences, names) are the real ones.
"""

from __future__ import annotations

import argparse
import io
import re
import tarfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "context"
PREFIX = "2026_04_21_16_51_41"
EPOCH0 = 1776790301


def _first_snapshot(name: str) -> str:
    text = (FIXTURES / name).read_text()
    return text.split("\nTS ", 1)[0].split("\n", 1)[1] + "\n"


def _template(body: str) -> tuple[list[str], np.ndarray]:
    """``body`` cut at its numbers: the text pieces between them and the numbers."""
    parts = re.split(r"(?<![A-Za-z0-9_.])(\d+)(?![A-Za-z0-9_.])", body)
    return parts[0::2], np.array([int(x) for x in parts[1::2]], dtype=np.int64)


def _member(body: str, seconds: int, rng: np.random.Generator) -> bytes:
    texts, values = _template(body)
    steps = rng.integers(0, 50, size=len(values))
    out = io.StringIO()
    for k in range(seconds):
        epoch = EPOCH0 + 2 + k
        hms = f"{16 + (51 * 60 + 43 + k) // 3600:02d}:{(51 + (43 + k) // 60) % 60:02d}:{(43 + k) % 60:02d}"
        out.write(f"TS {epoch}.009325313 2026-04-21 {hms}\n")
        now = values + steps * k
        out.write(
            "".join(
                t + (str(v) if i < len(now) else "")
                for i, (t, v) in enumerate(zip(texts, [*now, 0], strict=True))
            )
        )
    return out.getvalue().encode()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--seconds", type=int, default=3600)
    ap.add_argument("--disks", type=int, default=8)
    args = ap.parse_args()
    rng = np.random.default_rng(11)
    disk_line = next(ln for ln in _first_snapshot("linux_diskstats.txt").splitlines() if " vda " in ln)
    disks = "".join(
        disk_line.replace("254       0 vda", f"  8 {16 * i:7d} sd{chr(97 + i)}") + "\n"
        for i in range(args.disks)
    )
    loops = "".join(f"   7 {i:7d} loop{i} 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n" for i in range(8))
    members = {
        "diskstats": loops + disks,
        "netstat_s": _first_snapshot("linux_netstat_s_idle.txt"),
        "procvmstat": _first_snapshot("linux_procvmstat.txt"),
    }
    with tarfile.open(args.out, "w:gz") as tar:
        for suffix, body in members.items():
            data = _member(body, args.seconds, rng)
            info = tarfile.TarInfo(f"collection/{PREFIX}-{suffix}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


if __name__ == "__main__":
    main()
