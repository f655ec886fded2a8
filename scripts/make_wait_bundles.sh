#!/bin/sh
# Real pt-stalk collections of sessions waiting for a resource that someone or something holds, made
# against scratch MariaDB servers of their own (one directory per host in one tarball, as the cluster
# bundles are; every host is named db-a, db-b, db-c):
#   deadlock-storm     16 sysbench threads (user app) update two hot rows of sb.hot in opposite orders
#   purge-readview     a session (user report) takes a consistent snapshot, reads, and stays idle while a
#                      4-thread sysbench write load runs: the history list grows
#   conn-leak          max_connections 60; the account app@127.0.0.1 opens connections that stay idle
#                      until every slot is taken; its new connections are refused
#   semisync-ack       db-a (semi-sync source, rpl_semi_sync_master_timeout 10 min) and db-b (its only
#                      semi-sync replica, I/O thread stopped); db-a takes a 4-thread write load
#   galera-multiwriter three Galera nodes; db-a and db-c update the same 20 rows of sb.hot (8 threads each)
#   ddl-long-read      a 60-s-plus report SELECT on sb.sbtest1; an ALTER TABLE of it waits; readers queue
#   lock-tables        a session (user batch) runs LOCK TABLES sbtest1 WRITE and stays idle; others wait
#   user-lock          a session (user batch) holds GET_LOCK('nightly_job') idle; others wait in GET_LOCK
#   tmpdir-full        tmpdir on a TMPDIR_MB MiB tmpfs; 4 sessions sort and group into on-disk temporary
#                      tables that fill it (the members df and disk-space are shipped)
#   open-files         mariadbd restarted under ulimit -n OPEN_FILES (open_files_limit OPEN_FILES) with
#                      table_open_cache 100 while 6 sessions read 300 MyISAM tables in turn
#   thread-pool        thread_handling=pool-of-threads, thread_pool_size 1, oversubscribe 1, stall limit
#                      60 s: 2 long queries hold the only group; 8 short ones wait behind them
#   max-user-conn      account app limited to 20 connections (MAX_USER_CONNECTIONS), all 20 idle; its
#                      new connections are refused
#   galera-ftwrl       three Galera nodes; on db-b a session (user backup) holds FLUSH TABLES WITH READ
#                      LOCK idle while db-b's own clients write
# pt-stalk connects as root over the socket, except for conn-leak and thread-pool where it connects to
# extra_port (a separate connection pool, as a DBA does when the main one is full or stalled).
# All servers run on this machine: pt-stalk's `-hostname`, the `hostname` row of `-variables` and the
# sysstat banners of `-mpstat`/`-iostat` are rewritten to the host's name. In `-ps` other processes'
# arguments are cut (scripts/clean_ps_args.py). See tests/fixtures/bundles/README.md ("Waits").
#
# Usage: sh scripts/make_wait_bundles.sh OUTDIR [SHAPE...]   (default: every shape above)
# Env:   RUN_TIME (capture seconds, default 15), BASE_PORT (default 3520), TMPDIR_MB (8), OPEN_FILES (256)
# Needs: root, mariadb-server 10.11, galera-4, rsync (Galera SST), percona-toolkit 3.2.1, sysbench.
set -eu

OUTDIR=$(cd "${1:?usage: make_wait_bundles.sh OUTDIR [SHAPE...]}" && pwd)
shift
SHAPES=${*:-deadlock-storm purge-readview conn-leak semisync-ack galera-multiwriter ddl-long-read lock-tables
user-lock tmpdir-full open-files thread-pool max-user-conn galera-ftwrl}
RUN_TIME=${RUN_TIME:-15}
BASE_PORT=${BASE_PORT:-3520}
TMPDIR_MB=${TMPDIR_MB:-8}
OPEN_FILES=${OPEN_FILES:-256}
TMPFS=/tmp/casebook-mysqltmp  # tmpdir-full: the tmpfs mounted as the server's tmpdir
RUN_AS=root
SHIP="processlist lock-waits transactions innodbstatus1 mysqladmin variables ps vmstat iostat mpstat slave-status
hostname output trigger"
HERE=$(cd "$(dirname "$0")" && pwd)

