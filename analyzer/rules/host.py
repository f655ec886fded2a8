"""Host rules from pt-stalk's context members: file systems (``-df``/``-disk-space``), kernel settings
(``-sysctl``), NUMA counters (``-numastat``), client connections (``-netstat``) and slab caches
(``-slabinfo``).

A full file system stops MySQL writing (binary logs, temporary tables, the redo log); kernel settings
that fight the database (swappiness, a listen queue shorter than back_log, large dirty ratios); NUMA
misses; a client that opens and closes connections by the thousand. Each finding names its culprit: a
mount, a setting or a client host. Sources: df(1), kernel Documentation/admin-guide/sysctl/vm.rst and
net.rst, numastat(8), netstat(8), slabinfo(5), docs/background.md ("Name the culprit").
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from analyzer.detect import cite, span, variable_number
from analyzer.findings import Culprit, Evidence, Finding, Severity, Window
from analyzer.rules.registry import rule
from analyzer.texts import RuleTexts
from analyzer.timeline.timeline import Timeline
from analyzer.waits.holders import Holding
from analyzer.waits.holders.slots import IMAGE_MOUNT_PREFIXES, disk_holdings, mount_of, mysql_paths

# --- filesystem-full -------------------------------------------------------------------------
FS_WARNING_PCT = (
    90.0  # docs/background.md: 90 % used is a warning (a burst of tmp tables or binlogs fills the rest)
)
FS_CRITICAL_PCT = 98.0  # docs/background.md: 98 %: writes fail any moment (ext4 keeps 5 % for root only)
FS_TEXTS = RuleTexts(
    title="File system {mount} is {use_pct:.0f} % full ({avail} free){holds_title}",
    explanation=(
        "{mount} ({filesystem}, {size}) reached {use_pct:.0f} % of its {what} during the capture, {avail} "
        "left: what is written there waits for disk space. "
        "{holds_sentence}{fills_sentence}When it fills, MySQL stops: a binary log or redo log write waits "
        '("Waiting for '
        'someone to free space"), temporary tables fail with "The table is full", and a crash recovery '
        "can fail to start."
    ),
    recommendation=(
        "Free space on {mount} now: remove or move what is not MySQL's; purge binary logs only up to what\n"
        "every replica has read (SHOW REPLICA STATUS), with PURGE BINARY LOGS BEFORE ...; point tmpdir at\n"
        "a file system with room (it needs a restart); then alert at 80 %."
    ),
    caveats=(
        "df rounds Use% up and counts the blocks reserved for root (5 % on ext4) as not available.",
        "A file system that is full but holds none of MySQL's files matters only to what writes there.",
    ),
    sources=("df(1), GNU coreutils", "MySQL 8.4 Reference Manual, How MySQL Handles a Full Disk"),
    disproof="If the mount holds none of MySQL's paths and nothing writes there, MySQL is not concerned.",
    confidence="{runs} df run(s); MySQL paths from {paths_from}",
)


def windows_of(tl: Timeline, rows: pd.DataFrame) -> list[Window]:
    """The window of ``rows`` (``span``); for rows without a time (a loose ``sysctl -a``), the
    capture's window: a setting or a state read once holds for the whole capture. Empty when nothing
    in the bundle has a time."""
    timed = rows[rows["ts"].notna()] if len(rows) else rows
    if len(timed):
        return span(timed)
    window = tl.capture_window()
    return [Window(*window)] if window is not None else []


def _human_kib(kib: float) -> str:
    for unit, size in (("TiB", 1024.0**3), ("GiB", 1024.0**2), ("MiB", 1024.0)):
        if kib >= size:
            return f"{kib / size:.1f} {unit}"
    return f"{kib:.0f} KiB"


@rule(key="filesystem-full", requires=("df",), optional=("variables", "processlist"))
def filesystem_full(tl: Timeline) -> Finding | None:
    """A mount at FS_WARNING_PCT (or its inodes) or more in ``df``; the mount holding MySQL's files first."""
    df = tl.frame("df")
    df = df[~df["mount"].astype(str).str.startswith(IMAGE_MOUNT_PREFIXES)]
    if not len(df):
        return None
    mounts = sorted(df["mount"].astype(str).unique())
    held: dict[str, list[tuple[str, str, str]]] = {}
    for name, what, path in mysql_paths(tl.variables):
        m = mount_of(path, mounts)
        if m is not None:
            held.setdefault(m, []).append((name, what, path))
    candidates = []
    for mount, rows in df.groupby(df["mount"].astype(str), sort=False):
        space = rows["use_pct"].max()
        inodes = rows["inodes_use_pct"].max()
        worst, what = (
            (inodes, "inodes")
            if pd.notna(inodes) and (pd.isna(space) or inodes > space)
            else (space, "space")
        )
        if pd.isna(worst) or worst < FS_WARNING_PCT:
            continue
        ours = mount in held or not tl.variables
        severity = Severity.CRITICAL if worst >= FS_CRITICAL_PCT else Severity.WARNING
        if not ours:
            severity = Severity.WARNING if severity is Severity.CRITICAL else Severity.INFO
        candidates.append((severity.rank, not ours, -worst, mount, what, rows, severity, worst))
    if not candidates:
        return None
    _, _, _, mount, what, rows, severity, worst = min(candidates, key=lambda c: c[:4])
    column = "inodes_use_pct" if what == "inodes" else "use_pct"
    hot = rows[rows[column] >= FS_WARNING_PCT]
    last = rows.sort_values("ts").iloc[-1]
    things = held.get(mount, [])
    holds = ", ".join(f"{what_} ({name} = {path})" for name, what_, path in things)
    avail = (
        _human_kib(float(last["avail_kib"]))
        if pd.notna(last["avail_kib"])
        else f"{last['inodes_free']:,.0f} inodes"
    )
    evidence = [
        cite(tl, f"{mount} {what} used (max)", round(float(worst), 1), "%", f"df.{column}", hot),
        cite(tl, f"{mount} available (last run)", avail, "", "df.avail_kib", rows.tail(1)),
    ]
    evidence += [
        Evidence(f"{name} (server variable)", path, "", f"variables.{name}") for name, _, path in things
    ]
    holding, fills = _fills(tl, mount)
    finding = FS_TEXTS.finding(
        "filesystem-full",
        severity,
        windows_of(tl, hot),
        evidence,
        mount=mount,
        filesystem=last["filesystem"],
        size=_human_kib(float(last["size_kib"])) if pd.notna(last["size_kib"]) else "size unknown",
        use_pct=float(worst),
        what=what,
        avail=avail,
        holds_title=f": it holds MySQL's {', '.join(dict.fromkeys(w for _, w, _ in things))}"
        if things
        else "",
        holds_sentence=f"MySQL keeps its {holds} there. "
        if things
        else (
            "The bundle has no -variables to tell what MySQL keeps there. "
            if not tl.variables
            else "None of MySQL's paths (datadir, tmpdir, binary and relay logs) is on it. "
        ),
        runs=int(df["ts"].nunique()),
        paths_from="-variables" if tl.variables else "nowhere (no -variables)",
        fills_sentence=f"What fills it: {fills}. " if fills else "",
    )
    return _with_holder(finding, holding, mount, holds, evidence)


