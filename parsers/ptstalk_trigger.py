"""Parse pt-stalk's ``-trigger`` member: why the collection ran and with which options.

Accepts:
    pt-stalk 2.2 to 3.7 ``<prefix>-trigger``: lines of its ``log`` function (``YYYY_MM_DD_HH_MM_SS
    message``): ``Check results: status(Threads_running)=53, matched=yes, cycles_true=5`` (stalking)
    or ``Not stalking; collect triggered immediately`` (``--no-stalk``), then ``pt-stalk ran with
    --function=status --variable=Threads_running --threshold=25 ...``.

Sample input (pt-stalk 3.2.1 ``-trigger``)::

    2026_11_27_15_53_01 Not stalking; collect triggered immediately
    2026_11_27_15_53_01 pt-stalk ran with --function=status --variable=Threads_running --threshold=25 --match= --cycles=0 --interval=1 --iterations=1 --run-time=14

Output:
    frame ``ptstalk_trigger``: empty (``ts`` datetime64[ns, UTC], ``line_no`` int64): a context source.
    ``meta["trigger"]``: the trigger line (``Check results: ...`` or ``Not stalking ...``);
    ``meta["triggered_at"]``: its time (the server's wall clock, ISO); ``meta["ran_with"]``: the
    options (a ``--password``/``--ask-pass`` value is replaced by ``***``); ``meta["stalked"]``: False
    for ``--no-stalk``.

Warnings: none. Errors: ``ParseError`` (line 1) when no line carries pt-stalk's log prefix and a
trigger message.

Source: pt-stalk 3.2.1 (``stalk()``: ``ts "$msg" >> "$OPT_DEST/$prefix-trigger"``).

>>> src = parse(["2026_11_27_15_53_01 Check results: status(Threads_running)=53, matched=yes, cycles_true=5"],
...             member="t", clock=ClockHints())
>>> src.meta["trigger"], src.meta["stalked"]
('Check results: status(Threads_running)=53, matched=yes, cycles_true=5', True)
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from parsers.base import Blocks, Clock, ClockHints, FormatTraits, ParsedSource, ParseError
from parsers.sensitive import Sensitive

FORMAT = "ptstalk_trigger"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False)

_LOG = re.compile(r"^(?P<prefix>\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}) (?P<msg>.*)$")
_TRIGGERS = ("Check results:", "Not stalking", "pt-stalk ran with")
_SECRET = re.compile(r"(--(?:password|ask-pass)[= ])\S*")


def sniff(head: list[str]) -> bool:
    """True when a head line is a pt-stalk log line with a trigger message."""
    return any((m := _LOG.match(line)) and m["msg"].startswith(_TRIGGERS) for line in head)


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read a pt-stalk ``-trigger`` member; see the module docstring."""
    meta: dict[str, object] = {}
    for raw in stream:
        m = _LOG.match(raw.rstrip("\r\n"))
        if m is None:
            continue
        msg = m["msg"]
        if msg.startswith("pt-stalk ran with"):
            meta["ran_with"] = _SECRET.sub(r"\1***", msg.removeprefix("pt-stalk ran with").strip())
        elif msg.startswith(("Check results:", "Not stalking")) and "trigger" not in meta:
            meta["trigger"] = msg
            meta["stalked"] = not msg.startswith("Not stalking")
            meta["triggered_at"] = pd.to_datetime(m["prefix"], format="%Y_%m_%d_%H_%M_%S").isoformat()
    if not meta:
        raise ParseError(
            member, 1, "", "not a pt-stalk -trigger member: no 'Check results' or 'pt-stalk ran with' line"
        )
    meta["variant"] = f"pt-stalk -trigger: {meta.get('trigger', 'no trigger line')}"[:200]
    frame = pd.DataFrame(
        {"ts": pd.Series([], dtype="datetime64[ns, UTC]"), "line_no": pd.Series([], dtype="int64")}
    )
    return ParsedSource(format=FORMAT, member=member, frames={FORMAT: frame}, clock=Clock.INFERRED, meta=meta)


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = Sensitive(words=("linux", "mysql"))  # numbers, and names of the system and the server
