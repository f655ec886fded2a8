"""Timelines of the fixture bundles and of the real captures in ../shared/samples, read as the ingest
reads them (one timeline per host), cached per test session."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from analyzer.timeline.timeline import Timeline
from parsers import registry
from parsers.ingest.bundle import read_bundle

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
BUNDLES = FIXTURES / "bundles"
SAMPLES = Path(__file__).resolve().parents[4] / "shared" / "samples"
#: The formats whose rows carry a session or transaction state (what the wait model reads).
STATE_FORMATS = frozenset({"processlist", "threads", "innodb_trx", "innodb_status", "lock_waits"})


@cache
def timelines(path: Path) -> dict[str, Timeline]:
    """Host name ('' for a bundle without hosts) -> its timeline, for the bundle or file at ``path``."""
    bundle = read_bundle(path)
    if not bundle.hosts:
        return {"": Timeline.from_sources(bundle.sources, ncpu=bundle.ncpu, host=bundle.host)}
    return {
        h.name: Timeline.from_sources(
            h.sources(bundle), ncpu=h.ncpu, host=h.name, utc_offset_s=h.utc_offset_s
        )
        for h in bundle.hosts
    }


def state_files(root: Path) -> list[Path]:
    """The bundles under ``root`` and the lone captures of a format that carries states."""
    out = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if path.name.endswith((".tar.gz", ".tgz", ".tar", ".zip")):
            out.append(path)
            continue
        try:
            head = path.read_text(errors="replace").splitlines()[:60]
        except OSError:
            continue
        module = registry.detect(head)
        if module is not None and module.FORMAT in STATE_FORMATS:
            out.append(path)
    return out
