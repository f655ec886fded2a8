"""Holder readers (see analyzer.waits.holders): connection slots, disk space, the table cache and open files.

These resources are held by many at once, and read from counters and file systems as much as from
sessions, so their readers run whether or not a session is seen waiting (``always=True``):

- ``CONNECTION_SLOT``: who holds the connections when the server refuses new ones
  (``Connection_errors_max_connections`` grows, ``Threads_connected`` or ``Max_used_connections``
  reaches ``max_connections``), or when an account is at its ``max_user_connections``. The holder
  is the account (user@client host, culprit kind ``account``) holding most of them, from the
  processlist (its kept rows and ``processlist_accounts``, the sessions counted by account), with
  their Command and Time. An account whose connections sit idle (``Sleep``) for long leaks its pool:
  the fix is that application's pool, not ``max_connections`` (MySQL 8.4 Reference Manual, "Too
  many connections"; "Setting Account Resource Limits").
- ``DISK_SPACE``: the file system (a mount of ``df``) at ``FS_WARNING_PCT`` or more, what MySQL keeps
  there, how fast it filled during the capture, and the sessions filling it when the processlist
  shows them (temporary tables and sorts spilling to tmpdir, copies of ALTER TABLE) (MySQL 8.4
  Reference Manual, "How MySQL Handles a Full Disk", "Where MySQL Stores Temporary Files").
- ``TABLE_CACHE``: the table cache (``Open_tables`` against ``table_open_cache``, the
  ``Opened_tables`` rate) and open files (``Open_files`` against ``open_files_limit``). No session
  holds a cache slot long enough for a capture to show it: the holding says what the counters show,
  with no holder, and the setting stays the culprit (MySQL 8.4 Reference Manual, "How MySQL Opens
  and Closes Tables", "File Not Found and Similar Errors").

Pure: no I/O, no clock, no Django.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from analyzer.detect import cite, growth, status, variable_number
from analyzer.findings import Culprit, Evidence, Window
from analyzer.timeline.accounts import summed
from analyzer.timeline.timeline import Timeline
from analyzer.waits.holding import HOLDER_MIN_S, Holding, reads
from analyzer.waits.model import Resource

# --- connection slots ----------------------------------------------------------------------------
#: The server is saturated when Threads_connected reaches 90 % of max_connections (the rule
#: connection-saturation's bar, docs/background.md).
SLOTS_SATURATED_SHARE = 0.9
#: An account holds the slots when it has at least half the connections of the snapshots at the
#: peak: the others together hold fewer.
ACCOUNT_HOLDS_SHARE = 0.5
#: Its connections leak when most of them (this share) are idle (Command Sleep) ...
IDLE_SHARE = 0.5
#: ... for this long on average (Time, s): a pool borrowing and returning connections runs a
#: statement on each every few seconds; one left idle for 30 s or more is not in use.
IDLE_LEAK_S = 30.0
#: With no global max_user_connections, an account is held at its own limit when its connections
#: stay at one number in this many snapshots or more ...
PLATEAU_SNAPSHOTS = 3
#: ... of at least this many connections (a pool's few idle connections are not a ceiling).
PLATEAU_MIN_SESSIONS = 5
#: The Command of an idle session (MySQL 8.4 "Thread Command Values": waiting for its client).
IDLE_COMMAND = "Sleep"

#: Open_files at 75 % or more of open_files_limit is near it (the rule table-cache-full's bar).
OPEN_FILES_NEAR_LIMIT = 0.75

# --- disk space ----------------------------------------------------------------------------------
#: A file system 90 % used is nearly full (docs/background.md); 98 % is full for writing (ext4
#: keeps 5 % for root, df rounds up).
FS_WARNING_PCT = 90.0
FS_CRITICAL_PCT = 98.0
#: Read-only images are always 100 % full (snap packages on loop devices): never a finding.
IMAGE_MOUNT_PREFIXES = ("/snap/", "/var/lib/snapd/")
#: Server variables naming where MySQL writes, and what each holds (MySQL 8.4 and MariaDB 10.11 manuals).
MYSQL_PATHS = (
    ("datadir", "datadir"),
    ("tmpdir", "tmpdir"),
    ("log_bin_basename", "binary logs"),
    ("relay_log_basename", "relay logs"),
    ("innodb_data_home_dir", "InnoDB system tablespace"),
    ("innodb_log_group_home_dir", "redo log"),
    ("innodb_undo_directory", "undo tablespaces"),
    ("innodb_tmpdir", "online ALTER temporary files"),
    ("log_error", "error log"),
)
#: States of a session writing temporary files or table copies (MySQL 8.4 "General Thread States";
#: MariaDB "Thread States"): on-disk temporary tables, sort merge files, ALTER TABLE's copy.
FILLING_STATES = (
    r"(?i)tmp table|converting heap to|creating sort index|sorting result|filesort|"
    r"copy to tmp table|copying to tmp table|creating tmp table|removing tmp table|alter table"
)
#: A statement that sorts or groups (a query fingerprint): its sort files and temporary tables go to
#: tmpdir when they outgrow memory (MySQL 8.4 "Internal Temporary Table Use in MySQL", "ORDER BY
#: Optimization"), whatever State the server shows (MariaDB: ``Sending data``).
SORTING_STATEMENT = r"(?i)\border by\b|\bgroup by\b|\bdistinct\b|\bunion\b"
#: A session fills a file system when seen so while it is full, or this close to it.
FILLING_SLACK = pd.Timedelta(seconds=10)
#: Session Ids listed in the text of what fills a file system.
FILLERS_LISTED = 10
#: A session is shown filling a file system when seen in such a state in this many snapshots.
FILLING_MIN_SNAPSHOTS = 2


# -------------------------------------------------------------------------------------------------
# connection slots
# -------------------------------------------------------------------------------------------------


def account_sessions(tl: Timeline) -> pd.DataFrame:
    """Sessions per snapshot and account, every session counted once: ``ts user client command
    sessions time_min_s time_max_s time_sum_s`` (Time in s). The processlist's kept rows (one each)
    and ``processlist_accounts`` (the sessions counted by account, ``parsers.processlist``) summed.
    The collector's own session is left out (Command Query and not active)."""
    pl = tl.frame("processlist")
    parts = []
    if len(pl) and {"user", "host", "command"} <= set(pl.columns):
        own = pl["command"].astype("string").eq("Query").fillna(False) & ~pl["active"].astype(bool)
        pl = pl[~own.to_numpy()]
        t = pd.to_numeric(pl["time_s"], errors="coerce").fillna(0.0).astype("float64")
        parts.append(
            pd.DataFrame(
                {
                    "ts": pl["ts"],
                    "user": pl["user"].astype("string"),
                    "client": pl["host"].astype("string"),
                    "command": pl["command"].astype("string"),
                    "sessions": 1,
                    "time_min_s": t,
                    "time_max_s": t,
                    "time_sum_s": t,
                }
            )
        )
    counted = tl.frame("processlist_accounts")
    if len(counted) and "sessions" in counted:
        counted = counted[~counted["command"].astype("string").eq("Query").fillna(False).to_numpy()]
        parts.append(
            counted[
                ["ts", "user", "client", "command", "sessions", "time_min_s", "time_max_s", "time_sum_s"]
            ].astype({"user": "string", "client": "string", "command": "string"})
        )
    if not parts:
        return pd.DataFrame(
            columns=["ts", "user", "client", "command", "sessions", "time_min_s", "time_max_s", "time_sum_s"]
        )
    both = pd.concat(parts, ignore_index=True)
    both["user"] = both["user"].fillna("?")
    both["client"] = both["client"].fillna("?")
    both["command"] = both["command"].fillna("?")
    return summed(both)  # grouped by ts and account, as a group-by over the four keys


