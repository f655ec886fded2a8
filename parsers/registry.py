"""The one place where formats are registered and their detection order lives.

Detection is by content: each module's ``sniff(head)`` looks at the first lines of a member
(``HEAD_LINES`` decoded lines). Order matters only where two formats could claim the same head:
the more specific sniffers come first.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

from parsers.sensitive import declared

#: Enough lines to get past a TS marker, a sysstat banner and a header repeated after a blank line.
HEAD_LINES = 60

# Most specific first: processlist and mysqladmin tables share `+---+` borders; ps listings and
# `top -b` share a PID column; iostat and mpstat share the sysstat banner. The InnoDB monitor, its
# transaction tables and SHOW SLAVE STATUS are `\G` output like a vertical processlist; `vmstat -d`
# (diskstats) has a header vmstat must not claim. MySQL Shell's results hold SHOW ENGINE INNODB STATUS
# and other captures after their `# Query:` header: read first.
_MODULES = (
    "mysqlsh_instance",
    "mysqlsh",
    "innodb_status",
    "ps_locks",
    "lock_waits",
    "innodb_trx",
    "slave_status",
    "processlist",
    "mysqladmin",
    "variables",
    "opentables",
    "mutex_status",
    "threads",
    "top",
    "diskstats",
    "vmstat",
    "vmstat_headerless",
    "mpstat",
    "iostat",
    "interrupts",
    "ps",
    "netstat_s",
    "procvmstat",
    "meminfo",
    "sysctl",
    "df",
    "netstat",
    "slabinfo",
    "numastat",
    "mysqld_errorlog",
    "ptstalk_trigger",
    "ptstalk_output",
)


@functools.cache
def parsers() -> tuple[ModuleType, ...]:
    """All parser modules in detection order.

    Raises TypeError naming a module that does not declare its sensitive fields (``SENSITIVE``,
    parsers/sensitive.py): a share link could not redact what it reads."""
    modules = tuple(importlib.import_module(f"parsers.{name}") for name in _MODULES)
    return check_declared(modules)


def check_declared(modules: tuple[ModuleType, ...]) -> tuple[ModuleType, ...]:
    """``modules`` when each declares ``SENSITIVE``; TypeError naming the first that does not."""
    for mod in modules:
        if declared(mod) is None:
            raise TypeError(
                f"{mod.__name__} declares no SENSITIVE (parsers/sensitive.py): what of it may a share link show?"
            )
    return modules


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
