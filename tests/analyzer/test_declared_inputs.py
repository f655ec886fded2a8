"""A rule reads only the inputs it declares (``requires``, ``optional``, ``any_of``): the engine hands
it a timeline holding only those (``Timeline.only``), so "not evaluated: needs X" and the catalogue's
inputs are true. Checked on every fixture bundle: each rule runs over a timeline that records every
frame and the variables it is asked for, and what it asked for must be declared."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from analyzer import engine
from analyzer.rules.registry import RuleSpec
from analyzer.timeline.timeline import Timeline
from parsers.ingest.bundle import read_bundle

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
def _timelines(name: str) -> tuple[Timeline, ...]:
    bundle = read_bundle(BUNDLES / f"{name}.tar.gz")
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
