"""The wait model knows every state the fixtures and the real samples hold: a state that reads as
unknown fails the test with the list (add it to analyzer/waits/states.py with its source)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.waits.model import Resource
from analyzer.waits.read import waits
from tests.analyzer.waits.bundles import FIXTURES, SAMPLES, state_files, timelines


def _unknown(paths: list[Path]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path in paths:
        for host, tl in timelines(path).items():
            w = waits(tl)
            rows = w[(w["resource"] == Resource.UNKNOWN.value) & (w["source_frame"] != "ps")]
            for state in sorted(set(rows["state"].fillna("(none)"))):
                out.setdefault(state, []).append(f"{path.name}:{host}")
    return out


def test_every_state_of_the_fixtures_is_known() -> None:
    paths = state_files(FIXTURES)
    assert len(paths) >= 24  # the bundles, and the processlist captures
    assert _unknown(paths) == {}


def test_every_state_of_the_real_samples_is_known() -> None:
    if not SAMPLES.is_dir():
        pytest.skip(f"{SAMPLES} is absent")
    assert _unknown(state_files(SAMPLES)) == {}
