"""Every rule test runs twice: on the captures it builds, and on a bundle where each capture has a
second capture of the same source over the same seconds (FINDINGS.md, "One source, many captures").

The second capture is the same data 0.4 s later with an inferred clock, as a pt-stalk ``-vmstat``
beside the customer's ``vmstat -t`` would be. The timeline must choose the first as primary and keep
the second out of every rule (``analyzer.timeline.primary``), so each test's assertions (the finding, its
window, its evidence and raw lines, or its silence) must hold unchanged. Read interleaved, the two
would give intervals of 0.4 s, double counts and other windows.
"""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from analyzer.timeline.timeline import Timeline
from parsers.base import Clock, ParsedSource

#: Sorts after every real member name: with an equal interval and clock, the original wins on name.
OVERLAP_PREFIX = "zz-overlap-"
OVERLAP_OFFSET = pd.Timedelta(milliseconds=400)


def overlap_copy(source: ParsedSource) -> ParsedSource:
    """The same capture 0.4 s later, with an inferred clock, under another member name."""
    frames = {
        name: frame.assign(ts=frame["ts"] + OVERLAP_OFFSET) if "ts" in frame else frame
        for name, frame in source.frames.items()
    }
    return dataclasses.replace(
        source,
        member=OVERLAP_PREFIX + source.member,
        frames=frames,
        clock=Clock.INFERRED,
        meta=dict(source.meta),
    )


@pytest.fixture(params=["alone", "with-an-overlapping-capture"], autouse=True)
def bundle_shape(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """``alone``: the test's captures as built. ``with-an-overlapping-capture``: each one doubled by
    ``overlap_copy`` before the timeline is made."""
    if request.param == "with-an-overlapping-capture":
        original = Timeline.from_sources.__func__

        def doubled(cls, sources, **kwargs):
            sources = list(sources)
            return original(cls, sources + [overlap_copy(s) for s in sources], **kwargs)

        monkeypatch.setattr(Timeline, "from_sources", classmethod(doubled))
    return request.param
