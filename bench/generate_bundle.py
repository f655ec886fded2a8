"""Write a large, realistic Casebook collector bundle (.tar.gz) for the ingest benchmark (issue 4).

The bundle has the layout ``scripts/collect.sh`` writes (one directory
``casebook-<host>-<YYYYmmddTHHMMSS>/`` holding ``manifest.txt``, ``vmstat.txt``, ``mpstat.txt``,
``mpstat-intr.txt``, ``iostat.txt``, ``ps-threads.txt``, ``interrupts.txt``, ``processlist.txt``,
``mysqladmin.txt``, ``variables.txt``, ``meminfo.txt``) and the exact line shapes the real tools print
(copied from a run of collect.sh on this machine: procps-ng 4.0.2, sysstat 12.6.1, MariaDB 10.11.19,
Linux 6.18; see tests/fixtures/<format>/):

=================  ==========================================================================
vmstat.txt         ``vmstat -t -n 1 N+1``: one header, first line since boot, per-line date+time
mpstat.txt         ``mpstat -P ALL 1 N`` (S_TIME_FORMAT=ISO): banner, blocks of all + CPUs, Average
mpstat-intr.txt    ``mpstat -I SUM -P ALL 1 N``: same shape, ``intr/s``
iostat.txt         ``iostat -dxk -t 1 N+1``: ISO time per report, sysstat 12 extended columns
ps-threads.txt     ``ps -eLo pid,tid,ppid,user,stat,pcpu,comm,wchan:32`` after a TS line each second
interrupts.txt     ``cat /proc/interrupts`` after a TS line each second (x86 rows, named rows)
processlist.txt    ``SHOW FULL PROCESSLIST\\G`` after a TS line each second (MariaDB columns)
mysqladmin.txt     ``mysqladmin extended-status`` after a TS line each second (562 MariaDB rows)
=================  ==========================================================================

Defaults match the target of DESIGN.md ("Targets"): 60 minutes at 1 s, 64 CPUs, 2,000 threads per ps
snapshot, 1,000 sessions per processlist snapshot, 8 disks, 60 numbered IRQ lines (plus the named
x86 rows NMI, LOC, RES... the kernel always prints). Values vary plausibly (NumPy, fixed seed: the
same arguments give the same tar content) around a steady OLTP load with one I/O stall between 60 % and
70 % of the run (iowait, D-state threads in ``io_schedule``, long ``Commit``/``Sending data``
queries), so that the rules have something to find. Session ids map to thread ids consistently
across ps and processlist.

``--host`` picks a host size (2, 16 or 64 CPUs with tens, hundreds or a thousand sessions) and
``--shape`` the load inside the load window (``--incident``): ``healthy`` (no load: about one
statement per core), ``cpu-bound``, ``io-bound``, ``tmp-tables`` (seed 000), ``commit`` (seed 001),
or ``io-stall`` (the default above). See ``Shape`` and ``SHAPES``.

Streaming: every member is written line block by line block to a file in a scratch directory next
to the output, then streamed into the gzip'd tar (``tar`` needs each member's size before its
bytes) and deleted; no member is ever held in memory whole.

Usage::

    .venv/bin/python bench/generate_bundle.py [--minutes 60] [--out /tmp/casebook-bench-60m.tar.gz]

Prints the compressed size, the uncompressed size (text bytes and lines, and the tar stream) and the
time it took. Keep the output under /tmp: never write generated bundles inside the project.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

import numpy as np

#: gzip level of ``tar -czf`` (GNU tar runs gzip with its default, -6), what collect.sh produces.
GZIP_LEVEL = 6
#: Write buffer per member file: large enough that per-second writes do not hit the disk one by one.
WRITE_BUFFER_BYTES = 1 << 20
#: The I/O stall covers this fraction of the run (start, end), with ramps of RAMP_S seconds.
INCIDENT = (0.60, 0.70)
RAMP_S = 20
#: procps prints PID/TID in 5 columns while pid_max is 32768 (this machine); keep ids below it.
PID_MAX = 32768
#: The mariadbd process (PID) and where its connection threads' TIDs start.
MYSQLD_PID = 3774
#: Connection threads get TIDs from here up (mariadbd's helper threads sit between MYSQLD_PID and it).
FIRST_CONN_TID = 8000
#: A session disconnects and is replaced (new Id, new TID) with this probability per second:
#: application pools recycle connections slowly.
SESSION_CHURN_PER_S = 0.0008
KERNEL = "5.15.0-105-generic"
HOST = "db-bench-01"
#: RAM of the simulated server (KiB): 512 GiB, a typical 64-core database host.
MEM_TOTAL_KIB = 528_280_000

# ---------------------------------------------------------------------------------------------
# Tool headers, copied from the real output (procps-ng 4.0.2, sysstat 12.6.1)
# ---------------------------------------------------------------------------------------------
VMSTAT_HEAD = (
    "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----\n"
    " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC\n"
)
VMSTAT_ROW = "%2d %2d %6d %6d %6d %6d %4d %4d %5d %5d %4d %4d %2d %2d %2d %2d %2d %s\n"
#: After the time of day, printed as ``%-11s`` (sysstat mpstat.c).
MPSTAT_HEAD = "  CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle\n"
MPSTAT_INTR_HEAD = "  CPU    intr/s\n"
IOSTAT_HEAD = (
    "Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm"
    " w_await wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util\n"
)
PS_HEAD = "  PID   TID  PPID USER     STAT %CPU COMMAND         WCHAN\n"
PL_ROW_SEP = "*************************** %d. row ***************************\n"
MYSQLADMIN_BORDER = "+" + "-" * 50 + "+" + "-" * 50 + "+\n"
MYSQLADMIN_ROW = "| %-48s | %-48s |\n"


def _widths(header: str, first: int) -> list[int]:
    """Right-aligned column widths of a sysstat header after its first ``first`` characters."""
    ends, pos, rest = [], first, header.rstrip("\n")[first:]
    for token in rest.split():
        idx = header.index(token, pos)
        pos = idx + len(token)
        ends.append(pos)
    return [b - a for a, b in zip([first, *ends[:-1]], ends, strict=True)]


IOSTAT_FMT = "%-13s" + "".join(f"%{w}.2f" for w in _widths(IOSTAT_HEAD, 13)) + "\n"
MPSTAT_FMT = "%-11s %4s" + " %7.2f" * 10 + "\n"


# ---------------------------------------------------------------------------------------------
# MariaDB 10.11.19 `mysqladmin extended-status` rows, in its order (names from a run on this
# machine); zero unless listed in STATUS_TEXT / STATUS_NUMBERS (idle-server values).
# ---------------------------------------------------------------------------------------------
STATUS_NAMES = """
Aborted_clients Aborted_connects Aborted_connects_preauth Access_denied_errors Acl_column_grants
Acl_database_grants Acl_function_grants Acl_procedure_grants Acl_package_spec_grants Acl_package_body_grants
Acl_proxy_users Acl_role_grants Acl_roles Acl_table_grants Acl_users Aria_pagecache_blocks_not_flushed
Aria_pagecache_blocks_unused Aria_pagecache_blocks_used Aria_pagecache_read_requests Aria_pagecache_reads
Aria_pagecache_write_requests Aria_pagecache_writes Aria_transaction_log_syncs Binlog_commits
Binlog_group_commits Binlog_group_commit_trigger_count Binlog_group_commit_trigger_lock_wait
Binlog_group_commit_trigger_timeout Binlog_snapshot_file Binlog_snapshot_position Binlog_bytes_written
Binlog_cache_disk_use Binlog_cache_use Binlog_stmt_cache_disk_use Binlog_stmt_cache_use Busy_time
Bytes_received Bytes_sent Column_compressions Column_decompressions Com_admin_commands Com_alter_db
Com_alter_db_upgrade Com_alter_event Com_alter_function Com_alter_procedure Com_alter_server
Com_alter_sequence Com_alter_table Com_alter_tablespace Com_alter_user Com_analyze Com_assign_to_keycache
Com_backup Com_backup_lock Com_begin Com_binlog Com_call_procedure Com_change_db Com_change_master
Com_check Com_checksum Com_commit Com_compound_sql Com_create_db Com_create_event Com_create_function
Com_create_index Com_create_package Com_create_package_body Com_create_procedure Com_create_role
Com_create_sequence Com_create_server Com_create_table Com_create_temporary_table Com_create_trigger
Com_create_udf Com_create_user Com_create_view Com_dealloc_sql Com_delete Com_delete_multi Com_do
Com_drop_db Com_drop_event Com_drop_function Com_drop_index Com_drop_package Com_drop_package_body
Com_drop_procedure Com_drop_role Com_drop_sequence Com_drop_server Com_drop_table Com_drop_temporary_table
Com_drop_trigger Com_drop_user Com_drop_view Com_empty_query Com_execute_immediate Com_execute_sql Com_flush
Com_get_diagnostics Com_grant Com_grant_role Com_ha_close Com_ha_open Com_ha_read Com_help Com_insert
Com_insert_select Com_install_plugin Com_kill Com_load Com_lock_tables Com_multi Com_optimize Com_preload_keys
Com_prepare_sql Com_purge Com_purge_before_date Com_release_savepoint Com_rename_table Com_rename_user
Com_repair Com_replace Com_replace_select Com_reset Com_resignal Com_revoke Com_revoke_all Com_revoke_role
Com_rollback Com_rollback_to_savepoint Com_savepoint Com_select Com_set_option Com_show_authors
Com_show_binlog_events Com_show_binlogs Com_show_charsets Com_show_collations Com_show_contributors
Com_show_create_db Com_show_create_event Com_show_create_func Com_show_create_package
Com_show_create_package_body Com_show_create_proc Com_show_create_table Com_show_create_trigger
Com_show_create_user Com_show_databases Com_show_engine_logs Com_show_engine_mutex Com_show_engine_status
Com_show_errors Com_show_events Com_show_explain Com_show_analyze Com_show_fields Com_show_function_status
Com_show_generic Com_show_grants Com_show_keys Com_show_binlog_status Com_show_open_tables Com_show_package_status
Com_show_package_body_status Com_show_plugins Com_show_privileges Com_show_procedure_status
Com_show_processlist Com_show_profile Com_show_profiles Com_show_relaylog_events Com_show_slave_hosts
Com_show_slave_status Com_show_status Com_show_storage_engines Com_show_table_status Com_show_tables
Com_show_triggers Com_show_variables Com_show_warnings Com_shutdown Com_signal Com_start_all_slaves
Com_start_slave Com_stmt_close Com_stmt_execute Com_stmt_fetch Com_stmt_prepare Com_stmt_reprepare
Com_stmt_reset Com_stmt_send_long_data Com_stop_all_slaves Com_stop_slave Com_truncate Com_uninstall_plugin
Com_unlock_tables Com_update Com_update_multi Com_xa_commit Com_xa_end Com_xa_prepare Com_xa_recover
Com_xa_rollback Com_xa_start Compression Connection_errors_accept Connection_errors_internal
Connection_errors_max_connections Connection_errors_peer_address Connection_errors_select
Connection_errors_tcpwrap Connections Cpu_time Created_tmp_disk_tables Created_tmp_files Created_tmp_tables
Delayed_errors Delayed_insert_threads Delayed_writes Delete_scan Empty_queries Executed_events
Executed_triggers Feature_application_time_periods Feature_check_constraint Feature_custom_aggregate_functions
Feature_delay_key_write Feature_dynamic_columns Feature_fulltext Feature_gis Feature_insert_returning
Feature_invisible_columns Feature_json Feature_locale Feature_subquery Feature_system_versioning Feature_timezone
Feature_trigger Feature_window_functions Feature_xml Handler_commit Handler_delete Handler_discover
Handler_external_lock Handler_icp_attempts Handler_icp_match Handler_mrr_init Handler_mrr_key_refills
Handler_mrr_rowid_refills Handler_prepare Handler_read_first Handler_read_key Handler_read_last
Handler_read_next Handler_read_prev Handler_read_retry Handler_read_rnd Handler_read_rnd_deleted
Handler_read_rnd_next Handler_rollback Handler_savepoint Handler_savepoint_rollback Handler_tmp_delete
Handler_tmp_update Handler_tmp_write Handler_update Handler_write Innodb_adaptive_hash_hash_searches
Innodb_adaptive_hash_non_hash_searches Innodb_background_log_sync Innodb_buffer_pool_dump_status
Innodb_buffer_pool_load_status Innodb_buffer_pool_resize_status Innodb_buffer_pool_load_incomplete
Innodb_buffer_pool_pages_data Innodb_buffer_pool_bytes_data Innodb_buffer_pool_pages_dirty
Innodb_buffer_pool_bytes_dirty Innodb_buffer_pool_pages_flushed Innodb_buffer_pool_pages_free
Innodb_buffer_pool_pages_made_not_young Innodb_buffer_pool_pages_made_young Innodb_buffer_pool_pages_misc
Innodb_buffer_pool_pages_old Innodb_buffer_pool_pages_total Innodb_buffer_pool_pages_lru_flushed
Innodb_buffer_pool_pages_lru_freed Innodb_buffer_pool_pages_split Innodb_buffer_pool_read_ahead_rnd
Innodb_buffer_pool_read_ahead Innodb_buffer_pool_read_ahead_evicted Innodb_buffer_pool_read_requests
Innodb_buffer_pool_reads Innodb_buffer_pool_wait_free Innodb_buffer_pool_write_requests Innodb_checkpoint_age
Innodb_checkpoint_max_age Innodb_data_fsyncs Innodb_data_pending_fsyncs Innodb_data_pending_reads
Innodb_data_pending_writes Innodb_data_read Innodb_data_reads Innodb_data_writes Innodb_data_written
Innodb_dblwr_pages_written Innodb_dblwr_writes Innodb_deadlocks Innodb_history_list_length
Innodb_ibuf_discarded_delete_marks Innodb_ibuf_discarded_deletes Innodb_ibuf_discarded_inserts
Innodb_ibuf_free_list Innodb_ibuf_merged_delete_marks Innodb_ibuf_merged_deletes Innodb_ibuf_merged_inserts
Innodb_ibuf_merges Innodb_ibuf_segment_size Innodb_ibuf_size Innodb_log_waits Innodb_log_write_requests
Innodb_log_writes Innodb_lsn_current Innodb_lsn_flushed Innodb_lsn_last_checkpoint
Innodb_master_thread_active_loops Innodb_master_thread_idle_loops Innodb_max_trx_id Innodb_mem_adaptive_hash
Innodb_mem_dictionary Innodb_os_log_written Innodb_page_size Innodb_pages_created Innodb_pages_read
Innodb_pages_written Innodb_row_lock_current_waits Innodb_row_lock_time Innodb_row_lock_time_avg
Innodb_row_lock_time_max Innodb_row_lock_waits Innodb_num_open_files Innodb_truncated_status_writes
Innodb_available_undo_logs Innodb_undo_truncations Innodb_page_compression_saved
Innodb_num_pages_page_compressed Innodb_num_page_compressed_trim_op Innodb_num_pages_page_decompressed
Innodb_num_pages_page_compression_error Innodb_num_pages_encrypted Innodb_num_pages_decrypted
Innodb_have_lz4 Innodb_have_lzo Innodb_have_lzma Innodb_have_bzip2 Innodb_have_snappy Innodb_have_punch_hole
Innodb_defragment_compression_failures Innodb_defragment_failures Innodb_defragment_count
Innodb_instant_alter_column Innodb_onlineddl_rowlog_rows Innodb_onlineddl_rowlog_pct_used
Innodb_onlineddl_pct_progress Innodb_secondary_index_triggered_cluster_reads
Innodb_secondary_index_triggered_cluster_reads_avoided Innodb_encryption_rotation_pages_read_from_cache
Innodb_encryption_rotation_pages_read_from_disk Innodb_encryption_rotation_pages_modified
Innodb_encryption_rotation_pages_flushed Innodb_encryption_rotation_estimated_iops
Innodb_encryption_n_merge_blocks_encrypted Innodb_encryption_n_merge_blocks_decrypted
Innodb_encryption_n_rowlog_blocks_encrypted Innodb_encryption_n_rowlog_blocks_decrypted
Innodb_encryption_n_temp_blocks_encrypted Innodb_encryption_n_temp_blocks_decrypted
Innodb_encryption_num_key_requests Key_blocks_not_flushed Key_blocks_unused Key_blocks_used
Key_blocks_warm Key_read_requests Key_reads Key_write_requests Key_writes Last_query_cost Master_gtid_wait_count
Master_gtid_wait_time Master_gtid_wait_timeouts Max_statement_time_exceeded Max_used_connections
Max_used_connections_time Max_memory_used Memory_used Memory_used_initial Not_flushed_delayed_rows
Open_files Open_streams Open_table_definitions Open_tables Opened_files Opened_plugin_libraries
Opened_table_definitions Opened_tables Opened_views Optimizer_join_prefixes_check_calls
Performance_schema_accounts_lost Performance_schema_cond_classes_lost Performance_schema_cond_instances_lost
Performance_schema_digest_lost Performance_schema_file_classes_lost Performance_schema_file_handles_lost
Performance_schema_file_instances_lost Performance_schema_hosts_lost Performance_schema_index_stat_lost
Performance_schema_locker_lost Performance_schema_memory_classes_lost Performance_schema_metadata_lock_lost
Performance_schema_mutex_classes_lost Performance_schema_mutex_instances_lost
Performance_schema_nested_statement_lost Performance_schema_prepared_statements_lost
Performance_schema_program_lost Performance_schema_rwlock_classes_lost Performance_schema_rwlock_instances_lost
Performance_schema_session_connect_attrs_longest_seen Performance_schema_session_connect_attrs_lost
Performance_schema_socket_classes_lost Performance_schema_socket_instances_lost
Performance_schema_stage_classes_lost Performance_schema_statement_classes_lost
Performance_schema_table_handles_lost Performance_schema_table_instances_lost
Performance_schema_table_lock_stat_lost Performance_schema_thread_classes_lost
Performance_schema_thread_instances_lost Performance_schema_users_lost Prepared_stmt_count Qcache_free_blocks
Qcache_free_memory Qcache_hits Qcache_inserts Qcache_lowmem_prunes Qcache_not_cached Qcache_queries_in_cache
Qcache_total_blocks Queries Query_time Questions Resultset_metadata_skipped Rows_read Rows_sent Rows_tmp_read
Rpl_semi_sync_master_clients Rpl_semi_sync_master_get_ack Rpl_semi_sync_master_net_avg_wait_time
Rpl_semi_sync_master_net_wait_time Rpl_semi_sync_master_net_waits Rpl_semi_sync_master_no_times
Rpl_semi_sync_master_no_tx Rpl_semi_sync_master_request_ack Rpl_semi_sync_master_status
Rpl_semi_sync_master_timefunc_failures Rpl_semi_sync_master_tx_avg_wait_time
Rpl_semi_sync_master_tx_wait_time Rpl_semi_sync_master_tx_waits
Rpl_semi_sync_master_wait_pos_backtraverse Rpl_semi_sync_master_wait_sessions Rpl_semi_sync_master_yes_tx
Rpl_semi_sync_slave_send_ack Rpl_semi_sync_slave_status Rpl_status Rpl_transactions_multi_engine
Select_full_join Select_full_range_join Select_range Select_range_check Select_scan Slave_connections
Slave_heartbeat_period Slave_open_temp_tables Slave_received_heartbeats Slave_retried_transactions
Slave_running Slave_skipped_errors Slaves_connected Slaves_running Slow_launch_threads Slow_queries
Sort_merge_passes Sort_priority_queue_sorts Sort_range Sort_rows Sort_scan Ssl_accept_renegotiates
Ssl_accepts Ssl_callback_cache_hits Ssl_cipher Ssl_cipher_list Ssl_client_connects Ssl_connect_renegotiates
Ssl_ctx_verify_depth Ssl_ctx_verify_mode Ssl_default_timeout Ssl_finished_accepts Ssl_finished_connects
Ssl_server_not_after Ssl_server_not_before Ssl_session_cache_hits Ssl_session_cache_misses
Ssl_session_cache_mode Ssl_session_cache_overflows Ssl_session_cache_size Ssl_session_cache_timeouts
Ssl_sessions_reused Ssl_used_session_cache_entries Ssl_verify_depth Ssl_verify_mode Ssl_version
Subquery_cache_hit Subquery_cache_miss Syncs Table_locks_immediate Table_locks_waited
Table_open_cache_active_instances Table_open_cache_hits Table_open_cache_misses
Table_open_cache_overflows Tc_log_max_pages_used Tc_log_page_size Tc_log_page_waits Threadpool_idle_threads
Threadpool_threads Threads_cached Threads_connected Threads_created Threads_running Transactions_gtid_foreign_engine
Transactions_multi_engine Update_scan Uptime Uptime_since_flush_status wsrep_cluster_capabilities
wsrep_cluster_conf_id wsrep_cluster_size wsrep_cluster_state_uuid wsrep_cluster_status wsrep_connected
wsrep_local_bf_aborts wsrep_local_index wsrep_provider_capabilities wsrep_provider_name wsrep_provider_vendor
wsrep_provider_version wsrep_ready wsrep_rollbacker_thread_count wsrep_thread_count
""".split()
STATUS_TEXT = {
    "Binlog_snapshot_file": "",
    "Busy_time": "0.000000",
    "Compression": "OFF",
    "Cpu_time": "0.000000",
    "Innodb_buffer_pool_dump_status": "",
    "Innodb_buffer_pool_load_status": "Buffer pool(s) load completed at 260401 03:12:09",
    "Innodb_buffer_pool_resize_status": "",
    "Innodb_buffer_pool_load_incomplete": "OFF",
    "Innodb_have_lz4": "OFF",
    "Innodb_have_lzo": "OFF",
    "Innodb_have_lzma": "OFF",
    "Innodb_have_bzip2": "OFF",
    "Innodb_have_snappy": "OFF",
    "Innodb_have_punch_hole": "ON",
    "Last_query_cost": "0.000000",
    "Max_memory_used": "NULL",
    "Rpl_semi_sync_master_status": "OFF",
    "Rpl_semi_sync_slave_status": "OFF",
    "Rpl_status": "AUTH_MASTER",
    "Slave_heartbeat_period": "0.000",
    "Slave_running": "OFF",
    "Ssl_cipher": "",
    "Ssl_cipher_list": "",
    "Ssl_server_not_after": "",
    "Ssl_server_not_before": "",
    "Ssl_session_cache_mode": "NONE",
    "Ssl_version": "",
    "wsrep_cluster_capabilities": "",
    "wsrep_cluster_conf_id": "18446744073709551615",
    "wsrep_cluster_state_uuid": "",
    "wsrep_cluster_status": "Disconnected",
    "wsrep_connected": "OFF",
    "wsrep_local_index": "18446744073709551615",
    "wsrep_provider_capabilities": "",
    "wsrep_provider_name": "",
    "wsrep_provider_vendor": "",
    "wsrep_provider_version": "",
    "wsrep_ready": "OFF",
}
#: Per-second rates of the counters that move under the simulated OLTP load (at stress 0).
STATUS_RATES = {
    "Bytes_received": 6.0e6,
    "Bytes_sent": 48.0e6,
    "Com_begin": 4200.0,
    "Com_commit": 4200.0,
    "Com_delete": 310.0,
    "Com_insert": 2900.0,
    "Com_rollback": 12.0,
    "Com_select": 21000.0,
    "Com_set_option": 40.0,
    "Com_show_processlist": 1.0,
    "Com_show_status": 1.0,
    "Com_update": 2100.0,
    "Connections": 0.8,
    "Created_tmp_disk_tables": 45.0,
    "Created_tmp_tables": 820.0,
    "Handler_commit": 8600.0,
    "Handler_delete": 330.0,
    "Handler_read_first": 90.0,
    "Handler_read_key": 410000.0,
    "Handler_read_next": 2.1e6,
    "Handler_read_rnd_next": 380000.0,
    "Handler_update": 2300.0,
    "Handler_write": 31000.0,
    "Innodb_buffer_pool_pages_flushed": 1800.0,
    "Innodb_buffer_pool_read_requests": 3.2e6,
    "Innodb_buffer_pool_reads": 210.0,
    "Innodb_buffer_pool_write_requests": 64000.0,
    "Innodb_data_fsyncs": 320.0,
    "Innodb_data_read": 3.4e6,
    "Innodb_data_reads": 210.0,
    "Innodb_data_writes": 2600.0,
    "Innodb_data_written": 58.0e6,
    "Innodb_dblwr_pages_written": 1800.0,
    "Innodb_log_write_requests": 41000.0,
    "Innodb_log_writes": 900.0,
    "Innodb_lsn_current": 21.0e6,
    "Innodb_lsn_flushed": 21.0e6,
    "Innodb_os_log_written": 21.0e6,
    "Innodb_pages_read": 210.0,
    "Innodb_pages_written": 1800.0,
    "Innodb_row_lock_time": 40.0,
    "Innodb_row_lock_waits": 3.0,
    "Opened_files": 2.0,
    "Queries": 34500.0,
    "Questions": 34460.0,
    "Rows_read": 2.4e6,
    "Rows_sent": 190000.0,
    "Select_range": 4100.0,
    "Select_scan": 520.0,
    "Slow_queries": 0.4,
    "Sort_rows": 51000.0,
    "Sort_scan": 260.0,
    "Table_locks_immediate": 30.0,
    "Table_open_cache_hits": 29000.0,
    "Threads_created": 0.8,
}
STATUS_NUMBERS = {
    "Aborted_clients": 1311,
    "Aborted_connects": 17,
    "Acl_users": 9,
    "Innodb_buffer_pool_pages_total": 25165824,
    "Innodb_buffer_pool_pages_data": 24900412,
    "Innodb_buffer_pool_pages_free": 8192,
    "Innodb_checkpoint_max_age": 869_325_621,
    "Innodb_page_size": 16384,
    "Innodb_available_undo_logs": 128,
    "Innodb_num_open_files": 412,
    "Key_blocks_unused": 107163,
    "Max_used_connections": 1204,
    "Memory_used_initial": 443368832,
    "Open_files": 380,
    "Open_streams": 4,
    "Open_table_definitions": 402,
    "Open_tables": 2000,
    "Opened_table_definitions": 455,
    "Opened_tables": 9812,
    "Qcache_free_blocks": 1,
    "Qcache_free_memory": 1031272,
    "Qcache_total_blocks": 1,
    "Table_open_cache_active_instances": 16,
    "Threadpool_idle_threads": 0,
}
#: Uptime of the simulated server when the capture starts (s): 31 days; counters start from
#: rate x uptime so that their width is that of a server that has been up a month.
UPTIME_AT_START_S = 31 * 86400

VARIABLES = {
    "autocommit": "ON",
    "back_log": "80",
    "binlog_format": "MIXED",
    "character_set_server": "utf8mb4",
    "collation_server": "utf8mb4_general_ci",
    "datadir": "/var/lib/mysql/",
    "default_storage_engine": "InnoDB",
    "hostname": HOST,
    "innodb_adaptive_hash_index": "OFF",
    "innodb_buffer_pool_chunk_size": "134217728",
    "innodb_buffer_pool_instances": "1",
    "innodb_buffer_pool_size": "412316860416",
    "innodb_doublewrite": "ON",
    "innodb_flush_log_at_trx_commit": "1",
    "innodb_flush_method": "O_DIRECT",
    "innodb_io_capacity": "2000",
    "innodb_io_capacity_max": "4000",
    "innodb_lock_wait_timeout": "50",
    "innodb_log_buffer_size": "67108864",
    "innodb_log_file_size": "8589934592",
    "innodb_page_size": "16384",
    "innodb_read_io_threads": "8",
    "innodb_write_io_threads": "8",
    "join_buffer_size": "262144",
    "lock_wait_timeout": "86400",
    "log_bin": "ON",
    "long_query_time": "1.000000",
    "max_allowed_packet": "67108864",
    "max_connections": "2000",
    "max_heap_table_size": "16777216",
    "open_files_limit": "65535",
    "performance_schema": "OFF",
    "port": "3306",
    "query_cache_size": "1048576",
    "query_cache_type": "OFF",
    "read_buffer_size": "131072",
    "read_rnd_buffer_size": "262144",
    "server_id": "1",
    "slow_query_log": "ON",
    "socket": "/run/mysqld/mysqld.sock",
    "sort_buffer_size": "2097152",
    "sync_binlog": "1",
    "table_definition_cache": "2000",
    "table_open_cache": "2000",
    "thread_cache_size": "256",
    "thread_handling": "one-thread-per-connection",
    "thread_stack": "299008",
    "time_zone": "SYSTEM",
    "tmp_table_size": "16777216",
    "tmpdir": "/tmp",
    "transaction_isolation": "REPEATABLE-READ",
    "version": "10.11.19-MariaDB-0+deb12u1-log",
    "version_comment": "Debian 12",
    "wait_timeout": "28800",
}

# ---------------------------------------------------------------------------------------------
# Processlist: what the sessions run (MariaDB 10.11 states)
# ---------------------------------------------------------------------------------------------
QUERIES = (
    "SELECT id, status, total, created_at FROM orders WHERE id = {a}",
    (
        "SELECT o.id, o.status, o.total FROM orders o JOIN customers c ON c.id = o.customer_id "
        "WHERE c.email = 'user{a}@example.com' ORDER BY o.created_at DESC LIMIT 20"
    ),
    "UPDATE stock SET qty = qty - {b} WHERE sku = 'SKU-{a}' AND qty >= {b}",
    "INSERT INTO order_items (order_id, sku, qty, price) VALUES ({a}, 'SKU-{c}', {b}, {b}.99)",
    "COMMIT",
    "SELECT COUNT(*) FROM sessions WHERE user_id = {a} AND last_seen > NOW() - INTERVAL {b} MINUTE",
    "DELETE FROM cart_items WHERE cart_id = {a} AND sku = 'SKU-{c}'",
    "SELECT id, name, price FROM products WHERE category_id IN ({b}, {c}, {a}) ORDER BY name LIMIT 50",
    "UPDATE customers SET last_login = NOW() WHERE id = {a}",
    "SELECT * FROM shipments WHERE order_id = {a} FOR UPDATE",
    "INSERT INTO audit_log (actor, action, target, at) VALUES ('app', 'view', 'order:{a}', NOW())",
    (
        "SELECT c.id, SUM(o.total) AS spent\nFROM customers c\nJOIN orders o ON o.customer_id = c.id\n"
        "WHERE o.created_at >= '2026-04-01' AND c.region = {b}\nGROUP BY c.id\nORDER BY spent DESC\nLIMIT 100"
    ),
)
#: How often each query runs (same order as QUERIES).
QUERY_WEIGHTS = np.array([30, 8, 10, 12, 15, 6, 4, 6, 4, 2, 2, 1], dtype=float)
STATES = (
    "Sending data",
    "Writing to net",
    "Opening tables",
    "Statistics",
    "Updating",
    "Commit",
    "starting",
    "Sorting result",
    "Creating sort index",
    "Copying to tmp table",
    "Removing tmp table",
    "Searching rows for update",
    "Converting HEAP to Aria",
    "Waiting for handler commit",
)
STATE_WEIGHTS = np.array([30, 12, 3, 6, 10, 12, 8, 3, 3, 4, 3, 6, 0, 0], dtype=float)
#: During the I/O stall most running queries wait on the disk: these states take over.
STALL_STATES = (0, 5, 4)  # Sending data, Commit, Updating
#: Kernel functions D-state mariadbd threads sleep in during the stall (Linux 5.15 names).
D_WCHANS = ("io_schedule", "jbd2_log_wait_commit", "folio_wait_bit_common", "blk_mq_get_tag")
IDLE_WCHAN = "poll_schedule_timeout.constprop.0"


# ---------------------------------------------------------------------------------------------
# Load shapes: how the server behaves at stress 0 (its quiet level) and 1 (the load window)
# ---------------------------------------------------------------------------------------------
Pair = tuple[float, float]


def lerp(pair: Pair, s: float) -> float:
    """The value of a (quiet, loaded) pair at stress ``s`` in [0, 1]."""
    return pair[0] + (pair[1] - pair[0]) * s


@dataclass(frozen=True)
class Shape:
    """One load shape, after the seeds (../shared/seeds). Every pair is (quiet, loaded); the capture
    moves from the first to the second inside the load window (``Spec.incident``).

    ``active_per_cpu``: running statements per CPU (None: the legacy fixed share of the sessions);
    ``stuck``: probability a running statement is still running a second later; ``stall_states`` and
    ``stall_share``: the states loaded sessions take; ``stall_query``: the one statement they run
    (None: the usual mix); ``blocked``: share of running sessions whose thread sleeps in D, in one of
    ``d_wchans``; ``usr``/``sys``/``iowait``: CPU percent; ``runq_per_cpu``: vmstat r per CPU;
    ``b_per_cpu``: vmstat b per CPU; ``intr_per_cpu``/``cs_per_cpu``: vmstat in/cs per CPU;
    ``r_iops``/``w_iops`` per device, ``r_await``/``w_await`` ms; ``status_boost``: status counter
    rates multiplied at stress 1 (on-disk temporary tables, commits, log fsyncs).
    """

    name: str
    active_per_cpu: Pair | None = None
    stuck: Pair = (0.15, 0.95)
    stall_states: tuple[int, ...] = (0, 5, 4)  # Sending data, Commit, Updating
    stall_share: Pair = (0.0, 0.85)
    stall_query: str | None = None
    blocked: Pair = (0.10, 0.95)
    d_wchans: tuple[str, ...] = (
        "io_schedule",
        "jbd2_log_wait_commit",
        "folio_wait_bit_common",
        "blk_mq_get_tag",
    )
    usr: Pair = (38.0, 30.0)
    usr_sd: Pair = (9.0, 9.0)
    sys: Pair = (7.0, 10.0)
    iowait: Pair = (1.0, 36.0)
    runq_per_cpu: Pair = (0.35, 0.25)
    b_per_cpu: Pair | None = None  # None: the legacy 1 + 12 % of the sessions at stress 1
    intr_per_cpu: Pair = (1200.0, 1800.0)
    mpstat_intr_per_cpu: Pair = (600.0, 1500.0)
    io_irq_boost: float = 2.5
    cs_per_cpu: Pair = (5200.0, 4160.0)
    r_iops: Pair = (110.0, 275.0)
    w_iops: Pair = (900.0, 630.0)
    r_await: Pair = (0.12, 18.12)
    w_await: Pair = (0.05, 45.05)
    util: Pair = (18.0, 98.0)
    status_boost: tuple[tuple[str, float], ...] = ()
    throughput_drop: float = 0.6


#: The GROUP BY of seed 000 / scripts/load_mariadb.py: an on-disk temporary table on every run.
TMP_QUERY = "SELECT grp, COUNT(*), SUM(n) FROM t{b} GROUP BY grp ORDER BY NULL"
QUIET_ACTIVE = (0.8, 0.8)  # a healthy OLTP server runs about one statement per core or less
#: Disks that keep up: the load of these shapes is not on the storage.
QUIET_DISKS = {"r_iops": (110, 130), "w_iops": (900, 950), "r_await": (0.12, 0.2), "w_await": (0.05, 0.1),
               "util": (18, 25)}  # fmt: skip
SHAPES = {
    # The original benchmark shape: steady OLTP with an I/O stall (disk slow, sessions stuck).
    "io-stall": Shape("io-stall"),
    # No load window at all: the quiet level throughout.
    "healthy": Shape("healthy", active_per_cpu=QUIET_ACTIVE, stuck=(0.15, 0.15), stall_share=(0, 0),
                     blocked=(0.02, 0.02), iowait=(1, 1), usr=(30, 30), sys=(6, 6), b_per_cpu=(0.02, 0.02),
                     **QUIET_DISKS),
    # CPU-bound (USE method): more runnable threads than cores, no idle time.
    "cpu-bound": Shape("cpu-bound", active_per_cpu=(0.8, 6.0), stuck=(0.15, 0.5), stall_states=(0, 3, 7),
                       stall_share=(0, 0.6), blocked=(0.02, 0.01), usr=(30, 82), usr_sd=(9, 2), sys=(6, 17),
                       iowait=(1, 0), runq_per_cpu=(0.35, 3.5), b_per_cpu=(0.02, 0.02), cs_per_cpu=(5200, 9000),
                       intr_per_cpu=(1200, 2000), **QUIET_DISKS),
    # I/O-bound: reads wait for a slow device, threads in D in io_schedule, iowait high.
    "io-bound": Shape("io-bound", active_per_cpu=(0.8, 3.0), stuck=(0.15, 0.6), stall_states=(0, 0, 4),
                      stall_share=(0, 0.8), blocked=(0.02, 0.7), d_wchans=("io_schedule", "blk_mq_get_tag"),
                      usr=(30, 12), sys=(6, 8), iowait=(1, 55), runq_per_cpu=(0.35, 0.3), b_per_cpu=(0.02, 1.5),
                      intr_per_cpu=(1200, 6000), io_irq_boost=3.0, cs_per_cpu=(5200, 7000), r_iops=(110, 900),
                      r_await=(0.12, 45), util=(18, 100)),
    # Seed 000: one GROUP BY on every session builds an on-disk temporary table; threads wait in D in
    # unlinkat on the tmpdir's inode lock (not counted by vmstat b), the CPUs stay 40-50 % idle.
    "tmp-tables": Shape("tmp-tables", active_per_cpu=(0.8, 8.0), stuck=(0.15, 0.3), stall_states=(10, 9, 12),
                        stall_share=(0, 0.9), stall_query=TMP_QUERY, blocked=(0.02, 0.6),
                        d_wchans=("do_unlinkat", "path_openat", "do_unlinkat"), usr=(30, 35), sys=(6, 15),
                        iowait=(1, 3), runq_per_cpu=(0.35, 1.0), b_per_cpu=(0.02, 0.05),
                        status_boost=(("Created_tmp_disk_tables", 60.0), ("Created_tmp_tables", 4.0)), **QUIET_DISKS),
    # Seed 001: commits serialise on the redo-log fsync: most sessions at COMMIT, CPUs idle, low iowait.
    "commit": Shape("commit", active_per_cpu=(0.8, 6.0), stuck=(0.15, 0.5), stall_states=(5, 13, 5),
                    stall_share=(0, 0.8), stall_query="COMMIT", blocked=(0.02, 0.1),
                    d_wchans=("jbd2_log_wait_commit",), usr=(30, 25), sys=(6, 10), iowait=(1, 6),
                    runq_per_cpu=(0.35, 0.3), b_per_cpu=(0.02, 0.1), r_iops=(110, 110), r_await=(0.12, 0.2),
                    w_iops=(900, 2500), w_await=(0.05, 2.0), util=(18, 60), status_boost=(("Com_commit", 3.0), ("Innodb_os_log_fsyncs", 3.0))),
}  # fmt: skip
SHAPES_DEFAULT = SHAPES["io-stall"]
#: Host sizes for --host (CPUs, threads per ps snapshot, sessions, disks, IRQ lines): tens, hundreds
#: and a thousand sessions.
HOSTS = {
    "small": (2, 240, 40, 1, 8),
    "medium": (16, 700, 300, 4, 24),
    "large": (64, 1600, 1000, 8, 60),
}


# ---------------------------------------------------------------------------------------------
# The capture plan
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Spec:
    """What to generate: duration (minutes), machine and server sizes, seed, start time, and the
    sampling interval (seconds between snapshots; counters advance by that much between them)."""

    minutes: float
    cpus: int
    threads: int
    sessions: int
    disks: int
    irqs: int
    seed: int
    start: datetime
    shape: str = "io-stall"
    incident: tuple[float, float] = (0.60, 0.70)
    interval: int = 1  # seconds between samples (collect.sh --interval)

    @property
    def samples(self) -> int:
        return max(2, round(self.minutes * 60 / self.interval))

    @property
    def load(self) -> Shape:
        return SHAPES[self.shape]


@dataclass
class Member:
    """One member file being written: its name in the bundle, scratch path and open handle."""

    name: str
    path: Path
    fh: TextIO
    lines: int = 0

    def write(self, text: str) -> None:
        self.fh.write(text)
        self.lines += text.count("\n")


def _ts_line(epoch: float) -> str:
    """collect.sh's ``date '+TS %s.%N %F %T'`` (UTC server: wall clock = UTC)."""
    sec = int(epoch)
    nsec = int(round((epoch - sec) * 1e9))
    if nsec >= 1_000_000_000:
        sec, nsec = sec + 1, nsec - 1_000_000_000
    wall = datetime.fromtimestamp(sec, UTC).strftime("%Y-%m-%d %H:%M:%S")
    return f"TS {sec}.{nsec:09d} {wall}\n"


