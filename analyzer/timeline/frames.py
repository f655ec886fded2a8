"""Every frame a host's timeline may hold, and its columns: the names a rule declares as its inputs
(``@rule`` of analyzer/rules/registry.py: ``requires``, ``optional``, ``any_of``), evidence cites and
charts read, checked at import against this registry so that a mistyped name fails at once instead of
leaving a rule "not evaluated" or a chart empty.

A frame comes from a parser (``ParsedSource.frames`` of parsers/<format>.py: the tool's own column
names) or is derived by the timeline (analyzer/timeline/context.py, analyzer/timeline/timeline.py). A
new format's frames, or a frame a new derivation makes, get their line here, named as the parser
writes them: tests/analyzer/test_declared_inputs.py checks that every frame the fixtures' timelines
hold is here (the fixture bundles', and the every-format bundle's of tests/web/share_planted.py, where
a new format's member goes), and runs every rule on a timeline holding each frame it declares, made
from these columns where no fixture holds the frame. There, and on the fixtures, every evidence series
of the findings must name a frame and one of its columns (``series_problem``, which
web/timeline/chartdefs.py applies to its evidence charts' keys): a misspelt series would leave its
finding without a chart.

Plain Python: no Django.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: Frame name -> its columns (space-separated; ``ts`` first when the frame is timed), as the parsers
#: and the timeline write them.
_COLUMNS = {
    "df": (
        "ts avail_kib filesystem inodes inodes_free inodes_use_pct inodes_used line_no member mount size_kib "
        "ts_source use_pct used_kib"
    ),
    "diskstats": (
        "ts aqu_sz device in_flight io_ms line_no member r_await r_bytes_per_s r_per_s read_ms reads "
        "reads_merged rrqm_per_s sectors_read sectors_written util_pct w_await w_bytes_per_s w_per_s "
        "weighted_ms write_ms writes writes_merged wrqm_per_s"
    ),
    "host_disks": "ts device line_no member queue_size scheduler",
    "host_facts": "ts line_no member name section value",
    "host_filesystems": "ts filesystem line_no member mount options size size_bytes type used_pct",
    "hostname": "ts line_no",
    "innodb_deadlock": "ts age_s holds line_no member n query rolled_back thread_id trx_id waits_for",
    "innodb_lock_waits_raw": "ts blocking_trx_id line_end line_no member requesting_trx_id",
    "innodb_mutex": "ts line_no member name ts_source type waits",
    "innodb_rates": (
        "ts history_growth_per_s interval_s line_no log_bytes_per_s member os_fsyncs_per_s "
        "rows_changed_per_s "
        "rows_read_per_s"
    ),
    "innodb_semaphores": "ts latch line_no seconds thread wait_file wait_line",
    "innodb_status": (
        "ts averaged_s checkpoint_age_bytes checkpoint_lsn database_pages deadlock_age_s free_pages "
        "history_list_length hit_rate_per_1000 line_end line_no lock_wait_transactions log_flushed_lsn "
        "log_ios lsn max_checkpoint_age_bytes member modified_pages oldest_active_s os_file_reads "
        "os_file_writes os_fsyncs os_wait_reservations os_wait_signals pages_flushed_lsn pending_aio_reads "
        "pending_aio_writes pending_chkp_writes pending_fsync_log pending_fsync_pool pending_ibuf_reads "
        "pending_log_io pending_log_writes pending_reads pending_sync_io pending_writes_flush_list "
        "pending_writes_lru pending_writes_single_page pool_bytes pool_pages queries_inside queries_queued "
        "read_views rows_deleted rows_inserted rows_read rows_updated semaphore_max_wait_s semaphore_waits "
        "transactions_active trx_id_counter"
    ),
    "innodb_transactions": (
        "ts active_s client line_end line_no lock_structs lock_wait member operation query query_id "
        "row_locks "
        "state thread_id trx_id undo_entries"
    ),
    "innodb_trx": (
        "ts active_s isolation line_end line_no lock_structs member operation query rows_locked "
        "rows_modified "
        "state tables_locked thread_id trx_id wait_s"
    ),
    "interrupts": "ts count cpu irq line_no member per_s snapshot",
    "interrupts_desc": "ts chip devices hwirq irq line_no member type",
    "iostat": (
        "ts aqu_sz areq_sz_kib await bytes_per_s d_await d_bytes d_bytes_per_s d_per_s dareq_sz_kib device "
        "drqm_pct drqm_per_s f_await f_per_s line_no member r_await r_bytes r_bytes_per_s r_per_s "
        "rareq_sz_kib rqm_per_s rrqm_pct rrqm_per_s since_boot tps util_pct w_await w_bytes w_bytes_per_s "
        "w_per_s wareq_sz_kib wrqm_pct wrqm_per_s"
    ),
    "iostat_cpu": "ts idle iowait line_no nice since_boot steal system user",
    "lock_waits": (
        "ts blocking_host blocking_query blocking_thread idle_in_trx_s line_end line_no member wait_s "
        "waiting_query waiting_table waiting_thread"
    ),
    "lock_waits_summary": "ts idle_in_trx_s line_end line_no max_wait_s member num_waiters who_blocks",
    "manifest": "ts line_no",
    "meminfo": "ts field kib line_no member",
    "mpstat_cpu": "ts cpu gnice guest idle iowait irq line_no member nice since_boot soft steal sys usr",
    "mpstat_intr": "ts cpu intr_per_s line_no member since_boot",
    "mpstat_irq": "ts cpu irq kind line_no per_s since_boot",
    "mysqladmin": "ts line_no member per_s value variable",
    "mysqld_errors": "ts code kind line_end line_no member message prio signal ts_source",
    "mysqlsh_instance": "ts line_no",
    "mysqlsh_metrics": "ts line_no",
    "netstat_conns": "ts client direction line_no member server_port sockets state ts_source",
    "netstat_s": "ts field line_no member per_s value",
    "numastat": "ts field line_no member node per_s ts_source value",
    "open_tables": "ts database in_use line_no member name_locked table ts_source",
    "pfs_metadata_locks": (
        "ts line_end line_no lock_duration lock_status lock_type member object_name object_schema "
        "object_type "
        "processlist_id"
    ),
    "pfs_threads": (
        "ts line_end line_no member name processlist_command processlist_db processlist_host processlist_id "
        "processlist_info processlist_state processlist_time_s processlist_user snapshot thread_id "
        "thread_os_id type"
    ),
    "processlist": (
        "ts active command db fingerprint host id info line_end line_no member progress snapshot state "
        "time_s "
        "ts_source user"
    ),
    "processlist_accounts": "ts user client command sessions time_min_s time_max_s time_sum_s",
    "processlist_sessions": "ts member sessions",
    "procstat": "ts line_no",
    "procvmstat": "ts field line_no member per_s value",
    "ps_state_counts": "ts member state threads",
    "ps_threads": "ts comm is_mysqld line_no member pcpu pid ppid snapshot stat state tid user wchan",
    "ptstalk_output": "ts line_no",
    "ptstalk_trigger": "ts line_no",
    "replica_status": (
        "ts channel exec_source_log_pos io_running io_state last_io_errno last_io_error last_sql_errno "
        "last_sql_error line_end line_no member read_source_log_pos relay_log_space relay_source_log_file "
        "seconds_behind source_host source_log_file source_port source_server_id sql_delay "
        "sql_remaining_delay sql_running sql_state"
    ),
    "replication_connection_status": (
        "ts channel_name count_received_heartbeats group_name last_heartbeat_timestamp line_no "
        "received_transaction_set service_state source_uuid thread_id"
    ),
    "server_facts": "ts line_no member name section value",
    "server_replicas": "ts host line_no member port server_id",
    "server_sessions": "ts command count db host line_no max_time_s member state sum_time_s user working",
    "server_variables": "ts line_no member name section shown value",
    "slabinfo": "ts active_objs cache line_no member num_objs objsize_b size_kib ts_source",
    "slowlog": (
        "ts line_end line_no lock_time_s member queries query_time_s rows_examined rows_sent ts_source"
    ),
    "slowlog_class_minutes": (
        "ts class_no lock_time_max_s lock_time_s member queries query_time_max_s query_time_s rows_examined "
        "rows_examined_max rows_sent rows_sent_max"
    ),
    "slowlog_classes": (
        "ts bytes_sent example example_ts filesorts fingerprint first_seen full_scans host innodb_io_r_ops "
        "innodb_io_r_wait_s innodb_pages_distinct innodb_queue_wait_s innodb_rec_lock_wait_s last_seen "
        "line_end line_no lock_time_max_s lock_time_s member queries query_time_max_s query_time_min_s "
        "query_time_p95_s query_time_s rows_affected rows_examined rows_examined_max rows_sent rows_sent_max "
        "schema tmp_disk_tables tmp_tables user"
    ),
    "slowlog_clients": "ts first_seen host ip line_no member queries schema user",
    "sysctl": "ts line_no member name ts_source value",
    "top_load": "ts line_no load1 load15 load5 member running sleeping tasks",
    "top_procs": "ts command line_no member pcpu pid state user",
    "untimed": "ts line_no",
    "variables": "ts line_no",
    "vmstat": (
        "ts active_kib b bi bo buff_kib cache_kib cs free_kib gu id in inact_kib line_no member r si "
        "since_boot so st swpd_kib sy ts_source us wa"
    ),
    "vmstat_overall": (
        "ts b bi bo buff_kib cache_kib cs free_kib id in line_no r si since_boot so st swpd_kib sy ts_source "
        "us wa"
    ),
}
#: Frame name -> its columns.
FRAMES: dict[str, tuple[str, ...]] = {name: tuple(columns.split()) for name, columns in _COLUMNS.items()}
#: What a rule may declare besides frames: the server's variables and its CPU count.
NOT_FRAMES = ("variables", "ncpu")
#: Every name a rule may declare as an input.
INPUTS = frozenset((*FRAMES, *NOT_FRAMES))
#: Frames an evidence series may name that no timeline holds, made from the timeline's by the module
#: named, and the columns a rule cites of them.
DERIVED: dict[str, tuple[str, ...]] = {
    # analyzer/waits/read.py: each session's wait, per snapshot (analyzer.waits.model.WAIT_COLUMNS)
    "waits": ("state", "resource", "object"),
    # analyzer/rules/waits.py: what the bundle shows in place of a lock's holder, the sentence the
    # verdict reads as a cause shown (analyzer.reasoning.verdict.SHOWN_SERIES)
    "holders": ("contention",),
}
#: The columns that name the rows of a long frame, whose series are ``<frame>.<a row's name>``
#: (``mysqladmin.Threads_running``, ``netstat_s.RetransSegs``); ``name`` does too beside a ``value``
#: (a frame of settings: ``sysctl.vm.swappiness``), not alone (``innodb_mutex.name`` is a column).
ROW_NAMES = ("variable", "field")


class DeclarationError(ValueError):
    """A declaration (a rule's inputs, a chart's series, an evidence chart's key) names a frame or a
    series that does not exist: a typo, caught when the module declaring it is imported."""


def unknown(names: Iterable[str], known: Iterable[str], *, what: str, where: str) -> None:
    """Raise ``DeclarationError`` naming the first of ``names`` not among ``known`` (and the closest
    known name, as a hint); ``what`` says what the names are, ``where`` who declares them."""
    pool = sorted(set(known))
    for name in names:
        if name not in pool:
            close = difflib.get_close_matches(name, pool, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise DeclarationError(f"{where}: {name!r} is not {what}{hint}")


def family(frame: str) -> bool:
    """Whether ``frame``'s series are the names of its rows (``ROW_NAMES``, or ``name`` beside
    ``value``), not its columns: any name after the frame's is one. The server's ``variables`` are
    such a family (``variables.max_connections``; analyzer.engine points it at the line read)."""
    columns = set(FRAMES.get(frame, ()))
    return frame == "variables" or bool(columns & set(ROW_NAMES)) or {"name", "value"} <= columns


def series_problem(series: str) -> str | None:
    """What is wrong with the evidence series ``series`` (``Evidence.series``), or None when it names
    what the product reads: ``<frame>`` (the frame as a whole: ``processlist``), ``<frame>.<column>``
    (``vmstat.r``; a frame of ``FRAMES`` or of ``DERIVED``), ``<frame>.<name>`` of a ``family``
    (``mysqladmin.Innodb_deadlocks``), ``<frame>.<start>*`` (the sum of the columns starting so, one at
    least: ``innodb_status.pending_*``), or ``ncpu`` (the CPU count). The frame is the text before the
    first dot (``sysctl.vm.swappiness``: ``sysctl``), as web/timeline/chartdefs.py resolves a finding's
    charts from it.

    >>> series_problem("vmstat.r"), series_problem("sar_net_dev.ifutl_pct")
    (None, "'sar_net_dev' is not a frame of analyzer/timeline/frames.py")
    """
    frame, _, column = series.partition(".")
    columns = FRAMES.get(frame, DERIVED.get(frame))
    if columns is None:
        if series in NOT_FRAMES:
            return None
        close = difflib.get_close_matches(frame, [*FRAMES, *DERIVED], n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"{frame!r} is not a frame of analyzer/timeline/frames.py{hint}"
    if not column or column in columns or family(frame):
        return None
    if column.endswith("*") and any(c.startswith(column[:-1]) for c in columns):
        return None
    close = difflib.get_close_matches(column, columns, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"{column!r} is not a column of the frame {frame!r}{hint}"
