"""Every thread and session state the MySQL 8.0/8.4 and MariaDB 10.6-11.x manuals list, with the
resource a thread in it waits for (``analyzer.waits.model.Resource``) and the page that says so.

``STATES`` holds one ``StateMeaning`` per state as a page spells it: the processlist's State
(``column="state"``), its Command (``column="command"``, read when the State is empty) and an InnoDB
transaction's state (``column="trx_state"``: INFORMATION_SCHEMA.INNODB_TRX ``trx_state`` and the
TRANSACTIONS section of SHOW ENGINE INNODB STATUS). ``column`` extends the agreed shape because a
command and a state can share a word with different meanings (Command ``Statistics`` is
mysqladmin's status request, State ``statistics`` the optimizer's row estimates).

Decisions the manuals leave to the reader (docs/findings.md, "The wait model"):

- A session with Command ``Sleep`` and no open transaction waits for nothing the server holds:
  ``NOTHING`` (it holds a connection slot, which the holders step reads). With an open transaction
  (INNODB_TRX or the monitor lists one for it) it is ``CLIENT``: the transaction waits for its
  application to send the next statement, and holds its locks and read view meanwhile
  (``analyzer.waits.read``).
- Stages that work (``executing``, ``Sending data``, ``statistics``) are ``NOTHING``: the thread runs
  or waits for what no state names; the host rules read CPUs and disks.
- A state the manual describes as a wait without saying on what (``Waiting on cond``) is ``UNKNOWN``.
- States that are not on a manual page but that the servers print (Galera's ``wsrep applier idle``,
  MariaDB's ``Update_rows_log_event::find_row()``, MySQL's semi-sync and ``Applying batch of row
  changes`` stages) cite the server's source file that sets them.

Matching is case-insensitive (MySQL prints ``statistics``, MariaDB ``Statistics``) and ignores
surrounding blanks. ``meaning`` looks a state up: an exact match by index, then the prefix and regex
entries in table order.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from analyzer.waits.model import Resource, StateMeaning

R = Resource
BOTH = frozenset({"mysql", "mariadb"})
MYSQL = frozenset({"mysql"})
MARIADB = frozenset({"mariadb"})

_M = "https://dev.mysql.com/doc/refman/8.4/en/"
MY_GENERAL = _M + "general-thread-states.html"
MY_GENERAL_80 = "https://dev.mysql.com/doc/refman/8.0/en/general-thread-states.html"
MY_SOURCE = _M + "source-thread-states.html"
MY_SOURCE_57 = "https://dev.mysql.com/doc/refman/5.7/en/source-thread-states.html"
MY_IO = _M + "replica-io-thread-states.html"
MY_SQL = _M + "replica-sql-thread-states.html"
MY_CONNECTION = _M + "replica-connection-thread-states.html"
MY_EVENTS = _M + "event-scheduler-thread-states.html"
MY_QUERY_CACHE = "https://dev.mysql.com/doc/refman/5.7/en/query-cache-thread-states.html"
MY_COMMANDS = _M + "thread-commands.html"
MY_INNODB_TRX = _M + "information-schema-innodb-trx-table.html"
MY_MONITOR = _M + "innodb-standard-monitor.html"
MY_STAGES_SRC = "https://github.com/mysql/mysql-server/blob/8.4/sql/mysqld.cc"
MY_SEMISYNC_SRC = "https://github.com/mysql/mysql-server/blob/8.4/plugin/semisync/semisync_source_plugin.cc"
MY_SEMISYNC_57_SRC = (
    "https://github.com/mysql/mysql-server/blob/5.7/plugin/semisync/semisync_master_plugin.cc"
)

_D = "https://mariadb.com/docs/server/ha-and-performance/optimization-and-tuning/buffers-caches-and-threads/"
MDB_GENERAL = _D + "thread-states/general-thread-states"
MDB_MASTER = _D + "thread-states/master-thread-states"
MDB_IO = _D + "thread-states/replica-io-thread-states"
MDB_SQL = _D + "thread-states/slave-sql-thread-states"
MDB_CONNECTION = _D + "thread-states/slave-connection-thread-states"
MDB_EVENTS = _D + "thread-states/event-scheduler-thread-states"
MDB_QUERY_CACHE = _D + "thread-states/query-cache-thread-states"
MDB_DELAYED_CONNECTION = _D + "thread-states/delayed-insert-connection-thread-states"
MDB_DELAYED_HANDLER = _D + "thread-states/delayed-insert-handler-thread-states"
MDB_GALERA = _D + "thread-states/galera-cluster-thread-states"
MDB_COMMANDS = _D + "thread-command-values"
#: MariaDB's performance_schema stage instruments (``stage/sql/<State>``): every stage the server sets.
MDB_STAGES = (
    "https://mariadb.com/docs/server/reference/system-tables/performance-schema/"
    "performance-schema-tables/performance-schema-setup_instruments-table"
)
MDB_WSREP_SRC = "https://github.com/MariaDB/server/blob/11.4/sql/wsrep_thd.cc"
MDB_WSREP_APPLIER_SRC = "https://github.com/MariaDB/server/blob/11.4/sql/wsrep_high_priority_service.cc"
MDB_ROWS_EVENT_SRC = "https://github.com/MariaDB/server/blob/11.4/sql/log_event_server.cc"


def _page(
    source: str,
    thread: str,
    servers: frozenset[str],
    rows: Iterable[tuple[str, Resource, str]],
    *,
    match: str = "exact",
    column: str = "state",
) -> tuple[StateMeaning, ...]:
    """The entries of one manual page (or one source file): ``(state, resource, note)`` rows."""
    return tuple(
        StateMeaning(state, match, resource, thread, servers, source, note, column)
        for state, resource, note in rows
    )


# fmt: off
_GENERAL_BOTH = _page(MY_GENERAL, "client", BOTH, (
    ("After create", R.NOTHING, "a table (or internal temporary table) was just created"),
    ("altering table", R.NOTHING, "an in-place ALTER TABLE runs"),
    ("Analyzing", R.NOTHING, "computing key distributions (ANALYZE TABLE)"),
    ("checking permissions", R.NOTHING, "checking the privileges the statement needs"),
    ("Checking table", R.NOTHING, "a table check runs"),
    ("cleaning up", R.NOTHING, "freeing memory and resetting state after a command"),
    ("closing tables", R.NOTHING, ("flushing changed data and closing tables; long only on a full or "
                                   "saturated disk")),
    ("committing alter table to storage engine", R.NOTHING, "an in-place ALTER TABLE commits"),
    ("copy to tmp table", R.NOTHING, "ALTER TABLE copies rows into the new table"),
    ("Copying to group table", R.NOTHING, "rows sorted by group into a temporary table"),
    ("Copying to tmp table", R.NOTHING, "rows copied into an in-memory temporary table"),
    ("Copying to tmp table on disk", R.NOTHING, "a temporary table grew too large and is written to disk"),
    ("Creating index", R.NOTHING, "ALTER TABLE ... ENABLE KEYS on a MyISAM or Aria table"),
    ("Creating sort index", R.NOTHING, "a SELECT resolved with an internal temporary table"),
    ("creating table", R.NOTHING, "a table is created"),
    ("Creating tmp table", R.NOTHING, "an internal temporary table is created"),
    ("deleting from main table", R.NOTHING, "a multi-table DELETE deletes from its first table"),
    ("deleting from reference tables", R.NOTHING, "a multi-table DELETE deletes from the other tables"),
    ("discard_or_import_tablespace", R.NOTHING, "ALTER TABLE ... DISCARD or IMPORT TABLESPACE"),
    ("end", R.NOTHING, "the end of a statement, before its cleanup"),
    ("executing", R.NOTHING, "the statement executes"),
    ("Execution of init_command", R.NOTHING, "the statements of init_command run"),
    ("freeing items", R.NOTHING, "the statement's items are freed"),
    ("FULLTEXT initialization", R.NOTHING, "a full-text search is prepared"),
    ("init", R.NOTHING, "a statement is initialised (may flush the binary log or query cache)"),
    ("Killed", R.NOTHING, "KILL was sent; the thread aborts when it next checks the kill flag"),
    ("logging slow query", R.NOTHING, "the statement is written to the slow query log"),
    ("login", R.CLIENT, "a connection authenticates: the server and its client exchange packets"),
    ("manage keys", R.NOTHING, "a table's indexes are enabled or disabled"),
    ("Opening tables", R.TABLE_CACHE, ("tables are opened: long when the table cache is full or a DDL or "
                                       "LOCK TABLES holds them")),
    ("optimizing", R.NOTHING, "the optimizer's first pass"),
    ("preparing", R.NOTHING, "query optimisation"),
    ("preparing for alter table", R.NOTHING, "an in-place ALTER TABLE is prepared"),
    ("Purging old relay logs", R.NOTHING, "relay logs no longer needed are removed"),
    ("query end", R.NOTHING, "the statement is done, its items not yet freed"),
    ("Removing duplicates", R.NOTHING, "SELECT DISTINCT removes duplicate rows"),
    ("removing tmp table", R.NOTHING, "an internal temporary table is removed"),
    ("rename", R.NOTHING, "a table is renamed"),
    ("rename result table", R.NOTHING, "ALTER TABLE renames its new table"),
    ("Reopen tables", R.NOTHING, "a table whose structure changed after its lock was taken is reopened"),
    ("Repair by sorting", R.NOTHING, "a repair builds indexes by sorting"),
    ("Repair done", R.NOTHING, "a multi-threaded repair has finished"),
    ("Repair with keycache", R.NOTHING, "a repair builds indexes one by one through the key cache"),
    ("Rolling back", R.NOTHING, "the transaction is rolled back"),
    ("Saving state", R.NOTHING, "a MyISAM table's state (key distributions, row count) is saved"),
    ("Searching rows for update", R.NOTHING, "an UPDATE finds its rows before changing them"),
    ("setup", R.NOTHING, "an ALTER TABLE is set up"),
    ("Sorting for group", R.NOTHING, "sorting for a GROUP BY"),
    ("Sorting for order", R.NOTHING, "sorting for an ORDER BY"),
    ("Sorting index", R.NOTHING, "index pages are sorted (OPTIMIZE TABLE)"),
    ("Sorting result", R.NOTHING, "a SELECT sorts its result without a temporary table"),
    ("starting", R.NOTHING, "the first stage of a statement"),
    ("statistics", R.NOTHING, "the optimizer estimates rows; long when the server is disk-bound"),
    ("System lock", R.TABLE_LOCK, ("requesting or waiting for a table's external or internal lock (LOCK "
                                   "TABLES)")),
    ("update", R.NOTHING, "about to update a table"),
    ("Updating", R.NOTHING, "the rows to update are searched and updated"),
    ("updating main table", R.NOTHING, "a multi-table UPDATE updates its first table"),
    ("updating reference tables", R.NOTHING, "a multi-table UPDATE updates the other tables"),
    ("User lock", R.METADATA_LOCK, ("requesting or waiting for a GET_LOCK() lock (a metadata lock of type "
                                    "USER LEVEL LOCK)")),
    ("User sleep", R.NOTHING, "the statement called SLEEP()"),
    ("Waiting for commit lock", R.GLOBAL_READ_LOCK, ("FLUSH TABLES WITH READ LOCK waits for commits, or a "
                                                     "commit waits for that lock")),
    ("Waiting for global read lock", R.GLOBAL_READ_LOCK, ("FLUSH TABLES WITH READ LOCK holds the global "
                                                          "read lock")),
    ("Waiting for backup lock", R.GLOBAL_READ_LOCK, ("LOCK INSTANCE FOR BACKUP (MySQL) or BACKUP STAGE "
                                                     "(MariaDB) holds the backup lock")),
    ("Waiting for table flush", R.METADATA_LOCK, ("FLUSH TABLES or a changed table waits for every session "
                                                  "to close the table")),
    ("Waiting for tables", R.METADATA_LOCK, ("a table changed: waits for every session to close it before "
                                             "reopening it")),
    ("Waiting for event metadata lock", R.METADATA_LOCK, "waits for a metadata lock on an event"),
    ("Waiting for schema metadata lock", R.METADATA_LOCK, "waits for a metadata lock on a schema"),
    ("Waiting for stored function metadata lock", R.METADATA_LOCK, ("waits for a metadata lock on a stored "
                                                                    "function")),
    ("Waiting for stored procedure metadata lock", R.METADATA_LOCK, ("waits for a metadata lock on a stored "
                                                                     "procedure")),
    ("Waiting for table metadata lock", R.METADATA_LOCK, ("waits for a metadata lock on a table (a DDL, or "
                                                          "a transaction that used it)")),
    ("Waiting for trigger metadata lock", R.METADATA_LOCK, "waits for a metadata lock on a trigger"),
    ("Waiting for table level lock", R.TABLE_LOCK, ("waits for a table's THR_LOCK (LOCK TABLES, MyISAM "
                                                    "writers)")),
    ("Waiting on cond", R.UNKNOWN, "waits for a condition the manual does not name"),
    ("Writing to net", R.CLIENT, "a packet is written to the network: the client reads slowly"),
))

_GENERAL_MYSQL = _page(MY_GENERAL, "client", MYSQL, (
    ("converting HEAP to ondisk", R.NOTHING, "an in-memory temporary table is converted to an on-disk one"),
    ("Locking system tables", R.TABLE_LOCK, "a system table (time zone, log table) is locked"),
    ("Opening system tables", R.TABLE_CACHE, "a system table is opened"),
    ("Receiving from client", R.CLIENT, "the server reads a packet from the client"),
    ("Sending to client", R.CLIENT, "the server writes a packet to the client"),
    ("waiting for handler commit", R.LOG_FLUSH, ("the transaction commits in the storage engine (redo and "
                                                 "binary log flush)")),
)) + _page(MY_GENERAL_80, "client", MYSQL, (
    ("Sending data", R.NOTHING, "rows are read, processed and sent (MySQL before 8.0.17)"),
)) + _page(MY_GENERAL, "client", BOTH, (
    # the manual's generic entry ("Waiting for lock_type lock": a THR_LOCK or a metadata lock), for the
    # lock names it does not list one by one (tablespace, resource group, package body ...)
    (r"^waiting for .+ metadata lock$", R.METADATA_LOCK, "waits for a metadata lock of the type named"),
    (r"^waiting for .+ lock$", R.METADATA_LOCK, "waits for a THR_LOCK or a metadata lock of the type named"),
), match="regex")

_GENERAL_MARIADB = _page(MDB_GENERAL, "client", MARIADB, (
    ("converting HEAP to Aria", R.NOTHING, ("an in-memory temporary table is converted to an on-disk Aria "
                                            "table")),
    ("converting HEAP to MyISAM", R.NOTHING, ("an in-memory temporary table is converted to an on-disk "
                                              "MyISAM table")),
    ("filling schema table", R.NOTHING, "an information_schema table is built"),
    ("Flushing tables", R.METADATA_LOCK, "FLUSH TABLES waits for every session to close its tables"),
    ("Locked", R.TABLE_LOCK, "the statement is locked by another one (a table lock)"),
    ("Opening table", R.TABLE_CACHE, "a table is opened: long when the table cache is full"),
    ("Reading file", R.NOTHING, "a file is read (LOAD DATA INFILE)"),
    ("Reading from net", R.CLIENT, "a packet is read from the network"),
    ("Sending data", R.NOTHING, "rows are read, processed and sent"),
    ("Table lock", R.TABLE_LOCK, "about to request a table's internal lock"),
    ("updating status", R.NOTHING, "after the statement: slow log, audit log and user statistics"),
    ("Waiting for stored package body metadata lock", R.METADATA_LOCK, ("waits for a metadata lock on a "
                                                                        "package body")),
)) + _page(MDB_STAGES, "client", MARIADB, (
    ("After opening tables", R.NOTHING, "the statement's tables are open"),
    ("After table lock", R.NOTHING, "the statement's tables are locked"),
    ("Commit", R.LOG_FLUSH, "the transaction commits (binary log group commit and redo flush)"),
    ("Commit implicit", R.LOG_FLUSH, "a statement's implicit commit"),
    ("Enabling keys", R.NOTHING, "a table's indexes are rebuilt"),
    ("End of update loop", R.NOTHING, "an UPDATE's row loop ended"),
    ("Explaining", R.NOTHING, "EXPLAIN runs"),
    ("Finding key cache", R.NOTHING, "the key cache of a MyISAM table is looked up"),
    ("init for update", R.NOTHING, "an UPDATE or DELETE is initialised"),
    ("Insert", R.NOTHING, "rows are inserted"),
    ("Recreating table", R.NOTHING, "a table is rebuilt"),
    ("Reset for next command", R.NOTHING, "the session is reset after a statement"),
    ("Rollback", R.NOTHING, "the transaction is rolled back"),
    ("Rollback_implicit", R.NOTHING, "a statement's implicit rollback"),
    ("Show explain", R.NOTHING, "SHOW EXPLAIN runs"),
    ("Sorting", R.NOTHING, "rows are sorted"),
    ("Starting cleanup", R.NOTHING, "cleanup after a statement starts"),
    ("Unlocking tables", R.NOTHING, "the statement's tables are unlocked"),
    ("Verifying table", R.NOTHING, "a table is verified"),
    ("Waiting for GTID to be written to binary log", R.LOG_FLUSH, ("the commit waits for its GTID to reach "
                                                                   "the binary log")),
    ("Waiting for background binlog tasks", R.LOG_FLUSH, ("the commit waits for the binary log's background "
                                                          "thread")),
    ("Writing to binlog", R.LOG_FLUSH, "the transaction is written to the binary log"),
    ("Stopping binlog background thread", R.NOTHING, "the binary log's background thread stops"),
    ("Processing requests", R.NOTHING, "a background thread processes its requests"),
    ("Waiting for requests", R.NOTHING, "a background thread waits for work"),
    ("Waiting for a resource", R.TABLE_LOCK, "Aria waits for a page or table resource another thread holds"),
))

_GENERAL_INNODB = _page(MDB_STAGES, "system", BOTH, (
    ("alter table (", R.NOTHING, "an online ALTER TABLE of InnoDB in one of its phases"),
    ("buffer pool load", R.NOTHING, "the buffer pool's pages are loaded at start-up"),
), match="prefix")

_QUERY_CACHE = _page(MY_QUERY_CACHE, "client", BOTH, (
    ("checking privileges on cached query", R.NOTHING, "privileges on a cached result are checked"),
    ("checking query cache for query", R.NOTHING, "the query cache is looked up"),
    ("invalidating query cache entries", R.QUERY_CACHE, ("cached results of changed tables are invalidated "
                                                         "under the cache's lock")),
    ("sending cached result to client", R.CLIENT, "a cached result is sent to the client"),
    ("storing result in query cache", R.QUERY_CACHE, "a result is stored in the cache under its lock"),
    ("Waiting for query cache lock", R.QUERY_CACHE, "waits for the query cache's lock"),
)) + _page(MDB_STAGES, "client", MARIADB, (
    ("Invalidating query cache entries (table", R.QUERY_CACHE, ("cached results of changed tables are "
                                                                "invalidated")),
), match="prefix")

_DELAYED = _page(MDB_DELAYED_CONNECTION, "client", MARIADB, (
    ("allocating local table", R.NOTHING, "rows are prepared for the delayed-insert handler"),
    ("Creating delayed handler", R.NOTHING, "a delayed-insert handler is created"),
    ("got handler lock", R.NOTHING, "the delayed-insert handler's lock was obtained"),
    ("got old table", R.NOTHING, "the delayed-insert handler is initialised"),
    ("storing row into queue", R.NOTHING, "a row is queued for the delayed-insert handler"),
    ("waiting for delay_list", R.NOTHING, "the delayed-insert handler is looked up"),
    ("waiting for handler lock", R.TABLE_LOCK, "waits for the delayed-insert handler's lock"),
    ("waiting for handler open", R.NOTHING, "waits for the delayed-insert handler to start"),
)) + _page(MDB_DELAYED_HANDLER, "system", MARIADB, (
    ("insert", R.NOTHING, "the delayed-insert handler inserts rows"),
    ("reschedule", R.NOTHING, "the delayed-insert handler yields to other threads"),
    ("upgrading lock", R.TABLE_LOCK, "the delayed-insert handler waits for the table's lock"),
    ("Waiting for INSERT", R.NOTHING, "the delayed-insert handler's queue is empty"),
    ("waiting for handler insert", R.NOTHING, "the delayed-insert handler waits for new rows"),
))

_SOURCE = _page(MY_SOURCE, "source_dump", BOTH, (
    ("Finished reading one binlog; switching to next binlog", R.NOTHING, ("the dump thread opens the next "
                                                                          "binary log")),
    ("Master has sent all binlog to slave; waiting for more updates", R.NOTHING, ("the dump thread is idle: "
                                                                                  "every event was sent")),
    ("Source has sent all binlog to replica; waiting for more updates", R.NOTHING, ("the dump thread is "
                                                                                    "idle: every event was "
                                                                                    "sent")),
    ("Sending binlog event to slave", R.NOTHING, "an event is sent to the replica"),
    ("Sending binlog event to replica", R.NOTHING, "an event is sent to the replica"),
    ("Waiting to finalize termination", R.NOTHING, "the dump thread stops"),
)) + _page(MDB_MASTER, "source_dump", MARIADB, (
    ("Master has sent all binlog to slave; waiting for binlog to be updated", R.NOTHING, ("the dump thread "
                                                                                          "is idle: every "
                                                                                          "event was sent")),
)) + _page(MY_SOURCE_57, "source_dump", MYSQL, (
    # MySQL 5.0/5.1 spelt it without "Master"; still printed by old sources in the samples
    (r"^has sent all binlog to slave; waiting for binlog to be updated$", R.NOTHING, ("the dump thread is "
                                                                                      "idle (old MySQL "
                                                                                      "wording)")),
), match="regex")

_SEMISYNC = _page(MY_SEMISYNC_SRC, "source_dump", MYSQL, (
    ("Waiting for semi-sync ACK from replica", R.REPLICA_ACK, ("a commit waits for a semi-synchronous "
                                                               "replica to acknowledge it")),
    ("Waiting for semi-sync replica connection", R.REPLICA_ACK, ("the source waits for a semi-synchronous "
                                                                 "replica to connect")),
    ("Reading semi-sync ACK from replica", R.NOTHING, "the ACK receiver reads an acknowledgement"),
)) + _page(MDB_STAGES, "source_dump", BOTH, (
    ("Waiting for semi-sync ACK from slave", R.REPLICA_ACK, ("a commit waits for a semi-synchronous replica "
                                                             "to acknowledge it")),
    ("Waiting for semi-sync slave connection", R.REPLICA_ACK, ("the source waits for a semi-synchronous "
                                                               "replica to connect")),
    ("Reading semi-sync ACK from slave", R.NOTHING, "the ACK receiver reads an acknowledgement"),
))

_IO = _page(MY_IO, "replica_io", BOTH, (
    ("Checking master version", R.NOTHING, "the source's version is checked after connecting"),
    ("Checking source version", R.NOTHING, "the source's version is checked after connecting"),
    ("Connecting to master", R.SOURCE, "the I/O thread connects to its source"),
    ("Connecting to source", R.SOURCE, "the I/O thread connects to its source"),
    ("Queueing master event to the relay log", R.NOTHING, ("an event read from the source is written to the "
                                                           "relay log")),
    ("Queueing source event to the relay log", R.NOTHING, ("an event read from the source is written to the "
                                                           "relay log")),
    ("Reconnecting after a failed binlog dump request", R.SOURCE, ("reconnects to the source after a failed "
                                                                   "dump request")),
    ("Reconnecting after a failed master event read", R.SOURCE, ("reconnects to the source after a failed "
                                                                 "read")),
    ("Reconnecting after a failed source event read", R.SOURCE, ("reconnects to the source after a failed "
                                                                 "read")),
    ("Registering slave on master", R.SOURCE, "registers with the source after connecting"),
    ("Registering replica on source", R.SOURCE, "registers with the source after connecting"),
    ("Requesting binlog dump", R.SOURCE, "asks the source for its binary log"),
    ("Waiting for master to send event", R.SOURCE, "connected; waits for the source's next event"),
    ("Waiting for source to send event", R.SOURCE, "connected; waits for the source's next event"),
    ("Waiting for master update", R.SOURCE, "the state before connecting to the source"),
    ("Waiting for source update", R.SOURCE, "the state before connecting to the source"),
    ("Waiting for slave mutex on exit", R.NOTHING, "the thread stops"),
    ("Waiting for replica mutex on exit", R.NOTHING, "the thread stops"),
    ("Waiting to reconnect after a failed binlog dump request", R.SOURCE, ("sleeps MASTER_CONNECT_RETRY "
                                                                           "before reconnecting")),
    ("Waiting to reconnect after a failed master event read", R.SOURCE, ("sleeps MASTER_CONNECT_RETRY "
                                                                         "before reconnecting")),
    ("Waiting to reconnect after a failed source event read", R.SOURCE, ("sleeps SOURCE_CONNECT_RETRY "
                                                                         "before reconnecting")),
)) + _page(MY_IO, "replica_io", BOTH, (
    (r"^waiting for the (?:slave|replica) sql thread to free (?:enough )?relay log space\.?$", R.REPLICA_APPLY,
     "relay_log_space_limit reached: the I/O thread waits for the SQL thread to apply and purge"),
), match="regex")

_SQL = _page(MY_SQL, "replica_sql", BOTH, (
    ("Making temporary file (append) before replaying LOAD DATA INFILE", R.NOTHING, ("LOAD DATA's rows are "
                                                                                     "appended to a "
                                                                                     "temporary file")),
    ("Making temporary file (create) before replaying LOAD DATA INFILE", R.NOTHING, ("LOAD DATA's temporary "
                                                                                     "file is created")),
    ("Reading event from the relay log", R.NOTHING, "an event is read from the relay log to be applied"),
    ("Waiting for an event from Coordinator", R.NOTHING, ("a worker of a multithreaded replica waits for "
                                                          "work")),
    ("Waiting for slave mutex on exit", R.NOTHING, "the thread stops"),
    ("Waiting for replica mutex on exit", R.NOTHING, "the thread stops"),
    ("Waiting for Slave Workers to free pending events", R.REPLICA_APPLY, ("the coordinator waits: the "
                                                                           "workers' queued events exceed "
                                                                           "replica_pending_jobs_size_max")),
    ("Waiting for Replica Workers to free pending events", R.REPLICA_APPLY, ("the coordinator waits: the "
                                                                             "workers' queued events exceed "
                                                                             "replica_pending_jobs_size_max")),
    ("Waiting for the next event in relay log", R.NOTHING, "the state before reading the next event"),
    ("Waiting until MASTER_DELAY seconds after master executed event", R.NOTHING, ("a delayed replica waits "
                                                                                   "on purpose "
                                                                                   "(MASTER_DELAY)")),
    ("Waiting until SOURCE_DELAY seconds after source executed event", R.NOTHING, ("a delayed replica waits "
                                                                                   "on purpose "
                                                                                   "(SOURCE_DELAY)")),
)) + _page(MY_SQL, "replica_sql", BOTH, (
    ((r"^(?:slave |replica )?has read all relay log[;,] waiting for (?:more updates|the slave i/o thread to "
      r"update it)$"),
     R.SOURCE, "every relay log event is applied; waits for the I/O thread to bring more from the source"),
), match="regex") + _page(MY_STAGES_SRC, "replica_worker", MYSQL, (
    ("Waiting for preceding transaction to commit", R.REPLICA_APPLY, ("a worker keeps the source's commit "
                                                                      "order (replica_preserve_commit_order)")),
    ("Waiting for dependent transaction to commit", R.REPLICA_APPLY, ("a worker waits for a transaction it "
                                                                      "depends on to commit")),
    ("Waiting for Slave Worker queue", R.REPLICA_APPLY, "the coordinator waits for room in a worker's queue"),
    ("Waiting for Replica Worker queue", R.REPLICA_APPLY, ("the coordinator waits for room in a worker's "
                                                           "queue")),
    ("Waiting for Slave Worker to release partition", R.REPLICA_APPLY, ("the coordinator waits for a worker "
                                                                        "to finish with a database")),
    ("Waiting for Replica Worker to release partition", R.REPLICA_APPLY, ("the coordinator waits for a "
                                                                          "worker to finish with a database")),
    ("Waiting for workers to exit", R.NOTHING, "the coordinator stops its workers"),
    ("Suspending", R.NOTHING, "the gtid_executed compression thread sleeps until it is needed"),
)) + _page(MY_STAGES_SRC, "replica_sql", MYSQL, (
    ("Applying batch of row changes (", R.NOTHING, "a row event is applied (write, update or delete)"),
), match="prefix")

_SQL_MARIADB = _page(MDB_SQL, "replica_sql", MARIADB, (
    ("Apply log event", R.NOTHING, "an event is applied"),
    ("Making temp file", R.NOTHING, "LOAD DATA's rows are written to a temporary file"),
    ("Waiting for work from SQL thread", R.NOTHING, "a parallel replication worker waits for work"),
    ("Waiting for prior transaction to start commit before starting next transaction", R.REPLICA_APPLY, ("a "
                                                                                                         "parallel replication worker waits for conflicting transactions")),
    ("Waiting for worker threads to be idle", R.REPLICA_APPLY, ("the SQL thread waits for every worker to "
                                                                "finish (new binary log)")),
    ("Waiting due to global read lock", R.GLOBAL_READ_LOCK, ("a worker waits for FLUSH TABLES WITH READ "
                                                             "LOCK to be released")),
    ("Waiting for worker threads to pause for global read lock", R.GLOBAL_READ_LOCK, ("FLUSH TABLES WITH "
                                                                                      "READ LOCK waits for "
                                                                                      "the workers to pause")),
    ("Waiting while replication worker thread pool is busy", R.REPLICA_APPLY, ("the worker pool is "
                                                                               "reconfigured or paused")),
    ("Waiting for other master connection to process GTID received on multiple master connections", R.REPLICA_APPLY, ("another connection applies "
                                                                                                                      "the same GTID")),
)) + _page(MDB_STAGES, "replica_sql", MARIADB, (
    ("After apply log event", R.NOTHING, "an event was applied"),
    ("Waiting for prior transaction to commit", R.REPLICA_APPLY, "a worker keeps the source's commit order"),
    ("Waiting for prior transaction to start commit", R.REPLICA_APPLY, ("a worker waits for the previous "
                                                                        "transaction to start its commit")),
    ("Waiting for other master connection to process the same GTID", R.REPLICA_APPLY, ("another connection "
                                                                                       "applies the same "
                                                                                       "GTID")),
    ("Waiting for parallel replication deadlock handling to complete", R.REPLICA_APPLY, ("a worker waits "
                                                                                         "for a deadlock "
                                                                                         "between workers "
                                                                                         "to be resolved")),
    ("Waiting for room in worker thread event queue", R.REPLICA_APPLY, ("the SQL thread waits for room in a "
                                                                        "worker's queue")),
    ("Waiting for the slave SQL thread to advance position", R.REPLICA_APPLY, ("MASTER_POS_WAIT() waits for "
                                                                               "the SQL thread")),
    ("Waiting in MASTER_GTID_WAIT()", R.REPLICA_APPLY, ("MASTER_GTID_WAIT() waits for the replica to apply "
                                                        "a GTID")),
    ("Waiting in MASTER_GTID_WAIT() (primary waiter)", R.REPLICA_APPLY, ("MASTER_GTID_WAIT() waits for the "
                                                                         "replica to apply a GTID")),
    ("Waiting for slave thread to start", R.NOTHING, "START SLAVE waits for the thread to run"),
    ("Flushing relay log and master info repository.", R.NOTHING, ("the relay log and connection metadata "
                                                                   "are flushed")),
    ("Flushing relay-log info file.", R.NOTHING, "the applier metadata is flushed"),
    ("Processing binlog checkpoint notification", R.NOTHING, "a binary log checkpoint is processed"),
)) + _page(MDB_ROWS_EVENT_SRC, "replica_sql", MARIADB, (
    (r"^(?:write|update|delete)_rows_log_event::\w+\(", R.NOTHING, ("a row event is applied (finding, "
                                                                    "unpacking or writing its row)")),
), match="regex")

_CONNECTION = _page(MY_CONNECTION, "client", BOTH, (
    ("Changing master", R.NOTHING, "CHANGE MASTER TO runs"),
    ("Changing replication source", R.NOTHING, "CHANGE REPLICATION SOURCE TO runs"),
    ("Killing slave", R.NOTHING, "STOP SLAVE runs"),
    ("Killing replica", R.NOTHING, "STOP REPLICA runs"),
    ("Opening master dump table", R.NOTHING, "a table of a source dump is opened"),
    ("Reading master dump table data", R.NOTHING, "a table of a source dump is read"),
    ("Rebuilding the index on master dump table", R.NOTHING, "a table of a source dump is indexed"),
))

_EVENTS = _page(MY_EVENTS, "event_scheduler", BOTH, (
    ("Clearing", R.NOTHING, "the scheduler or an event thread ends"),
    ("Initialized", R.NOTHING, "the scheduler or an event thread started"),
    ("Waiting for next activation", R.NOTHING, "the next event is due later"),
    ("Waiting for scheduler to stop", R.NOTHING, "SET GLOBAL event_scheduler = OFF waits for the scheduler"),
    ("Waiting for the scheduler to stop", R.NOTHING, ("SET GLOBAL event_scheduler = OFF waits for the "
                                                      "scheduler")),
    ("Waiting on empty queue", R.NOTHING, "no event is scheduled"),
))

_GALERA = _page(MDB_GALERA, "galera", MARIADB, (
    ("waiting to execute in isolation", R.GALERA_FLOW_CONTROL, ("waits for its turn to run in total order "
                                                                "isolation")),
    ("waiting for TOI DDL", R.GALERA_FLOW_CONTROL, ("waits for a total order isolation DDL to finish on the "
                                                    "cluster")),
    ("waiting for flow control", R.GALERA_FLOW_CONTROL, "paused by Galera flow control"),
    ("waiting for certification", R.GALERA_CERTIFICATION, ("the transaction waits for Galera to certify its "
                                                           "write-set")),
)) + _page(MDB_WSREP_APPLIER_SRC, "galera", MARIADB, (
    ("wsrep applier idle", R.NOTHING, "a Galera applier waits for the next write-set"),
    ("wsrep applier committed", R.NOTHING, "a Galera applier committed its write-set and waits for the next"),
    ("wsrep replaying trx", R.GALERA_CERTIFICATION, ("a local transaction brute-force aborted by a "
                                                     "conflicting write-set is replayed")),
)) + _page(MDB_WSREP_SRC, "galera", MARIADB, (
    ("wsrep aborter idle", R.NOTHING, "Galera's rollback thread waits for work"),
    ("wsrep aborter active", R.NOTHING, "Galera's rollback thread rolls back an aborted transaction"),
))

_COMMANDS = _page(MY_COMMANDS, "client", BOTH, (
    ("Binlog Dump", R.NOTHING, "a source's thread sending its binary log to a replica"),
    ("Binlog Dump GTID", R.NOTHING, "a source's thread sending its binary log to a replica (GTID)"),
    ("Change user", R.NOTHING, "a change-user operation"),
    ("Close stmt", R.NOTHING, "a prepared statement is closed"),
    ("Connect", R.NOTHING, "a replica's thread connected to its source, or a connection being set up"),
    ("Connect Out", R.SOURCE, "a replica connects to its source"),
    ("Create DB", R.NOTHING, "a database is created"),
    ("Daemon", R.NOTHING, "an internal server thread"),
    ("Debug", R.NOTHING, "debugging information is generated"),
    ("Delayed insert", R.NOTHING, "a delayed-insert handler"),
    ("Drop DB", R.NOTHING, "a database is dropped"),
    ("Error", R.NOTHING, "an error"),
    ("Execute", R.NOTHING, "a prepared statement executes"),
    ("Fetch", R.NOTHING, "a prepared statement's rows are fetched"),
    ("Field List", R.NOTHING, "a table's columns are listed"),
    ("Init DB", R.NOTHING, "the default database is selected"),
    ("Kill", R.NOTHING, "another thread is killed"),
    ("Killed", R.NOTHING, "the thread was killed and ends"),
    ("Long Data", R.NOTHING, "long data of a prepared statement is sent"),
    ("Ping", R.NOTHING, "a ping"),
    ("Prepare", R.NOTHING, "a statement is prepared"),
    ("Processlist", R.NOTHING, "the process list is read"),
    ("Query", R.NOTHING, "a statement runs (no stage set: between stages)"),
    ("Quit", R.NOTHING, "the connection ends"),
    ("Refresh", R.NOTHING, "tables, logs or caches are flushed"),
    ("Register Slave", R.NOTHING, "a replica registers"),
    ("Reset stmt", R.NOTHING, "a prepared statement is reset"),
    ("Set option", R.NOTHING, "a client option is set"),
    ("Shutdown", R.NOTHING, "the server shuts down"),
    ("Sleep", R.NOTHING, ("idle: waits for its client's next statement (with an open transaction: CLIENT, "
                          "see the module)")),
    ("Statistics", R.NOTHING, "server status is prepared (mysqladmin status)"),
    ("Table Dump", R.NOTHING, "a table is sent to a replica"),
    ("Time", R.NOTHING, "unused"),
), column="command") + _page(MDB_COMMANDS, "client", MARIADB, (
    ("Slave_IO", R.NOTHING, "a replica's I/O thread (MariaDB's Command for it)"),
    ("Slave_SQL", R.NOTHING, "a replica's SQL thread (MariaDB's Command for it)"),
    ("Slave_worker", R.NOTHING, "a parallel replication worker (MariaDB's Command for it)"),
), column="command")

_TRX = _page(MY_INNODB_TRX, "client", BOTH, (
    ("RUNNING", R.NOTHING, "the transaction runs (or is idle, open: see Command)"),
    ("LOCK WAIT", R.ROW_LOCK, "the transaction waits for a row lock another transaction holds"),
    ("ROLLING BACK", R.NOTHING, "the transaction is rolled back"),
    ("COMMITTING", R.LOG_FLUSH, "the transaction commits"),
), column="trx_state") + _page(MY_MONITOR, "client", BOTH, (
    ("ACTIVE", R.NOTHING, "an open transaction (its LOCK WAIT line, when shown, is a row-lock wait)"),
    ("ACTIVE (PREPARED)", R.LOG_FLUSH, "prepared in two-phase commit: the binary log or XA commit is due"),
    ("not started", R.NOTHING, "a session with no transaction open"),
    ("COMMITTED IN MEMORY", R.LOG_FLUSH, "committed, its redo not yet flushed"),
    ("ROLLING BACK", R.NOTHING, "the transaction is rolled back"),
), column="trx_state")

#: The table: every state, command and transaction state the pages above list.
STATES: tuple[StateMeaning, ...] = (
    *_GENERAL_BOTH, *_GENERAL_MYSQL, *_GENERAL_MARIADB, *_GENERAL_INNODB, *_QUERY_CACHE, *_DELAYED,
    *_SOURCE, *_SEMISYNC, *_IO, *_SQL, *_SQL_MARIADB, *_CONNECTION, *_EVENTS, *_GALERA, *_COMMANDS, *_TRX,
)
# fmt: on

#: The kind of thread a processlist Command names, to pick between two entries of the same state.
COMMAND_THREADS = {
    "binlog dump": "source_dump",
    "binlog dump gtid": "source_dump",
    "slave_io": "replica_io",
    "slave_sql": "replica_sql",
    "slave_worker": "replica_worker",
    "daemon": "system",
}


def _key(text: str) -> str:
    return text.strip().casefold()


@functools.cache
def _indexes(
    column: str,
) -> tuple[dict[str, tuple[StateMeaning, ...]], tuple[tuple[StateMeaning, re.Pattern[str]], ...]]:
    """The exact entries of ``column`` by folded state, and its prefix/regex entries in table order
    (each with its compiled pattern)."""
    exact: dict[str, list[StateMeaning]] = {}
    ordered: list[tuple[StateMeaning, re.Pattern[str]]] = []
    for entry in STATES:
        if entry.column != column:
            continue
        if entry.match == "exact":
            exact.setdefault(_key(entry.state), []).append(entry)
        else:
            text = entry.state if entry.match == "regex" else "^" + re.escape(_key(entry.state))
            ordered.append((entry, re.compile(text, re.IGNORECASE)))
    return {k: tuple(v) for k, v in exact.items()}, tuple(ordered)


def _pick(found: tuple[StateMeaning, ...], command: str | None, server: str | None) -> StateMeaning:
    """Of several entries for one state, the one of ``server`` and of the thread ``command`` names."""
    thread = COMMAND_THREADS.get(_key(command or ""), "client")
    return min(found, key=lambda e: (server is not None and server not in e.servers, e.thread != thread))


def lookup(
    text: str, column: str, *, command: str | None = None, server: str | None = None
) -> StateMeaning | None:
    """The entry of ``column`` (``state``, ``command`` or ``trx_state``) for ``text``, or None."""
    key = _key(text)
    exact, ordered = _indexes(column)
    found = exact.get(key)
    if found:
        return _pick(found, command, server)
    hits = tuple(entry for entry, pattern in ordered if pattern.search(text.strip()))
    return _pick(hits[:1], command, server) if hits else None


def meaning(state: str | None, command: str | None, server: str | None) -> StateMeaning | None:
    """What a processlist row's ``state`` (its Command ``command`` when the State is empty) means on
    ``server`` (``mysql``, ``mariadb`` or None when unknown); None when no entry knows it (the caller
    reports it as ``Resource.UNKNOWN``). Runs once per distinct (state, command) of a capture.

    >>> meaning("Waiting for table metadata lock", "Query", "mysql").resource
    <Resource.METADATA_LOCK: 'metadata lock'>
    >>> meaning("", "Sleep", None).resource
    <Resource.NOTHING: 'nothing'>
    >>> meaning("Update_rows_log_event::find_row()", "Slave_SQL", "mariadb").thread
    'replica_sql'
    >>> meaning("a state of tomorrow's server", "Query", None) is None
    True
    """
    if state is not None and state.strip() and state.strip().upper() != "NULL":
        return lookup(state, "state", command=command, server=server)
    if command is not None and command.strip():
        return lookup(command, "command", command=command, server=server)
    return None