def _hms(epoch: float) -> str:
    return datetime.fromtimestamp(int(epoch), UTC).strftime("%H:%M:%S")


def stress_curve(n: int, incident: tuple[float, float] = INCIDENT) -> np.ndarray:
    """Load factor per second in [0, 1]: 1 inside the load window (``incident``, fractions of the
    run), ramps of RAMP_S seconds (at most a quarter of the window)."""
    k = np.arange(n, dtype=float)
    a, b = incident[0] * n, incident[1] * n
    ramp = max(1.0, min(RAMP_S, (b - a) / 4))
    up = np.clip((k - a) / ramp, 0, 1)
    down = np.clip((b - k) / ramp, 0, 1)
    return np.minimum(up, down)


# ---------------------------------------------------------------------------------------------
# Simulated server state, advanced one second at a time
# ---------------------------------------------------------------------------------------------
@dataclass
class Sessions:
    """The application's connections: id, thread id, host; what each does this second."""

    ids: np.ndarray
    tids: np.ndarray
    hosts: list[str]
    users: list[str]
    last_active: np.ndarray  # second index of the last query (Sleep Time counts from it)
    query_start: np.ndarray  # second index the running query started, -1 when idle
    query: list[str | None]
    state: list[str]
    next_id: int
    next_tid: int
    active: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    blocked: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))