def _fills(tl: Timeline, mount: str) -> tuple[Holding | None, str]:
    """The disk-space holding of ``mount`` (``analyzer.waits.holders.slots.disk_space``) and what fills
    it (its growth over the capture, the sessions spilling temporary files there), '' when not shown."""
    holding = next((h for h in disk_holdings(tl) if h.holder is not None and h.holder.id == mount), None)
    statement = holding.holder.statement if holding is not None and holding.holder is not None else ""
    return holding, (statement or "").partition("; ")[2]


def _with_holder(
    finding: Finding, holding: Holding | None, mount: str, holds: str, evidence: list[Evidence]
) -> Finding:
    """``finding`` with its culprit, the mount as the holding names it, and the holding's fix first
    when the bundle shows what fills it."""
    if holding is None or holding.holder is None:
        culprit = Culprit(kind="filesystem", id=mount, statement=holds or None, evidence=tuple(evidence))
        return dataclasses.replace(finding, culprit=culprit)
    fills = (holding.holder.statement or "").partition("; ")[2]
    extra = tuple(e for e in holding.evidence if e not in finding.evidence)
    return dataclasses.replace(
        finding,
        evidence=finding.evidence + extra,
        recommendation=f"{holding.fix}\n{finding.recommendation}" if fills else finding.recommendation,
        culprit=dataclasses.replace(
            holding.holder, statement=holding.holder.statement if holds or fills else None
        ),
    )


