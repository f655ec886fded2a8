"""Parse a pt-summary report (the host's hardware and OS) into the facts of the host's header.

Accepts:
    pt-summary's standard output (percona-toolkit 2.2 to 3.x: the same ``name_val`` layout), as a
    support bundle carries it beside a pt-stalk collection (``pt-summary.out``) or on its own; Linux
    sections (Processor, Memory, Mounted Filesystems, Disk Schedulers And Queue Size, RAID Controller
    ...); sizes with a decimal comma (``3,2G``, a comma locale); a report cut short (warned).

Sample input (pt-summary 3.2.1, Debian 12, tests/fixtures/summaries/pt-summary-3.2.1_debian12.out)::

    # Percona Toolkit System Summary Report ######################
            Date | 2026-12-07 02:16:16 UTC (local TZ: UTC +0000)
        Hostname | vm
          Kernel | 6.18.44-fc-v1300
    # Processor ##################################################
      Processors | physical = 1, cores = 2, virtual = 2, hyperthreading = no
          Models | 2xAMD EPYC
    # Memory #####################################################
           Total | 23.5G
            Used | physical = 1.0G, swap allocated = 0.0, swap used = 0.0, virtual = 1.0G
    # Mounted Filesystems ########################################
      Filesystem  Size Used Type     Opts                                                      Mountpoint
      /dev/vda    252G  26% ext4     rw,relatime,discard,resv_strict,resuid=65534,resgid=65534 /
    # Disk Schedulers And Queue Size #############################
             vda | [mq-deadline] 256
    # RAID Controller ############################################
      Controller | No RAID controller detected

Output:
    frame ``untimed``: empty (a report is no sample: it widens no window). Every other frame has
    ``ts`` (NaT), ``line_no`` (int64, the line of the value):

    - ``host_facts``: every ``name | value`` line: ``section``, ``name``, ``value`` (str, as printed);
    - ``host_filesystems``: ``filesystem``, ``size`` (str as printed), ``size_bytes`` (float64, bytes,
      rounded as pt-summary prints it), ``used_pct`` (float64), ``type``, ``options``, ``mount`` (str);
    - ``host_disks``: ``device``, ``scheduler`` (the one in brackets), ``queue_size`` (float64).

    ``meta``: ``host`` (Hostname), ``kernel``, ``ncpu`` (virtual CPUs), ``report_time`` (UTC, ISO 8601),
    ``local_tz``; ``facts`` (``FACTS``: key -> value) and ``fact_lines`` (key -> line);
    ``filesystems`` and ``disks`` (the frames' rows as dicts, ``line`` included); ``raid`` (the RAID
    Controller section's ``name: value`` lines).

Warnings: ``truncated`` (no ``# The End ###`` section); ``odd-line`` (a Mounted Filesystems row that
is not six columns, a size that is not one).

Errors: ``ParseError`` (whole member) when the first non-blank line is not the report's header.

>>> src = parse(["# Percona Toolkit System Summary Report ######", "    Hostname | db1",
...              "      Kernel | 6.1.0", "# Processor ####", "  Processors | physical = 2, cores = 16,"
...              " virtual = 32, hyperthreading = yes", "      Models | 32xIntel(R) Xeon(R) Gold 6226R",
...              "# The End ####"], member="pt-summary.out", clock=ClockHints())
>>> src.meta["host"], src.meta["ncpu"], src.meta["facts"]["cpu_model"], src.meta["facts"]["sockets"]
('db1', 32, 'Intel(R) Xeon(R) Gold 6226R', '2')
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from parsers._summary import (
    Section,
    end_warnings,
    facts_frame,
    report_time,
    sections,
    size_bytes,
    sniff_header,
    untimed,
)
from parsers._summary import source as summary_source
from parsers.base import Blocks, ClockHints, FormatTraits, ParsedSource, ParseWarning
from parsers.sensitive import Sensitive

FORMAT = "pt_summary"
TRAITS = FormatTraits(short_lines=False, unsigned=False, capped_pct=False, blocks=Blocks.NONE, markers=False)

HEADER = "Percona Toolkit System Summary Report"
#: (section, name) of the facts the host's header shows -> their key in ``meta["facts"]``.
FACTS = {
    ("Percona Toolkit System Summary Report", "Platform"): "platform",
    ("Percona Toolkit System Summary Report", "Release"): "release",
    ("Percona Toolkit System Summary Report", "Kernel"): "kernel",
    ("Percona Toolkit System Summary Report", "Virtualized"): "virtualized",
    ("Percona Toolkit System Summary Report", "System"): "system",
    ("Processor", "Models"): "cpu_models",
    ("Processor", "Speeds"): "cpu_speeds",
    ("Memory", "Total"): "memory_total",
    ("Memory", "Swappiness"): "swappiness",
    ("Memory", "Numa Nodes"): "numa_nodes",
    ("RAID Controller", "Controller"): "raid_controller",
}
_PROCESSORS = re.compile(
    r"physical = (?P<sockets>\d+), cores = (?P<cores>\d+), virtual = (?P<threads>\d+)"
    r"(?:, hyperthreading = (?P<hyperthreading>\w+))?"
)
_SWAP = re.compile(r"swap allocated = (?P<swap_total>[^,]+), swap used = (?P<swap_used>[^,]+)")
_MODEL = re.compile(r"^\d+x(?P<model>.+)$")
#: ``[mq-deadline] 256``, ``noop deadline [cfq] 128``: the scheduler in force bracketed, then the queue size.
_SCHEDULER = re.compile(r"\[(?P<scheduler>[^\]]+)\]")
_QUEUE = re.compile(r"(?:^|\s)(?P<queue>\d+)\s*$")
_FS_COLUMNS = 6  # Filesystem Size Used Type Opts Mountpoint


def sniff(head: list[str]) -> bool:
    """True when the first non-blank line is pt-summary's ``# Percona Toolkit System Summary Report ###``."""
    return sniff_header(head, HEADER)