def _host(rng: np.random.Generator) -> str:
    return f"10.20.{int(rng.integers(1, 9))}.{int(rng.integers(2, 250))}:{int(rng.integers(32768, 60999))}"


def new_sessions(spec: Spec, rng: np.random.Generator) -> Sessions:
    n = spec.sessions
    ids = np.arange(1000, 1000 + n, dtype=np.int64)
    tids = np.arange(FIRST_CONN_TID, FIRST_CONN_TID + n, dtype=np.int64)
    users = ["report" if rng.random() < 0.05 else "app" for _ in range(n)]
    return Sessions(
        ids=ids,
        tids=tids,
        hosts=[_host(rng) for _ in range(n)],
        users=users,
        last_active=-rng.integers(0, 300, n),
        query_start=np.full(n, -1, dtype=np.int64),
        query=[None] * n,
        state=[""] * n,
        next_id=1000 + n,
        next_tid=FIRST_CONN_TID + n,
    )


def _literal(template: str, rng: np.random.Generator) -> str:
    return template.format(
        a=int(rng.integers(1, 9_000_000)), b=int(rng.integers(1, 40)), c=int(rng.integers(100, 99999))
    )


def step_sessions(
    s: Sessions,
    k: int,
    stress: float,
    rng: np.random.Generator,
    shape: Shape = SHAPES_DEFAULT,
    ncpu: int = 64,
    dt: int = 1,
) -> None:
    """Advance the sessions to second ``k`` (``dt`` s after the last step): churn, who runs what, which ones are stuck (on I/O, a
    lock, a commit: the shape's load)."""
    n = len(s.ids)
    churn = np.flatnonzero((rng.random(n) < SESSION_CHURN_PER_S * dt) & (s.query_start < 0))
    for i in churn:
        s.ids[i] = s.next_id
        s.next_id += 1
        s.tids[i] = s.next_tid
        s.next_tid = s.next_tid + 1 if s.next_tid + 1 < PID_MAX else FIRST_CONN_TID + n
        s.hosts[i] = _host(rng)
        s.last_active[i] = k
    # A running query ends this second unless it is stuck (on the stalled disk, a commit...).
    p_stuck = lerp(shape.stuck, stress)
    if shape.active_per_cpu is None:
        p_active = 0.22 + 0.45 * stress
    else:
        # Steady state: a share a of the sessions runs when idle ones start with p and running ones
        # stay with p_stuck: a = p / (1 - p_stuck + p), so p = a (1 - p_stuck) / (1 - a).
        a = min(0.95, lerp(shape.active_per_cpu, stress) * ncpu / max(1, n))
        p_active = a * (1 - p_stuck) / (1 - a)
    running = s.query_start >= 0
    stuck = running & (rng.random(n) < p_stuck)
    ended = running & ~stuck
    s.query_start[ended] = -1
    s.last_active[ended] = k
    start = (s.query_start < 0) & (rng.random(n) < p_active)
    q_idx = rng.choice(len(QUERIES), size=n, p=QUERY_WEIGHTS / QUERY_WEIGHTS.sum())
    st_idx = rng.choice(len(STATES), size=n, p=STATE_WEIGHTS / STATE_WEIGHTS.sum())
    stall_pick = rng.random(n) < lerp(shape.stall_share, stress)
    stall_state = rng.choice(shape.stall_states, size=n)
    for i in np.flatnonzero(start):
        s.query_start[i] = k
        stalled = bool(stall_pick[i])
        template = shape.stall_query if stalled and shape.stall_query else QUERIES[q_idx[i]]
        s.query[i] = _literal(template, rng)
        s.state[i] = STATES[stall_state[i] if stalled else st_idx[i]]
    for i in np.flatnonzero(ended & ~start):
        s.query[i] = None
        s.state[i] = ""
    s.active = s.query_start >= 0
    p_blocked = lerp(shape.blocked, stress)
    if shape.active_per_cpu is None:
        s.blocked = s.active & (k - s.query_start >= dt) & (rng.random(n) < p_blocked)
    else:  # a thread can wait in D from its first second (a file creation, a read)
        s.blocked = s.active & (rng.random(n) < p_blocked)