# --- kernel-settings -------------------------------------------------------------------------
#: Above this the kernel prefers swapping the buffer pool out over dropping file cache (vm.rst,
#: "swappiness"); MySQL and Percona advise 1 to 10 on a dedicated database host. Default 60: info only.
SWAPPINESS_MAX = 30
#: Dirty page ratios above these let gigabytes of writes pile up before a burst of writeback stalls
#: every writer, InnoDB's fsyncs included (vm.rst, "dirty_ratio"; kernel defaults 20 and 10).
DIRTY_RATIO_MAX = 40
DIRTY_BACKGROUND_RATIO_MAX = 20

SYSCTL_TEXTS = RuleTexts(
    title="Kernel setting {first_name} = {first_value}: {first_problem}",
    explanation="The host's sysctl settings work against the database: {problems}.",
    recommendation=("Set in /etc/sysctl.d/ and apply with sysctl --system:\n{commands}"),
    caveats=("sysctl -a shows the settings at the capture; a change since is not seen.",),
    sources=(
        "kernel Documentation/admin-guide/sysctl/vm.rst and net.rst",
        "MySQL 8.4 Reference Manual, back_log",
    ),
    disproof="If the host is not dedicated to MySQL, the other workloads may need these values.",
    confidence="sysctl -a{with_variables}",
)


def _int(value: str | None) -> int | None:
    try:
        return int(str(value).split()[0]) if value not in (None, "") else None
    except ValueError:
        return None


