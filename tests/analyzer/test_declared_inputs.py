"""A rule reads only the inputs it declares (``requires``, ``optional``, ``any_of``): the engine hands
it a timeline holding only those (``Timeline.only``), so "not evaluated: needs X" and the catalogue's
inputs are true. Checked on every fixture bundle, and on a timeline holding every frame of the registry
(analyzer/timeline/frames.py: a fixture's rows where one holds the frame, rows made from its declared
columns where none does, so that a rule on a new format's frame runs too): each rule runs over a
timeline that records every frame and the variables it is asked for, and what it asked for must be
declared. The registries cannot rot: every frame the fixtures' timelines hold is registered, and every
series ``aggregate_series`` writes is declared in ``SERIES``; the fixtures are the bundles of
tests/fixtures/bundles and the bundle with a member of every format of the parser registry
(tests/web/share_planted.py), so a new format's frames are checked before any fixture bundle holds it. Every evidence series of the
findings the engine makes of them (their culprits' and links' too) names what the product reads
(``frames.series_problem``: a frame, one of its columns, a name of a family's rows), so a misspelt
series fails here instead of leaving its finding without a chart."""

from __future__ import annotations

import dataclasses
import tempfile
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from analyzer import engine
from analyzer.findings import Finding
from analyzer.rules import registry as rules_registry
from analyzer.rules.registry import RuleSpec
from analyzer.timeline import frames as registry
from analyzer.timeline.frames import FRAMES
from analyzer.timeline.series import aggregate_series, is_series
from analyzer.timeline.timeline import Timeline
from analyzer.waits.model import WAIT_COLUMNS
from parsers.ingest.bundle import Bundle, read_bundle
from tests.web import share_planted

BUNDLES = Path(__file__).resolve().parent.parent / "fixtures" / "bundles"
#: The bundle with a member of every format (tests/web/share_planted.py), beside those of BUNDLES.
EVERY_FORMAT = "every-format"
NAMES = [*sorted(p.name.removesuffix(".tar.gz") for p in BUNDLES.glob("*.tar.gz")), EVERY_FORMAT]


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
    if name == EVERY_FORMAT:
        with tempfile.TemporaryDirectory() as tmp:
            return read_bundle(share_planted.bundle(Path(tmp) / f"{name}.tar.gz"))
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


@pytest.mark.parametrize("name", NAMES)
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


def _unregistered(name: str) -> set[str]:
    """The frames the fixture bundle ``name`` holds (parsed, or on its timelines) that the registry
    of frames lacks."""
    frames = {frame for tl in _timelines(name) for frame in tl.frames}
    sources = {frame for s in _bundle(name).sources for frame in s.frames}
    return (frames | sources) - set(registry.FRAMES)


@pytest.mark.parametrize("name", NAMES)
def test_every_frame_and_series_of_a_fixture_is_registered(name: str) -> None:
    assert _unregistered(name) == set()
    written = {str(s) for tl in _timelines(name) for s in aggregate_series(tl)["series"].unique()}
    assert {s for s in written if not is_series(s)} == set()


def test_a_frame_registered_under_another_name_than_its_parser_writes_is_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A format no fixture bundle holds (pt-stalk's ``-threads``, only in the every-format bundle),
    its frame registered with a typo: the rule declaring the typo would import and never run."""
    held = {frame for name in NAMES if name != EVERY_FORMAT for tl in _timelines(name) for frame in tl.frames}
    assert "pfs_threads" not in held
    assert "pfs_threads" in {frame for tl in _timelines(EVERY_FORMAT) for frame in tl.frames}
    typo = {("pfs_thread" if k == "pfs_threads" else k): v for k, v in FRAMES.items()}
    monkeypatch.setattr(registry, "FRAMES", typo)
    assert _unregistered(EVERY_FORMAT) == {"pfs_threads"}


def _misnamed(out: engine.Outcome) -> dict[str, str]:
    """The evidence series of ``out`` (its findings', their culprits' and its links') that name no
    frame and column the product reads, each with what is wrong (``frames.series_problem``)."""
    evidence = [e for f in out.findings for e in (*f.evidence, *(f.culprit.evidence if f.culprit else ()))]
    evidence += [e for link in out.links for e in link.evidence]
    return {e.series: problem for e in evidence if (problem := registry.series_problem(e.series))}


@cache
def _outcome(name: str) -> engine.Outcome:
    """What the engine makes of the fixture bundle ``name``: its hosts' findings, cross-host ones too."""
    timelines = _timelines(name)
    if _bundle(name).hosts:
        return engine.run_hosts({str(tl.host): tl for tl in timelines})
    return engine.run(timelines[0])


@pytest.mark.parametrize("name", NAMES)
def test_every_evidence_series_of_a_fixture_names_a_frame_and_its_column(name: str) -> None:
    out = _outcome(name)
    assert out.findings or name == EVERY_FORMAT
    assert _misnamed(out) == {}


def test_the_frames_evidence_cites_beside_the_timelines_are_the_waits_frames() -> None:
    assert set(registry.DERIVED["waits"]) <= set(WAIT_COLUMNS)


@pytest.mark.parametrize(
    ("series", "misspelt", "problem"),
    [
        ("df.use_pct", "df.used_pct", "'used_pct' is not a column of the frame 'df'"),
        ("df.avail_kib", "sar_df.avail_kib", "'sar_df' is not a frame"),
    ],
)
def test_a_misspelt_evidence_series_is_found(
    monkeypatch: pytest.MonkeyPatch, series: str, misspelt: str, problem: str
) -> None:
    """A rule citing ``misspelt`` for ``series`` (a column, a frame): its finding would lose its chart
    (web/timeline/chartdefs.py finds none for it), and nothing else fails."""
    spec = engine.rules()["filesystem-full"]

    def typo(tl: Timeline) -> Finding | None:
        f = spec.fn(tl)
        assert f is not None
        assert series in {e.series for e in f.evidence}
        ev = tuple(dataclasses.replace(e, series=misspelt) if e.series == series else e for e in f.evidence)
        return dataclasses.replace(f, evidence=ev)

    assert _misnamed(engine.run(_every_frame(), only=(spec.key,))) == {}
    monkeypatch.setitem(rules_registry._REGISTRY, spec.key, dataclasses.replace(spec, fn=typo))  # noqa: SLF001
    out = engine.run(_every_frame(), only=(spec.key,))
    assert out.failed == []
    found = _misnamed(out)
    assert list(found) == [misspelt]
    assert found[misspelt].startswith(problem)


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
    for name in NAMES:
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
    """The rule ``key`` on the timeline of every frame reads no frame it does not declare, and every
    evidence series of the finding it makes there names a frame and its column (``_misnamed``)."""
    spec = engine.rules()[key]
    tl = _every_frame()
    assert spec.declared - {"variables", "ncpu"} <= set(tl.frames)
    asked = {frame for frame in _asked(spec, tl) if frame in FRAMES or frame == "variables"}
    assert asked - spec.declared == set()
    assert _misnamed(engine.run(tl, only=(key,))) == {}


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