# ---------------------------------------------------------------------------------------------
# Member writers (one call per second)
# ---------------------------------------------------------------------------------------------
def processlist_block(s: Sessions, k: int) -> str:
    """One ``SHOW FULL PROCESSLIST\\G`` result (MariaDB 10.11): sessions by Id, then ours."""
    out: list[str] = []
    order = np.argsort(s.ids, kind="stable")
    row = 0
    for i in order.tolist():
        row += 1
        q = s.query[i]
        if q is None:
            cmd, time_s, state, info = "Sleep", k - int(s.last_active[i]), "", "NULL"
        else:
            cmd, time_s, state, info = "Query", k - int(s.query_start[i]), s.state[i], q
        out.append(
            f"*************************** {row}. row ***************************\n"
            f"      Id: {s.ids[i]}\n    User: {s.users[i]}\n    Host: {s.hosts[i]}\n      db: shop\n"
            f" Command: {cmd}\n    Time: {time_s}\n   State: {state}\n    Info: {info}\nProgress: 0.000\n"
        )
    row += 1
    out.append(
        f"*************************** {row}. row ***************************\n"
        f"      Id: {s.next_id + 500000 + k}\n    User: root\n    Host: localhost\n      db: NULL\n"
        " Command: Query\n    Time: 0\n   State: starting\n    Info: SHOW FULL PROCESSLIST\nProgress: 0.000\n"
    )
    return "".join(out)