@rule(key="kernel-settings", requires=("sysctl",), optional=("variables",))
def kernel_settings(tl: Timeline) -> Finding | None:
    """somaxconn below back_log, dirty ratios above DIRTY_*_MAX, swappiness above SWAPPINESS_MAX."""
    rows = tl.frame("sysctl")
    last = rows.drop_duplicates("name", keep="last").set_index("name")
    value = {name: str(v) for name, v in last["value"].items()}
    problems: list[tuple[Severity, str, str, str, str]] = []  # severity, name, value, problem, command
    somaxconn, back_log = _int(value.get("net.core.somaxconn")), variable_number(tl, "back_log")
    if somaxconn is not None and back_log is not None and somaxconn < back_log:
        problems.append(
            (
                Severity.WARNING,
                "net.core.somaxconn",
                str(somaxconn),
                (f"below back_log ({back_log:.0f}): the kernel caps mysqld's listen queue at {somaxconn}"),
                f"net.core.somaxconn = {back_log:.0f}",
            )
        )
    dirty, dirty_bg = _int(value.get("vm.dirty_ratio")), _int(value.get("vm.dirty_background_ratio"))
    if not _int(value.get("vm.dirty_bytes")) and dirty is not None and dirty > DIRTY_RATIO_MAX:
        problems.append(
            (
                Severity.WARNING,
                "vm.dirty_ratio",
                str(dirty),
                (f"{dirty} % of memory may be dirty before writers are throttled (bursts of writeback)"),
                "vm.dirty_ratio = 10",
            )
        )
    if (
        not _int(value.get("vm.dirty_background_bytes"))
        and dirty_bg is not None
        and dirty_bg > DIRTY_BACKGROUND_RATIO_MAX
    ):
        problems.append(
            (
                Severity.INFO,
                "vm.dirty_background_ratio",
                str(dirty_bg),
                f"background writeback starts only at {dirty_bg} % of memory dirty",
                "vm.dirty_background_ratio = 5",
            )
        )
    swappiness = _int(value.get("vm.swappiness"))
    if swappiness is not None and swappiness > SWAPPINESS_MAX:
        problems.append(
            (
                Severity.INFO,
                "vm.swappiness",
                str(swappiness),
                "high for a database host: the kernel swaps out the buffer pool to keep file cache",
                "vm.swappiness = 1",
            )
        )
    if not problems:
        return None
    problems.sort(key=lambda p: p[0].rank)
    severity, name, val, problem, _ = problems[0]
    evidence = [
        cite(tl, f"{n} (sysctl)", v, "", f"sysctl.{n}", rows[rows["name"] == n].tail(1))
        for _, n, v, _, _ in problems
    ]
    if back_log is not None:
        evidence.append(Evidence("back_log (server variable)", f"{back_log:.0f}", "", "variables.back_log"))
    finding = SYSCTL_TEXTS.finding(
        "kernel-settings",
        severity,
        windows_of(tl, rows),
        evidence,
        first_name=name,
        first_value=val,
        first_problem=problem,
        problems="; ".join(f"{n} = {v}: {p}" for _, n, v, p, _ in problems),
        commands="\n".join(c for *_, c in problems),
        with_variables=" and -variables" if tl.variables else "",
    )
    culprit = Culprit(kind="setting", id=name, statement=val, evidence=tuple(evidence[:1]))
    return dataclasses.replace(finding, culprit=culprit)


# --- client-connection-storm -----------------------------------------------------------------
#: docs/background.md: TIME_WAIT or SYN_RECV sockets to the MySQL port "in the thousands": a client that
#: connects per request (no pool); below this it is ordinary churn.
CONN_STATE_MIN = 1000
#: One client holding most connections: this share of ESTABLISHED sockets, of at least
#: CONN_ONE_CLIENT_MIN, with at least two clients (a single application server is not a storm).
CONN_ONE_CLIENT_SHARE = 0.8
CONN_ONE_CLIENT_MIN = 500
#: MySQL's default port, when the bundle has no -variables.
DEFAULT_MYSQL_PORT = 3306

CONN_TEXTS = RuleTexts(
    title="Client {client} {what} to MySQL's port {port}",
    explanation=(
        "netstat shows {peak:,} sockets {state_words} to port {port} at {at}, {client_share:.0f} % of them "
        "from "
        "{client}: {meaning}"
    ),
    recommendation=(
        "Pool connections at the application ({client}): a pool keeps a few connections open instead of "
        "one per\n"
        "request. net.ipv4.tcp_tw_reuse lets a client reuse TIME_WAIT ports, with care; raise\n"
        "thread_cache_size so each new connection costs less."
    ),
    caveats=(
        "A connection between two processes of this host is listed from both ends.",
        "netstat lists every socket of the host; only those to MySQL's port are counted here.",
    ),
    sources=("netstat(8), net-tools", "RFC 793 (TIME-WAIT lasts 2 MSL, 60 s on Linux)"),
    disproof="If the sockets belong to a health check that connects once a second, they are not load.",
    confidence="{snapshots} netstat snapshot(s)",
)