def _saturation(tl: Timeline) -> tuple[str, list[Evidence], float] | None:
    """Why the slots are short, or None: (what, evidence, refused connections). Refusals at
    max_connections (``Connection_errors_max_connections`` grew), the server at its limit
    (``Threads_connected`` >= SLOTS_SATURATED_SHARE x max_connections, or ``Max_used_connections``
    reached it)."""
    limit = variable_number(tl, "max_connections")
    connected = status(tl, "Threads_connected")
    refused_rows = status(tl, "Connection_errors_max_connections")
    refused = growth(refused_rows)
    used = status(tl, "Max_used_connections")
    peak = float(connected["value"].max()) if len(connected) else 0.0
    max_used = float(used["value"].max()) if len(used) else 0.0
    at_limit = bool(limit) and (peak >= SLOTS_SATURATED_SHARE * limit or max_used >= limit)
    if refused <= 0 and not at_limit:
        return None
    evidence = [cite(tl, "Threads_connected (max)", peak, "", "mysqladmin.Threads_connected", connected)]
    if refused > 0:
        evidence.append(
            cite(
                tl,
                "Connection_errors_max_connections (growth)",
                refused,
                "connections",
                "mysqladmin.Connection_errors_max_connections",
                refused_rows,
            )
        )
    what = f"max_connections {limit:.0f}" if limit else "max_connections"
    return what, evidence, refused