#: System daemons in the ps listing: (comm, user, threads, wchan).
DAEMONS = (
    ("systemd-journal", "root", 1, "ep_poll"),
    ("systemd-udevd", "root", 1, "ep_poll"),
    ("rsyslogd", "syslog", 4, "do_select"),
    ("sshd", "root", 1, "do_select"),
    ("chronyd", "_chrony", 1, "do_select"),
    ("node_exporter", "prometh+", 12, "futex_wait_queue"),
    ("mysqld_exporter", "prometh+", 8, "futex_wait_queue"),
    ("cron", "root", 1, "hrtimer_nanosleep"),
)


@dataclass
class Threads:
    """The ps -eLo rows that do not follow sessions: kernel threads, daemons, mariadbd helpers."""

    before: list[tuple[str, str, str, float]]  # (prefix "PID TID PPID USER", stat, wchan, pcpu)
    mysqld_helpers: list[tuple[int, str, str, float]]  # (tid, stat, wchan, pcpu)
    comm_before: list[str]


def new_threads(spec: Spec, rng: np.random.Generator) -> Threads:
    rows: list[tuple[int, int, int, str, str, str, str]] = []  # pid tid ppid user stat comm wchan
    rows.append((1, 1, 0, "root", "Ss", "systemd", "ep_poll"))
    rows.append((2, 2, 0, "root", "S", "kthreadd", "kthreadd"))
    pid = 3
    for name in ("rcu_gp", "rcu_par_gp", "slub_flushwq", "netns", "mm_percpu_wq", "rcu_tasks_kthre"):
        rows.append((pid, pid, 2, "root", "I<", name, "rescuer_thread"))
        pid += 1
    per_cpu = (
        ("cpuhp/{}", "S", "smpboot_thread_fn"),
        ("migration/{}", "S", "smpboot_thread_fn"),
        ("ksoftirqd/{}", "S", "smpboot_thread_fn"),
        ("kworker/{}:0-events", "I", "worker_thread"),
        ("kworker/{}:0H-kblockd", "I<", "worker_thread"),
    )
    # Fixed rows besides the per-CPU kernel threads: kernel helpers, jbd2 per disk, kswapd, daemons.
    others = len(rows) + spec.disks + 1 + sum(d[2] for d in DAEMONS)
    cpus_listed = spec.cpus
    while cpus_listed and others + len(per_cpu) * cpus_listed + spec.sessions + 10 > spec.threads:
        cpus_listed -= 1
    for cpu in range(cpus_listed):
        for fmt, stat, wchan in per_cpu:
            rows.append((pid, pid, 2, "root", stat, fmt.format(cpu)[:15], wchan))
            pid += 1
    for d in range(spec.disks):
        rows.append((pid, pid, 2, "root", "S", f"jbd2/nvme{d}n1p1-"[:15], "kjournald2"))
        pid += 1
    rows.append((pid, pid, 2, "root", "S", "kswapd0", "kswapd"))
    pid += 1
    dpid = 900
    for comm, user, nthreads, wchan in DAEMONS:
        for t in range(nthreads):
            rows.append((dpid, dpid + t, 1, user, "Ssl" if t == 0 and nthreads > 1 else "Sl", comm, wchan))
        dpid += 20
    # Whatever the budget leaves goes to mariadbd's own threads (InnoDB, thread cache, timers).
    helpers_n = spec.threads - len(rows) - spec.sessions
    if helpers_n < 0:
        rows = rows[:helpers_n]
    helper_wchans = ("futex_wait_queue", "io_uring_cqring_wait", "do_sigtimedwait.isra.0", "ep_poll")
    helpers = [
        (
            MYSQLD_PID + t,
            "Ssl" if t == 0 else "Sl",
            helper_wchans[t % len(helper_wchans)],
            float(rng.uniform(0, 3)),
        )
        for t in range(max(0, helpers_n))
    ]
    before = [
        (f"{p:5d} {t:5d} {pp:5d} {u:<8} ", st, w, float(rng.uniform(0, 0.3)))
        for p, t, pp, u, st, _, w in rows
    ]
    return Threads(before=before, mysqld_helpers=helpers, comm_before=[r[5] for r in rows])


def ps_block(
    th: Threads, s: Sessions, rng: np.random.Generator, stress: float, d_wchans: tuple[str, ...] = D_WCHANS
) -> str:
    """One ``ps -eLo pid,tid,ppid,user,stat,pcpu,comm,wchan:32`` listing (header included)."""
    out = [PS_HEAD]
    jitter = rng.random(len(th.before))
    for (prefix, stat, wchan, pcpu), comm, j in zip(th.before, th.comm_before, jitter.tolist(), strict=True):
        if stat == "I" and j < 0.02:
            out.append(f"{prefix}R    {pcpu:4.1f} {comm:<15} -\n")
        else:
            out.append(f"{prefix}{stat:<4} {pcpu:4.1f} {comm:<15} {wchan}\n")
    # mariadbd: helpers and connection threads, by TID (the kernel's task order).
    rows: list[tuple[int, str]] = []
    prefix = f"{MYSQLD_PID:5d}"
    pp = f"{1:5d} mysql    "
    for tid, stat, wchan, pcpu in th.mysqld_helpers:
        rows.append((tid, f"{prefix} {tid:5d} {pp}{stat:<4} {pcpu:4.1f} mariadbd        {wchan}\n"))
    r = rng.random(len(s.ids))
    d_pick = rng.integers(0, len(d_wchans), len(s.ids))
    pcpu = np.round(rng.gamma(1.2, 1.5, len(s.ids)), 1)
    for i, tid in enumerate(s.tids.tolist()):
        if s.blocked[i]:
            stat, wchan = "Dl", d_wchans[d_pick[i]]
        elif s.active[i] and r[i] < 0.7:
            stat, wchan = "Rl", "-"
        elif s.active[i]:
            stat, wchan = "Sl", "futex_wait_queue"
        else:
            stat, wchan = "Sl", IDLE_WCHAN
        rows.append(
            (tid, f"{prefix} {tid:5d} {pp}{stat:<4} {min(pcpu[i], 99.9):4.1f} mariadbd        {wchan}\n")
        )
    rows.sort(key=lambda t: t[0])
    out.extend(line for _, line in rows)
    return "".join(out)


@dataclass
class Irqs:
    """The /proc/interrupts rows: fixed text around the counts, counters, per-CPU rates."""

    prefixes: list[str]
    suffixes: list[str]
    totals_only: list[bool]
    counts: np.ndarray  # (rows, cpus) int64
    rates: np.ndarray  # (rows, cpus) per second at stress 0
    io_rows: np.ndarray  # rows whose rate follows the disk load


NAMED_IRQS = (
    ("NMI", "Non-maskable interrupts", 2.0),
    ("LOC", "Local timer interrupts", 900.0),
    ("SPU", "Spurious interrupts", 0.0),
    ("PMI", "Performance monitoring interrupts", 2.0),
    ("IWI", "IRQ work interrupts", 30.0),
    ("RTR", "APIC ICR read retries", 0.0),
    ("RES", "Rescheduling interrupts", 1400.0),
    ("CAL", "Function call interrupts", 600.0),
    ("TLB", "TLB shootdowns", 150.0),
    ("TRM", "Thermal event interrupts", 0.0),
    ("THR", "Threshold APIC interrupts", 0.0),
    ("DFR", "Deferred Error APIC interrupts", 0.0),
    ("MCE", "Machine check exceptions", 0.0),
    ("MCP", "Machine check polls", 0.004),
    ("ERR", "", 0.0),
    ("MIS", "", 0.0),
    ("PIN", "Posted-interrupt notification event", 0.0),
    ("NPI", "Nested posted-interrupt event", 0.0),
    ("PIW", "Posted-interrupt wakeup event", 0.0),
)


