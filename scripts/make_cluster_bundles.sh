#!/bin/sh
# Real pt-stalk collections of several MariaDB servers of one cluster, taken at the same time on this
# machine, one directory per host in one tarball (the layout a support engineer receives):
#   replica-lag      db-a (source, log-bin) takes a 16-thread sysbench write load; db-b (its replica:
#                    one SQL thread, innodb_flush_log_at_trx_commit=1, sync_binlog=1, log_slave_updates)
#                    falls behind
#   replica-stopped  a row inserted on db-b first, then the same key on db-a: db-b's SQL thread stops on
#                    error 1062 (duplicate key); then db-a takes a 4-thread write load
#   galera           db-a, db-b, db-c: a three-node Galera cluster (galera-4, gcs.fc_limit=16); db-b's
#                    disk is throttled (its mariadbd in a blkio cgroup: WRITE_IOPS writes/s, redo synced
#                    at every commit) while db-a and db-c take a 4-thread sysbench write load each
#   healthy          the replica-lag pair under a light load (2 threads, 50 transactions/s): db-b keeps up
#   galera-desync    the three Galera nodes; on db-b a session `backup` runs FLUSH TABLES WITH READ LOCK
#                    and stays idle (the node desyncs: Donor/Desynced, sends no flow control) while
#                    db-a and db-c take a 2-thread write load each: db-b's receive queue grows
# Replica lag by its cause (the same pair; db-b syncs nothing at commit unless said; the members of
# LAG_SHIP added, LAG_RUN_TIME 15 s by default for these and galera-desync):
#   lag-mdl          a session on db-b (user report) reads sb.sbtest1 in a transaction and stays idle; db-a
#                    runs ALTER TABLE sb.sbtest1: db-b's SQL thread waits for the table's metadata lock
#   lag-lock         a session on db-b (user app) updates rows of sb.sbtest1 and stays idle in its
#                    transaction; db-a's 4-thread write load reaches those rows: db-b's SQL thread waits
#                    for the session's row lock (innodb_lock_wait_timeout 600 on db-b)
#   lag-nokey        sb.nokey (no primary key, no index) of NOKEY_ROWS rows; db-a deletes its last fifth
#                    in one statement: db-b's SQL thread scans the table once per deleted row
#   lag-delay        db-b replicates with MASTER_DELAY=DELAY_S under a light load (20 transactions/s)
#   lag-ddl          sb.big (BIG_ROWS rows); db-a runs ALTER TABLE ... ALGORITHM=COPY: db-b (its mariadbd
#                    held to SLOW_CPU_PCT % of a CPU, a replica smaller than its source) applies it; the
#                    capture starts 3 s after db-b's SQL thread shows "copy to tmp table"
#   lag-bigtrx       sb.big (BIG_ROWS rows); db-a updates every row in one transaction: db-b (held to
#                    SLOW_CPU_PCT % of a CPU) applies one transaction of BIG_ROWS row changes; the
#                    capture starts when db-a's UPDATE returns
# All servers run on this machine, so pt-stalk's `-hostname` member, the `hostname` row of `-variables`
# and the sysstat banners (`Linux ... (vm) ...`) of `-mpstat`/`-iostat` are rewritten to the host's name
# (db-a, db-b, db-c); the OS members (vmstat, iostat, mpstat) of every host are the one machine's.
# See tests/fixtures/bundles/README.md ("Clusters").
#
# Usage: sh scripts/make_cluster_bundles.sh OUTDIR [SHAPE...]   (default: every shape above)
# Env:   RUN_TIME (capture seconds, default 20; lag-* shapes LAG_RUN_TIME, 15), BASE_PORT (default 3410),
#        WRITE_IOPS (db-b's disk, 40), NOKEY_ROWS (50000), BIG_ROWS (600000), DELAY_S (70),
#        SLOW_CPU_PCT (5: db-b's share of a CPU in lag-ddl and lag-bigtrx)
# Needs: root, mariadb-server 10.11, galera-4, rsync (Galera SST), percona-toolkit 3.2.1, sysbench.
set -eu