def _may_be_at_user_limit(tl: Timeline) -> bool:
    """Whether ``_user_limit`` can find an account at its limit: a global ``max_user_connections`` is
    set, or connections are refused (``Aborted_connects`` grows)."""
    return bool(variable_number(tl, "max_user_connections")) or growth(status(tl, "Aborted_connects")) > 0


def _user_limit(tl: Timeline, per: pd.DataFrame) -> tuple[str, str, list[Evidence], float, str] | None:
    """An account at its connection limit: its connections reach the global ``max_user_connections``
    (> 0) in a snapshot; or, with no global limit, connections are refused (``Aborted_connects``
    grows) while one account holds the same number of connections in every snapshot
    (PLATEAU_SNAPSHOTS or more, PLATEAU_MIN_SESSIONS or more, most of the server's, most of them idle
    in every snapshot: a pool at its ceiling, not a benchmark's busy threads): held at a
    ceiling, its own MAX_USER_CONNECTIONS, which -variables does not show. (user, client, evidence,
    refused connections: Aborted_connects' growth, which counts the attempts refused at the limit
    among others, the limit in words)."""
    if not len(per):
        return None
    limit = variable_number(tl, "max_user_connections")
    aborted = status(tl, "Aborted_connects")
    refused = growth(aborted)
    by_user = per.groupby(["ts", "user"])["sessions"].sum()
    if limit:
        at = by_user[by_user >= limit]
        if not len(at):
            return None
        user = str(at.index.get_level_values("user").value_counts().index[0])
        what = f"max_user_connections {limit:.0f}"
    else:
        totals = per.groupby("ts")["sessions"].sum()
        stats = by_user.groupby(level="user").agg(["min", "max", "size"])
        idle = per[per["command"] == IDLE_COMMAND].groupby(["ts", "user"])["sessions"].sum()
        idle_min = idle.groupby(level="user").min().reindex(stats.index, fill_value=0)
        held = stats[
            (stats["min"] == stats["max"])
            & (stats["size"] >= PLATEAU_SNAPSHOTS)
            & (stats["max"] >= PLATEAU_MIN_SESSIONS)
            & (stats["max"] >= ACCOUNT_HOLDS_SHARE * totals.median())
            & (idle_min >= IDLE_SHARE * stats["max"])
        ]
        if refused <= 0 or not len(held):
            return None
        user = str(held["max"].idxmax())
        at = by_user[by_user.index.get_level_values("user") == user]
        what = (
            f"max_user_connections of {user}, its own: {int(held.loc[user, 'max'])} connections, "
            "where -variables shows only the global 0"
        )
    mine = per[per["user"] == user]
    client = str(mine.groupby("client")["sessions"].sum().idxmax())
    evidence = [
        Evidence(
            f"{user}: connections at its limit (snapshots)",
            int((at.index.get_level_values("user") == user).sum()),
            "snapshots",
            "processlist.user",
        )
    ]
    if refused > 0:
        evidence.append(
            cite(
                tl,
                "Aborted_connects (growth)",
                refused,
                "connections",
                "mysqladmin.Aborted_connects",
                aborted,
            )
        )
    return user, client, evidence, refused, what


