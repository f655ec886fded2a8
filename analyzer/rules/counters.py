"""Status-counter rules every MySQL advisor has (docs/background.md, "Thresholds from common practice"):
ratios and rates of ``mysqladmin extended-status`` counters against ``-variables``, each with its formula and
the computed numbers in the evidence. Source: MySQL 8.4 Reference Manual, Server Status Variables.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from analyzer.detect import (
    cite,
    growth,
    ram_bytes,
    short_query,
    span,
    statement_culprit,
    status,
    variable_number,
    with_setting,
    within_slack,
)
from analyzer.findings import Culprit, Finding, Severity, Window
from analyzer.rules.registry import rule
from analyzer.rules.sessions import slot_holder
from analyzer.texts import RuleTexts
from analyzer.timeline.pairing import join_tolerance
from analyzer.timeline.timeline import Timeline
from analyzer.timeline.windows import sustained
from analyzer.waits.counters import rate_of

SUSTAINED_SAMPLES = 5  # 5 s at pt-stalk's 1 s: one busy second is not a finding

COUNTER_SOURCES = (
    "MySQL 8.4 Reference Manual, Server Status Variables",
    "MySQL 8.4 Reference Manual, Server System Variables",
)


def _texts(title: str, explanation: str, recommendation: str, caveat: str = "") -> RuleTexts:
    return RuleTexts(
        title,
        explanation,
        recommendation,
        (caveat,) if caveat else (),
        COUNTER_SOURCES,
        confidence="{confidence}",
    )


def _rates(tl: Timeline, *names: str) -> pd.DataFrame:
    """Per-second rates of status counters side by side, indexed by ``ts`` (NaN rows dropped)."""
    cols = {n: status(tl, n).drop_duplicates("ts").set_index("ts")["per_s"] for n in names}
    return pd.DataFrame(cols).dropna()


def _sustained(frame: pd.DataFrame, hot: pd.Series) -> list[Window]:
    return sustained(frame.index.to_series(), hot, min_samples=SUSTAINED_SAMPLES)


BUFFER_POOL_MISS_RATIO = 0.01  # 1 % of page requests from disk, sustained
MIN_READ_REQUESTS_PER_S = 1000.0  # an idle server's few requests make any ratio meaningless
BUFFER_POOL_TEXTS = _texts(
    "Buffer pool misses: {ratio:.1f} % of page reads from disk ({reads:,.0f}/s)",
    "Formula: Innodb_buffer_pool_reads / Innodb_buffer_pool_read_requests = {reads:,.0f}/s / "
    "{requests:,.0f}/s = "
    "{ratio:.2f} % over {seconds:.0f} s; Innodb_buffer_pool_wait_free grew by {wait_free:,.0f}. The "
    "working set "
    "does not fit in the buffer pool.",
    "A larger innodb_buffer_pool_size (leave OS headroom), or find the scan that floods it (full-scans).",
)


@rule(key="buffer-pool-misses", requires=("mysqladmin",), optional=("variables",))
def buffer_pool_misses(tl: Timeline) -> Finding | None:
    """reads / read_requests >= BUFFER_POOL_MISS_RATIO sustained, or wait_free growing."""
    r = _rates(tl, "Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests")
    wait_free = growth(status(tl, "Innodb_buffer_pool_wait_free"))
    windows: list[Window] = []
    if len(r):
        req = r["Innodb_buffer_pool_read_requests"]
        hot = (req >= MIN_READ_REQUESTS_PER_S) & (
            r["Innodb_buffer_pool_reads"] / req.where(req > 0) >= BUFFER_POOL_MISS_RATIO
        )
        windows = _sustained(r, hot.fillna(False))
    if not windows and wait_free <= 0:
        return None
    rows = r[r.index.isin([t for w in windows for t in r.index if w.start <= t <= w.end])] if windows else r
    reads, requests = (
        float(rows.iloc[:, 0].mean()) if len(rows) else 0.0,
        float(rows.iloc[:, 1].mean()) if len(rows) else 0.0,
    )
    numbers = {
        "ratio": reads / requests * 100 if requests else 0.0,
        "reads": reads,
        "requests": requests,
        "seconds": sum(w.seconds for w in windows),
        "wait_free": wait_free,
    }
    src = status(tl, "Innodb_buffer_pool_reads")
    evidence = [
        cite(
            tl,
            "Innodb_buffer_pool_reads per second",
            round(reads, 1),
            "/s",
            "mysqladmin.Innodb_buffer_pool_reads",
            src,
        ),
        cite(
            tl,
            "Innodb_buffer_pool_read_requests per second",
            round(requests, 1),
            "/s",
            "mysqladmin.Innodb_buffer_pool_read_requests",
            src,
        ),
        cite(
            tl,
            "reads / read_requests",
            round(numbers["ratio"], 3),
            "%",
            "mysqladmin.Innodb_buffer_pool_reads",
            src,
        ),
        cite(
            tl,
            "Innodb_buffer_pool_wait_free (growth)",
            wait_free,
            "",
            "mysqladmin.Innodb_buffer_pool_wait_free",
            status(tl, "Innodb_buffer_pool_wait_free"),
        ),
    ]
    found = BUFFER_POOL_TEXTS.finding(
        "buffer-pool-misses",
        Severity.WARNING,
        windows or span(src),
        evidence,
        confidence="mysqladmin counters",
        **numbers,
    )
    pool, ram = variable_number(tl, "innodb_buffer_pool_size"), ram_bytes(tl)
    share = f"{pool / ram * 100:.0f} % of the host's RAM" if pool and ram else "the host's RAM unknown"
    return with_setting(
        tl,
        found,
        "innodb_buffer_pool_size",
        share + "; the pages read from disk did not fit in it.",
        size=True,
    )


def _growth_rule(
    key: str, variable: str, minimum: float, texts: RuleTexts, tl: Timeline, extra: dict | None = None
) -> Finding | None:
    """A counter that grew by ``minimum`` or more during the capture."""
    rows = status(tl, variable)
    found = rate_of(variable, rows)  # the counter catalogue's rate: growth over the seconds sampled
    if found is None or found.growth < minimum:
        return None
    hot = rows[rows["per_s"] > 0]
    numbers = {"grown": found.growth, "seconds": found.seconds, "per_s": found.per_s, **(extra or {})}
    grown = found.growth
    evidence = [
        cite(tl, f"{variable} (growth during the capture)", grown, "", f"mysqladmin.{variable}", rows),
        cite(
            tl,
            f"{variable} per second (mean)",
            round(numbers["per_s"], 2),
            "/s",
            f"mysqladmin.{variable}",
            rows,
        ),
    ]
    return texts.finding(
        key, Severity.WARNING, span(hot), evidence, confidence="mysqladmin counters", **numbers
    )


LOG_WAITS_TEXTS = _texts(
    "InnoDB log waits: the log buffer filled {grown:,.0f} times",
    "Formula: growth of Innodb_log_waits = {grown:,.0f} in {seconds:.0f} s ({per_s:.2f}/s). Each one is a "
    "transaction that waited for the log buffer to be flushed before it could write its redo.",
    "A larger innodb_log_buffer_size (64-256 MiB for large transactions).",
)


@rule(key="log-waits", requires=("mysqladmin",), optional=("variables",))
def log_waits(tl: Timeline) -> Finding | None:
    """Innodb_log_waits grew during the capture."""
    found = _growth_rule("log-waits", "Innodb_log_waits", 1, LOG_WAITS_TEXTS, tl)
    if found is None:
        return None
    return with_setting(
        tl, found, "innodb_log_buffer_size", "the redo of a transaction did not fit in it.", size=True
    )


ABORTED_MIN = 5  # a one-off client that did not close is noise; five in a capture is a pattern
ABORTED_TEXTS = _texts(
    "Aborted connections: {grown:,.0f} during the capture ({per_s:.2f}/s)",
    "Formula: growth of {which} = {grown:,.0f} in {seconds:.0f} s. Connections that failed to authenticate "
    "or "
    "were closed without a proper quit.",
    "Look at the error log (log_warnings / log_error_verbosity 3): failed authentication, connect_timeout, "
    "wait_timeout, clients or proxies that do not close their connections.",
)


@rule(key="aborted-connections", requires=("mysqladmin",))
def aborted_connections(tl: Timeline) -> Finding | None:
    """Aborted_connects or Aborted_clients grew by ABORTED_MIN or more."""
    best = max(("Aborted_connects", "Aborted_clients"), key=lambda v: growth(status(tl, v)))
    return _growth_rule("aborted-connections", best, ABORTED_MIN, ABORTED_TEXTS, tl, {"which": best})


BINLOG_SPILL_RATIO = 0.10  # docs/background.md: above about 10 % of transactions spill their binlog cache
MIN_BINLOG_TRX = 10
BINLOG_TEXTS = _texts(
    "Binlog cache spills: {ratio:.0f} % of transactions wrote their binlog cache to disk",
    (
        "Formula: growth of Binlog_cache_disk_use / growth of Binlog_cache_use = {disk:,.0f} / {use:,.0f} = "
        "{ratio:.1f} %."
    ),
    "A larger binlog_cache_size (it is per session), or smaller transactions.",
)


@rule(key="binlog-cache-spills", requires=("mysqladmin",))
def binlog_cache_spills(tl: Timeline) -> Finding | None:
    """Binlog_cache_disk_use / Binlog_cache_use >= BINLOG_SPILL_RATIO over the capture."""
    disk_rows, use_rows = status(tl, "Binlog_cache_disk_use"), status(tl, "Binlog_cache_use")
    disk, use = growth(disk_rows), growth(use_rows)
    if use < MIN_BINLOG_TRX or disk / use < BINLOG_SPILL_RATIO:
        return None
    numbers = {"disk": disk, "use": use, "ratio": disk / use * 100}
    evidence = [
        cite(tl, "Binlog_cache_disk_use (growth)", disk, "", "mysqladmin.Binlog_cache_disk_use", disk_rows),
        cite(tl, "Binlog_cache_use (growth)", use, "", "mysqladmin.Binlog_cache_use", use_rows),
        cite(
            tl,
            "disk_use / use",
            round(numbers["ratio"], 1),
            "%",
            "mysqladmin.Binlog_cache_disk_use",
            disk_rows,
        ),
    ]
    return BINLOG_TEXTS.finding(
        "binlog-cache-spills",
        Severity.WARNING,
        span(disk_rows),
        evidence,
        confidence="mysqladmin counters",
        **numbers,
    )


THREADS_CREATED_PER_S = 5.0  # a thread created per 200 ms: the thread cache is not serving the reconnects
CONNECTIONS_PER_S = 10.0  # "while Connections per second is high"
THREAD_CACHE_TEXTS = _texts(
    "Thread cache misses: {created:.1f} threads created per second for {seconds:.0f} s",
    "Formula: Threads_created/s = {created:.1f} while Connections/s = {connections:.1f} ({miss:.0f} % of new "
    "connections needed a new thread); thread_cache_size is {cache}.",
    "A larger thread_cache_size; connection pooling at the application.",
)


@rule(key="thread-cache-misses", requires=("mysqladmin",), optional=("variables",))
def thread_cache_misses(tl: Timeline) -> Finding | None:
    """Threads_created/s >= THREADS_CREATED_PER_S with Connections/s >= CONNECTIONS_PER_S, sustained."""
    r = _rates(tl, "Threads_created", "Connections")
    if not len(r):
        return None
    hot = (r["Threads_created"] >= THREADS_CREATED_PER_S) & (r["Connections"] >= CONNECTIONS_PER_S)
    windows = _sustained(r, hot)
    if not windows:
        return None
    rows = r[hot]
    created, conns = float(rows["Threads_created"].mean()), float(rows["Connections"].mean())
    numbers = {
        "created": created,
        "connections": conns,
        "miss": created / conns * 100,
        "seconds": sum(w.seconds for w in windows),
        "cache": tl.variables.get("thread_cache_size", "unknown"),
    }
    src = status(tl, "Threads_created")
    evidence = [
        cite(tl, "Threads_created per second", round(created, 1), "/s", "mysqladmin.Threads_created", src),
        cite(
            tl,
            "Connections per second",
            round(conns, 1),
            "/s",
            "mysqladmin.Connections",
            status(tl, "Connections"),
        ),
    ]
    found = THREAD_CACHE_TEXTS.finding(
        "thread-cache-misses",
        Severity.WARNING,
        windows,
        evidence,
        confidence="mysqladmin counters",
        **numbers,
    )
    return with_setting(
        tl, found, "thread_cache_size", "too few cached threads for the connections opened each second."
    )


CONNECTION_SATURATION = 0.9  # docs/background.md: 90 % of max_connections
CONNECTIONS_TEXTS = _texts(
    "Connections near the limit: {connected:.0f} of max_connections {max_conn:.0f} ({pct:.0f} %)",
    "New connections wait for a connection slot. "
    "Formula: Threads_connected / max_connections = {connected:.0f} / {max_conn:.0f} = {pct:.0f} %; "
    "Max_used_connections {max_used:.0f}; Connection_errors_max_connections grew by {refused:,.0f} (refused, "
    "{refused_per_s:.2f} per second).",
    "Pool connections at the application; raise max_connections only with the memory each one costs.",
)


@rule(
    key="connection-saturation",
    requires=("mysqladmin", "variables"),
    optional=("processlist", "processlist_accounts"),
)
def connection_saturation(tl: Timeline) -> Finding | None:
    """Threads_connected >= CONNECTION_SATURATION x max_connections, Max_used_connections reached it,
    or Connection_errors_max_connections growing."""
    limit = variable_number(tl, "max_connections")
    connected = status(tl, "Threads_connected")
    used = status(tl, "Max_used_connections")
    refused_rows = status(tl, "Connection_errors_max_connections")
    refused = growth(refused_rows)
    refused_rate = rate_of("Connection_errors_max_connections", refused_rows)
    if not limit or not len(connected):
        return None
    peak = float(connected["value"].max())
    max_used = float(used["value"].max()) if len(used) else 0.0
    if peak < CONNECTION_SATURATION * limit and max_used < limit and refused <= 0:
        return None
    numbers = {
        "connected": peak,
        "max_conn": limit,
        "pct": peak / limit * 100,
        "max_used": max_used,
        "refused": refused,
        "refused_per_s": refused_rate.per_s if refused_rate is not None else 0.0,
    }
    hot = connected[connected["value"] >= CONNECTION_SATURATION * limit]
    evidence = [
        cite(tl, "Threads_connected (max)", peak, "", "mysqladmin.Threads_connected", connected),
        cite(tl, "max_connections", limit, "", "variables.max_connections", connected.iloc[:0]),
        cite(
            tl,
            "Connection_errors_max_connections (growth)",
            refused,
            "",
            "mysqladmin.Connection_errors_max_connections",
            refused_rows,
        ),
    ]
    severity = Severity.CRITICAL if refused > 0 else Severity.WARNING
    found = CONNECTIONS_TEXTS.finding(
        "connection-saturation",
        severity,
        span(hot) or span(connected),
        evidence,
        confidence="mysqladmin and variables",
        **numbers,
    )
    held = slot_holder(tl, found)
    return (
        held
        if held is not None
        else with_setting(tl, found, "max_connections", "the limit the sessions reached.")
    )


# Joins without an index per second. The collector's own queries count here: pt-stalk's lock-wait and
# transaction queries join INFORMATION_SCHEMA tables without indexes, 7.4/s measured on the example
# bundle (tests/fixtures/bundles); 20/s is well above what the collector alone makes.
FULL_JOINS_PER_S = 20.0
RND_NEXT_SHARE = 0.9  # Handler_read_rnd_next is 90 % of the row reads: table scans dominate
MIN_HANDLER_READS_PER_S = 10_000.0
HANDLER_READS = (
    "Handler_read_first",
    "Handler_read_key",
    "Handler_read_last",
    "Handler_read_next",
    "Handler_read_prev",
    "Handler_read_rnd",
    "Handler_read_rnd_next",
)
FULL_SCANS_TEXTS = _texts(
    "Full scans: {what}{by}",
    "{statement_sentence}Formula: Handler_read_rnd_next / sum(Handler_read_*) = {rnd_next:,.0f}/s / "
    "{total:,.0f}/s = {share:.0f} %; "
    "Select_full_join = {joins:.1f}/s, over {seconds:.0f} s.",
    "Find the statements without a usable index: the top fingerprints in the same window, EXPLAIN them, "
    "and add "
    "the index their WHERE or JOIN needs.",
    "The counters do not say which statement scans: the statement named is the one the most active sessions "
    "ran in the same window (processlist), the likeliest scanner, not a proof.",
)


def _busiest_statement(tl: Timeline, windows: list[Window]) -> Culprit | None:
    """The fingerprint the most active session-snapshots ran in ``windows`` (processlist; pt-stalk's
    own statements are not active), as a statement culprit with its share; None without one."""
    pl = tl.frame("processlist")
    if not len(pl) or "fingerprint" not in pl:
        return None
    tol = join_tolerance(pl["ts"])
    active = pl[within_slack(pl["ts"], windows, tol) & pl["active"].astype(bool) & pl["fingerprint"].notna()]
    if not len(active):
        return None
    fp = str(active["fingerprint"].astype("string").value_counts().index[0])
    return statement_culprit(tl, active, fp)


@rule(key="full-scans", requires=("mysqladmin",), optional=("processlist",))
def full_scans(tl: Timeline) -> Finding | None:
    """Select_full_join/s >= FULL_JOINS_PER_S sustained, or Handler_read_rnd_next >= RND_NEXT_SHARE
    of the Handler_read_* rates (at MIN_HANDLER_READS_PER_S or more) sustained."""
    r = _rates(tl, *HANDLER_READS)
    joins = _rates(tl, "Select_full_join")
    windows, hot_rows = [], r.iloc[:0]
    if len(r):
        total = r.sum(axis=1)
        hot = (total >= MIN_HANDLER_READS_PER_S) & (
            r["Handler_read_rnd_next"] / total.where(total > 0) >= RND_NEXT_SHARE
        )
        windows = _sustained(r, hot.fillna(False))
        hot_rows = r[hot.fillna(False)]
    if not windows and len(joins):
        windows = _sustained(joins, joins["Select_full_join"] >= FULL_JOINS_PER_S)
    if not windows:
        return None
    total = float(hot_rows.sum(axis=1).mean()) if len(hot_rows) else 0.0
    rnd = float(hot_rows["Handler_read_rnd_next"].mean()) if len(hot_rows) else 0.0
    share = rnd / total * 100 if total else 0.0
    joins_per_s = float(joins["Select_full_join"].mean()) if len(joins) else 0.0
    what = (
        f"{share:.0f} % of row reads are table scans ({rnd:,.0f}/s)"
        if len(hot_rows)
        else f"{joins_per_s:.1f} joins without an index per second (Select_full_join)"
    )
    numbers = {
        "what": what,
        "rnd_next": rnd,
        "total": total,
        "share": share,
        "joins": joins_per_s,
        "seconds": sum(w.seconds for w in windows),
    }
    src = status(tl, "Handler_read_rnd_next")
    evidence = [
        cite(
            tl,
            "Handler_read_rnd_next per second",
            round(rnd, 1),
            "/s",
            "mysqladmin.Handler_read_rnd_next",
            src,
        ),
        cite(tl, "sum of Handler_read_* per second", round(total, 1), "/s", "mysqladmin.Handler_read_*", src),
        cite(
            tl,
            "Select_full_join per second",
            round(numbers["joins"], 2),
            "/s",
            "mysqladmin.Select_full_join",
            status(tl, "Select_full_join"),
        ),
    ]
    culprit = _busiest_statement(tl, windows)
    share = culprit.evidence[0].value if culprit is not None else 0.0
    numbers["by"] = f", by {short_query(culprit.id)} ({share:.0f} % of active sessions)" if culprit else ""
    numbers["statement_sentence"] = (
        f"The statement the active sessions ran most in the window is {culprit.id[:300]} ({share:.0f} % of "
        "the active session-snapshots). "
        if culprit
        else ""
    )
    found = FULL_SCANS_TEXTS.finding(
        "full-scans", Severity.WARNING, windows, evidence, confidence="mysqladmin counters", **numbers
    )
    return dataclasses.replace(found, culprit=culprit) if culprit is not None else found