OUTDIR=$(cd "${1:?usage: make_cluster_bundles.sh OUTDIR [SHAPE...]}" && pwd)
shift
SHAPES=${*:-replica-lag replica-stopped galera healthy galera-desync lag-mdl lag-lock lag-nokey lag-delay lag-ddl lag-bigtrx}
RUN_TIME=${RUN_TIME:-20}
BASE_PORT=${BASE_PORT:-3410}
WRITE_IOPS=${WRITE_IOPS:-40}
RUN_AS=root
SHIP="vmstat mpstat iostat processlist variables mysqladmin slave-status hostname output trigger"
LAG_SHIP="lock-waits transactions innodbstatus1"
LAG_RUN_TIME=${LAG_RUN_TIME:-15}
NOKEY_ROWS=${NOKEY_ROWS:-50000}
BIG_ROWS=${BIG_ROWS:-600000}
DELAY_S=${DELAY_S:-70}
SLOW_CPU_PCT=${SLOW_CPU_PCT:-5}
HOLD=""
# db-b's commits: synced at every commit for replica-lag (its cause), not for the lag-* shapes
SYNCED="--innodb-flush-log-at-trx-commit=1 --sync-binlog=1 --innodb-flush-method=O_DSYNC"
UNSYNCED="--innodb-flush-log-at-trx-commit=0 --sync-binlog=0"

WORK=$(mktemp -d /tmp/casebook-cluster.XXXXXX)
chmod 755 "$WORK"  # the Galera nodes run as mysql (rsync SST drops root privileges)
PIDS=""
JOBS=""
cleanup() {
    for p in $HOLD $PIDS; do kill "$p" 2>/dev/null || true; done
    for p in $PIDS; do wait "$p" 2>/dev/null || true; done
    rmdir /sys/fs/cgroup/blkio/casebook-db-b.$$ 2>/dev/null || true
    rmdir /sys/fs/cgroup/cpu/casebook-db-b.$$ 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
trap "exit 1" INT TERM

sock() { echo "$WORK/$1/mysqld.sock"; }
sql() { # sql HOST SQL [mariadb options...]
    h=$1 q=$2
    shift 2
    mariadb --socket="$(sock "$h")" -uroot "$@" -e "$q"
}

start() {  # start HOST PORT SERVER_ID [mariadbd options...]: a scratch server of its own (as $RUN_AS)
    h=$1 port=$2 id=$3
    shift 3
    mkdir -p "$WORK/$h"
    chown "$RUN_AS" "$WORK/$h"
    mariadb-install-db --no-defaults --datadir="$WORK/$h/data" --auth-root-authentication-method=socket \
        --skip-test-db --user="$RUN_AS" >/dev/null
    mariadbd --no-defaults --datadir="$WORK/$h/data" --socket="$(sock "$h")" --port="$port" \
        --bind-address=127.0.0.1 --user="$RUN_AS" --server-id="$id" --report-host="$h" --report-port="$port" \
        --innodb-buffer-pool-size=64M --innodb-log-file-size=48M --max-connections=200 \
        --log-error="$WORK/$h/error.log" --pid-file="$WORK/$h/mysqld.pid" "$@" &
    PIDS="$PIDS $!"
    echo $! >"$WORK/$h/pid"
    i=0
    until sql "$h" 'SELECT 1' >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -lt 90 ] || { echo "mariadbd $h did not start" >&2; tail -20 "$WORK/$h/error.log" >&2; exit 1; }
        sleep 1
    done
}

stop_all() {
    for p in $PIDS; do kill "$p" 2>/dev/null || true; done
    for p in $PIDS; do wait "$p" 2>/dev/null || true; done
    PIDS=""
    for h in db-a db-b db-c; do rm -rf "${WORK:?}/$h"; done
}

