"""Table cache and InnoDB latch rules: pt-stalk's ``-opentables1``/``-opentables2`` with the
``Open_tables``/``Opened_tables`` counters of ``-mysqladmin``, and ``-mutex-status1``/``-mutex-status2``
(SHOW ENGINE INNODB MUTEX).

A table cache at its limit (``Open_tables`` = ``table_open_cache``) while ``Opened_tables`` keeps growing
closes and reopens tables for every query: the setting is the culprit, named in the title. A latch whose
OS waits grow by the thousand a second between the start and the end of the collection is where InnoDB
threads queue: the latch (source file and line) is named with the line that shows it. Sources: MySQL 8.4
Reference Manual, "How MySQL Opens and Closes Tables", "SHOW ENGINE"; docs/background.md ("Name the culprit").
"""

from __future__ import annotations

import dataclasses
import re

import pandas as pd

from analyzer.detect import cite, status, sustained, sustained_samples, variable_number, with_setting
from analyzer.findings import Evidence, Finding, Severity, Window
from analyzer.rules.registry import rule
from analyzer.texts import RuleTexts
from analyzer.timeline.timeline import Timeline
from analyzer.waits.holders import slots

# --- table-cache-full ------------------------------------------------------------------------
#: Open_tables at 95 % or more of table_open_cache: the cache is full (MySQL evicts the least recently
#: used unused table for each new open once it holds table_open_cache tables).
TABLE_CACHE_FULL_SHARE = 0.95
#: Tables opened per second (Table_open_cache_misses, else Opened_tables) while it is full: a warm
#: cache opens none; pt-stalk's own information_schema queries open a few a second (0-3/s measured on
#: the healthy example bundle); 10/s is every query of a busy server reopening a table.
OPENED_PER_S_MIN = 10.0
#: Open_files near open_files_limit (``slots.OPEN_FILES_NEAR_LIMIT``): the limit, not the cache, keeps
#: the cache small (MySQL 8.4 "How MySQL Opens and Closes Tables": the server lowers table_open_cache
#: to fit open_files_limit at startup; MariaDB likewise).
OPEN_FILES_NEAR_LIMIT = slots.OPEN_FILES_NEAR_LIMIT
#: ... for 5 s (pt-stalk samples the counters every second).
TABLE_CACHE_SUSTAINED_S = 5.0

TABLE_CACHE_TEXTS = RuleTexts(
    title="Table cache full: {open:,.0f} tables open of {cache:,.0f}, {opened:,.0f} opened per second",
    explanation=(
        "Statements wait for the table cache or open files: for {seconds:.0f} s Open_tables stayed at "
        "{open:,.0f} of table_open_cache {cache:,.0f} while "
        "{counter} grew by {opened:,.0f} per second: every query that needs a table not in the cache "
        "closes another one and opens its own, which costs file opens and serialises on the cache's "
        "lock.{listing}"
    ),
    recommendation=(
        "Raise the table cache (dynamic) above the tables the workload uses at once:\n"
        "  SET GLOBAL table_open_cache = {suggested};\n"
        "  -- persist it in my.cnf [mysqld]: table_open_cache = {suggested}\n"
        "Check that mysqld may open that many files (open_files_limit, systemd LimitNOFILE), then watch\n"
        "SHOW GLOBAL STATUS LIKE 'Opened_tables': it should stop growing."
    ),
    caveats=(
        "FLUSH TABLES and DDL also reopen tables; a backup that flushes often grows Opened_tables too.",
        "Open_tables counts the cache's table instances: one table used by N sessions at once is N.",
    ),
    sources=(
        "MySQL 8.4 Reference Manual, How MySQL Opens and Closes Tables (table_open_cache, Opened_tables)",
        "MariaDB Knowledge Base, Optimizing table_open_cache",
    ),
    disproof="If Opened_tables stops growing once the workload is warm, the cache is large enough.",
    confidence="mysqladmin counters and variables",
)