def _step_s(ts: pd.Series) -> float:
    steps = pd.Series(sorted(ts.unique())).diff().dt.total_seconds().dropna()
    return float(steps.median()) if len(steps) else 1.0


@reads(
    Resource.CONNECTION_SLOT,
    always=True,
    inputs=("processlist", "processlist_accounts", "mysqladmin", "variables"),
)
def connection_slots(tl: Timeline, waits: pd.DataFrame) -> list[Holding]:
    """Who holds the connection slots (see the module docstring); [] while no slot is short."""
    saturated = _saturation(tl)
    if saturated is None and not _may_be_at_user_limit(tl):
        return []  # the sessions by account are summed only when a slot may be short
    per = account_sessions(tl)
    user_limit = _user_limit(tl, per) if saturated is None else None
    if saturated is None and user_limit is None:
        return []
    if not len(per):
        return [_slots_not_shown(tl, saturated, user_limit, "the bundle has no processlist")]
    totals = per.groupby("ts")["sessions"].sum()
    accounts = per.groupby(["ts", "user", "client"])["sessions"].sum()
    share = accounts / totals.reindex(accounts.index.get_level_values("ts")).to_numpy()
    if user_limit is not None:
        user, client = user_limit[0], user_limit[1]
        holding_rows = accounts.xs(user, level="user", drop_level=False)
    else:
        peak = totals[totals >= totals.max() * SLOTS_SATURATED_SHARE].index
        top = accounts[accounts.index.get_level_values("ts").isin(peak)].groupby(["user", "client"]).sum()
        user, client = (str(x) for x in top.idxmax())
        holding_rows = share[
            (share.index.get_level_values("user") == user)
            & (share.index.get_level_values("client") == client)
        ]
        holding_rows = holding_rows[holding_rows >= ACCOUNT_HOLDS_SHARE]
        if not len(holding_rows):
            spread = (
                f"{int(totals.max())} connections spread over "
                f"{accounts.groupby(['user', 'client']).ngroups} accounts"
            )
            return [_slots_not_shown(tl, saturated, None, spread)]
    return [_account_holding(tl, per, totals, holding_rows, user, client, saturated, user_limit)]


def _account_holding(
    tl: Timeline,
    per: pd.DataFrame,
    totals: pd.Series,
    rows: pd.Series,
    user: str,
    client: str,
    saturated: tuple | None,
    user_limit: tuple | None,
) -> Holding:
    """The account ``user@client`` as the holder of the slots, with its Command and Time."""
    ts = rows.index.get_level_values("ts")
    mine = per[
        (per["user"] == user) & per["ts"].isin(ts) & ((per["client"] == client) | (user_limit is not None))
    ]
    peak_ts = mine.groupby("ts")["sessions"].sum().idxmax()
    at_peak = mine[mine["ts"] == peak_ts]
    held = int(at_peak["sessions"].sum())
    idle = at_peak[at_peak["command"] == IDLE_COMMAND]
    n_idle = int(idle["sessions"].sum())
    idle_mean = float(idle["time_sum_s"].sum() / n_idle) if n_idle else 0.0
    idle_min = float(idle["time_min_s"].min()) if n_idle else 0.0
    idle_max = float(idle["time_max_s"].max()) if n_idle else 0.0
    commands = ", ".join(
        f"{int(n)} {c}"
        for c, n in at_peak.groupby("command")["sessions"].sum().sort_values(ascending=False).items()
    )
    account = f"{user}@{client}"
    of = int(totals.loc[peak_ts])
    statement = f"{held} of {of} connections: {commands}" + (
        f"; idle (Sleep) for {idle_min:.0f}-{idle_max:.0f} s, {idle_mean:.0f} s on average" if n_idle else ""
    )
    span_s = (ts.max() - ts.min()).total_seconds() + _step_s(per["ts"])
    if saturated is not None:
        why, evidence, refused = saturated
    else:
        why, evidence, refused = user_limit[4], user_limit[2], user_limit[3]
    evidence = [
        *evidence,
        Evidence(f"{account}: connections held (peak snapshot)", held, "sessions", "processlist.user"),
        Evidence(
            f"{account}: idle (Sleep) connections, Time {idle_min:.0f}-{idle_max:.0f} s",
            n_idle,
            "sessions",
            "processlist.command",
        ),
    ]
    culprit = Culprit(
        kind="account",
        id=account,
        user=user,
        host=client,
        statement=statement,
        since=ts.min(),
        blocks=int(refused) or None,
        evidence=tuple(evidence),
    )
    fix = _pool_fix(user, client, why, held, n_idle, idle_mean)
    return Holding(
        Resource.CONNECTION_SLOT,
        tl.host,
        culprit,
        shown_by=(
            f"processlist: {account} holds {held} of {of} connections ({commands}) in {len(set(ts))} "
            "snapshot(s)"
        ),
        held_s=span_s,
        age_s=idle_max or None,
        waiters=int(refused),
        windows=(Window(ts.min(), ts.max()),),
        object=why,
        contention=None,
        fix=fix,
        evidence=tuple(evidence),
    )


