"""Bundles of the InnoDB and kernel context fixtures (tests/fixtures/context, made by
make_fixtures.py) and of the real samples, read the way an upload is: a pt-stalk directory in a
tarball through ``read_bundle``, then the timeline."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from analyzer.timeline.timeline import Timeline
from parsers.ingest.bundle import Bundle, read_bundle

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "context"
SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples"
EXAMPLE2 = SAMPLES / "My-gather" / "pt-stalk" / "example2"
PREFIX = "2026_11_25_17_53_20"


def tarball(path: Path, members: dict[str, bytes | Path | str]) -> Path:
    """A .tar.gz at ``path`` of a pt-stalk directory: ``suffix -> bytes``, a fixture name or a Path."""
    with tarfile.open(path, "w:gz") as tar:
        for suffix, content in members.items():
            if isinstance(content, str):
                content = FIXTURES / content
            data = content.read_bytes() if isinstance(content, Path) else content
            info = tarfile.TarInfo(f"collection/{PREFIX}-{suffix}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def read(tmp_path: Path, members: dict[str, bytes | Path | str]) -> tuple[Bundle, Timeline]:
    bundle = read_bundle(tarball(tmp_path / "bundle.tar.gz", members))
    tl = Timeline.from_sources(
        bundle.sources, ncpu=bundle.ncpu, host=bundle.host, utc_offset_s=bundle.utc_offset_s
    )
    return bundle, tl