@rule(key="table-cache-full", requires=("mysqladmin", "variables"), optional=("open_tables",))
def table_cache_full(tl: Timeline) -> Finding | None:
    """Open_tables >= TABLE_CACHE_FULL_SHARE x table_open_cache while Table_open_cache_misses (else
    Opened_tables) grows >= OPENED_PER_S_MIN per second, both for TABLE_CACHE_SUSTAINED_S."""
    cache = variable_number(tl, "table_open_cache")
    open_rows = status(tl, "Open_tables")
    if not cache or not len(open_rows):
        return None
    counter = "Table_open_cache_misses"
    opened = status(tl, counter).dropna(subset=["per_s"])
    if not len(opened):
        counter = "Opened_tables"
        opened = status(tl, counter).dropna(subset=["per_s"])
    if not len(opened):
        return None
    both = pd.merge_asof(
        opened[["ts", "per_s"]],
        open_rows[["ts", "value"]].rename(columns={"value": "open"}),
        on="ts",
        direction="nearest",
        tolerance=pd.Timedelta(seconds=2),
    )
    hot = (both["open"] >= TABLE_CACHE_FULL_SHARE * cache) & (both["per_s"] >= OPENED_PER_S_MIN)
    windows = sustained(
        both["ts"],
        hot.fillna(False).astype(bool),
        min_samples=sustained_samples(both["ts"], TABLE_CACHE_SUSTAINED_S),
    )
    if not windows:
        return None
    in_hot = both[hot.fillna(False)]
    full_rows = open_rows[open_rows["value"] >= TABLE_CACHE_FULL_SHARE * cache]
    numbers = {
        "open": float(in_hot["open"].max()),
        "cache": cache,
        "opened": float(in_hot["per_s"].median()),
        "seconds": sum(w.seconds for w in windows),
        "counter": counter,
        "suggested": int(max(cache * 4, 2000)),
        "listing": "",
    }
    evidence = [
        cite(tl, "Open_tables (max)", int(numbers["open"]), "tables", "mysqladmin.Open_tables", full_rows),
        cite(
            tl,
            f"{counter} per second (median)",
            round(numbers["opened"], 1),
            "/s",
            f"mysqladmin.{counter}",
            opened[opened["ts"].isin(in_hot["ts"])],
        ),
    ]
    listing = tl.frame("open_tables")
    if len(listing) and "member" in listing:
        last = listing[listing["member"] == sorted(listing["member"].astype(str).unique())[-1]]
        tables = last.groupby(["database", "table"], observed=True).ngroups
        numbers["listing"] = f" SHOW OPEN TABLES listed {len(last):,} cached tables ({tables:,} distinct)."
        evidence.append(
            cite(tl, "SHOW OPEN TABLES: tables listed", len(last), "tables", "open_tables.table", last)
        )
    found = TABLE_CACHE_TEXTS.finding("table-cache-full", Severity.WARNING, windows, evidence, **numbers)
    return _table_cache_culprit(tl, found, cache)


def _table_cache_culprit(tl: Timeline, found: Finding, cache: float) -> Finding:
    """table-cache-full's culprit: the holder of the cache when one is shown (``slots.table_cache``), else
    open_files_limit when Open_files is near it (the server sizes the cache to fit it), else
    table_open_cache."""
    holding = next((h for h in slots.table_cache(tl, slots.NO_WAITS) if h.named), None)
    if holding is not None:  # a holder shown: it, not the setting, is the culprit
        return dataclasses.replace(
            found, culprit=holding.holder, recommendation=f"{holding.fix}\n{found.recommendation}"
        )
    files, limit = status(tl, "Open_files"), variable_number(tl, "open_files_limit")
    if limit and len(files) and float(files["value"].max()) >= OPEN_FILES_NEAR_LIMIT * limit:
        why = (
            f"mysqld may hold {{value}} files open and holds {files['value'].max():.0f} (Open_files): "
            "the server "
            f"sizes table_open_cache ({cache:.0f}) to fit it, so the cache cannot grow until the limit "
            "does."
        )
        found = dataclasses.replace(
            found,
            evidence=found.evidence
            + (
                cite(
                    tl, "Open_files (max)", int(files["value"].max()), "files", "mysqladmin.Open_files", files
                ),
            ),
        )
        return with_setting(tl, found, "open_files_limit", why)
    return with_setting(
        tl, found, "table_open_cache", "the cache holds fewer tables than the workload opens at once."
    )


# --- innodb-latch-contention -----------------------------------------------------------------
#: OS waits per second on one latch (all its instances) between the two listings: 1,000 threads a
#: second gave up spinning and slept on it. The healthy real sample (Percona Server 8.0, sysbench,
#: ../shared/samples/My-gather example2) grows its hottest latch by 13/s.
LATCH_OS_WAITS_PER_S = 1000.0
#: The two listings must be at least this far apart for a rate (pt-stalk: the collection's run time).
LATCH_MIN_SECONDS = 5.0
_LATCH_NAME = re.compile(r"^(?:sum )?(\w+): (.+)$")
#: What the busiest latches of InnoDB guard, by source file (MySQL 8.0 storage/innobase).
LATCH_GUARDS = {
    "btr0sea.cc": "the adaptive hash index (innodb_adaptive_hash_index, innodb_adaptive_hash_index_parts)",
    "buf0buf.cc": "buffer pool pages and the page hash (innodb_buffer_pool_instances)",
    "dict0dict.cc": "an index tree or the data dictionary (hot index pages, DDL)",
    "fil0fil.cc": "the tablespace cache (many tables opened, innodb_open_files)",
    "hash0hash.cc": "a hash table partition (adaptive hash index or page hash)",
    "lock0lock.cc": "the lock system (many row locks taken and released)",
    "log0log.cc": "the redo log (commit-heavy load, innodb_log_buffer_size)",
    "trx0sys.cc": "the transaction system (many short transactions)",
}