def _pool_fix(user: str, client: str, why: str, held: int, n_idle: int, idle_mean: float) -> str:
    """The fix for account ``user@client`` holding the slots: a leaking pool (mostly idle for IDLE_LEAK_S
    or more), an oversized pool (mostly idle), or long statements."""
    account = f"{user}@{client}"
    if n_idle >= IDLE_SHARE * held and idle_mean >= IDLE_LEAK_S:
        return (
            f"Fix the connection pool of the application connecting as {account}: it holds {n_idle} idle "
            f"connections (Sleep {idle_mean:.0f} s on average) it does not use. Return connections to the "
            "pool "
            f"after use and cap its size below {why}; have it end idle ones (its pool's idle timeout, or SET "
            "SESSION wait_timeout = 60 on connect). Now: KILL the idle ones, SELECT CONCAT('KILL ', id, ';') "
            f"FROM information_schema.processlist WHERE user = '{user}' AND command = 'Sleep' AND time > "
            f"{IDLE_LEAK_S:.0f};"
        )
    if n_idle >= IDLE_SHARE * held:
        return (
            f"{account} keeps {n_idle} connections open and idle (Sleep {idle_mean:.0f} s on average) up to "
            f"{why}: shrink that application's pool (its maximum and its minimum idle connections) below the "
            f"limit, or raise the account's limit only if it needs them: ALTER USER '{user}'@'{client}' WITH "
            "MAX_USER_CONNECTIONS <n>;"
        )
    return (
        f"{account} holds {held} connections running statements: cap that application's pool size below "
        f"{why} and find why its statements take long (the processlist's State and Time)."
    )


def _slots_not_shown(tl: Timeline, saturated: tuple | None, user_limit: tuple | None, why: str) -> Holding:
    """The slots are short and no account is shown holding most of them."""
    evidence = tuple(saturated[1] if saturated is not None else user_limit[2])
    refused = saturated[2] if saturated is not None else user_limit[3]
    return Holding(
        Resource.CONNECTION_SLOT,
        tl.host,
        None,
        shown_by="no account holds most connections",
        waiters=int(refused),
        object=saturated[0] if saturated is not None else "max_user_connections",
        contention=why,
        fix=(
            "Pool connections at the applications; raise max_connections only with the memory each one costs."
        ),
        evidence=evidence,
    )


# -------------------------------------------------------------------------------------------------
# disk space
# -------------------------------------------------------------------------------------------------


def mount_of(path: str, mounts: list[str]) -> str | None:
    """The mount point holding ``path``: the longest mount that is ``path`` or a parent of it."""
    best = None
    for mount in mounts:
        inside = path == mount or path.startswith(mount.rstrip("/") + "/") or mount == "/"
        if inside and (best is None or len(mount) > len(best)):
            best = mount
    return best


