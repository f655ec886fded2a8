"""Parse ``SHOW GLOBAL VARIABLES`` captures (pt-stalk ``-variables``) into a name -> value dict.

Accepts:
    pt-stalk's ``-variables`` (``mysql -e "SHOW GLOBAL VARIABLES"``: tab-separated ``Variable_name
    Value`` after a ``SHOW GLOBAL VARIABLES`` line, then ``performance_schema.variables_by_thread``,
    ``user_variables_by_thread`` and ``status_by_thread`` sections, which are skipped); the table form
    (``mysql -t``, ``+---+`` borders); one or several snapshots, with or without ``TS`` markers
    (the last snapshot wins); MySQL, Percona Server and MariaDB.

Sample input (pt-stalk 3.7.1 ``-variables``, Percona Server 8.0.42-33)::

    <blank>
    SHOW GLOBAL VARIABLES
    <blank>
    Variable_name	Value
    activate_all_roles_on_login	OFF
    admin_address
    admin_port	33062
    autocommit	ON
    basedir	/usr/

Output:
    frame ``variables``: empty (columns ``ts`` datetime64[ns, UTC] and ``line_no`` int64): a context
    source, its facts are in ``meta``.
    ``meta["variables"]``: dict name -> value (str, as printed; ``mysql -e`` escapes stay escaped);
    ``meta["snapshots"]``: number of variable listings read; and, for the case header, the values of
    ``LIFTED`` (``version``, ``version_comment``, ``hostname``, ``max_connections`` ...) when present.
    ``clock``: ``ts-marker`` when the listing follows a ``TS`` line, else ``inferred``.

Warnings:
    ``odd-line``: a line inside a listing that is neither ``name<TAB>value`` nor ``| name | value |``.

Errors:
    ``ParseError`` at the first line that is not blank, a ``TS`` marker, an SQL statement echo
    (``SHOW ...``, ``select ...``) or a ``Variable_name | Value`` header, before the first listing;
    or when there is no listing at all.

>>> src = parse(["", "SHOW GLOBAL VARIABLES", "", "Variable_name\\tValue", "autocommit\\tON",
...              "version\\t8.0.42-33", "", "select * from performance_schema.variables_by_thread;"],
...             member="v", clock=ClockHints())
>>> src.meta["version"], src.meta["variables"]["autocommit"], len(src.main)
('8.0.42-33', 'ON', 0)
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from parsers.base import (
    Blocks,
    Clock,
    ClockHints,
    FormatTraits,
    ParsedSource,
    ParseError,
    ParseWarning,
    parse_marker,
)
from parsers.sensitive import SERVER

FORMAT = "variables"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False)

#: Variables copied to ``meta`` for the case header and the MySQL rules.
LIFTED = (
    "version",
    "version_comment",
    "hostname",
    "tmpdir",
    "table_open_cache",
    "innodb_flush_log_at_trx_commit",
    "sync_binlog",
    "tmp_table_size",
    "max_heap_table_size",
    "max_connections",
    "thread_handling",
)

#: Sniffing: at least this many rows under the header, and this share of lower-case names (system
#: variables are lower case: ``autocommit``; status variables, read by ``parsers.mysqladmin``, are
#: capitalised: ``Aborted_clients``).
SNIFF_MIN_ROWS = 3
SNIFF_MIN_LOWER_SHARE = 0.8

_TAB_HEADER = re.compile(r"^Variable_name\tValue\s*$")
_TABLE_HEADER = re.compile(r"^\|\s*Variable_name\s*\|\s*Value\s*\|\s*$")
_STATEMENT = re.compile(r"^\s*(show|select|set)\b", re.IGNORECASE)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def _row(line: str, table: bool) -> tuple[str, str] | None:
    """(name, value) of one listing row, or None when ``line`` is not one."""
    if table:
        if not line.startswith("|"):
            return None
        name, sep, rest = line[1:].partition("|")
        value = rest.rstrip()
        if not sep or not value.endswith("|"):
            return None
        name, value = name.strip(), value[:-1].strip()
    else:
        name, sep, value = line.partition("\t")
        if not sep or "\t" in value:
            return None
    return (name, value) if _NAME.match(name) else None


def _variant(variables: dict[str, str], tables: bool, snapshots: int) -> str:
    """``SHOW GLOBAL VARIABLES tab-separated, MariaDB 10.11.19``: layout, server flavour and version."""
    clues = ["SHOW GLOBAL VARIABLES " + ("table (mysql -t)" if tables else "tab-separated")]
    version = variables.get("version", "")
    comment = variables.get("version_comment", "")
    if "MariaDB" in version:
        clues.append(f"MariaDB {version.split('-')[0]}")
    elif "Percona" in comment:
        clues.append(f"Percona Server {version}")
    elif version:
        clues.append(f"MySQL {version}")
    if snapshots > 1:
        clues.append(f"{snapshots} listings")
    return ", ".join(clues)


def sniff(head: list[str]) -> bool:
    """True when ``head`` holds a ``Variable_name | Value`` listing (tab or table) of lower-case names.

    ``head``: the member's first decoded lines; TS markers and the ``SHOW GLOBAL VARIABLES`` echo allowed.
    """
    for i, line in enumerate(head):
        table = bool(_TABLE_HEADER.match(line.strip()))
        if table or _TAB_HEADER.match(line):
            rows = [r for ln in head[i + 1 :] if (r := _row(ln.strip() if table else ln, table))]
            if len(rows) < SNIFF_MIN_ROWS:
                return False
            lower = sum(1 for name, _ in rows if name[:1].islower())
            return lower / len(rows) >= SNIFF_MIN_LOWER_SHARE
    return False


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read a ``SHOW GLOBAL VARIABLES`` capture (lines of text): values in ``meta``, empty main frame.

    Raises ``ParseError`` when the member is not this format (see the module docstring).
    """
    variables: dict[str, str] = {}
    warnings: list[ParseWarning] = []
    snapshots = 0
    in_listing: bool | None = None  # None: outside; else True for table form, False for tab form
    marker_seen = False
    tables = False  # a listing in table form (mysql -t), else tab-separated (mysql -e / -B)
    last_no = 0
    for no, raw in enumerate(stream, start=1):
        last_no = no
        line = raw.rstrip("\r\n")
        if in_listing is not None:
            if line.startswith("+"):
                continue
            row = _row(line, in_listing)
            if row is not None:
                variables[row[0]] = row[1]
                continue
            in_listing = None  # a blank line, a new statement or another result ends the listing
            if line.strip() and not _STATEMENT.match(line) and parse_marker(line) is None:
                if not (line.startswith("|") or "\t" in line):
                    warnings.append(ParseWarning(no, "odd-line", f"not a variable row: {line[:80]!r}"))
        if _TAB_HEADER.match(line) or _TABLE_HEADER.match(line.strip()):
            in_listing = line.startswith("|")
            tables = tables or in_listing
            snapshots += 1
            continue
        if not line.strip() or line.startswith("+") or _STATEMENT.match(line):
            continue
        if parse_marker(line) is not None:
            marker_seen = True
            continue
        if snapshots == 0:
            raise ParseError(member, no, line, "not a SHOW VARIABLES listing")
        # later result sets (variables_by_thread ...) are skipped
    if snapshots == 0 and last_no:
        raise ParseError(member, 1, "", "no 'Variable_name | Value' listing found")
    meta: dict[str, object] = {"variables": variables, "snapshots": snapshots}
    meta.update({k: variables[k] for k in LIFTED if k in variables})
    meta["variant"] = _variant(variables, tables, snapshots)
    frame = pd.DataFrame(
        {"ts": pd.Series([], dtype="datetime64[ns, UTC]"), "line_no": pd.Series([], dtype="int64")}
    )
    return ParsedSource(
        format=FORMAT,
        member=member,
        frames={"variables": frame},
        clock=Clock.TS_MARKER if marker_seen else Clock.INFERRED,
        warnings=warnings,
        meta=meta,
    )


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py).
SENSITIVE = SERVER  # server settings (its host names are the server's own; wsrep_sst_auth: a password)
