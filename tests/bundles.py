"""Bundles for tests, without Django: small tarballs from member texts, and generated collections."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_tar(path: Path, members: dict[str, bytes]) -> Path:
    """A .tar.gz with the given members (name -> bytes)."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def generated_collection(out: Path, minutes: float) -> Path:
    """A collection of ``minutes`` written by bench/generate_bundle.py (64 CPUs, 2,000 threads, 1,000
    sessions a second) at ``out``."""
    subprocess.run(
        [
            sys.executable,
            "bench/generate_bundle.py",
            "--minutes",
            f"{minutes:g}",
            "--out",
            str(out),
            "--quiet",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out
