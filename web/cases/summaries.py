"""What the host's header shows of the pt-summary and pt-mysql-summary reports a case holds.

Read from the stored ``Source.meta`` of those members (parsers/pt_summary.py,
parsers/pt_mysql_summary.py): the host's CPUs, memory, disks and RAID, kernel and file systems, and
the server's version, replication role and key variables, each value with the member and line it was
read from. Plain data for the case page (``selectors.case_detail_context``).
"""

from __future__ import annotations

from web.models import Case

#: The formats whose members fill a host's header.
FORMATS = ("pt_summary", "pt_mysql_summary")
#: The server variables the header lists, when the report prints them: what the rules and an engineer
#: read first (memory, durability, caches, replication).
KEY_VARIABLES = (
    "innodb_buffer_pool_size", "innodb_flush_log_at_trx_commit", "innodb_flush_method", "innodb_log_file_size",
    "sync_binlog", "log_bin", "binlog_format", "server_id", "table_open_cache", "tmp_table_size",
    "max_heap_table_size", "sort_buffer_size", "join_buffer_size", "key_buffer_size", "query_cache_type",
    "query_cache_size", "max_allowed_packet", "sql_mode", "wsrep_on", "wsrep_cluster_name",
)  # fmt: skip
#: Kernel file systems a header does not list (the machine's, not where data lives).
PSEUDO_FILESYSTEMS = ("devtmpfs", "proc", "sysfs", "cgroup", "cgroup2", "overlay", "squashfs")


def host_summaries(*, case: Case) -> dict[str, dict[str, object]]:
    """Host name -> ``{"system": ..., "server": ...}`` (each present when the host has that report;
    the first report of a host wins): the facts its header shows, each a ``{"label", "value", "line"}``."""
    out: dict[str, dict[str, object]] = {}
    rows = (
        case.sources.filter(format__in=FORMATS)
        .order_by("member")
        .values_list("host", "member", "format", "meta")
    )
    for host, member, fmt, meta in rows:
        key = "system" if fmt == "pt_summary" else "server"
        if key not in out.setdefault(host, {}):
            out[host][key] = _system(member, meta) if key == "system" else _server(member, meta)
    return out


def _fact(label: str, value: object, line: object) -> dict[str, object]:
    return {"label": label, "value": str(value), "line": line if isinstance(line, int) else _int(line)}


def _int(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def _system(member: str, meta: dict[str, object]) -> dict[str, object]:
    """pt-summary's facts: CPU, memory, kernel, RAID, disks and file systems."""
    facts: dict[str, str] = meta.get("facts") or {}  # type: ignore[assignment]
    lines: dict[str, object] = meta.get("fact_lines") or {}  # type: ignore[assignment]
    rows = []
    if facts.get("cpu_model"):
        counts = [
            _count(facts[k], w)
            for k, w in (("sockets", "socket"), ("cores", "core"), ("threads", "thread"))
            if facts.get(k)
        ]
        rows.append(
            _fact(
                "CPU", " · ".join([facts["cpu_model"], ", ".join(counts)]).strip(" ·"), lines.get("cpu_model")
            )
        )
    if facts.get("memory_total"):
        swap = (
            f", swap {facts['swap_total']} ({facts.get('swap_used', '?')} used)"
            if facts.get("swap_total")
            else ""
        )
        rows.append(_fact("Memory", f"{facts['memory_total']}{swap}", lines.get("memory_total")))
    kernel = " · ".join(facts[k] for k in ("kernel", "release") if facts.get(k))
    if kernel:
        rows.append(_fact("Kernel", kernel, lines.get("kernel")))
    if facts.get("virtualized"):
        rows.append(_fact("Virtualized", facts["virtualized"], lines.get("virtualized")))
    if facts.get("raid_controller"):
        rows.append(_fact("RAID", facts["raid_controller"], lines.get("raid_controller")))
    disks = [
        _fact(
            str(d.get("device")),
            f"{d.get('scheduler') or '?'}, queue {_queue(d.get('queue_size'))}",
            d.get("line"),
        )
        for d in meta.get("disks") or []  # type: ignore[union-attr]
        if isinstance(d, dict)
    ]
    seen, filesystems = set(), []
    for f in meta.get("filesystems") or []:  # type: ignore[union-attr]
        if (
            not isinstance(f, dict)
            or f.get("type") in PSEUDO_FILESYSTEMS
            or (f.get("filesystem"), f.get("mount")) in seen
        ):
            continue
        seen.add((f.get("filesystem"), f.get("mount")))
        used = f.get("used_pct")
        filesystems.append(
            {
                "mount": str(f.get("mount")),
                "filesystem": str(f.get("filesystem")),
                "type": str(f.get("type")),
                "size": str(f.get("size")),
                "used": f"{float(used):.0f} %" if used not in (None, "None") else "?",
                "line": _int(f.get("line")),
            }
        )
    return {"member": member, "facts": rows, "disks": disks, "filesystems": filesystems}


def _count(number: str, word: str) -> str:
    """``1 socket``, ``2 cores``."""
    return f"{number} {word}{'' if number == '1' else 's'}"


def _queue(value: object) -> str:
    number = _int(str(value).split(".")[0]) if value not in (None, "None") else None
    return "?" if number is None else str(number)


def _server(member: str, meta: dict[str, object]) -> dict[str, object]:
    """pt-mysql-summary's facts: version, port, replication role and the key variables."""
    values: dict[str, str] = meta.get("summary_variables") or {}  # type: ignore[assignment]
    lines: dict[str, object] = meta.get("variable_lines") or {}  # type: ignore[assignment]
    rows = []
    if values.get("version"):
        comment = f" ({values['version_comment']})" if values.get("version_comment") else ""
        rows.append(_fact("Version", f"{values['version']}{comment}", lines.get("version")))
    if values.get("port"):
        rows.append(_fact("Port", values["port"], lines.get("port")))
    role = str(meta.get("role") or "none")
    replicas = _int(meta.get("replicas")) or 0
    said = {"source": "source", "replica": "replica", "none": "no replication"}.get(role, role)
    if replicas:
        said += f", {replicas} replica{'s' if replicas != 1 else ''} connected"
    rows.append(_fact("Replication", said, meta.get("role_line")))
    variables = [_fact(name, values[name], lines.get(name)) for name in KEY_VARIABLES if values.get(name)]
    return {"member": member, "facts": rows, "role": role, "variables": variables}