def new_irqs(spec: Spec, rng: np.random.Generator) -> Irqs:
    prec = 3  # digits of nr_irqs (< 1000): kernel/irq/proc.c pads the IRQ number to it
    legacy = (
        (0, "IO-APIC", "2-edge", "timer"),
        (1, "IO-APIC", "1-edge", "i8042"),
        (4, "IO-APIC", "4-edge", "ttyS0"),
        (8, "IO-APIC", "8-edge", "rtc0"),
        (9, "IO-APIC", "9-fasteoi", "acpi"),
        (12, "IO-APIC", "12-edge", "i8042"),
    )
    numbered: list[tuple[int, str, str, str, bool]] = [(*x, False) for x in legacy][: spec.irqs]
    irq = 24
    for d in range(spec.disks):
        if len(numbered) >= spec.irqs:
            break
        numbered.append((irq, "PCI-MSI", f"{(d + 1) * 1048576}-edge", f"nvme{d}q0", False))
        irq += 1
    q = 0
    while len(numbered) < spec.irqs:
        d = q % max(1, spec.disks)
        qn = q // max(1, spec.disks) + 1
        if q % 3 == 2:
            numbered.append((irq, "IR-PCI-MSI", f"{524288 + q}-edge", f"eth0-TxRx-{q // 3}", False))
        else:
            numbered.append((irq, "PCI-MSI", f"{(d + 1) * 1048576 + qn}-edge", f"nvme{d}q{qn}", True))
        irq += 1
        q += 1
    prefixes, suffixes, totals, rates, io_rows = [], [], [], [], []
    for n, chip, hw_type, dev, is_io in numbered:
        hw, _, typ = hw_type.partition("-")
        prefixes.append(f"{n:>{prec}}:")
        suffixes.append(f" {chip:>8} {hw:>{prec}}-{typ:<8}  {dev}\n")
        totals.append(False)
        rate = np.zeros(spec.cpus)
        if n == 0:
            rate[0] = 0.0
        elif dev.startswith(("nvme", "eth0")):
            rate[(n * 7) % spec.cpus] = float(rng.uniform(50, 400)) if is_io or "eth" in dev else 0.01
        rates.append(rate)
        io_rows.append(is_io)
    for name, desc, rate in NAMED_IRQS:
        prefixes.append(f"{name}:")
        total_only = name in ("ERR", "MIS")
        suffixes.append("\n" if total_only else f"   {desc}\n")
        totals.append(total_only)
        rates.append(np.full(spec.cpus, rate) * rng.uniform(0.6, 1.4, spec.cpus))
        io_rows.append(False)
    rate_m = np.vstack(rates)
    counts = (rate_m * UPTIME_AT_START_S * rng.uniform(0.8, 1.2, rate_m.shape)).astype(np.int64)
    counts %= 1 << 32  # the kernel's unsigned int counters have wrapped on a month-old server
    return Irqs(prefixes, suffixes, totals, counts, rate_m, np.array(io_rows))


def interrupts_block(
    ir: Irqs,
    ncpu: int,
    stress: float,
    rng: np.random.Generator,
    shape: Shape = SHAPES_DEFAULT,
    interval: int = 1,
) -> str:
    """One ``cat /proc/interrupts`` (header + rows), after advancing the counters by one interval."""
    rates = ir.rates.copy()
    rates[ir.io_rows] *= 1 + shape.io_irq_boost * stress
    ir.counts = (ir.counts + rng.poisson(rates * interval)) % (1 << 32)
    header = " " * 11 + "".join(f"CPU{c:<8d}" for c in range(ncpu)) + "\n"
    full = " %10d" * ncpu
    out = [header]
    for prefix, suffix, total, row in zip(ir.prefixes, ir.suffixes, ir.totals_only, ir.counts, strict=True):
        if total:
            out.append(f"{prefix} {int(row.sum()) % (1 << 32):10d}{suffix}")
        else:
            out.append(prefix + full % tuple(row.tolist()) + suffix)
    return "".join(out)


def mysqladmin_block(values: dict[str, float | int | str]) -> str:
    out = [MYSQLADMIN_BORDER, MYSQLADMIN_ROW % ("Variable_name", "Value"), MYSQLADMIN_BORDER]
    for name in STATUS_NAMES:
        v = values[name]
        out.append(MYSQLADMIN_ROW % (name, v if isinstance(v, str) else int(v)))
    out.append(MYSQLADMIN_BORDER)
    return "".join(out)


def cpu_split(n: int, stress: float, rng: np.random.Generator, shape: Shape = SHAPES_DEFAULT) -> np.ndarray:
    """n rows of (usr nice sys iowait irq soft steal guest gnice idle) percentages summing to 100."""
    usr = np.clip(rng.normal(lerp(shape.usr, stress), lerp(shape.usr_sd, stress), n), 0, 95)
    sys_ = np.clip(rng.normal(lerp(shape.sys, stress), 2, n), 0, 30)
    iow = np.clip(rng.normal(lerp(shape.iowait, stress), 2 + 8 * stress * (shape.iowait[1] > 10), n), 0, 90)
    irq = np.clip(rng.normal(0.3, 0.2, n), 0, 5)
    soft = np.clip(rng.normal(1.5, 0.6, n), 0, 10)
    m = np.zeros((n, 10))
    m[:, 0], m[:, 2], m[:, 3], m[:, 4], m[:, 5] = usr, sys_, iow, irq, soft
    m[:, 1] = np.where(rng.random(n) < 0.05, 0.01, 0.0)
    busy = m[:, :9].sum(axis=1)
    scale = np.where(busy > 100, 100 / np.maximum(busy, 1e-9), 1.0)
    m[:, :9] *= scale[:, None]
    m = np.round(m, 2)
    m[:, 9] = np.round(100 - m[:, :9].sum(axis=1), 2).clip(0)
    return m


# ---------------------------------------------------------------------------------------------
# The whole capture
# ---------------------------------------------------------------------------------------------
def generate(spec: Spec, out: Path, *, quiet: bool = False) -> dict[str, object]:
    """Write the bundle to ``out`` (a .tar.gz); returns sizes and timings (bytes, lines, seconds)."""
    t_begin = time.perf_counter()
    rng = np.random.default_rng(spec.seed)
    n = spec.samples
    shape = spec.load
    stress = stress_curve(n + 1, spec.incident) if shape.name != "healthy" else np.zeros(n + 1)
    # Status counter rates were measured on a 64-CPU server: a smaller host does proportionally less.
    rate_scale = spec.cpus / 64
    t0 = spec.start.timestamp()
    stamp = spec.start.strftime("%Y%m%dT%H%M%S")
    top = f"casebook-{HOST}-{stamp}"
    scratch = Path(tempfile.mkdtemp(prefix=".casebook-bench-", dir=out.parent))
    members: dict[str, Member] = {}

    def open_member(name: str) -> Member:
        path = scratch / name
        m = Member(f"{top}/{name}", path, path.open("w", encoding="utf-8", buffering=WRITE_BUFFER_BYTES))
        members[name] = m
        return m

    try:
        manifest = open_member("manifest.txt")
        vm = open_member("vmstat.txt")
        mp = open_member("mpstat.txt")
        mpi = open_member("mpstat-intr.txt")
        io_ = open_member("iostat.txt")
        meminfo = open_member("meminfo.txt")
        variables = open_member("variables.txt")
        ps = open_member("ps-threads.txt")
        intr = open_member("interrupts.txt")
        pl = open_member("processlist.txt")
        ma = open_member("mysqladmin.txt")

        _write_manifest(manifest, spec, t0)
        banner = f"Linux {KERNEL} ({HOST}) \t{spec.start:%Y-%m-%d} \t_x86_64_\t({spec.cpus} CPU)\n\n"
        vm.write(_ts_line(t0 + 0.012) + VMSTAT_HEAD)
        mp.write(_ts_line(t0 + 0.011) + banner)
        mpi.write(_ts_line(t0 + 0.010) + banner)
        io_.write(_ts_line(t0 + 0.013) + banner)
        meminfo.write(_ts_line(t0 + 0.02) + _meminfo_text(rng))
        variables.write(_ts_line(t0 + 0.03) + "Variable_name\tValue\n")
        variables.write("".join(f"{k}\t{v}\n" for k, v in sorted(VARIABLES.items())))

        sessions = new_sessions(spec, rng)
        threads = new_threads(spec, rng)
        irqs = new_irqs(spec, rng)
        status: dict[str, float | int | str] = dict.fromkeys(STATUS_NAMES, 0)
        status.update(STATUS_NUMBERS)
        status.update(STATUS_TEXT)
        for name, rate in STATUS_RATES.items():
            status[name] = float(int(rate * UPTIME_AT_START_S * rng.uniform(0.7, 1.0)))
        mp_sum = np.zeros((spec.cpus + 1, 10))
        mpi_sum = np.zeros(spec.cpus + 1)
        dev_names = [f"nvme{d}n1" for d in range(spec.disks)]
        free_kib = 18_500_000.0
        last_report = time.perf_counter()

        dt = spec.interval
        for k in range(n + 1):
            s = float(stress[k])
            t = t0 + k * dt
            # vmstat / iostat: N+1 reports, the first since boot (averages since boot, small).
            vm.write(_vmstat_row(k, s, spec, rng, free_kib, t))
            free_kib = max(2_000_000.0, free_kib + rng.normal(0, 20_000) - 30_000 * s)
            io_.write(_iostat_report(k, s, dev_names, rng, t, shape))
            if k == n:
                break
            # mpstat: interval k ends at t0 + k + 1.
            head_t, row_t = _hms(t), _hms(t + dt)
            cpu = cpu_split(spec.cpus, s, rng, shape)
            allrow = np.round(cpu.mean(axis=0), 2)
            allrow[9] = round(100 - allrow[:9].sum(), 2)
            block = np.vstack([allrow, cpu])
            mp_sum += block
            lines = [f"{head_t:<11}{MPSTAT_HEAD}"]
            names = ["all", *map(str, range(spec.cpus))]
            lines.extend(
                MPSTAT_FMT % (row_t, name, *vals) for name, vals in zip(names, block.tolist(), strict=True)
            )
            mp.write("".join(lines) + "\n")
            intr_cpu = np.round(
                rng.gamma(8, lerp(shape.mpstat_intr_per_cpu, s) / 8, spec.cpus), 2
            )  # per second
            intr_all = np.concatenate([[round(intr_cpu.sum(), 2)], intr_cpu])
            mpi_sum += intr_all
            mpi.write(
                f"{head_t:<11}{MPSTAT_INTR_HEAD}"
                + "".join(
                    f"{row_t:<11} {name:>4} {v:9.2f}\n"
                    for name, v in zip(names, intr_all.tolist(), strict=True)
                )
                + "\n"
            )
            # Snapshot loop: ps, interrupts, processlist, mysqladmin, each after its TS line.
            step_sessions(sessions, k * dt, s, rng, shape, spec.cpus, dt)
            loop = t + 0.004 + float(rng.uniform(0, 0.03))
            ps.write(_ts_line(loop) + ps_block(threads, sessions, rng, s, shape.d_wchans))
            intr.write(_ts_line(loop + 0.045) + interrupts_block(irqs, spec.cpus, s, rng, shape, dt))
            pl.write(_ts_line(loop + 0.052) + processlist_block(sessions, k * dt))
            _advance_status(status, sessions, s, rng, k * dt, shape, rate_scale, dt)
            ma.write(_ts_line(loop + 0.061) + mysqladmin_block(status))
            if not quiet and time.perf_counter() - last_report > 10:
                last_report = time.perf_counter()
                print(f"  ... {k + 1}/{n} s of capture written", file=sys.stderr)

        # mpstat Average blocks.
        avg = np.round(mp_sum / n, 2)
        names = ["all", *map(str, range(spec.cpus))]
        mp.write(f"{'Average:':<11}{MPSTAT_HEAD}")
        mp.write(
            "".join(MPSTAT_FMT % ("Average:", nm, *v) for nm, v in zip(names, avg.tolist(), strict=True))
        )
        mpi.write(f"{'Average:':<11}{MPSTAT_INTR_HEAD}")
        mpi.write(
            "".join(
                f"{'Average:':<11} {nm:>4} {v:9.2f}\n"
                for nm, v in zip(names, (mpi_sum / n).tolist(), strict=True)
            )
        )
        _finish_manifest(manifest, spec, t0, n)
        for m in members.values():
            m.fh.close()
        t_written = time.perf_counter()
        sizes = {m.name: {"bytes": m.path.stat().st_size, "lines": m.lines} for m in members.values()}
        text_bytes = sum(v["bytes"] for v in sizes.values())
        text_lines = sum(m.lines for m in members.values())
        tar_bytes = _pack(out, top, members, spec, t0)
    finally:
        for m in members.values():
            if not m.fh.closed:
                m.fh.close()
        shutil.rmtree(scratch, ignore_errors=True)
    t_end = time.perf_counter()
    return {
        "path": str(out),
        "minutes": spec.minutes,
        "samples": n,
        "compressed_bytes": out.stat().st_size,
        "text_bytes": text_bytes,
        "text_lines": text_lines,
        "tar_bytes": tar_bytes,
        "members": sizes,
        "write_s": round(t_written - t_begin, 1),
        "pack_s": round(t_end - t_written, 1),
    }


