"""The verdicts of the staged wait incidents (tests/fixtures/bundles/waits-*.tar.gz, made by
scripts/make_wait_bundles.sh): what a senior MySQL support engineer concludes from each capture.

Read from the capture, not from the script that made it: ``holder_kind``/``holder_id`` name a holder
only when the capture shows it holding (a session idle for the whole capture in ``-processlist`` with
its transaction in ``-transactions``, an account holding every slot); otherwise both are None and
``shown`` says what the capture shows instead (contention, a rate). ``shown`` is the entry's
docstring: the members and lines that show it. Line numbers are those of the member as unpacked.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.waits.model import Resource


@dataclass(frozen=True, slots=True)
class Expected:
    """One staged verdict.

    ``resource``: what the sessions wait for (the root cause must name it, by ``Resource.value``);
    ``holder_kind``: the culprit kind (``analyzer.findings.CULPRIT_KINDS``) of the holder, None when the
    capture shows none (then the root cause has no culprit); ``holder_id``: its id in that kind's terms
    (a processlist Id, user@host, a node, a mount point), None when only the kind is pinned;
    ``fix_words``: words the verdict's fix must contain (case-insensitive); ``host``: the server the
    root cause is about in a multi-host bundle (None: one host); ``shown``: where the capture shows it;
    ``root_words``: more words the root cause must contain where the resource's own word is too common
    (CPU); ``fix_not``: words the fix must not contain (``KILL`` where no session holds anything).
    """

    resource: Resource
    holder_kind: str | None
    holder_id: str | None
    fix_words: tuple[str, ...]
    shown: str
    host: str | None = None
    root_words: tuple[str, ...] = ()
    fix_not: tuple[str, ...] = ()


STAGED: dict[str, Expected] = {
    "waits-ddl-long-read": Expected(
        resource=Resource.METADATA_LOCK,
        holder_kind="session",
        holder_id="9",
        fix_words=("KILL 9",),
        shown="""db-a/-processlist (5 snapshots): lines 2-11, session 9 report@127.0.0.1 Command Query, State
        Sending data, Time 28 s, Info the self-join SELECT on sbtest1; lines 12-21, session 10 dba's ALTER TABLE
        sbtest1 in "Waiting for table metadata lock"; lines 18-668, 45 rows in that state (the ALTER and 8 app
        SELECTs queued behind it). db-a/-transactions lines 1-8: session 9's read-only transaction (trx_id 0)
        started 04:51:06. Session 9's read holds the table's metadata lock; the ALTER waits for it, the reads
        wait behind the ALTER. Fix: end the read (KILL 9) or run the DDL when no long read runs.""",
    ),
    "waits-lock-tables": Expected(
        resource=Resource.METADATA_LOCK,
        holder_kind="session",
        holder_id="8",
        fix_words=("KILL 8", "UNLOCK TABLES"),
        # no transaction list shows session 8 in a transaction: it is idle, holding the lock it took
        fix_not=("idle in transaction", "idle in its transaction"),
        shown="""db-a/-processlist (10 snapshots): lines 2-11, session 8 batch@127.0.0.1 Command Sleep, Time 15 s
        and growing, the only client session not waiting; lines 18-1238, 80 rows of 8 app sessions (4 SELECT, 4
        UPDATE on sbtest1) in "Waiting for table metadata lock". No DDL runs and no InnoDB transaction is open
        (no -transactions, no -lock-waits); db-a/-innodbstatus1 lines 24-26: one session's transaction "not
        started" with "mysql tables in use 1, locked 1": a table lock taken by LOCK TABLES, whose session is
        the idle one. Fix: UNLOCK TABLES in that session, or KILL 8.""",
    ),
    "waits-user-lock": Expected(
        resource=Resource.METADATA_LOCK,
        holder_kind=None,
        holder_id=None,
        # the lock's name is an SQL literal: the timeline keeps each statement's fingerprint, never
        # its literals (GET_LOCK(?, ?)), so the fix says how to look the holder up by that name
        fix_words=("IS_USED_LOCK",),
        shown="""db-a/-processlist (9 snapshots): lines 18-888, 54 rows of 6 app sessions in State "User lock",
        Info SELECT GET_LOCK('nightly_job', 600), Time 13 s and growing. The holder is not shown: user locks are
        in no member pt-stalk 3.2.1 writes (no metadata_lock_info, no performance_schema.metadata_locks);
        session 8 batch@127.0.0.1, idle (Sleep, Time 15 s, lines 2-11), is a candidate only. Fix: find who
        holds 'nightly_job' (SELECT IS_USED_LOCK('nightly_job')), then release it or end that session.""",
    ),
    "waits-semisync-ack": Expected(
        resource=Resource.REPLICA_ACK,
        holder_kind="host",
        holder_id="db-b",
        fix_words=("db-b", "START SLAVE"),
        host="db-a",
        shown="""db-a/-processlist (15 snapshots): lines 8-248, sessions 17-20 app@127.0.0.1 Command Execute,
        Info COMMIT, State "Waiting for semi-sync ACK from slave", Time 33 s and growing; db-a/-mysqladmin:
        Rpl_semi_sync_master_status ON, Rpl_semi_sync_master_clients 0 (line 459), ..._wait_sessions 4 (line
        473), Com_commit flat at 4; db-a/-variables: rpl_semi_sync_master_timeout 600000 (10 min) and no
        binlog dump thread in the processlist. db-b/-slave-status line 15: Slave_IO_Running No with
        Last_IO_Errno 0 (line 39): its I/O thread was stopped, not failed. db-b, db-a's only semi-sync
        replica, holds every commit. Fix: START SLAVE IO_THREAD on db-b (or add a semi-sync replica), and
        know that commits wait rpl_semi_sync_master_timeout before semi-sync falls back to asynchronous.""",
    ),
    "waits-galera-multiwriter": Expected(
        resource=Resource.GALERA_CERTIFICATION,
        holder_kind=None,
        holder_id=None,
        fix_words=("db-a", "db-c"),
        fix_not=("KILL",),
        shown="""Two writers, no single holder. db-a/-processlist and db-c/-processlist (11 and 10 snapshots):
        app sessions run UPDATE hot SET n = n + 1 WHERE id = N in db sb (db-a line 19, db-c line 59), 33 rows
        each in "Waiting for certification" (db-a lines 28-1758, db-c lines 68-1707). -mysqladmin line 564
        wsrep_local_cert_failures: db-a 447 -> 872, db-c 619 -> 1263 (about 30 and 45 a second); line 614
        wsrep_local_bf_aborts: db-a 1753 -> 3280, db-c 2245 -> 4279 (100-135 a second); db-b 0 and 0, its
        Com_commit 0 (it only applies). The same rows of sb.hot are written on db-a and db-c: certification
        conflicts among their sessions. Fix: send sb.hot's writes to one node (db-a or db-c), or retry.""",
        host=None,
    ),
    "waits-thread-pool": Expected(
        resource=Resource.CPU,
        holder_kind="session",
        holder_id="8",
        fix_words=("KILL 8",),
        root_words=("pool",),
        shown="""db-a/-variables lines 576-585: thread_handling pool-of-threads, thread_pool_size 1,
        thread_pool_oversubscribe 1, thread_pool_stall_limit 60000 (ms). db-a/-processlist (11 snapshots):
        session 8 report@127.0.0.1 Query, State Executing, Info SELECT BENCHMARK(2000000000, MD5('report
        1')) in every snapshot (lines 2-9 to 599), Time 17 -> 32 s; session 9 report Sleep for as long (its
        query queued, never started); the 8 app connections never appear (they wait in the pool to log in):
        db-a/-mysqladmin Threads_connected 10-11 (line 541) against 2 client rows, Threadpool_threads 3
        (line 539), Threads_running 2. The only thread group is held by session 8's query for longer than
        the stall limit lets another in. Fix: KILL 8; then more thread groups (thread_pool_size, one per
        CPU) or a shorter thread_pool_stall_limit.""",
    ),
    "waits-max-user-conn": Expected(
        resource=Resource.CONNECTION_SLOT,
        holder_kind="account",
        holder_id="app@127.0.0.1",
        fix_words=("app@127.0.0.1",),
        shown="""db-a/-processlist (11 snapshots, lines 2-2606): 20 sessions of app@127.0.0.1, all Command Sleep,
        Time 14-16 s in the first snapshot, the only client sessions. db-a/-mysqladmin: Aborted_connects
        (line 5) 12 -> 31 during the capture (about 1.3 refused logins a second) while Threads_connected
        stays 21-25 of max_connections 200 (-variables line 344) and Connection_errors_max_connections
        stays 0: the server is not full, the account is. Its limit (MAX_USER_CONNECTIONS 20, an account
        attribute) is in no member; the global max_user_connections is 0 (line 363). The account holding
        its slots idle is app@127.0.0.1. Fix: the application's pool for app@127.0.0.1 (close idle
        connections, a smaller pool), not a server setting.""",
    ),
    "waits-deadlock-storm": Expected(
        resource=Resource.ROW_LOCK,
        holder_kind=None,
        holder_id=None,
        fix_words=("deadlock", "hot"),
        fix_not=("KILL",),
        shown="""No holder: contention among 16 sessions of app@127.0.0.1 on the two rows of sb.hot. db-a/-processlist
        (14 snapshots): the 16 sessions run UPDATE hot SET n = n + 1 WHERE id = 1 or 2 (line 9; 206 rows), every
        Time 0. db-a/-lock-waits (lines 78-10149, 769 waits): the blocking thread changes from snapshot to
        snapshot (13, 9, 23 ... each blocks in a few only); db-a/-transactions: 196 transactions in LOCK WAIT
        (lines 26-10308), none old. db-a/-mysqladmin line 315: Innodb_deadlocks 1,149 -> 6,806 in 14 s (about
        400 a second); db-a/-innodbstatus1 line 18: LATEST DETECTED DEADLOCK, the two UPDATEs of sb.hot taken
        in opposite orders. Fix: take the rows in one order in every transaction (and retry on 1213), not
        KILL a session.""",
    ),
    "waits-purge-readview": Expected(
        resource=Resource.PURGE,
        holder_kind="session",
        holder_id="8",
        fix_words=("KILL 8",),
        shown="""db-a/-innodbstatus1 lines 105-122: "Purge done for trx's n:o < 42", History list length 26,905;
        "---TRANSACTION (...), ACTIVE 52 sec / MariaDB thread id 8 ... 127.0.0.1 report / Trx read view will not
        see trx with id >= 38": the oldest read view, held by thread 8. db-a/-processlist (6 snapshots) lines
        1-9: session 8 report@127.0.0.1, Command Sleep, Time 55 -> 67 s (line 397). db-a/-transactions lines
        1-8: thread 8's read-only transaction (trx_id 0) started 05:15:27. db-a/-mysqladmin line 316:
        Innodb_history_list_length 27,151 -> 33,524 in 15 s while app's write load runs (Com_update +850 a
        second). Purge waits for session 8's read view. Fix: end session 8's transaction (COMMIT in the
        application, or KILL 8).""",
    ),
    "waits-conn-leak": Expected(
        resource=Resource.CONNECTION_SLOT,
        holder_kind="account",
        holder_id="app@127.0.0.1",
        fix_words=("app@127.0.0.1",),
        shown="""db-a/-variables line 344: max_connections 60. db-a/-processlist (3 snapshots, lines 3-1843): 60
        sessions of app@127.0.0.1, every one Command Sleep, Time 116-155 s in the first snapshot; the only
        other rows are pt-stalk's own (user monitor, on extra_port 3571, line 103). db-a/-mysqladmin:
        Threads_connected 60 (line 541) throughout; Aborted_connects 45 -> 53 (line 5): new logins refused
        (MariaDB lets a refused login reach authentication through its one extra slot, so
        Connection_errors_max_connections stays 0). Every slot is held by app's idle connections: a leak
        in its pool, not a setting. Fix: the application's pool for app@127.0.0.1 (close idle connections,
        a pool smaller than max_connections; wait_timeout is 28800 s), not a larger max_connections.""",
    ),
    "waits-galera-ftwrl": Expected(
        resource=Resource.GLOBAL_READ_LOCK,
        holder_kind="session",
        holder_id="15",
        fix_words=("KILL 15",),
        host="db-b",
        shown="""db-b/-processlist (8 snapshots): session 15 backup@127.0.0.1, Command Sleep, no Info, Time 15 -> 29
        s (lines 52-1197), the only client session not waiting; 6 app sessions UPDATE sbtest1 in "Waiting for
        backup lock" (lines 68-1258, 48 rows); the appliers stuck at "After apply log event". db-b/-mysqladmin:
        wsrep_local_state_comment Donor/Desynced (line 590) with wsrep_desync_count 1 (line 598) and no state
        transfer: what FLUSH TABLES WITH READ LOCK does to a Galera node; wsrep_local_recv_queue 238 -> 523
        (line 570) while db-a writes. The global read lock is held by the idle session of the account
        backup, session 15 (the capture has no METADATA_LOCK_INFO to name it directly). Fix: let the backup
        finish or end it (UNLOCK TABLES in it, or KILL 15 on db-b); send no traffic to db-b until Synced.""",
    ),
    "waits-tmpdir-full": Expected(
        resource=Resource.DISK_SPACE,
        holder_kind="filesystem",
        holder_id="/tmp/casebook-mysqltmp",
        fix_words=("tmpdir",),
        shown="""db-a/-df line 7 (and every TS block): mysqltmp 8192 KiB, 8192 used, 0 available, 100 % on
        /tmp/casebook-mysqltmp. db-a/-output line 5 (and lines 17, 24, ...): ERROR 1021 Disk got full writing
        'information_schema.(temporary)' (Errcode: 28 "No space left on device"): the server's own temporary
        tables cannot be written, so SHOW GLOBAL VARIABLES and mysqladmin status fail (-variables holds
        only the statements; there is no -mysqladmin). db-a/-processlist (6 snapshots, lines 9-369): 4 app
        sessions in Sending data running SELECT a.c, b.c FROM sbtest1 a JOIN sbtest1 b ON b.k BETWEEN a.k
        AND a.k + 5 ORDER BY a.pad, b.pad LIMIT 1, whose sorts spill to tmpdir. The full file system is
        /tmp/casebook-mysqltmp, filled by those sorts. Fix: point tmpdir at a file system with room (or
        a larger one) and index or limit the sorting query.""",
    ),
    "waits-open-files": Expected(
        resource=Resource.TABLE_CACHE,
        holder_kind="setting",
        holder_id="open_files_limit",
        fix_words=("open_files_limit",),
        shown="""No session holds anything: the file descriptors are the limit. db-a/-variables: open_files_limit 256
        (line 388), table_open_cache 100 (line 569), max_connections 20 (line 344). db-a/-mysqladmin:
        Open_files 193-205 of the 256 (line 403), Open_tables 100 of 100 throughout (line 406), Opened_tables
        27,321 -> 54,455 in 14 s (line 410, about 1,900 a second), Opened_files about 3,800 a second. db-a/-
        processlist (12 snapshots): 6 app sessions reading tables m1..m300 one after another (line 799),
        each statement too short to be seen in a state. The 300 MyISAM tables need two descriptors each; the
        table cache cannot grow past what open_files_limit leaves (raising table_open_cache alone would fail
        with errno 24). Fix: raise open_files_limit (systemd LimitNOFILE, ulimit -n) and then
        table_open_cache.""",
    ),
}