def mysql_paths(variables: dict[str, str]) -> list[tuple[str, str, str]]:
    """(variable, what it holds, absolute path) for every MySQL path in ``variables`` (``tmpdir`` may
    list several, colon-separated; a relative path is under datadir)."""
    datadir = variables.get("datadir", "")
    out = []
    for name, what in MYSQL_PATHS:
        raw = variables.get(name, "").strip()
        for path in raw.split(":") if name == "tmpdir" else [raw]:
            if not path or path in ("OFF", "ON", "stderr"):
                continue
            if not path.startswith("/") and datadir.startswith("/"):
                path = datadir.rstrip("/") + "/" + path.removeprefix("./")
            if path.startswith("/"):
                out.append((name, what, path))
    return out


def held_paths(tl: Timeline, mounts: list[str]) -> dict[str, list[tuple[str, str, str]]]:
    """mount -> the MySQL paths it holds (``mysql_paths``)."""
    held: dict[str, list[tuple[str, str, str]]] = {}
    for name, what, path in mysql_paths(tl.variables):
        m = mount_of(path, mounts)
        if m is not None:
            held.setdefault(m, []).append((name, what, path))
    return held


def _human_kib(kib: float) -> str:
    for unit, size in (("TiB", 1024.0**3), ("GiB", 1024.0**2), ("MiB", 1024.0)):
        if abs(kib) >= size:
            return f"{kib / size:.1f} {unit}"
    return f"{kib:.0f} KiB"


def _fillers(
    tl: Timeline, things: list[tuple[str, str, str]], window: Window | None = None
) -> tuple[str, list[Evidence]]:
    """The sessions writing temporary files when the mount holds tmpdir or the datadir (where ALTER
    TABLE copies), or when the bundle has no -variables to say (a full tmpdir fails SHOW VARIABLES
    itself: it needs a temporary table): sessions in ``FILLING_STATES`` in FILLING_MIN_SNAPSHOTS
    snapshots or more, else active sessions running a statement that sorts or groups
    (``SORTING_STATEMENT``: MariaDB shows their sort files and temporary tables as ``Sending data``),
    by statement, within ``window`` (FILLING_SLACK either side) when given; ('', []) when none."""
    if tl.variables and not any(name in ("tmpdir", "datadir", "innodb_tmpdir") for name, _, _ in things):
        return "", []
    pl = tl.frame("processlist")
    if len(pl) and window is not None:
        pl = pl[pl["ts"].between(window.start - FILLING_SLACK, window.end + FILLING_SLACK).to_numpy()]
    if not len(pl) or "state" not in pl:
        return "", []
    rows = pl[_matches(pl["state"], FILLING_STATES)]
    how = "writing temporary tables or sort files"
    if rows["ts"].nunique() < FILLING_MIN_SNAPSHOTS and "fingerprint" in pl:
        rows = pl[pl["active"].astype(bool).to_numpy() & _matches(pl["fingerprint"], SORTING_STATEMENT)]
        how = "running statements that sort or group (their sort files and temporary tables go to tmpdir)"
    if rows["ts"].nunique() < FILLING_MIN_SNAPSHOTS:
        return "", []
    ids = sorted(int(i) for i in rows["id"].dropna().unique())
    sessions = len(ids)
    fp = (
        rows["fingerprint"].astype("string").dropna()
        if "fingerprint" in rows
        else pd.Series([], dtype="string")
    )
    query = str(fp.value_counts().index[0])[:200] if len(fp) else ""
    users = rows["user"].astype("string").value_counts()
    shown = ", ".join(map(str, ids[:FILLERS_LISTED])) + (", ..." if len(ids) > FILLERS_LISTED else "")
    text = f"{sessions} session(s) of {users.index[0]} (Id {shown}) {how}{': ' + query if query else ''}"
    member, lines = tl.lines_of(rows)
    return text, [
        Evidence(
            f"sessions {how.split(' (')[0]} (processlist)",
            int(sessions),
            "sessions",
            "processlist.state",
            member,
            lines,
        )
    ]


def _ids_of(filler: str) -> str:
    """The session Ids a ``_fillers`` text lists (``7, 8, 9``), or ``<Id>``."""
    found = re.search(r"\(Id ([^)]*)\)", filler)
    return found.group(1) if found else "<Id>"