#: OSWatcher's tools in an archive (``archive/osw<tool>/<host>_<tool>_YY.MM.DD.HH00.dat``, a file an hour).
OSW_TOOLS = ("vmstat", "mpstat", "iostat", "ps", "meminfo")
#: ``vmstat 1 3`` as OSWatcher runs it: no timestamp columns (the zzz line dates the block).
OSW_VMSTAT_HEAD = (
    "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----\n"
    " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n"
)


def _zzz(t: float) -> str:
    """OSWatcher's snapshot marker (``date`` of a server on UTC)."""
    return datetime.fromtimestamp(int(t), UTC).strftime("zzz ***%a %b %d %H:%M:%S UTC %Y\n")


def generate_oswatcher(spec: Spec, out: Path, *, quiet: bool = False) -> dict[str, object]:
    """Write an OSWatcher (oswbb) archive to ``out`` (a .tar.gz): every ``spec.interval`` s a ``zzz``
    marker then ``vmstat 1 3`` (first line since boot), ``mpstat -P ALL`` (one report), ``iostat -xk -t``
    (one report), the thread listing and /proc/meminfo, one file per tool and hour, as OSWatcher's
    archive keeps them (48 hourly files of each tool by default). The thread listing has the
    collector's ``ps -eLo ...wchan`` columns (OSWatcher itself runs ``ps -elf``: a process per row)."""
    t_begin = time.perf_counter()
    rng = np.random.default_rng(spec.seed)
    n = spec.samples
    stress = stress_curve(n)
    t0 = spec.start.timestamp()
    scratch = Path(tempfile.mkdtemp(prefix=".casebook-bench-", dir=out.parent))
    members: dict[str, Member] = {}
    hour_files: dict[str, Member] = {}
    sessions = new_sessions(spec, rng)
    threads = new_threads(spec, rng)
    dev_names = [f"nvme{d}n1" for d in range(spec.disks)]
    banner = f"Linux {KERNEL} ({HOST}) \t{spec.start:%Y-%m-%d} \t_x86_64_\t({spec.cpus} CPU)\n\n"
    free_kib = 18_500_000.0
    dt = spec.interval
    try:
        for k in range(n):
            s = float(stress[k])
            t = t0 + k * dt
            hour = datetime.fromtimestamp(int(t), UTC).strftime("%y.%m.%d.%H00")
            for tool in OSW_TOOLS:
                name = f"osw{tool}/{HOST}_{tool}_{hour}.dat"
                if name not in members:
                    if tool in hour_files:
                        hour_files[tool].fh.close()
                    path = scratch / name.replace("/", "_")
                    m = Member(
                        f"archive/{name}",
                        path,
                        path.open("w", encoding="utf-8", buffering=WRITE_BUFFER_BYTES),
                    )
                    members[name] = hour_files[tool] = m
            step_sessions(sessions, k * dt, s, rng, dt=dt)
            zzz = _zzz(t)
            rows = [
                _vmstat_row(0 if j == 0 else k * 3 + j, s, spec, rng, free_kib, t + j)[:-21] + "\n"
                for j in range(3)
            ]
            hour_files["vmstat"].write(zzz + OSW_VMSTAT_HEAD + "".join(rows))
            free_kib = max(2_000_000.0, free_kib + rng.normal(0, 20_000) - 30_000 * s)
            cpu = cpu_split(spec.cpus, s, rng)
            allrow = np.round(cpu.mean(axis=0), 2)
            allrow[9] = round(100 - allrow[:9].sum(), 2)
            names = ["all", *map(str, range(spec.cpus))]
            head_t, row_t = _hms(t), _hms(t + 1)
            block = [f"{head_t:<11}{MPSTAT_HEAD}"] + [
                MPSTAT_FMT % (row_t, nm, *vals)
                for nm, vals in zip(names, np.vstack([allrow, cpu]).tolist(), strict=True)
            ]
            hour_files["mpstat"].write(zzz + banner + "".join(block) + "\n")
            hour_files["iostat"].write(zzz + banner + _iostat_report(k + 1, s, dev_names, rng, t + 1))
            hour_files["ps"].write(zzz + ps_block(threads, sessions, rng, s))
            hour_files["meminfo"].write(zzz + _meminfo_text(rng))
            if not quiet and k % 500 == 0:
                print(f"  ... {k + 1}/{n} snapshots written", file=sys.stderr)
        for m in members.values():
            m.fh.close()
        t_written = time.perf_counter()
        text_bytes = sum(m.path.stat().st_size for m in members.values())
        text_lines = sum(m.lines for m in members.values())
        tar_bytes = _pack(out, "archive", members, spec, t0)
    finally:
        for m in members.values():
            if not m.fh.closed:
                m.fh.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "path": str(out),
        "samples": n,
        "files": len(members),
        "compressed_bytes": out.stat().st_size,
        "text_bytes": text_bytes,
        "text_lines": text_lines,
        "tar_bytes": tar_bytes,
        "write_s": round(t_written - t_begin, 1),
        "pack_s": round(time.perf_counter() - t_written, 1),
    }


class _CountingWriter:
    """A write-only file object that counts the bytes going through it (the tar stream size)."""

    def __init__(self, raw: gzip.GzipFile) -> None:
        self.raw = raw
        self.count = 0

    def write(self, data: bytes) -> int:
        self.count += len(data)
        return self.raw.write(data)

    def flush(self) -> None:
        self.raw.flush()