LATCH_TEXTS = RuleTexts(
    title="InnoDB latch {latch} ({kind}): {per_s:,.0f} OS waits per second",
    explanation=(
        "The {kind} created at {latch} was waited on {grown:,.0f} times in {seconds:.0f} s ({per_s:,.0f}/s, "
        "{share:.0f} % of all latch waits between the two SHOW ENGINE INNODB MUTEX listings): threads gave "
        "up "
        "spinning and slept on it, which is where InnoDB serialised. {guards}"
    ),
    recommendation=(
        "Find what makes threads meet on that latch: the InnoDB status SEMAPHORES section and the\n"
        "processlist at the same moments. For btr0sea.cc, try SET GLOBAL innodb_adaptive_hash_index = OFF\n"
        "(dynamic) and compare; for buf0buf.cc, more buffer pool instances and fewer hot pages."
    ),
    caveats=(
        "OS waits count only the waits that slept, not the spins; a latch with many instances sums them.",
        "MariaDB 10.6+ prints no latches here: the listing is empty.",
    ),
    sources=("MySQL 8.4 Reference Manual, SHOW ENGINE (SHOW ENGINE INNODB MUTEX)", "pt-stalk collect()"),
    disproof="If the waits grew as much on a quiet server over the same time, they are background noise.",
    confidence="two SHOW ENGINE INNODB MUTEX listings",
)


def _listing_pairs(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """(first, second) members of each collection: ``...-mutex-status1`` and ``...-mutex-status2``."""
    members = sorted(frame["member"].astype(str).unique())
    return [(m, m[:-1] + "2") for m in members if m.endswith("1") and m[:-1] + "2" in members]


@rule(key="innodb-latch-contention", requires=("innodb_mutex",))
def innodb_latch_contention(tl: Timeline) -> Finding | None:
    """The latch (file:line, all instances) whose OS waits grew >= LATCH_OS_WAITS_PER_S per second
    between a collection's two listings, over the capture (>= LATCH_MIN_SECONDS)."""
    mx = tl.frame("innodb_mutex")
    window = tl.capture_window()
    if "member" not in mx or window is None:
        return None
    seconds = (window[1] - window[0]).total_seconds()
    if not seconds >= LATCH_MIN_SECONDS:
        return None
    parts = mx["name"].astype(str).str.extract(_LATCH_NAME)
    mx = mx.assign(kind=parts[0], latch=parts[1]).dropna(subset=["latch"])
    best: tuple[float, str, pd.DataFrame, float] | None = None
    for first, second in _listing_pairs(mx):
        before = mx[mx["member"] == first].groupby("latch")["waits"].sum()
        after = mx[mx["member"] == second].groupby("latch")["waits"].sum()
        grown = (after - before.reindex(after.index).fillna(0)).clip(lower=0)
        if not len(grown) or grown.max() <= 0:
            continue
        latch = str(grown.idxmax())
        rows = mx[(mx["member"] == second) & (mx["latch"] == latch)]
        if best is None or grown.max() > best[0]:
            best = (float(grown.max()), latch, rows, float(grown.sum()))
    if best is None or best[0] / seconds < LATCH_OS_WAITS_PER_S:
        return None
    grown, latch, rows, total = best
    kind = str(rows["kind"].iloc[0])
    member, lines = tl.lines_of(rows)
    line_text = f"{rows['type'].iloc[0]}\t{rows['name'].iloc[-1]}\twaits={int(rows['waits'].iloc[-1])}"
    evidence = [
        cite(tl, f"OS waits on {latch} (growth)", int(grown), "waits", "innodb_mutex.waits", rows),
        Evidence(f"latch {latch}: its line", line_text, "", "innodb_mutex.name", member, lines),
    ]
    guards = LATCH_GUARDS.get(latch.split(":")[0])
    return LATCH_TEXTS.finding(
        "innodb-latch-contention",
        Severity.WARNING,
        [Window(window[0], window[1])],
        evidence,
        latch=latch,
        kind=kind,
        grown=grown,
        seconds=seconds,
        per_s=grown / seconds,
        share=100 * grown / total if total else 100.0,
        guards=f"In InnoDB's source that latch guards {guards}." if guards else "",
    )