def _matches(values: pd.Series, pattern: str) -> np.ndarray:
    """``values`` (text or a category) matching ``pattern``, each distinct value looked up once."""
    codes, names = pd.factorize(values.astype("string"))
    hit = np.asarray(
        pd.Series(names, dtype="string").str.contains(pattern, regex=True).fillna(False), dtype=bool
    )
    return (codes >= 0) & hit[np.maximum(codes, 0)] if len(hit) else np.zeros(len(values), dtype=bool)


@reads(Resource.DISK_SPACE, always=True, inputs=("df", "processlist", "variables"))
def disk_space(tl: Timeline, waits: pd.DataFrame) -> list[Holding]:
    """Every file system at FS_WARNING_PCT or more (space or inodes) in ``df``, the mount holding
    MySQL's files first: the mount as holder (kind ``filesystem``), what MySQL keeps there, its growth
    over the capture and the sessions filling it."""
    df = tl.frame("df")
    if not len(df) or "mount" not in df:
        return []
    df = df[~df["mount"].astype(str).str.startswith(IMAGE_MOUNT_PREFIXES)]
    mounts = sorted(df["mount"].astype(str).unique())
    held = held_paths(tl, mounts)
    waiting = waits[waits["resource"].astype(str) == Resource.DISK_SPACE.value] if len(waits) else waits
    out = []
    for mount, rows in df.groupby(df["mount"].astype(str), sort=False):
        worst, what = _fullness(rows)
        if pd.isna(worst) or worst < FS_WARNING_PCT:
            continue
        out.append(_mount_holding(tl, mount, rows, held.get(mount, []), float(worst), what, waiting))
    return sorted(out, key=lambda h: (h.object is None, -float(h.evidence[0].value)))


def _fullness(rows: pd.DataFrame) -> tuple[float, str]:
    space = rows["use_pct"].max()
    inodes = rows["inodes_use_pct"].max() if "inodes_use_pct" in rows else float("nan")
    if pd.notna(inodes) and (pd.isna(space) or inodes > space):
        return float(inodes), "inodes"
    return float(space), "space"


def _mount_holding(
    tl: Timeline,
    mount: str,
    rows: pd.DataFrame,
    things: list[tuple[str, str, str]],
    worst: float,
    what: str,
    waiting: pd.DataFrame,
) -> Holding:
    """One full mount as a holding."""
    column = "inodes_use_pct" if what == "inodes" else "use_pct"
    hot = rows[rows[column] >= FS_WARNING_PCT].sort_values("ts")
    holds = ", ".join(f"{w} ({n} = {p})" for n, w, p in things)
    evidence = [cite(tl, f"{mount} {what} used (max)", round(worst, 1), "%", f"df.{column}", hot)]
    fills = []
    timed = rows.dropna(subset=["ts"]).sort_values("ts") if "used_kib" in rows else rows.iloc[0:0]
    if len(timed) >= 2 and timed["used_kib"].notna().sum() >= 2:
        grown = float(timed["used_kib"].iloc[-1] - timed["used_kib"].iloc[0])
        secs = (timed["ts"].iloc[-1] - timed["ts"].iloc[0]).total_seconds()
        if grown > 0 and secs > 0:
            fills.append(f"it grew by {_human_kib(grown)} in {secs:.0f} s")
            evidence.append(
                cite(tl, f"{mount} used: growth over the capture", round(grown), "KiB", "df.used_kib", timed)
            )
    full = Window(hot["ts"].min(), hot["ts"].max()) if len(hot) and hot["ts"].notna().any() else None
    filler, filler_evidence = _fillers(tl, things, full)
    if filler:
        fills.append(filler)
        evidence += filler_evidence
    evidence += [Evidence(f"{n} (server variable)", p, "", f"variables.{n}") for n, _, p in things]
    kept = holds or (
        "none of MySQL's paths" if tl.variables else "what MySQL keeps there is not shown (no -variables)"
    )
    statement = kept + (f"; {'; '.join(fills)}" if fills else "")
    culprit = Culprit(kind="filesystem", id=mount, statement=statement, evidence=tuple(evidence))
    windows = (Window(hot["ts"].min(), hot["ts"].max()),) if len(hot) and hot["ts"].notna().any() else ()
    held_s = (hot["ts"].max() - hot["ts"].min()).total_seconds() + 1.0 if windows else HOLDER_MIN_S
    tmp = any(n == "tmpdir" for n, _, _ in things) or not tl.variables
    fix = (
        f"Free space on {mount}"
        + (
            f": end the sessions spilling sort files and temporary tables there (KILL {_ids_of(filler)}) or "
            "give their statement an index for its ORDER BY / GROUP BY, and point tmpdir at a file system with "
            "room "
            "(a restart)"
            if tmp and filler
            else ": purge binary logs only up to what every replica has read (PURGE BINARY LOGS BEFORE ...), move "
            "what is "
            "not MySQL's, or grow the file system"
        )
        + "; then alert at 80 %."
    )
    return Holding(
        Resource.DISK_SPACE,
        tl.host,
        culprit,
        shown_by=f"df: {mount} {worst:.0f} % {what} used",
        held_s=max(held_s, HOLDER_MIN_S) if windows or not len(hot) else held_s,
        waiters=int(waiting["session"].nunique()) if len(waiting) else 0,
        windows=windows,
        object=mount if things else None,
        fix=fix,
        evidence=tuple(evidence),
    )