def _pack(out: Path, top: str, members: dict[str, Member], spec: Spec, t0: float) -> int:
    """Stream the member files into ``out`` as a gzip'd tar (one directory, like collect.sh)."""
    mtime = int(t0 + spec.samples * spec.interval + 2)
    with (
        out.open("wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=GZIP_LEVEL, mtime=mtime) as gz,
    ):
        counter = _CountingWriter(gz)
        with tarfile.open(fileobj=counter, mode="w|", format=tarfile.GNU_FORMAT) as tar:  # type: ignore[arg-type]
            info = tarfile.TarInfo(top)
            info.type, info.mode, info.mtime, info.uname, info.gname = (
                tarfile.DIRTYPE,
                0o755,
                mtime,
                "root",
                "root",
            )
            tar.addfile(info)
            for m in members.values():
                info = tarfile.TarInfo(m.name)
                info.size, info.mode, info.mtime, info.uname, info.gname = (
                    m.path.stat().st_size,
                    0o644,
                    mtime,
                    "root",
                    "root",
                )
                with m.path.open("rb") as fh:
                    tar.addfile(info, fh)
                m.path.unlink()
        return counter.count


def _vmstat_row(k: int, s: float, spec: Spec, rng: np.random.Generator, free_kib: float, t: float) -> str:
    when = datetime.fromtimestamp(int(t), UTC).strftime("%Y-%m-%d %H:%M:%S")
    if k == 0:  # since boot: small averages
        return VMSTAT_ROW % (
            9,
            0,
            0,
            free_kib,
            412_000,
            96_000_000,
            0,
            0,
            310,
            2200,
            71000,
            160000,
            31,
            6,
            62,
            1,
            0,
            when,
        )
    shape = spec.load
    cpu = cpu_split(1, s, rng, shape)[0]
    us, sy, wa = round(cpu[0] + cpu[1]), round(cpu[2] + cpu[4] + cpu[5]), round(cpu[3])
    if us + sy + wa > 100:
        us = max(0, 100 - sy - wa)
    idle = max(0, 100 - us - sy - wa)
    r = rng.poisson(spec.cpus * lerp(shape.runq_per_cpu, s))
    if shape.b_per_cpu is None:
        b = rng.poisson(1 + spec.sessions * 0.12 * s)
    else:
        b = rng.poisson(spec.cpus * lerp(shape.b_per_cpu, s))
    bi = rng.poisson(3400 * (1 + 2 * s))
    bo = rng.poisson(58000 * (1 - 0.5 * s))
    intr = rng.poisson(spec.cpus * lerp(shape.intr_per_cpu, s))
    cs = rng.poisson(spec.cpus * lerp(shape.cs_per_cpu, s))
    return VMSTAT_ROW % (
        r,
        b,
        0,
        free_kib,
        412_000,
        96_000_000,
        0,
        0,
        bi,
        bo,
        intr,
        cs,
        us,
        sy,
        idle,
        wa,
        0,
        when,
    )


def _iostat_report(
    k: int, s: float, devs: list[str], rng: np.random.Generator, t: float, shape: Shape = SHAPES_DEFAULT
) -> str:
    iso = datetime.fromtimestamp(int(t), UTC).strftime("%Y-%m-%dT%H:%M:%S+0000")
    nd = len(devs)
    boost = 0.05 if k == 0 else 1.0  # since boot: low averages
    r = rng.gamma(4, lerp(shape.r_iops, s) / 4, nd) * boost
    w = rng.gamma(4, lerp(shape.w_iops, s) / 4, nd) * boost
    rkb = r * rng.uniform(14, 18, nd)
    wkb = w * rng.uniform(24, 40, nd)
    rrqm = r * rng.uniform(0, 0.05, nd)
    wrqm = w * rng.uniform(0.1, 0.4, nd)
    r_await = rng.gamma(3, lerp(shape.r_await, s) / 3, nd)
    w_await = rng.gamma(3, lerp(shape.w_await, s) / 3, nd)
    f = w * 0.08
    f_await = rng.gamma(2, (0.3 + 30 * s) / 2, nd)
    aqu = (r * r_await + w * w_await) / 1000
    util = np.clip(rng.normal(lerp(shape.util, s), 4, nd), 0, 100)
    lines = [f"{iso}\n", IOSTAT_HEAD]
    for i, dev in enumerate(devs):
        vals = (
            r[i],
            rkb[i],
            rrqm[i],
            100 * rrqm[i] / max(r[i] + rrqm[i], 1e-9),
            r_await[i],
            rkb[i] / max(r[i], 1e-9) if r[i] else 0.0,
            w[i],
            wkb[i],
            wrqm[i],
            100 * wrqm[i] / max(w[i] + wrqm[i], 1e-9),
            w_await[i],
            wkb[i] / max(w[i], 1e-9) if w[i] else 0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            f[i],
            f_await[i],
            aqu[i],
            util[i],
        )
        lines.append(IOSTAT_FMT % (dev, *vals))
    return "".join(lines) + "\n\n"


def _advance_status(
    status: dict[str, float | int | str],
    s: Sessions,
    stress: float,
    rng: np.random.Generator,
    k: int,
    shape: Shape = SHAPES_DEFAULT,
    scale: float = 1.0,
    dt: int = 1,
) -> None:
    """The status counters at second ``k``, ``dt`` s after the last table."""
    throughput = 1 - shape.throughput_drop * stress  # the stall halves what the server gets done
    boost = dict(shape.status_boost)
    for name, rate in STATUS_RATES.items():
        grow = 1 + (boost.get(name, 1.0) - 1) * stress
        status[name] = float(status[name]) + float(rng.poisson(rate * scale * throughput * grow * dt))
    status["Uptime"] = UPTIME_AT_START_S + k
    status["Uptime_since_flush_status"] = UPTIME_AT_START_S + k
    status["Threads_connected"] = len(s.ids) + 1
    status["Threads_running"] = int(s.active.sum()) + 1
    status["Threads_cached"] = 12
    status["Innodb_buffer_pool_pages_dirty"] = int(rng.normal(310_000 + 600_000 * stress, 8_000))
    status["Innodb_checkpoint_age"] = int(rng.normal(300e6 + 400e6 * stress, 10e6))
    status["Innodb_history_list_length"] = int(rng.normal(2_000 + 40_000 * stress, 300))
    row_lock_waits = 30 * stress if shape.name == "io-stall" else 0.0  # the stall holds row locks
    status["Innodb_row_lock_current_waits"] = int(rng.poisson(1 + row_lock_waits))
    status["Innodb_data_pending_fsyncs"] = int(rng.poisson(0.2 + 20 * stress))
    status["Memory_used"] = int(rng.normal(2.1e9, 5e6))


def _meminfo_text(rng: np.random.Generator) -> str:
    kb = {
        "MemTotal": MEM_TOTAL_KIB,
        "MemFree": 18_500_000,
        "MemAvailable": 96_000_000,
        "Buffers": 412_000,
        "Cached": 96_000_000,
        "SwapCached": 0,
        "Active": 401_000_000,
        "Inactive": 92_000_000,
        "Active(anon)": 398_000_000,
        "Inactive(anon)": 1_200_000,
        "Active(file)": 3_000_000,
        "Inactive(file)": 90_800_000,
        "Unevictable": 0,
        "Mlocked": 0,
        "SwapTotal": 0,
        "SwapFree": 0,
        "Dirty": 210_000,
        "Writeback": 0,
        "AnonPages": 399_000_000,
        "Mapped": 410_000,
        "Shmem": 21_000,
        "KReclaimable": 3_900_000,
        "Slab": 6_100_000,
        "SReclaimable": 3_900_000,
        "SUnreclaim": 2_200_000,
        "KernelStack": 41_000,
        "PageTables": 860_000,
        "CommitLimit": MEM_TOTAL_KIB // 2,
        "Committed_AS": 420_000_000,
        "VmallocTotal": 34_359_738_367,
        "VmallocUsed": 410_000,
        "VmallocChunk": 0,
        "Percpu": 98_304,
        "AnonHugePages": 0,
    }
    lines = [f"{name + ':':<16}{value:>8} kB\n" for name, value in kb.items()]
    lines += [
        f"{name + ':':<16}{0:>8}\n"
        for name in ("HugePages_Total", "HugePages_Free", "HugePages_Rsvd", "HugePages_Surp")
    ]
    lines.append(f"{'Hugepagesize:':<16}{2048:>8} kB\n")
    return "".join(lines)


def _write_manifest(m: Member, spec: Spec, t0: float) -> None:
    n = spec.samples
    lines = {
        "casebook_collector": "1",
        "collector_version": "1",
        "hostname": HOST,
        "nproc": str(spec.cpus),
        "kernel": KERNEL,
        "utc_offset": "+0000",
        "timezone": "UTC",
        "start_epoch": f"{t0:.9f}",
        "start_local": spec.start.strftime("%Y-%m-%d %H:%M:%S"),
        "interval": str(spec.interval),
        "duration": str(n * spec.interval),
        "max_mb": "4096",
        "samples_planned": str(n),
        "lc_all": "C",
        "s_time_format": "ISO",
        "mysql_opts": "-uroot -h127.0.0.1",
        "version.vmstat": "vmstat from procps-ng 4.0.2",
        "version.mpstat": "sysstat version 12.6.1",
        "version.iostat": "sysstat version 12.6.1",
        "version.ps": "ps from procps-ng 4.0.2",
        "version.server": "10.11.19-MariaDB-0+deb12u1-log",
        "command.vmstat.txt": f"vmstat -t -n {spec.interval} {n + 1}",
        "clock.vmstat.txt": "per-line (vmstat -t, zone named in the header); first line since boot",
        "command.mpstat.txt": f"mpstat -P ALL {spec.interval} {n}",
        "clock.mpstat.txt": "header+time-of-day (ISO banner date, HH:MM:SS per row, local time)",
        "command.mpstat-intr.txt": f"mpstat -I SUM -P ALL {spec.interval} {n}",
        "clock.mpstat-intr.txt": "header+time-of-day (ISO banner date, HH:MM:SS per row, local time)",
        "command.iostat.txt": f"iostat -dxk -t {spec.interval} {n + 1}",
        "clock.iostat.txt": "per-line (iostat -t, ISO with UTC offset); first report since boot",
        "command.meminfo.txt": "cat /proc/meminfo",
        "command.variables.txt": "mysql -uroot -h127.0.0.1 -e 'SHOW GLOBAL VARIABLES'",
        "skipped.pfs-threads.txt": "performance_schema is OFF (@@performance_schema = 0)",
        "command.ps-threads.txt": "ps -eLo pid,tid,ppid,user,stat,pcpu,comm,wchan:32",
        "clock.ps-threads.txt": "ts-marker (a TS line before each snapshot)",
        "command.interrupts.txt": "cat /proc/interrupts",
        "clock.interrupts.txt": "ts-marker (a TS line before each snapshot)",
        "command.processlist.txt": "mysql -uroot -h127.0.0.1 -e 'SHOW FULL PROCESSLIST\\G'",
        "clock.processlist.txt": "ts-marker (a TS line before each snapshot)",
        "command.mysqladmin.txt": "mysqladmin -uroot -h127.0.0.1 extended-status",
        "clock.mysqladmin.txt": "ts-marker (a TS line before each snapshot)",
    }
    m.write("".join(f"{k}: {v}\n" for k, v in lines.items()))


def _finish_manifest(m: Member, spec: Spec, t0: float, n: int) -> None:
    m.write(
        f"end_epoch: {t0 + n * spec.interval + 1.2:.9f}\nsamples: {n}\nstopped_by: duration\nmissing: none\n"
    )


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--minutes", type=float, default=60, help="capture length (default 60)")
    p.add_argument("--interval", type=int, default=1, help="seconds between samples (default 1)")
    p.add_argument(
        "--cpus", type=int, default=64, help="CPUs (mpstat rows, /proc/interrupts columns; default 64)"
    )
    p.add_argument("--threads", type=int, default=2000, help="threads per ps snapshot (default 2000)")
    p.add_argument(
        "--sessions", type=int, default=1000, help="application sessions per processlist (default 1000)"
    )
    p.add_argument("--disks", type=int, default=8, help="iostat devices (default 8)")
    p.add_argument("--irqs", type=int, default=60, help="numbered IRQ lines in /proc/interrupts (default 60)")
    p.add_argument(
        "--host",
        choices=sorted(HOSTS),
        help="host size preset: small (2 CPUs, 40 sessions), medium (16, 300), large (64, 1000); "
        "sets --cpus --threads --sessions --disks --irqs",
    )
    p.add_argument(
        "--shape",
        choices=sorted(SHAPES),
        default="io-stall",
        help="load shape inside the load window (default io-stall; healthy: no load at all)",
    )
    p.add_argument(
        "--incident",
        type=float,
        nargs=2,
        metavar=("START", "END"),
        default=INCIDENT,
        help="the load window as fractions of the run (default %(default)s)",
    )
    p.add_argument("--seed", type=int, default=20260421)
    p.add_argument("--start", default="2026-04-21T14:00:00", help="capture start, UTC (default %(default)s)")
    p.add_argument("--out", type=Path, help="output .tar.gz (default /tmp/casebook-bench-<minutes>m.tar.gz)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument(
        "--layout",
        choices=("collector", "oswatcher"),
        default="collector",
        help="collector bundle (default), or an OSWatcher archive of hourly files (vmstat, mpstat, iostat, "
        "ps, meminfo; use with --interval 30, OSWatcher's default)",
    )
    args = p.parse_args(argv)
    if args.host:
        args.cpus, args.threads, args.sessions, args.disks, args.irqs = HOSTS[args.host]
    if args.sessions + 60 > args.threads:
        p.error("--threads must exceed --sessions by at least 60 (kernel threads, daemons, mariadbd helpers)")
    minutes = args.minutes
    out = args.out or Path(f"/tmp/casebook-bench-{minutes:g}m.tar.gz")
    out = out.resolve()
    project = Path(__file__).resolve().parent.parent
    if out.is_relative_to(project):
        p.error(f"write generated bundles outside the project ({project}), e.g. under /tmp")
    out.parent.mkdir(parents=True, exist_ok=True)
    start = datetime.fromisoformat(args.start).replace(tzinfo=UTC)
    if args.interval < 1:
        p.error("--interval must be 1 s or more")
    spec = Spec(
        minutes, args.cpus, args.threads, args.sessions, args.disks, args.irqs, args.seed, start,
        shape=args.shape, incident=tuple(args.incident), interval=args.interval,
    )  # fmt: skip
    if args.layout == "oswatcher":
        info = generate_oswatcher(spec, out, quiet=args.quiet)
        print(f"archive       {out}")
        print(
            f"capture       {spec.samples} snapshots at {spec.interval} s in {info['files']} hourly files, "
            f"{spec.cpus} CPUs, {spec.threads} threads, {spec.disks} disks"
        )
        print(f"compressed    {info['compressed_bytes']:,} bytes ({_human(info['compressed_bytes'])})")
        print(
            f"uncompressed  {info['text_bytes']:,} bytes of text in {info['text_lines']:,} lines "
            f"({_human(info['text_bytes'])})"
        )
        print(f"took          {info['write_s']} s to write the files, {info['pack_s']} s to pack them")
        return 0
    info = generate(spec, out, quiet=args.quiet)
    print(f"bundle        {out}")
    print(
        f"capture       {spec.samples} samples at {spec.interval} s, {spec.cpus} CPUs, {spec.threads} threads, "
        f"{spec.sessions} sessions, {spec.disks} disks, {spec.irqs} IRQ lines; shape {spec.shape}"
    )
    print(f"compressed    {info['compressed_bytes']:,} bytes ({_human(info['compressed_bytes'])})")
    print(
        f"uncompressed  {info['text_bytes']:,} bytes of text in {info['text_lines']:,} lines "
        f"({_human(info['text_bytes'])}); tar stream {info['tar_bytes']:,} bytes"
    )
    print(f"took          {info['write_s']} s to write the members, {info['pack_s']} s to pack them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