def _filesystems(section: Section, warnings: list[ParseWarning]) -> list[tuple[object, ...]]:
    """Rows of the Mounted Filesystems table (its ``Filesystem Size Used ...`` header skipped)."""
    rows = []
    for no, text in section.lines:
        cells = text.split(None, _FS_COLUMNS - 1)
        if not cells or cells[0] == "Filesystem":
            continue
        used = cells[2].rstrip("%") if len(cells) == _FS_COLUMNS else ""
        if len(cells) < _FS_COLUMNS or not used.isdigit():
            warnings.append(ParseWarning(no, "odd-line", f"not a file system row: {text[:80]!r}"))
            continue
        fs, size, _, kind, options, mount = cells
        rows.append((no, fs, size, size_bytes(size), float(used), kind, options, mount))
    return rows


def _disks(section: Section) -> list[tuple[object, ...]]:
    """Rows of Disk Schedulers And Queue Size: ``vda | [mq-deadline] 256`` (the scheduler in force
    bracketed among the others, then the queue size)."""
    rows = []
    for no, device, value in section.facts():
        m = _SCHEDULER.search(value)
        scheduler = m["scheduler"] if m else value.split()[0] if value else ""
        queue = float(q["queue"]) if (q := _QUEUE.search(value)) else None
        rows.append((no, device, scheduler, queue))
    return rows