# -------------------------------------------------------------------------------------------------
# table cache and open files
# -------------------------------------------------------------------------------------------------


@reads(Resource.TABLE_CACHE, always=True, inputs=("mysqladmin", "variables"))
def table_cache(tl: Timeline, waits: pd.DataFrame) -> list[Holding]:
    """The table cache and open files against their settings: a holding with no holder (no session
    holds a cache slot long enough to be shown), what the counters show as ``contention``, and the
    sessions waiting in ``Opening tables``; [] when neither is near its limit."""
    parts, evidence = [], []
    cache = variable_number(tl, "table_open_cache")
    open_rows = status(tl, "Open_tables")
    if cache and len(open_rows) and float(open_rows["value"].max()) >= 0.95 * cache:
        opened = status(tl, "Opened_tables").dropna(subset=["per_s"])
        rate = float(opened["per_s"].median()) if len(opened) else 0.0
        parts.append(
            f"Open_tables {open_rows['value'].max():.0f} of table_open_cache {cache:.0f}, "
            f"{rate:.0f} tables opened per second"
        )
        evidence.append(
            cite(
                tl,
                "Open_tables (max)",
                int(open_rows["value"].max()),
                "tables",
                "mysqladmin.Open_tables",
                open_rows,
            )
        )
    limit = variable_number(tl, "open_files_limit")
    files = status(tl, "Open_files")
    if limit and len(files) and float(files["value"].max()) >= OPEN_FILES_NEAR_LIMIT * limit:
        parts.append(f"Open_files {files['value'].max():.0f} of open_files_limit {limit:.0f}")
        evidence.append(
            cite(tl, "Open_files (max)", int(files["value"].max()), "files", "mysqladmin.Open_files", files)
        )
    waiting = waits[waits["resource"].astype(str) == Resource.TABLE_CACHE.value] if len(waits) else waits
    if not parts:
        return []
    return [
        Holding(
            Resource.TABLE_CACHE,
            tl.host,
            None,
            shown_by="mysqladmin counters against their settings",
            waiters=int(waiting.groupby("ts")["session"].nunique().max()) if len(waiting) else 0,
            object="table cache" if cache else "open files",
            contention="; ".join(parts),
            fix=(
                "Raise table_open_cache (and open_files_limit, LimitNOFILE) above the tables the workload uses "
                "at once."
            ),
            evidence=tuple(evidence),
        )
    ]


#: An empty waits frame, for a reader called by a rule that reads no waits.
NO_WAITS = pd.DataFrame(columns=["ts", "session", "resource"])


def connection_holding(tl: Timeline) -> Holding | None:
    """The connection slots' holding of ``tl`` (``connection_slots`` without a waits frame: it reads
    none), or None while no slot is short."""
    found = connection_slots(tl, NO_WAITS)
    return found[0] if found else None


def disk_holdings(tl: Timeline) -> list[Holding]:
    """The full file systems of ``tl`` (``disk_space`` without a waits frame)."""
    return disk_space(tl, NO_WAITS)