WORK=$(mktemp -d /tmp/casebook-waits.XXXXXX)
chmod 755 "$WORK"  # the Galera nodes run as mysql (rsync SST drops root privileges)
PIDS=""
JOBS=""
cleanup() {
    rm -f "$WORK/holding"
    for p in $JOBS; do kill "$p" 2>/dev/null || true; done
    for p in $PIDS; do kill "$p" 2>/dev/null || true; done
    for p in $PIDS; do wait "$p" 2>/dev/null || true; done
    umount "$TMPFS" 2>/dev/null && rmdir "$TMPFS" || true
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
    [ -d "$WORK/$h/data/mysql" ] ||  # a restart (open-files) keeps its datadir
        mariadb-install-db --no-defaults --datadir="$WORK/$h/data" --auth-root-authentication-method=socket \
            --skip-test-db --user="$RUN_AS" >/dev/null
    # NOFILE (open-files): the server's file descriptor limit, soft and hard (mariadbd raises
    # open_files_limit up to the hard limit, whatever --open-files-limit asks)
    (if [ -n "${NOFILE:-}" ]; then ulimit -n "$NOFILE"; fi
    exec mariadbd --no-defaults --datadir="$WORK/$h/data" --socket="$(sock "$h")" --port="$port" \
        --bind-address=127.0.0.1 --skip-name-resolve --user="$RUN_AS" --server-id="$id" --report-host="$h" --report-port="$port" \
        --innodb-buffer-pool-size=64M --innodb-log-file-size=48M --max-connections=200 \
        --log-error="$WORK/$h/error.log" --pid-file="$WORK/$h/mysqld.pid" "$@") &
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
    rm -f "$WORK/holding"
    for p in $JOBS; do kill "$p" 2>/dev/null || true; done
    for p in $JOBS; do wait "$p" 2>/dev/null || true; done
    JOBS=""
    for p in $PIDS; do kill "$p" 2>/dev/null || true; done
    for p in $PIDS; do wait "$p" 2>/dev/null || true; done
    PIDS=""
    sleep 2  # the held sessions' inputs end within a second
    umount "$TMPFS" 2>/dev/null && rmdir "$TMPFS" || true
    for h in db-a db-b db-c; do rm -rf "${WORK:?}/$h"; done
}

stalk() {  # stalk SHAPE HOST [PORT]: pt-stalk on HOST now, in the background, into SHAPE/HOST
    # (over the socket as root, or with PORT over TCP as monitor: extra_port, the DBA's own pool)
    dest=$WORK/out/$1/$2
    mkdir -p "$dest"
    if [ -n "${3:-}" ]; then
        set -- "$1" "$2" --host=127.0.0.1 --port="$3" --user=monitor --password=monitor
    else
        set -- "$1" "$2" --socket="$(sock "$2")" --user=root
    fi
    h=$2
    shift 2
    pt-stalk --no-stalk --iterations=1 --run-time="$RUN_TIME" --sleep=1 --dest="$dest" \
        --log="$WORK/$h.pt-stalk.log" --pid="$WORK/$h.pt-stalk.pid" \
        -- "$@" >"$WORK/$h.pt-stalk.stdout" 2>&1 &
    STALKS="${STALKS:-} $!"
}

settle() {  # settle: wait for the captures (the loads end on their own or at stop_all)
    for p in ${STALKS:-}; do wait "$p" 2>/dev/null || true; done
    STALKS=""
}

