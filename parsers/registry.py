"""The one place where formats are registered and their detection order lives.

Detection is by content: each module's ``sniff(head)`` looks at the first lines of a member
(``HEAD_LINES`` decoded lines). Order matters only where two formats could claim the same head:
the more specific sniffers come first.
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: Enough lines to get past a TS marker, a sysstat banner and a header repeated after a blank line.
HEAD_LINES = 60

# Most specific first: processlist and mysqladmin tables share `+---+` borders; ps listings and
# `top -b` share a PID column; iostat and mpstat share the sysstat banner.
_MODULES = (
    "processlist",
    "mysqladmin",
    "variables",
    "threads",
    "top",
    "vmstat",
    "mpstat",
    "iostat",
    "interrupts",
    "ps",
    "meminfo",
    "ptstalk_output",
)


def parsers() -> tuple[ModuleType, ...]:
    """All parser modules in detection order."""
    return tuple(importlib.import_module(f"parsers.{name}") for name in _MODULES)


def by_format(name: str) -> ModuleType:
    """The parser module whose ``FORMAT`` is ``name``; KeyError when there is none."""
    for mod in parsers():
        if mod.FORMAT == name:
            return mod
    raise KeyError(name)


def detect(head: list[str]) -> ModuleType | None:
    """The first parser whose ``sniff`` accepts ``head`` (decoded lines without newlines), or None."""
    for mod in parsers():
        if mod.sniff(head):
            return mod
    return None
