"""The one place where formats are registered and their detection order lives.

Detection is by content: each module's ``sniff(head)`` looks at the first lines of a member
(``HEAD_LINES`` decoded lines). Order matters only where two formats could claim the same head:
the more specific sniffers come first.

Every module named here is imported with this one and must declare ``FORMAT``, ``TRAITS`` (a
``parsers.base.FormatTraits``), ``sniff`` and ``parse``: one that does not stops the import with a
``FormatDeclarationError`` naming it, so a format without its traits never reaches an upload.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from types import ModuleType

from parsers.base import Blocks, FormatTraits
from parsers.sensitive import Sensitive

#: Enough lines to get past a TS marker, a sysstat banner and a header repeated after a blank line.
HEAD_LINES = 60

# Most specific first: processlist and mysqladmin tables share `+---+` borders; ps listings and
# `top -b` share a PID column; iostat and mpstat share the sysstat banner. The InnoDB monitor, its
# transaction tables and SHOW SLAVE STATUS are `\G` output like a vertical processlist; `vmstat -d`
# (diskstats) has a header vmstat must not claim. MySQL Shell's results hold SHOW ENGINE INNODB STATUS
# and other captures after their `# Query:` header: read first. The slow query log's `# User@Host:` and
# `# Query_time:` lines belong to no other capture, and its statements could look like anything.
# pt-summary's and pt-mysql-summary's reports open with their own header, before tables and listings
# (mounts, top processes, vmstat, processlist counts) that other formats would claim.
_MODULES = (
    "pt_summary",
    "pt_mysql_summary",
    "slowlog",
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


#: What a format module declares at its top level: ``TRAITS`` what damage checks apply to it
#: (parsers/base.py), ``SENSITIVE`` which of its fields hold statements, users, hosts or schemas, which a
#: share link redacts (parsers/sensitive.py).
DECLARED = ("FORMAT", "TRAITS", "SENSITIVE", "sniff", "parse")
#: The type each declaration must have.
DECLARED_TYPES = {"TRAITS": FormatTraits, "SENSITIVE": Sensitive}


class FormatDeclarationError(ImportError):
    """A format module named in ``_MODULES`` lacks one of ``DECLARED`` (or its ``TRAITS`` is not a
    ``FormatTraits``, its ``SENSITIVE`` not a ``Sensitive``)."""


def load(names: Iterable[str]) -> tuple[ModuleType, ...]:
    """The modules ``parsers.<name>`` for ``names``, in that order, each checked to declare
    ``DECLARED``; raises ``FormatDeclarationError`` naming the first that does not."""
    modules = []
    for name in names:
        mod = importlib.import_module(f"parsers.{name}")
        missing = [attr for attr in DECLARED if not hasattr(mod, attr)]
        mistyped = [
            f"{attr} as a {kind.__module__}.{kind.__name__}"
            for attr, kind in DECLARED_TYPES.items()
            if attr not in missing and not isinstance(getattr(mod, attr), kind)
        ]
        if missing or mistyped:
            what = ", ".join(missing + mistyped)
            raise FormatDeclarationError(f"parsers/{name}.py does not declare {what}", name=mod.__name__)
        modules.append(mod)
    return tuple(modules)


#: Format names of earlier versions -> today's (each format is named as its module): sources of
#: cases read before the rename keep the old name, and are looked up under it.
FORMERLY = {
    "mutex-status": "mutex_status",
    "mysqld-error-log": "mysqld_errorlog",
    "mysqlsh-instance": "mysqlsh_instance",
    "pt-stalk-output": "ptstalk_output",
    "pt-stalk-trigger": "ptstalk_trigger",
    "vmstat-headerless": "vmstat_headerless",
}

_PARSERS = load(_MODULES)
_BY_FORMAT = {mod.FORMAT: mod for mod in _PARSERS}
_BY_FORMAT.update({old: _BY_FORMAT[new] for old, new in FORMERLY.items()})
#: Traits of a format no module declares (a name from an older case): no damage check assumes
#: anything of it.
UNDECLARED = FormatTraits(
    short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False
)


def parsers() -> tuple[ModuleType, ...]:
    """All parser modules in detection order."""
    return _PARSERS


def by_format(name: str) -> ModuleType:
    """The parser module whose ``FORMAT`` is ``name`` (or was: ``FORMERLY``); KeyError when there is none."""
    return _BY_FORMAT[name]


def traits(name: str) -> FormatTraits:
    """The ``TRAITS`` of the format ``name`` (``UNDECLARED`` for a name no module has)."""
    mod = _BY_FORMAT.get(name)
    return mod.TRAITS if mod is not None else UNDECLARED


def detect(head: list[str]) -> ModuleType | None:
    """The first parser whose ``sniff`` accepts ``head`` (decoded lines without newlines), or None."""
    for mod in parsers():
        if mod.sniff(head):
            return mod
    return None