stalk() {  # stalk SHAPE HOST: pt-stalk on HOST's socket now, in the background, into SHAPE/HOST
    dest=$WORK/out/$1/$2
    mkdir -p "$dest"
    pt-stalk --no-stalk --iterations=1 --run-time="${3:-$RUN_TIME}" --sleep=1 --dest="$dest" \
        --log="$WORK/$2.pt-stalk.log" --pid="$WORK/$2.pt-stalk.pid" \
        -- --socket="$(sock "$2")" --user=root >"$WORK/$2.pt-stalk.stdout" 2>&1 &
    JOBS="$JOBS $!"
}

settle() {  # settle: wait for the captures and the loads (not the servers)
    for p in $JOBS; do wait "$p" 2>/dev/null || true; done
    JOBS=""
}

pack() {  # pack SHAPE [MEMBERS...]: keep the members the rules read (SHIP and MEMBERS), name each host, tar
    shape=$1
    shift
    for dest in "$WORK/out/$shape"/*; do
        h=${dest##*/}
        for f in "$dest"/*; do
            suffix=${f##*/????_??_??_??_??_??-}
            case " $(echo $SHIP "$@") " in
            *" $suffix "*) [ -s "$f" ] || rm -f "$f" ;;
            *) rm -f "$f" ;;
            esac
        done
        real=$(hostname)
        for f in "$dest"/*-hostname; do echo "$h" >"$f"; done
        # the sysstat banner: "Linux 6.18.44-fc-v769 (vm) 	11/27/26 	_x86_64_	(2 CPU)"
        sed -i "1s/ ($real) / ($h) /" "$dest"/*-mpstat "$dest"/*-iostat
        # SHOW GLOBAL VARIABLES as pt-stalk writes it: "hostname	vm" (tab-separated)
        sed -i "s/^hostname\t$real\$/hostname\t$h/" "$dest"/*-variables
    done
    out="$OUTDIR/cluster-$shape.tar.gz"
    tar -C "$WORK/out" --owner=0 --group=0 --numeric-owner --sort=name -czf "$out" "$shape"
    echo "$out ($(wc -c <"$out") bytes)"
}

sysbench_on() {  # sysbench_on HOST PORT SECONDS THREADS [sysbench options]: oltp_write_only on HOST (sbtest1)
    h=$1 port=$2 secs=$3 threads=$4
    shift 4
    sysbench oltp_write_only "$@" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=sb \
        --mysql-password=sb --mysql-db=sb --tables=1 --table-size=10000 --threads="$threads" --time="$secs" \
        --mysql-ignore-errors=all --report-interval=0 run >"$WORK/$h.sysbench.out" 2>&1 &
    JOBS="$JOBS $!"
}

prepare_sb() {  # prepare_sb HOST PORT: the sysbench account and table
    sql "$1" "CREATE DATABASE sb; CREATE USER sb@'%' IDENTIFIED BY 'sb'; GRANT ALL ON sb.* TO sb@'%';"
    sysbench oltp_write_only --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$2" --mysql-user=sb \
        --mysql-password=sb --mysql-db=sb --tables=1 --table-size=10000 prepare >/dev/null
}

source_replica() {  # source_replica: db-a the source, db-b its replica, replicating from db-a's first event
    pa=$((BASE_PORT + 1)) pb=$((BASE_PORT + 2))
    start db-a "$pa" 1 --log-bin=db-a-bin --binlog-format=ROW --innodb-flush-log-at-trx-commit=0 --sync-binlog=0
    start db-b "$pb" 2 --log-bin=db-b-bin --binlog-format=ROW --log-slave-updates --slave-parallel-threads=0 \
        $REPLICA_SYNC
    sql db-a "CREATE USER repl@'%' IDENTIFIED BY 'repl'; GRANT REPLICATION SLAVE ON *.* TO repl@'%';"
    sql db-b "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$pa, MASTER_USER='repl',
        MASTER_PASSWORD='repl', MASTER_LOG_FILE='db-a-bin.000001', MASTER_LOG_POS=4, MASTER_USE_GTID=no;
        START SLAVE;"
    prepare_sb db-a "$pa"
    i=0
    until [ "$(sql db-b 'SELECT COUNT(*) FROM sb.sbtest1' -N 2>/dev/null || echo 0)" = 10000 ]; do
        i=$((i + 1))
        [ $i -lt 120 ] || { echo "db-b did not catch up" >&2; exit 1; }
        sleep 1
    done
}

caught_up() {  # caught_up SQL VALUE: wait until db-b answers SQL with VALUE (the replica has applied it)
    i=0
    until [ "$(sql db-b "$1" -N 2>/dev/null || echo none)" = "$2" ]; do
        i=$((i + 1))
        [ $i -lt 300 ] || { echo "db-b did not catch up ($1)" >&2; exit 1; }
        sleep 1
    done
}

big_table() {  # big_table: sb.big of BIG_ROWS rows (primary key id) on db-a, applied on db-b
    sql db-a "CREATE TABLE sb.big (id INT PRIMARY KEY, k INT NOT NULL, pad CHAR(120) NOT NULL) ENGINE=InnoDB;
        INSERT INTO sb.big SELECT seq, seq % 1000, REPEAT(CHAR(97 + seq % 26), 120) FROM seq_1_to_$BIG_ROWS" --database=sb
    caught_up "SELECT COUNT(*) FROM sb.big" "$BIG_ROWS"
}

hold_session() {  # hold_session PORT USER SQL [DB]: USER (password USER) runs SQL over TCP in DB, then
    # stays connected and idle (its client reads a FIFO this script holds open) until release_session
    mkfifo "$WORK/hold"
    mariadb -h127.0.0.1 -P"$1" -u"$2" -p"$2" ${4:+"$4"} <"$WORK/hold" >/dev/null 2>&1 &
    HOLD=$!
    exec 9>"$WORK/hold"
    echo "$3" >&9
    sleep 2
}

release_session() {  # release_session: close the held session's input; its client ends, its transaction rolls back
    exec 9>&-
    wait "$HOLD" 2>/dev/null || true
    HOLD=""
    rm -f "$WORK/hold"
}

slow_replica() {  # slow_replica PCT: db-b's mariadbd gets PCT % of one CPU (a cgroup-v1 cpu quota)
    CPUG=/sys/fs/cgroup/cpu/casebook-db-b.$$
    mkdir -p "$CPUG"
    echo 100000 >"$CPUG/cpu.cfs_period_us"
    echo $(($1 * 1000)) >"$CPUG/cpu.cfs_quota_us"
    cat "$WORK/db-b/pid" >"$CPUG/cgroup.procs"
}

fast_replica() {  # fast_replica: db-b back in the root cpu cgroup, the quota's group removed
    for p in $(cat "$CPUG/cgroup.procs"); do echo "$p" >/sys/fs/cgroup/cpu/cgroup.procs; done
    rmdir "$CPUG"
}

until_b() {  # until_b SQL TEXT: wait until db-b's answer to SQL holds TEXT (polled 5 times a second)
    i=0
    until sql db-b "$1" | grep -q "$2"; do
        i=$((i + 1))
        [ $i -lt 600 ] || { echo "db-b's $1 never showed '$2'" >&2; exit 1; }
        sleep 0.2
    done
}

lag_shape() {  # lag_shape SHAPE: pt-stalk on db-a and db-b for LAG_RUN_TIME s, then wait for them
    stalk "$1" db-a "$LAG_RUN_TIME"
    stalk "$1" db-b "$LAG_RUN_TIME"
    settle
}

galera() {  # galera: db-a, db-b, db-c in one Galera cluster (db-a bootstraps; db-b, db-c join by rsync SST)
    addr=""
    for n in 1 2 3; do addr="$addr${addr:+,}127.0.0.1:$((BASE_PORT + 160 + n))"; done
    n=0
    for h in db-a db-b db-c; do
        n=$((n + 1))
        first=""
        [ $n -gt 1 ] || first=--wsrep-new-cluster
        start "$h" $((BASE_PORT + 10 + n)) "$n" --binlog-format=ROW --innodb-autoinc-lock-mode=2 \
            --innodb-flush-log-at-trx-commit=0 --wsrep-on=ON --wsrep-slave-threads=4 --wsrep-provider=/usr/lib/galera/libgalera_smm.so \
            --wsrep-cluster-name=casebook --wsrep-node-name="$h" --wsrep-node-address=127.0.0.1:$((BASE_PORT + 160 + n)) \
            --wsrep-cluster-address="gcomm://$addr" --wsrep-sst-method=rsync \
            --wsrep-sst-receive-address=127.0.0.1:$((BASE_PORT + 180 + n)) \
            --wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$((BASE_PORT + 160 + n));ist.recv_addr=127.0.0.1:$((BASE_PORT + 170 + n));gcs.fc_limit=16;gcs.fc_factor=0.8" \
            $first
        i=0
        until [ "$(sql "$h" "SHOW STATUS LIKE 'wsrep_local_state_comment'" -N 2>/dev/null | cut -f2)" = Synced ]; do
            i=$((i + 1))
            [ $i -lt 120 ] || { echo "$h did not reach Synced" >&2; tail -30 "$WORK/$h/error.log" >&2; exit 1; }
            sleep 1
        done
    done
    prepare_sb db-a $((BASE_PORT + 11))
}

for shape in $SHAPES; do
    case $shape in
    lag-*) REPLICA_SYNC=$UNSYNCED ;;
    *) REPLICA_SYNC=$SYNCED ;;
    esac
    case $shape in
    replica-lag)
        source_replica
        sysbench_on db-a $((BASE_PORT + 1)) $((RUN_TIME + 25)) 16
        sleep 10
        stalk replica-lag db-a
        stalk replica-lag db-b
        settle
        ;;
    healthy)
        source_replica
        sysbench_on db-a $((BASE_PORT + 1)) $((RUN_TIME + 15)) 2 --rate=50
        sleep 5
        stalk healthy db-a
        stalk healthy db-b
        settle
        ;;
    replica-stopped)
        source_replica
        sql db-b "INSERT INTO sb.sbtest1 (id, k, c, pad) VALUES (20001, 1, 'replica', 'replica')"
        sql db-a "INSERT INTO sb.sbtest1 (id, k, c, pad) VALUES (20001, 1, 'source', 'source')"
        until_b "SHOW SLAVE STATUS\G" "Slave_SQL_Running: No"
        sysbench_on db-a $((BASE_PORT + 1)) $((RUN_TIME + 15)) 4
        sleep 5
        stalk replica-stopped db-a
        stalk replica-stopped db-b
        settle
        ;;
    galera)
        RUN_AS=mysql  # the rsync daemon of the joiner's SST runs as nobody when started by root
        galera
        # db-b's disk is throttled: its mariadbd in a blkio cgroup allowed WRITE_IOPS writes per second on
        # the datadir's device, and it syncs its redo log at every commit; db-a and db-c take the writes
        dev=$(lsblk -no PKNAME "$(df --output=source "$WORK" | tail -1)" 2>/dev/null || true)
        majmin=$(lsblk -dno MAJ:MIN "/dev/${dev:-$(basename "$(df --output=source "$WORK" | tail -1)")}" | tr -d ' ')
        CG=/sys/fs/cgroup/blkio/casebook-db-b.$$
        mkdir -p "$CG"
        echo "$majmin $WRITE_IOPS" >"$CG/blkio.throttle.write_iops_device"
        cat "$WORK/db-b/pid" >"$CG/cgroup.procs"
        sql db-b "SET GLOBAL innodb_flush_log_at_trx_commit=1"
        sysbench_on db-a $((BASE_PORT + 11)) $((RUN_TIME + 20)) 4
        sysbench_on db-c $((BASE_PORT + 13)) $((RUN_TIME + 20)) 4
        sleep 8
        stalk galera db-a
        stalk galera db-b
        stalk galera db-c
        settle
        for p in $(cat "$CG/cgroup.procs"); do echo "$p" >/sys/fs/cgroup/blkio/cgroup.procs; done
        rmdir "$CG"
        ;;
    galera-desync)
        RUN_AS=mysql
        galera
        sql db-b "CREATE USER backup@'%' IDENTIFIED BY 'backup'; GRANT RELOAD, PROCESS ON *.* TO backup@'%';"
        hold_session $((BASE_PORT + 12)) backup "FLUSH TABLES WITH READ LOCK;"
        sysbench_on db-a $((BASE_PORT + 11)) $((LAG_RUN_TIME + 20)) 2
        sysbench_on db-c $((BASE_PORT + 13)) $((LAG_RUN_TIME + 20)) 2
        sleep 6
        stalk galera-desync db-a "$LAG_RUN_TIME"
        stalk galera-desync db-b "$LAG_RUN_TIME"
        stalk galera-desync db-c "$LAG_RUN_TIME"
        settle
        release_session
        ;;
    lag-mdl)
        source_replica
        sql db-b "CREATE USER report@'%' IDENTIFIED BY 'report'; GRANT SELECT ON sb.* TO report@'%';"
        hold_session "$((BASE_PORT + 2))" report "BEGIN; SELECT COUNT(*) FROM sbtest1;" sb
        sql db-a "ALTER TABLE sb.sbtest1 ADD COLUMN note VARCHAR(20) NULL"
        sleep 10
        lag_shape lag-mdl
        release_session
        ;;
    lag-lock)
        source_replica
        pb=$((BASE_PORT + 2))
        # the SQL thread takes innodb_lock_wait_timeout when it starts: it waits out the capture
        sql db-b "SET GLOBAL innodb_lock_wait_timeout=600; STOP SLAVE SQL_THREAD; START SLAVE SQL_THREAD;
            CREATE USER app@'%' IDENTIFIED BY 'app'; GRANT ALL ON sb.* TO app@'%';"
        # the app's session: one UPDATE, then idle in its open transaction until its input closes
        hold_session "$pb" app "BEGIN; UPDATE sbtest1 SET c = 'held by app' WHERE id BETWEEN 1 AND 200;" sb
        sysbench_on db-a $((BASE_PORT + 1)) $((LAG_RUN_TIME + 30)) 4 --rate=100 --rand-type=uniform
        sleep 15
        lag_shape lag-lock
        release_session
        ;;
    lag-nokey)
        source_replica
        sql db-a "CREATE TABLE sb.nokey (a INT NOT NULL, b CHAR(100) NOT NULL) ENGINE=InnoDB;
            INSERT INTO sb.nokey SELECT seq, 'row' FROM seq_1_to_$NOKEY_ROWS" --database=sb
        caught_up "SELECT COUNT(*) FROM sb.nokey" "$NOKEY_ROWS"
        # the last rows: each one's scan reads the whole table before it
        sql db-a "DELETE FROM sb.nokey WHERE a > $((NOKEY_ROWS * 4 / 5))"
        sleep 12
        lag_shape lag-nokey
        ;;
    lag-delay)
        source_replica
        sql db-b "STOP SLAVE; CHANGE MASTER TO MASTER_DELAY=$DELAY_S; START SLAVE;"
        sysbench_on db-a $((BASE_PORT + 1)) $((DELAY_S + LAG_RUN_TIME + 20)) 2 --rate=20
        sleep $((DELAY_S + 8))
        lag_shape lag-delay
        ;;
    lag-ddl)
        source_replica
        big_table
        slow_replica "$SLOW_CPU_PCT"
        sql db-a "ALTER TABLE sb.big ADD COLUMN note VARCHAR(20) NULL, ALGORITHM=COPY" &
        JOBS="$JOBS $!"
        until_b "SHOW PROCESSLIST" "copy to tmp table"
        sleep 3
        lag_shape lag-ddl
        fast_replica
        ;;
    lag-bigtrx)
        source_replica
        big_table
        slow_replica "$SLOW_CPU_PCT"
        sql db-a "UPDATE sb.big SET k = k + 1, pad = REVERSE(pad)"
        lag_shape lag-bigtrx
        fast_replica
        ;;
    esac
    case $shape in
    lag-* | galera-desync) pack "$shape" $LAG_SHIP ;;
    *) pack "$shape" ;;
    esac
    stop_all
done
