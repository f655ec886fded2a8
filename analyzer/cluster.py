"""Cross-host rules: findings that need the timelines of several servers of one case.

``cross_host_findings(timelines)`` takes each host's ``Timeline`` by ``Host.name`` (the case's first
host first) and returns the findings that involve more than one of them, each with ``hosts`` set
(the cause first) and ``host`` None. The engine (``analyzer.engine.run_hosts``) calls it after it
ran every host's own rules; a one-host case never reaches it.
"""

from __future__ import annotations

from collections.abc import Mapping

from analyzer.findings import Finding
from analyzer.timeline import Timeline


def cross_host_findings(timelines: Mapping[str, Timeline]) -> list[Finding]:
    """The cross-host findings of ``timelines`` (host name -> that host's timeline, two or more)."""
    return []
