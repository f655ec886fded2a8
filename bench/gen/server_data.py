"""What the simulated MariaDB 10.11.19 server reports: its ``mysqladmin extended-status`` rows,
its variables, and what its sessions run (queries, states) and wait on (wchans)."""

from __future__ import annotations

import numpy as np

from bench.gen.model import HOST

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