pack() {  # pack SHAPE [MEMBERS...]: keep the members SHIP and MEMBERS, name each host, tar
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
        sed -i "1s/ ($real) / ($h) /" "$dest"/*-mpstat "$dest"/*-iostat
        sed -i "s/^hostname\t$real\$/hostname\t$h/" "$dest"/*-variables
        python3 "$HERE/clean_ps_args.py" "$dest"/*-ps
        # -df: the build machine's sandbox mounts are not part of the incident
        for f in "$dest"/*-df; do [ ! -f "$f" ] || sed -i '/ \/mnt\/sandboxing\//d' "$f"; done
    done
    out="$OUTDIR/waits-$shape.tar.gz"
    tar -C "$WORK/out" --owner=0 --group=0 --numeric-owner --sort=name -czf "$out" "$shape"
    echo "$out ($(wc -c <"$out") bytes)"
}

app_user() {  # app_user HOST USER [GRANT-CLAUSE]: USER@'%' (password USER) with every right on sb
    sql "$1" "CREATE USER $2@'%' IDENTIFIED BY '$2' ${3:-}; GRANT ALL ON sb.* TO $2@'%';"
}

prepare_sb() {  # prepare_sb HOST PORT: database sb, account sb, table sb.sbtest1 (10,000 rows)
    sql "$1" "CREATE DATABASE IF NOT EXISTS sb; CREATE USER sb@'%' IDENTIFIED BY 'sb'; GRANT ALL ON sb.* TO sb@'%';
        CREATE USER monitor@'127.0.0.1' IDENTIFIED BY 'monitor'; GRANT ALL ON *.* TO monitor@'127.0.0.1';"
    sysbench oltp_write_only --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$2" --mysql-user=sb \
        --mysql-password=sb --mysql-db=sb --tables=1 --table-size=10000 prepare >/dev/null
}

bench() {  # bench HOST PORT SECONDS THREADS USER TEST [sysbench options]: a sysbench load on HOST
    h=$1 port=$2 secs=$3 threads=$4 user=$5 test=$6
    shift 6
    sysbench "$test" "$@" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user="$user" \
        --mysql-password="$user" --mysql-db=sb --tables=1 --table-size=10000 --threads="$threads" --time="$secs" \
        --mysql-ignore-errors=all --report-interval=0 run >>"$WORK/$h.sysbench.out" 2>&1 &
    JOBS="$JOBS $!"
}

# hot.lua: each thread updates two rows of sb.hot (ids HOT_A, HOT_B) in one transaction; odd threads
# in the opposite order. HOT_ROWS > 2 picks the two rows at random among the first HOT_ROWS.
cat >"$WORK/hot.lua" <<'LUA'
function thread_init()
    drv = sysbench.sql.driver()
    con = drv:connect()
end
function event()
    local n = tonumber(os.getenv("HOT_ROWS") or "2")
    local a, b = 1, 2
    if n > 2 then
        a = math.random(1, n)
        b = math.random(1, n)
    end
    if sysbench.tid % 2 == 1 then a, b = b, a end
    con:query("BEGIN")
    con:query("UPDATE hot SET n = n + 1 WHERE id = " .. a)
    con:query("UPDATE hot SET n = n + 1 WHERE id = " .. b)
    con:query("COMMIT")
end
LUA

hot_table() {  # hot_table HOST ROWS: sb.hot with ROWS rows
    sql "$1" "CREATE TABLE sb.hot (id INT PRIMARY KEY, n INT NOT NULL) ENGINE=InnoDB;
        INSERT INTO sb.hot SELECT seq, 0 FROM seq_1_to_$2" --database=sb
}

hold() {  # hold PORT USER SECONDS SQL: USER runs SQL over TCP in sb, then stays connected and idle for
    # SECONDS or until the shape ends (stop_all removes $WORK/holding)
    touch "$WORK/holding"
    (echo "$4"; end=$(($(date +%s) + $3)); while [ -e "$WORK/holding" ] && [ "$(date +%s)" -lt $end ]; do
        sleep 1; done) | mariadb -h127.0.0.1 -P"$1" -u"$2" -p"$2" sb >/dev/null 2>&1 &
}

crowd() {  # crowd PORT USER N SECONDS FORMAT: N sessions, each running printf FORMAT i (i = 1..N)
    i=1
    while [ $i -le "$3" ]; do
        hold "$1" "$2" "$4" "$(printf "$5" $i)"
        i=$((i + 1))
    done
}

galera() {  # galera: db-a, db-b, db-c in one Galera cluster (db-a bootstraps; db-b, db-c join by rsync SST)
    RUN_AS=mysql
    addr=""
    for n in 1 2 3; do addr="$addr${addr:+,}127.0.0.1:$((BASE_PORT + 160 + n))"; done
    n=0
    for h in db-a db-b db-c; do
        n=$((n + 1))
        first=""
        [ $n -gt 1 ] || first=--wsrep-new-cluster
        start "$h" $((BASE_PORT + 10 + n)) "$n" --binlog-format=ROW --innodb-autoinc-lock-mode=2 \
            --innodb-flush-log-at-trx-commit=0 --wsrep-on=ON --wsrep-slave-threads=4 \
            --wsrep-provider=/usr/lib/galera/libgalera_smm.so --wsrep-cluster-name=casebook \
            --wsrep-node-name="$h" --wsrep-node-address=127.0.0.1:$((BASE_PORT + 160 + n)) \
            --wsrep-cluster-address="gcomm://$addr" --wsrep-sst-method=rsync \
            --wsrep-sst-receive-address=127.0.0.1:$((BASE_PORT + 180 + n)) \
            --wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$((BASE_PORT + 160 + n));ist.recv_addr=127.0.0.1:$((BASE_PORT + 170 + n))" \
            $first
        i=0
        until [ "$(sql "$h" "SHOW STATUS LIKE 'wsrep_local_state_comment'" -N 2>/dev/null | cut -f2)" = Synced ]; do
            i=$((i + 1))
            [ $i -lt 120 ] || { echo "$h did not reach Synced" >&2; tail -30 "$WORK/$h/error.log" >&2; exit 1; }
            sleep 1
        done
    done
    prepare_sb db-a $((BASE_PORT + 11))
    RUN_AS=root
}

one() {  # one [mariadbd options...]: db-a alone on BASE_PORT+1, with sb.sbtest1 and the user app
    start db-a $((BASE_PORT + 1)) 1 --innodb-lock-wait-timeout=600 --lock-wait-timeout=600 "$@"
    prepare_sb db-a $((BASE_PORT + 1))
    app_user db-a app
}

PA=$((BASE_PORT + 1))
for shape in $SHAPES; do
    case $shape in
    deadlock-storm)
        one --innodb-lock-wait-timeout=50
        hot_table db-a 2
        export HOT_ROWS=2  # the application's pace: 100 transactions/s in all
        bench db-a "$PA" $((RUN_TIME + 45)) 16 app "$WORK/hot.lua" --rate=100
        sleep 8
        stalk "$shape" db-a
        ;;
    purge-readview)
        one
        app_user db-a report
        hold "$PA" report 600 "START TRANSACTION WITH CONSISTENT SNAPSHOT; SELECT COUNT(*) FROM sbtest1;"
        sleep 2
        bench db-a "$PA" $((RUN_TIME + 120)) 4 app oltp_write_only
        sleep 30
        stalk "$shape" db-a
        ;;
    conn-leak)
        one --max-connections=60 --extra-port=$((BASE_PORT + 51)) --extra-max-connections=20
        sql db-a "CREATE USER app@'127.0.0.1' IDENTIFIED BY 'app'; GRANT ALL ON sb.* TO app@'127.0.0.1';"
        i=0
        while [ $i -lt 70 ]; do  # the pool opens a connection about every 0.6 s and never closes it
            hold "$PA" app 600 "SELECT id, c FROM sbtest1 WHERE id = $((i + 1));"
            sleep 0.6
            i=$((i + 1))
        done
        sleep 55
        (end=$(($(date +%s) + RUN_TIME + 60)); while [ "$(date +%s)" -lt $end ]; do
            mariadb -h127.0.0.1 -P"$PA" -uapp -papp sb -e "SELECT 1" >/dev/null 2>&1 || true
            sleep 0.5; done) &
        JOBS="$JOBS $!"
        stalk "$shape" db-a $((BASE_PORT + 51))
        ;;
    semisync-ack)
        start db-a "$PA" 1 --log-bin=db-a-bin --binlog-format=ROW
        start db-b $((BASE_PORT + 2)) 2 --log-bin=db-b-bin --binlog-format=ROW
        sql db-a "CREATE USER repl@'%' IDENTIFIED BY 'repl'; GRANT REPLICATION SLAVE ON *.* TO repl@'%';"
        sql db-b "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$PA, MASTER_USER='repl',
            MASTER_PASSWORD='repl', MASTER_LOG_FILE='db-a-bin.000001', MASTER_LOG_POS=4, MASTER_USE_GTID=no;
            START SLAVE;"
        prepare_sb db-a "$PA"
        app_user db-a app
        i=0
        until [ "$(sql db-b 'SELECT COUNT(*) FROM sb.sbtest1' -N 2>/dev/null || echo 0)" = 10000 ]; do
            i=$((i + 1))
            [ $i -lt 120 ] || { echo "db-b did not catch up" >&2; exit 1; }
            sleep 1
        done
        # semi-sync on once db-b has caught up: db-a's commits wait up to 10 minutes for db-b's ACK
        sql db-a "SET GLOBAL rpl_semi_sync_master_timeout = 600000; SET GLOBAL rpl_semi_sync_master_enabled = ON"
        sql db-b "SET GLOBAL rpl_semi_sync_slave_enabled = ON; STOP SLAVE IO_THREAD; START SLAVE IO_THREAD"
        until [ "$(sql db-a "SHOW STATUS LIKE 'Rpl_semi_sync_master_clients'" -N | cut -f2)" = 1 ]; do sleep 1; done
        sql db-a "INSERT INTO sb.sbtest1 (id, k, c, pad) VALUES (20001, 1, 'acked', 'acked')"
        sql db-b "STOP SLAVE IO_THREAD"
        bench db-a "$PA" $((RUN_TIME + 60)) 4 app oltp_write_only
        sleep 6
        stalk "$shape" db-a
        stalk "$shape" db-b
        ;;
    galera-multiwriter)
        galera
        hot_table db-a 20
        app_user db-a app
        export HOT_ROWS=20
        bench db-a $((BASE_PORT + 11)) $((RUN_TIME + 60)) 8 app "$WORK/hot.lua"
        bench db-c $((BASE_PORT + 13)) $((RUN_TIME + 60)) 8 app "$WORK/hot.lua"
        sleep 8
        stalk "$shape" db-a
        stalk "$shape" db-b
        stalk "$shape" db-c
        ;;
    ddl-long-read)
        one
        app_user db-a report
        app_user db-a dba
        # the report: a self-join of 10,000 x 10,000 rows, longer than the capture
        hold "$PA" report 5 "SELECT COUNT(*) FROM sbtest1 a JOIN sbtest1 b ON a.k < b.k WHERE a.c <> b.pad;"
        sleep 3
        hold "$PA" dba 5 "ALTER TABLE sbtest1 ADD COLUMN note VARCHAR(32) NULL;"
        sleep 2
        crowd "$PA" app 8 5 "SELECT c FROM sbtest1 WHERE id = %d;"
        sleep 3
        stalk "$shape" db-a
        ;;
    lock-tables)
        one
        app_user db-a batch
        hold "$PA" batch 600 "LOCK TABLES sbtest1 WRITE; UPDATE sbtest1 SET k = k + 1 WHERE id <= 10;"
        sleep 2
        crowd "$PA" app 4 5 "SELECT c FROM sbtest1 WHERE id = %d;"
        crowd "$PA" app 4 5 "UPDATE sbtest1 SET k = k + 1 WHERE id = 10%d;"
        sleep 3
        stalk "$shape" db-a
        ;;
    user-lock)
        one
        app_user db-a batch
        hold "$PA" batch 600 "SELECT GET_LOCK('nightly_job', 0);"
        sleep 2
        crowd "$PA" app 6 5 "SELECT GET_LOCK('nightly_job', 600);"
        sleep 3
        stalk "$shape" db-a
        ;;
    tmpdir-full)
        mkdir -p "$TMPFS"
        mount -t tmpfs -o size=${TMPDIR_MB}m mysqltmp "$TMPFS"
        one --tmpdir="$TMPFS" --max-heap-table-size=1M --tmp-table-size=1M
        s=0
        while [ $s -lt 4 ]; do  # each session repeats a GROUP BY / ORDER BY that spills to tmpdir
            (end=$(($(date +%s) + RUN_TIME + 60)); while [ "$(date +%s)" -lt $end ]; do
                echo "SELECT c, pad, COUNT(*) FROM sbtest1 GROUP BY c, pad ORDER BY pad LIMIT 1;"
                echo "SELECT a.c, b.c FROM sbtest1 a JOIN sbtest1 b ON b.k BETWEEN a.k AND a.k + 5 ORDER BY a.pad, b.pad LIMIT 1;"
            done | mariadb -h127.0.0.1 -P"$PA" -uapp -papp --force sb >/dev/null 2>&1) &
            JOBS="$JOBS $!"
            s=$((s + 1))
        done
        sleep 6
        stalk "$shape" db-a
        settle
        pack "$shape" df disk-space
        stop_all
        continue
        ;;
    open-files)
        one
        i=1
        while [ $i -le 300 ]; do echo "CREATE TABLE sb.m$i (id INT PRIMARY KEY, v INT) ENGINE=MyISAM;
INSERT INTO sb.m$i VALUES (1, $i);"; i=$((i + 1)); done | mariadb --socket="$(sock db-a)" -uroot sb
        # restarted with OPEN_FILES file descriptors (ulimit -n): open_files_limit OPEN_FILES
        sql db-a "SHUTDOWN"
        wait "$(cat "$WORK/db-a/pid")" 2>/dev/null || true
        NOFILE=$OPEN_FILES
        start db-a "$PA" 1 --open-files-limit="$OPEN_FILES" --max-connections=20 --table-open-cache=100
        NOFILE=
        s=0
        while [ $s -lt 6 ]; do
            (end=$(($(date +%s) + RUN_TIME + 60)); while [ "$(date +%s)" -lt $end ]; do
                i=0; while [ $i -lt 300 ]; do echo "SELECT v FROM m$(((i + s * 50) % 300 + 1)) WHERE id = 1;"
                i=$((i + 1)); done; done | mariadb -h127.0.0.1 -P"$PA" -uapp -papp --force sb >/dev/null 2>&1) &
            JOBS="$JOBS $!"
            s=$((s + 1))
        done
        sleep 4
        stalk "$shape" db-a
        ;;
    thread-pool)
        one --thread-handling=pool-of-threads --thread-pool-size=1 --thread-pool-oversubscribe=1 \
            --thread-pool-stall-limit=60000 --extra-port=$((BASE_PORT + 51)) --extra-max-connections=20
        app_user db-a report
        crowd "$PA" report 2 5 "SELECT BENCHMARK(2000000000, MD5('report %d'));"
        sleep 2
        crowd "$PA" app 8 5 "SELECT c FROM sbtest1 WHERE id = %d;"
        sleep 3
        stalk "$shape" db-a $((BASE_PORT + 51))
        ;;
    max-user-conn)
        one
        sql db-a "ALTER USER app@'%' WITH MAX_USER_CONNECTIONS 20"
        crowd "$PA" app 20 600 "SELECT c FROM sbtest1 WHERE id = %d;"
        sleep 5
        (end=$(($(date +%s) + RUN_TIME + 60)); while [ "$(date +%s)" -lt $end ]; do
            mariadb -h127.0.0.1 -P"$PA" -uapp -papp sb -e "SELECT 1" >/dev/null 2>&1 || true
            sleep 0.5; done) &
        JOBS="$JOBS $!"
        stalk "$shape" db-a
        ;;
    galera-ftwrl)
        galera
        app_user db-b app
        sql db-b "CREATE USER backup@'%' IDENTIFIED BY 'backup'; GRANT RELOAD, PROCESS ON *.* TO backup@'%';
            GRANT SELECT ON sb.* TO backup@'%';"
        hold $((BASE_PORT + 12)) backup 600 "FLUSH TABLES WITH READ LOCK;"
        sleep 2
        crowd $((BASE_PORT + 12)) app 6 5 "UPDATE sbtest1 SET k = k + 1 WHERE id = %d;"
        bench db-a $((BASE_PORT + 11)) $((RUN_TIME + 60)) 2 sb oltp_write_only --rate=20
        sleep 4
        stalk "$shape" db-a
        stalk "$shape" db-b
        stalk "$shape" db-c
        ;;
    *)
        echo "unknown shape $shape" >&2
        exit 2
        ;;
    esac
    settle
    pack "$shape"
    stop_all
done