@rule(key="client-connection-storm", requires=("netstat_conns",), optional=("variables",))
def client_connection_storm(tl: Timeline) -> Finding | None:
    """TIME_WAIT or SYN_RECV sockets to the MySQL port >= CONN_STATE_MIN, or one client holding
    CONN_ONE_CLIENT_SHARE of >= CONN_ONE_CLIENT_MIN established connections."""
    port = int(variable_number(tl, "port") or DEFAULT_MYSQL_PORT)
    nc = tl.frame("netstat_conns")
    mine = nc[(nc["server_port"] == port) & (nc["direction"] == "in")]
    if not len(mine):
        return None
    per = mine.groupby(["ts", "state"], observed=True)["sockets"].sum().unstack(fill_value=0)
    for state, words, meaning in (
        (
            "TIME_WAIT",
            "in TIME_WAIT",
            "each is a connection opened and closed within the last minute: the client connects per request.",
        ),
        (
            "SYN_RECV",
            "half-open (SYN_RECV)",
            "connections arrive faster than mysqld accepts them, or a SYN flood.",
        ),
    ):
        if state in per and per[state].max() >= CONN_STATE_MIN:
            at = per[state].idxmax()
            rows = mine[(mine["state"] == state) & (mine["ts"] == at)]
            by_client = rows.groupby("client")["sockets"].sum().sort_values(ascending=False)
            client, n = str(by_client.index[0]), int(by_client.iloc[0])
            peak = int(per[state].max())
            what = f"left {peak:,} sockets {words}"
            return _storm(tl, mine, state, at, client, n, peak, what, words, meaning, port)
    if "ESTABLISHED" in per:
        est = mine[mine["state"] == "ESTABLISHED"]
        for at, rows in est.groupby("ts"):
            by_client = rows.groupby("client")["sockets"].sum().sort_values(ascending=False)
            total = int(by_client.sum())
            if (
                len(by_client) >= 2
                and total >= CONN_ONE_CLIENT_MIN
                and by_client.iloc[0] >= CONN_ONE_CLIENT_SHARE * total
            ):
                client, n = str(by_client.index[0]), int(by_client.iloc[0])
                meaning = (
                    "one client holds most of the server's connections (a leak or a pool sized for "
                    "many servers)."
                )
                return _storm(
                    tl,
                    mine,
                    "ESTABLISHED",
                    at,
                    client,
                    n,
                    total,
                    f"holds {n:,} of {total:,} connections",
                    "established",
                    meaning,
                    port,
                )
    return None


def _storm(tl, mine, state, at, client, n, peak, what, words, meaning, port) -> Finding:  # noqa: ANN001, PLR0913
    rows = mine[(mine["state"] == state) & (mine["ts"] == at)]
    evidence = [
        cite(tl, f"sockets {words} to port {port} (peak)", peak, "", "netstat_conns.state", rows),
        cite(tl, f"of them from {client}", n, "", "netstat_conns.state", rows[rows["client"] == client]),
    ]
    in_state = mine[mine["state"] == state]
    finding = CONN_TEXTS.finding(
        "client-connection-storm",
        Severity.WARNING,
        windows_of(tl, in_state),
        evidence,
        client=client,
        what=what,
        port=port,
        peak=peak,
        state_words=words,
        at=pd.Timestamp(at).strftime("%H:%M:%S"),
        client_share=100.0 * n / peak if peak else 0.0,
        meaning=meaning,
        snapshots=int(tl.frame("netstat_conns")["ts"].nunique()),
    )
    culprit = Culprit(
        kind="host",
        id=client,
        host=client,
        statement=f"{n:,} sockets {words} to port {port}",
        evidence=tuple(evidence),
    )
    return dataclasses.replace(finding, culprit=culprit)


# --- numa-imbalance --------------------------------------------------------------------------
#: numa_miss pages per second (all nodes) above which allocations spill to a remote node often
#: enough to matter: 1,000 pages/s is 4 MiB/s of memory placed on the wrong node (numastat(8)).
NUMA_MISS_PER_S_MIN = 1000.0
#: ... and that share of all allocations (numa_hit + numa_miss) in the capture.
NUMA_MISS_SHARE_MIN = 0.01

