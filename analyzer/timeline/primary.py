"""One source, many captures: which capture of a source the rules and charts read, moment by moment.

A bundle often holds several captures of one source over the same minutes: pt-stalk's ``-vmstat``
beside a ``vmstat -t`` the customer or ``collect.sh`` ran; ``-mpstat`` and ``-mpstat-overall``; a
one-off ``-ps`` beside a per-second thread listing; two pt-stalk collections of one host, back to
back or overlapping (docs/background.md, "One source, many captures"). Read as one series, two interleaved
captures give intervals of 0 s and every sustained window breaks; counted twice, a moment weighs
double in every rate and chart.

``select`` decides, for each frame name (``vmstat``, ``processlist``, ``iostat`` ...) and each
stretch of time, which capture is the **primary** one:

1. the finest interval (the median step between its distinct timestamps, to 0.1 s);
2. then the best clock provenance (``parsers.base.Clock``, best first: ts-marker > per-line >
   header+time-of-day > inferred);
3. then coverage (more samples), then the member name (a stable order).

Captures are taken in that order; each claims its own time span (first to last sample, widened by
half its interval, at least 0.5 s), and keeps only the samples no better capture already claimed. Captures
that follow each other in time are all primary, each for its stretch, and the frame joins them in time
order. A capture whose every sample falls inside a better one's span is an **overlap**: it stays
in the bundle for its raw lines and the moment panel, never in a rule or a chart. pt-stalk's
``-overall`` runs (one average over the whole collection) are **summaries** and never compete.

No Django, no I/O: ``ParsedSource`` frames in, kept rows and a role per member out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from parsers.base import Clock, ParsedSource

PRIMARY = "primary"
OVERLAP = "overlap"
SUMMARY = "summary"
#: pt-stalk names its whole-run averages ``<prefix>-<tool>-overall`` (``vmstat $RUN_TIME 2``,
#: ``mpstat $RUN_TIME 1``, ``iostat $RUN_TIME 2``): one figure for the collection, not a series.
SUMMARY_MEMBER = re.compile(r"-overall$")
#: Frames that describe a member rather than sample it over time: never chosen between.
NOT_SERIES = frozenset({"sample_lines"})
#: Steps are compared to a tenth of a second: ``vmstat 1`` drifts by milliseconds per line.
STEP_DECIMALS = 1
_CLOCK_RANK = {clock.value: i for i, clock in enumerate(Clock)}


@dataclass(frozen=True, slots=True)
class Role:
    """What a member became: ``role`` is ``primary``, ``overlap`` or ``summary``; ``reason`` says why
    in one sentence (shown on the case page and in ``analyze --json``)."""

    role: str
    reason: str


@dataclass(frozen=True, slots=True)
class Capture:
    """One member's frame of one name, with what ranks it: ``step_s`` (median interval, seconds; inf
    for a single sample), ``clock`` (its provenance), ``samples`` (distinct timestamps), its span."""

    member: str
    frame: pd.DataFrame
    step_s: float
    clock: str
    samples: int
    start: pd.Timestamp
    end: pd.Timestamp
    summary: bool

    @property
    def rank(self) -> tuple[float, int, int, str]:
        """Sort key, best first: finest interval, best clock, most samples, member name."""
        return (self.step_s, _CLOCK_RANK.get(self.clock, len(_CLOCK_RANK)), -self.samples, self.member)

    def describe(self) -> str:
        """``vmstat at 1 s with per-line times``."""
        every = f"at {self.step_s:g} s" if np.isfinite(self.step_s) else "as a single sample"
        clock = {
            Clock.TS_MARKER.value: "TS-marker times",
            Clock.PER_LINE.value: "per-line times",
            Clock.HEADER_TIME.value: "header date and time-of-day",
            Clock.INFERRED.value: "inferred times",
        }.get(self.clock, f"{self.clock} times")
        return f"{every} with {clock}"


@dataclass(slots=True)
class Selection:
    """The outcome: per frame name, the kept rows of each member (boolean masks on its frame), and a
    role per member."""

    kept: dict[str, dict[str, np.ndarray]]
    roles: dict[str, Role]


def _capture(source: ParsedSource, name: str, frame: pd.DataFrame) -> Capture:
    ts = pd.DatetimeIndex(frame["ts"].dropna().unique()).sort_values()
    diffs = np.diff(ts.asi8) / 1e9
    diffs = diffs[diffs > 0]
    step = round(float(np.median(diffs)), STEP_DECIMALS) if len(diffs) else float("inf")
    return Capture(
        member=source.member,
        frame=frame,
        step_s=step if step > 0 else float("inf"),
        clock=str(source.clock),
        samples=len(ts),
        start=ts[0],
        end=ts[-1],
        summary=bool(SUMMARY_MEMBER.search(source.member)),
    )


#: A sample stands for at least the second around it: a single snapshot (a one-off ``-ps``) claims
#: +/- 0.5 s, so a second capture of the same moment taken a few hundred ms later is an overlap.
MIN_HALF_CLAIM_S = 0.5


def _claim(capture: Capture) -> tuple[int, int]:
    """The span a capture claims, in ns: first to last sample, widened by half its interval (a
    sample stands for the interval around it), and by at least MIN_HALF_CLAIM_S."""
    half_s = capture.step_s / 2 if np.isfinite(capture.step_s) else MIN_HALF_CLAIM_S
    half = int(max(half_s, MIN_HALF_CLAIM_S) * 1e9)
    return capture.start.value - half, capture.end.value + half


def _choose(name: str, captures: list[Capture]) -> tuple[dict[str, np.ndarray], dict[str, Role]]:
    """Kept rows and roles of the captures of one frame name (see the module docstring)."""
    kept: dict[str, np.ndarray] = {}
    roles: dict[str, Role] = {}
    claims: list[tuple[int, int, Capture]] = []
    series = [c for c in captures if not c.summary]
    for c in captures:
        if c.summary:
            kept[c.member] = np.zeros(len(c.frame), dtype=bool)
            roles[c.member] = Role(
                SUMMARY, f"pt-stalk's whole-run average of {name}: a summary, not a series"
            )
    for c in sorted(series, key=lambda c: c.rank):
        ns = pd.DatetimeIndex(c.frame["ts"]).asi8
        free = np.ones(len(ns), dtype=bool)
        covered_by: list[Capture] = []
        for lo, hi, better in claims:
            inside = (ns >= lo) & (ns <= hi)
            if inside.any():
                covered_by.append(better)
            free &= ~inside
        kept[c.member] = free
        roles[c.member] = _role(name, c, free, covered_by, len(series))
        claims.append((*_claim(c), c))
    return kept, roles


def _role(name: str, c: Capture, free: np.ndarray, covered_by: list[Capture], n: int) -> Role:
    """The role sentence of one capture, given the rows it keeps and the better captures over it."""
    what = f"{name} {c.describe()}"
    if not covered_by:
        alone = "the only capture of this source" if n == 1 else "the best capture of its minutes"
        return Role(PRIMARY, f"{what}: {alone}")
    better = covered_by[0]
    why = _why_better(better, c)
    if not free.any():
        return Role(
            OVERLAP,
            (
                f"{what}: {better.member} covers the same minutes {better.describe()} ({why}), so it is "
                "primary there"
            ),
        )
    share = float(free.mean()) * 100
    return Role(
        PRIMARY,
        (
            f"{what}: primary for {share:.0f} % of its samples; {better.member} is primary "
            f"where they overlap ({why})"
        ),
    )


def _why_better(better: Capture, c: Capture) -> str:
    if better.step_s < c.step_s:
        return "a finer interval"
    if _CLOCK_RANK.get(better.clock, 9) < _CLOCK_RANK.get(c.clock, 9):
        return "a better clock"
    if better.samples > c.samples:
        return "more samples"
    return "first by name"


def select(sources: Iterable[ParsedSource]) -> Selection:
    """Choose the primary capture of every frame name and stretch of time (module docstring).

    ``sources``: parsed (and usually ``analyzer.timeline.timeline.prepare``d) members; frames without a
    ``ts`` column or rows are ignored. Returns the kept-row masks per frame name and member, and a
    role for every member (members with no time series are ``primary`` context).
    """
    by_name: dict[str, list[Capture]] = {}
    members: list[str] = []
    main_name: dict[str, str] = {}
    for source in sources:
        members.append(source.member)
        for name, frame in source.frames.items():
            if name in NOT_SERIES or not len(frame) or "ts" not in frame or frame["ts"].isna().all():
                continue
            main_name.setdefault(source.member, name)
            by_name.setdefault(name, []).append(_capture(source, name, frame))
    kept: dict[str, dict[str, np.ndarray]] = {}
    per_name_roles: dict[str, dict[str, Role]] = {}
    for name, captures in by_name.items():
        kept[name], per_name_roles[name] = _choose(name, captures)
    roles = {}
    for member in members:
        name = main_name.get(member)
        if name is None:
            roles[member] = Role(PRIMARY, "read for context (host, CPU count, settings): no time series")
        else:
            roles[member] = per_name_roles[name][member]
    return Selection(kept, roles)