def _facts(found: list[Section]) -> tuple[dict[str, str], dict[str, int], list[str]]:
    """(key -> value, key -> line) of ``FACTS`` and the derived keys; the RAID section's lines."""
    facts: dict[str, str] = {}
    lines: dict[str, int] = {}
    raid: list[str] = []
    for section in found:
        for no, name, value in section.facts():
            if section.title == "RAID Controller":
                raid.append(f"{name}: {value}")
            key = FACTS.get((section.title, name))
            parts: dict[str, str] = {key: value} if key else {}
            if (section.title, name) == ("Processor", "Processors") and (m := _PROCESSORS.search(value)):
                parts = {k: v for k, v in m.groupdict().items() if v}
            elif (section.title, name) == ("Memory", "Used") and (m := _SWAP.search(value)):
                parts = {k: v.strip() for k, v in m.groupdict().items()}
            elif key == "cpu_models":
                parts["cpu_model"] = ", ".join(
                    m["model"].strip() if (m := _MODEL.match(p.strip())) else p.strip()
                    for p in value.split(", ")
                )
            for k, v in parts.items():
                facts.setdefault(k, v)
                lines.setdefault(k, no)
    return facts, lines, raid


def parse(stream: Iterable[str], *, member: str, clock: ClockHints) -> ParsedSource:
    """Read a pt-summary report (lines of text); see the module docstring."""
    found = sections(stream, member=member, header=HEADER)
    warnings = end_warnings(found)
    by_title = {s.title: s for s in reversed(found)}
    fs_rows = (
        _filesystems(by_title["Mounted Filesystems"], warnings) if "Mounted Filesystems" in by_title else []
    )
    disk_rows = (
        _disks(by_title["Disk Schedulers And Queue Size"])
        if "Disk Schedulers And Queue Size" in by_title
        else []
    )
    filesystems = untimed(
        fs_rows, ("filesystem", "size", "size_bytes", "used_pct", "type", "options", "mount")
    )
    disks = untimed(disk_rows, ("device", "scheduler", "queue_size"))
    for frame, numbers in ((filesystems, ("size_bytes", "used_pct")), (disks, ("queue_size",))):
        frame[list(numbers)] = frame[list(numbers)].astype("float64")
    facts, fact_lines, raid = _facts(found)
    head = {name: value for _, name, value in found[0].facts()}
    when, zone = report_time(head.get("Date", ""))
    meta: dict[str, object] = {
        "facts": facts,
        "fact_lines": fact_lines,
        "filesystems": _records(filesystems, ("filesystem", "size", "used_pct", "type", "mount")),
        "disks": _records(disks, ("device", "scheduler", "queue_size")),
        "raid": raid,
        "report_time": when,
        "local_tz": zone,
        "variant": _variant(facts, len(found)),
    }
    if head.get("Hostname"):
        meta["host"] = head["Hostname"]
    if facts.get("kernel"):
        meta["kernel"] = facts["kernel"]
    if facts.get("threads", "").isdigit() and int(facts["threads"]) > 0:
        meta["ncpu"] = int(facts["threads"])
    frames = {"host_facts": facts_frame(found), "host_filesystems": filesystems, "host_disks": disks}
    return summary_source(FORMAT, member, frames, warnings, meta)


def _records(frame: pd.DataFrame, columns: tuple[str, ...]) -> list[dict[str, object]]:
    """The rows of ``frame`` as dicts of ``columns`` and ``line`` (NaN as None), for ``meta``."""
    out = []
    for row in frame.itertuples(index=False):
        record = {c: (None if pd.isna(v := getattr(row, c)) else v) for c in columns}
        out.append({**record, "line": int(row.line_no)})
    return out


def _variant(facts: dict[str, str], count: int) -> str:
    """``pt-summary, Linux, Debian GNU/Linux 12 (bookworm), 14 sections``."""
    clues = ["pt-summary"] + [facts[k] for k in ("platform", "release") if facts.get(k)]
    return ", ".join([*clues, f"{count} sections"])


# What a share link redacts in this format's frames and raw lines (parsers/sensitive.py): the host's
# own name is collected from ``meta["host"]`` (a server name); Network Connections lists client
# addresses (collected); Top Processes' USER is an operating system account (mysql, root), as in top.
SENSITIVE = Sensitive(
    line_patterns=(re.compile(r"^ {4}(?P<host>[0-9A-Fa-f.:]{7,}) +\d+\s*$"),),
    words=("linux",),
)