NUMA_TEXTS = RuleTexts(
    title=(
        "NUMA node {full} full: {foreign_per_s:,.0f} pages/s meant for it went to another node "
        "({share:.1f} % of allocations)"
    ),
    explanation=(
        "Node {full} ran out of free memory: its numa_foreign grew by {foreign_per_s:,.0f} pages per second "
        "(allocations that preferred node {full} and were placed elsewhere), and numa_miss by "
        "{miss_per_s:,.0f} "
        "pages per second across the {nodes} nodes ({share:.1f} % of allocations){landed}. Memory on another "
        "node is slower to reach, and the kernel may reclaim or swap on the full node while others have "
        "room.{interleave}"
    ),
    recommendation=(
        "Interleave mysqld's memory across the nodes: innodb_numa_interleave = ON (MySQL 5.7+, MariaDB "
        "10.2+),\n"
        "or start mysqld under numactl --interleave=all; keep vm.zone_reclaim_mode = 0."
    ),
    caveats=("numastat counts the whole host's allocations, not only mysqld's.",),
    sources=("numastat(8), numactl", "kernel Documentation/admin-guide/numastat.rst"),
    disproof=(
        "If mysqld's memory is interleaved already and the misses come from another process, MySQL is "
        "not concerned."
    ),
    confidence="{snapshots} numastat snapshot(s)",
)


@rule(key="numa-imbalance", requires=("numastat",), optional=("variables",))
def numa_imbalance(tl: Timeline) -> Finding | None:
    """numa_miss per second (all nodes) >= NUMA_MISS_PER_S_MIN and >= NUMA_MISS_SHARE_MIN of allocations."""
    ns = tl.frame("numastat")
    if ns["node"].nunique() < 2:
        return None
    rates = ns.groupby("field")["per_s"].sum() / max(ns["ts"].nunique() - 1, 1)
    miss, hit = float(rates.get("numa_miss", 0.0)), float(rates.get("numa_hit", 0.0))
    share = miss / (miss + hit) if miss + hit else 0.0
    if miss < NUMA_MISS_PER_S_MIN or share < NUMA_MISS_SHARE_MIN:
        return None
    rows = ns[(ns["field"] == "numa_miss") & (ns["per_s"] > 0)]
    per_node = ns.groupby(["field", "node"])["per_s"].sum() / max(ns["ts"].nunique() - 1, 1)
    foreign = per_node.get("numa_foreign", pd.Series(dtype=float))
    missed = per_node.get("numa_miss", pd.Series(dtype=float))
    landed = int(missed.idxmax()) if len(missed) and missed.max() > 0 else None
    # the full node is the one whose allocations went elsewhere (numa_foreign); a listing without that
    # counter: the node that received the fewest misses
    full = int(foreign.idxmax()) if len(foreign) and foreign.max() > 0 else int(missed.idxmin())
    interleave = tl.variables.get("innodb_numa_interleave")
    full_rows = ns[(ns["field"] == "numa_foreign") & (ns["node"] == full) & (ns["per_s"] > 0)]
    evidence = [cite(tl, "numa_miss (all nodes)", round(miss, 1), "pages/s", "numastat.numa_miss", rows)]
    if len(full_rows):
        evidence.insert(
            0,
            cite(
                tl,
                f"node{full} numa_foreign",
                round(float(foreign.max()), 1),
                "pages/s",
                "numastat.numa_foreign",
                full_rows,
            ),
        )
    finding = NUMA_TEXTS.finding(
        "numa-imbalance",
        Severity.WARNING,
        windows_of(tl, rows),
        evidence,
        miss_per_s=miss,
        share=100 * share,
        nodes=int(ns["node"].nunique()),
        full=full,
        foreign_per_s=float(foreign.max()) if len(foreign) else miss,
        landed=f", most of it on node {landed}" if landed is not None and landed != full else "",
        interleave=f" innodb_numa_interleave is {interleave}." if interleave else "",
        snapshots=int(ns["ts"].nunique()),
    )
    if interleave and interleave.upper() == "OFF":
        finding = dataclasses.replace(
            finding,
            culprit=Culprit(
                kind="setting", id="innodb_numa_interleave", statement=interleave, evidence=tuple(evidence)
            ),
        )
    return finding


