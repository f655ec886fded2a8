"""A rule reads only the inputs it declares (``requires``, ``optional``, ``any_of``): the engine hands
it a timeline holding only those (``Timeline.only``), so "not evaluated: needs X" and the catalogue's
inputs are true. Checked on every fixture bundle, and on a timeline holding every frame of the registry
(analyzer/timeline/frames.py: a fixture's rows where one holds the frame, rows made from its declared
columns where none does, so that a rule on a new format's frame runs too): each rule runs over a
timeline that records every frame and the variables it is asked for, and what it asked for must be
declared. The registries cannot rot: every frame the fixtures' timelines hold is registered, and every
series ``aggregate_series`` writes is declared in ``SERIES``."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from analyzer import engine
from analyzer.rules.registry import RuleSpec
from analyzer.timeline.frames import FRAMES
from analyzer.timeline.series import aggregate_series, is_series
from analyzer.timeline.timeline import Timeline
from parsers.ingest.bundle import Bundle, read_bundle

BUNDLES = Path(__file__).resolve().parent.parent / "fixtures" / "bundles"


class _Recording(dict):
    """A mapping that notes every key it is asked for."""

    def __init__(self, data: dict, asked: set[str]) -> None:
        super().__init__(data)
        self.asked = asked

    def __getitem__(self, key: str) -> object:
        self.asked.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: object = None) -> object:
        self.asked.add(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self.asked.add(str(key))
        return super().__contains__(key)


@cache
def _bundle(name: str) -> Bundle:
    return read_bundle(BUNDLES / f"{name}.tar.gz")


@cache
def _timelines(name: str) -> tuple[Timeline, ...]:
    bundle = _bundle(name)
    if not bundle.hosts:
        return (Timeline.from_sources(bundle.sources, ncpu=bundle.ncpu, host=bundle.host),)
    return tuple(
        Timeline.from_sources(h.sources(bundle), ncpu=h.ncpu, host=h.name, utc_offset_s=h.utc_offset_s)
        for h in bundle.hosts
    )


def _asked(spec: RuleSpec, tl: Timeline) -> set[str]:
    """The inputs ``spec``'s rule asks ``tl`` for (frames by name; ``variables`` when it reads any)."""
    asked: set[str] = set()
    recording = Timeline(
        frames=_Recording(tl.frames, asked),
        ncpu=tl.ncpu,
        host=tl.host,
        utc_offset_s=tl.utc_offset_s,
        variables=_Recording(tl.variables, set()),
    )
    recording.roles = tl.roles
    try:
        spec.fn(recording)
    except Exception:  # noqa: BLE001, S110 - a rule failing on one bundle is the engine's to record
        pass
    if recording.variables.asked:  # type: ignore[attr-defined]
        asked.add("variables")
    return asked


@pytest.mark.parametrize("name", sorted(p.name.removesuffix(".tar.gz") for p in BUNDLES.glob("*.tar.gz")))
def test_every_rule_reads_only_what_it_declares(name: str) -> None:
    undeclared = {
        (key, frame)
        for tl in _timelines(name)
        for key, spec in engine.rules().items()
        if not (set(spec.requires) - tl.inputs)
        for frame in _asked(spec, tl) - spec.declared
        if frame in tl.frames or frame == "variables"
    }
    assert undeclared == set()


@pytest.mark.parametrize("name", sorted(p.name.removesuffix(".tar.gz") for p in BUNDLES.glob("*.tar.gz")))
def test_every_frame_and_series_of_a_fixture_is_registered(name: str) -> None:
    frames = {frame for tl in _timelines(name) for frame in tl.frames}
    sources = {frame for s in _bundle(name).sources for frame in s.frames}
    assert (frames | sources) - set(FRAMES) == set()
    written = {str(s) for tl in _timelines(name) for s in aggregate_series(tl)["series"].unique()}
    assert {s for s in written if not is_series(s)} == set()


#: Rows of a frame no fixture holds, made from its declared columns.
MADE_ROWS = 3


def _made(columns: tuple[str, ...]) -> pd.DataFrame:
    """``MADE_ROWS`` rows of ``columns``: ``ts`` a second apart, numbers elsewhere (1.0)."""
    ts = pd.date_range("2026-01-01", periods=MADE_ROWS, freq="s", tz="UTC")
    return pd.DataFrame({c: ts if c == "ts" else [1.0] * MADE_ROWS for c in columns})


@cache
def _every_frame() -> Timeline:
    """A timeline holding every frame of the registry: the first fixture rows of it, with any
    declared column they lack; else rows made from its declared columns."""
    held: dict[str, pd.DataFrame] = {}
    variables: dict[str, str] = {}
    for name in sorted(p.name.removesuffix(".tar.gz") for p in BUNDLES.glob("*.tar.gz")):
        for tl in _timelines(name):
            variables = variables or dict(tl.variables)
            for frame, rows in tl.frames.items():
                if frame not in held and len(rows):
                    held[frame] = rows
    frames = {}
    for frame, columns in FRAMES.items():
        rows = held.get(frame)
        if rows is None:
            frames[frame] = _made(columns)
        else:
            missing = {c: float("nan") for c in columns if c not in rows}
            frames[frame] = rows.assign(**missing) if missing else rows
    return Timeline(frames=frames, ncpu=4, variables=variables)


@pytest.mark.parametrize("key", sorted(engine.rules()))
def test_every_rule_reads_only_what_it_declares_on_a_timeline_of_every_frame(key: str) -> None:
    spec = engine.rules()[key]
    tl = _every_frame()
    assert spec.declared - {"variables", "ncpu"} <= set(tl.frames)
    asked = {frame for frame in _asked(spec, tl) if frame in FRAMES or frame == "variables"}
    assert asked - spec.declared == set()


def test_a_frame_read_but_not_declared_is_seen_on_the_timeline_of_every_frame() -> None:
    spec = RuleSpec("reads-iostat", 1, ("vmstat",), (), lambda tl: tl.frames.get("iostat"))
    assert "iostat" in _asked(spec, _every_frame()) - spec.declared


def test_the_engine_hands_a_rule_only_its_declared_inputs() -> None:
    seen: dict[str, set[str]] = {}

    def spy(tl: Timeline) -> None:
        seen["frames"] = set(tl.frames)
        seen["variables"] = set(tl.variables)

    tl = Timeline(
        frames={
            n: pd.DataFrame({"ts": pd.to_datetime([0], utc=True)})
            for n in ("vmstat", "iostat", "processlist")
        },
        ncpu=4,
        variables={"max_connections": "151"},
    )
    spec = RuleSpec("spy", 1, ("vmstat",), ("iostat",), spy)
    spec.fn(tl.only(spec.declared))
    assert seen == {"frames": {"vmstat", "iostat"}, "variables": set()}
    assert set(tl.only({"vmstat", "variables"}).variables) == {"max_connections"}