# --- slab-cache-growth -----------------------------------------------------------------------
#: The caches of file names and inodes (slabinfo(5)): ``dentry`` and every ``*inode*`` cache
#: (``ext4_inode_cache``, ``xfs_inode``, ``proc_inode_cache``, ``shmem_inode_cache`` ...).
SLAB_FILE_CACHES = r"^(?:dentry|.*inode.*)$"
#: Growth that is a workload creating files by the thousand a second (a 192-byte dentry and a
#: ~1 KiB inode per file: 10 MiB/s is about 8,000 new files a second), not the cache warming up.
SLAB_GROWTH_MIB_PER_S = 10.0
#: ... over at least this long (pt-stalk samples every second) ...
SLAB_MIN_SECONDS = 10.0
#: ... to at least this size: below it the caches are small whatever their growth.
SLAB_MIN_GIB = 1.0

SLAB_TEXTS = RuleTexts(
    title="Dentry and inode caches grew by {rate:.0f} MiB/s to {size_gib:.1f} GiB",
    explanation=(
        "The kernel's caches of file names and inodes ({caches}) grew from {first_gib:.2f} GiB to "
        "{size_gib:.2f} GiB in {seconds:.0f} s ({rate:.0f} MiB/s): something creates (or looks up) files by "
        "the thousand each second, such as on-disk temporary tables in tmpdir or a backup walking the "
        "datadir. "
        "The caches are reclaimable, but reclaiming millions of entries costs CPU in the threads that "
        "allocate memory."
    ),
    recommendation=(
        "Find what creates the files (tmp-table-churn, D-state threads in unlinkat/path_openat); move\n"
        "tmpdir to tmpfs or fix the query. vm.vfs_cache_pressure above 100 reclaims these caches sooner."
    ),
    caveats=("slabinfo counts the whole host's caches, not only mysqld's files.",),
    sources=("slabinfo(5)", "kernel Documentation/admin-guide/sysctl/vm.rst (vfs_cache_pressure)"),
    disproof="If the files belong to another service (a backup, a log shipper), MySQL only shares the host.",
    confidence="{snapshots} slabinfo snapshot(s)",
)


@rule(key="slab-cache-growth", requires=("slabinfo",))
def slab_cache_growth(tl: Timeline) -> Finding | None:
    """Dentry and inode caches growing >= SLAB_GROWTH_MIB_PER_S over >= SLAB_MIN_SECONDS to >=
    SLAB_MIN_GIB."""
    slab = tl.frame("slabinfo")
    files = slab[slab["cache"].astype(str).str.match(SLAB_FILE_CACHES).to_numpy(dtype=bool)]
    if not len(files):
        return None
    total = files.groupby("ts")["size_kib"].sum().sort_index()
    seconds = (total.index[-1] - total.index[0]).total_seconds()
    if seconds < SLAB_MIN_SECONDS:
        return None
    rate = (total.iloc[-1] - total.iloc[0]) / 1024.0 / seconds
    size_gib = total.iloc[-1] / 1024.0**2
    if rate < SLAB_GROWTH_MIB_PER_S or size_gib < SLAB_MIN_GIB:
        return None
    biggest = files.groupby("cache", observed=True)["size_kib"].max().sort_values(ascending=False).head(3)
    evidence = [
        cite(tl, "dentry + inode caches (last)", round(size_gib, 2), "GiB", "slabinfo.size_kib", files),
        cite(tl, "their growth", round(rate, 1), "MiB/s", "slabinfo.size_kib", files),
    ]
    return SLAB_TEXTS.finding(
        "slab-cache-growth",
        Severity.INFO,
        [Window(total.index[0], total.index[-1])],
        evidence,
        rate=rate,
        size_gib=size_gib,
        first_gib=total.iloc[0] / 1024.0**2,
        seconds=seconds,
        caches=", ".join(str(c) for c in biggest.index),
        snapshots=len(total),
    )
