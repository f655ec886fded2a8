#!/bin/sh
# Real pt-stalk collections of a named culprit, made against a scratch MariaDB of their own:
#   rowlock  one session holds a row lock idle in transaction while 20 others wait for it
#   mdl      an ALTER TABLE waits for the metadata lock of an open transaction; readers queue behind it
#   ftwrl    a mariadb-dump --lock-all-tables holds FLUSH TABLES WITH READ LOCK while writers wait
#   cpuhog   stress-ng takes both CPUs while MySQL idles
#   diskhog  fio writes with an fsync per 4 KiB while MySQL idles
#   aiohog   fio writes 4 KiB blocks with libaio and O_DIRECT (never in state D) while MySQL idles
#   fullscan  4 sessions repeat a query that scans shop.items (200,000 rows, no index on pad)
#   tablecache  table_open_cache 64 while 6 sessions read 400 tables in turn (the cache full, tables reopened)
# See tests/fixtures/bundles/README.md ("Culprits") for what each shows.
#
# Usage: sh scripts/make_culprit_bundles.sh OUTDIR [SHAPE...]   (default: all five)
# Env:   PORT (scratch server port, default 3399), RUN_TIME (capture seconds, default 10)
# Needs: root (pt-stalk reads /proc of every process), mariadb-server 10.11, percona-toolkit 3.2.1,
#        stress-ng, fio.
set -eu

OUTDIR=$(cd "${1:?usage: make_culprit_bundles.sh OUTDIR [SHAPE...]}" && pwd)
shift
SHAPES=${*:-rowlock mdl ftwrl cpuhog diskhog}
PORT=${PORT:-3399}
RUN_TIME=${RUN_TIME:-10}
SHIP="vmstat mpstat iostat processlist ps top meminfo variables mysqladmin lock-waits transactions
ps-locks-transactions innodbstatus1 innodbstatus2 hostname output trigger"

WORK=$(mktemp -d /tmp/casebook-culprit.XXXXXX)
SOCK=$WORK/mysqld.sock
SERVER_PID=
cleanup() {
    [ -z "$SERVER_PID" ] || { kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true; }
    rm -rf "$WORK"
}
trap cleanup EXIT

mariadb-install-db --no-defaults --datadir="$WORK/data" --auth-root-authentication-method=socket \
    --skip-test-db >/dev/null
mariadbd --no-defaults --datadir="$WORK/data" --socket="$SOCK" --port="$PORT" --bind-address=127.0.0.1 \
    --user=root --innodb-buffer-pool-size=64M --innodb-log-file-size=48M --innodb-lock-wait-timeout=120 \
    --lock-wait-timeout=120 --max-connections=200 --log-error="$WORK/error.log" \
    --performance-schema=ON --performance-schema-instrument='transaction=ON' \
    --performance-schema-instrument='wait/lock/metadata/sql/mdl=ON' \
    --performance-schema-consumer-events-transactions-current=ON &
SERVER_PID=$!
i=0
until mariadb --socket="$SOCK" -uroot -e 'SELECT 1' >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -lt 60 ] || { echo "scratch mariadbd did not start" >&2; exit 1; }
    sleep 1
done
ROOTSQL="mariadb --socket=$SOCK -uroot"
APP="mariadb -h127.0.0.1 -P$PORT -uapp -papp shop"
$ROOTSQL -e "CREATE DATABASE shop; USE shop; CREATE USER app@'%' IDENTIFIED BY 'app';
GRANT ALL ON shop.* TO app@'%'; GRANT RELOAD ON *.* TO app@'%';
CREATE TABLE shop.orders (id INT PRIMARY KEY, status VARCHAR(16), n INT) ENGINE=InnoDB;
INSERT INTO shop.orders SELECT seq, 'new', 0 FROM seq_1_to_1000;
CREATE TABLE shop.items (id INT PRIMARY KEY, pad CHAR(200)) ENGINE=InnoDB;
INSERT INTO shop.items SELECT seq, REPEAT('x', 200) FROM seq_1_to_200000;"

hold() {  # hold SECONDS SQL: run SQL in one app session, then keep it open and idle
    (echo "$2"; sleep "$1") | $APP >/dev/null 2>&1 &
}

crowd() {  # crowd N FIRST FORMAT: N sessions, each running printf FORMAT i (i = FIRST..FIRST+N-1)
    i=0
    while [ $i -lt "$1" ]; do
        hold 1 "$(printf "$3" $(($2 + i)))"
        i=$((i + 1))
    done
}

capture() {  # capture SHAPE: pt-stalk now, keep the members that describe it, pack it
    dest=$WORK/$1
    mkdir -p "$dest"
    pt-stalk --no-stalk --iterations=1 --run-time="$RUN_TIME" --sleep=1 --dest="$dest" \
        --log="$WORK/pt-stalk.log" --pid="$WORK/pt-stalk.pid" \
        -- --socket="$SOCK" --user=root >"$WORK/pt-stalk.stdout" 2>&1 || true
    for f in "$dest"/*; do
        suffix=${f##*/????_??_??_??_??_??-}
        case " $(echo $SHIP) $(echo ${EXTRA:-}) " in
        *" $suffix "*) [ -s "$f" ] || rm -f "$f" ;;
        *) rm -f "$f" ;;
        esac
    done
    python3 "$(dirname "$0")/clean_ps_args.py" "$dest"/*-ps
    if [ -n "${2:-}" ]; then  # capture SHAPE PROGRAM STATE: PROGRAM must lead -top, or retry
        lead=$(top_leader "$dest"/*-top "$3")
        case "$2" in "${lead%+}"*) lead=$2 ;; esac  # top cuts a long name to 9 characters and "+"
        if [ "$lead" != "$2" ]; then
            echo "$1: -top led by $lead, not $2 (try $TRY of 3)" >&2
            rm -rf "$dest"
            return 1
        fi
    fi
    out="$OUTDIR/culprit-$1.tar.gz"
    tar -C "$WORK" --owner=0 --group=0 --numeric-owner --sort=name -czf "$out" "$1"
    echo "$out ($(wc -c <"$out") bytes)"
}

top_leader() {  # top_leader TOPFILE STATE: the program top lists most (state D) or with most %CPU (R)
    awk -v want="$2" '/^ *PID USER/ { body = 1; next } /^top - / { body = 0 }
        body && NF >= 12 { if (want == "D") { if ($8 == "D") n[$12] += 1 } else n[$12] += $9 }
        END { best = ""; for (c in n) if (best == "" || n[c] > n[best]) best = c; print best }' "$1"
}

hog() {  # hog SHAPE PROGRAM STATE COMMAND...: run the load, capture; retry (3 tries) until PROGRAM leads
    shape=$1 program=$2 state=$3
    shift 3
    TRY=1
    while :; do
        # In a session of its own (its own scheduler autogroup) at autogroup nice -10, as a runaway
        # job started from a root shell with priority: without it a shared host's other work wins.
        setsid "$@" >/dev/null 2>&1 &
        load=$!
        sleep 0.2
        echo -10 >"/proc/$load/autogroup" 2>/dev/null || true
        sleep 3
        if capture "$shape" "$program" "$state"; then
            wait "$load" 2>/dev/null || true
            return 0
        fi
        wait "$load" 2>/dev/null || true
        TRY=$((TRY + 1))
        [ $TRY -le 3 ] || { echo "$shape: $program never led -top; nothing written" >&2; return 0; }
    done
}

settle() {  # settle: wait for every session of the shape to end
    wait_children=$(jobs -p | grep -v "^$SERVER_PID\$" || true)
    for p in $wait_children; do wait "$p" 2>/dev/null || true; done
}

for shape in $SHAPES; do
    case $shape in
    rowlock)
        hold 30 "BEGIN; UPDATE orders SET status='paid', n=n+1 WHERE id=42;"
        sleep 2
        crowd 20 0 "UPDATE orders SET n=n+1 WHERE id=42;"
        sleep 3
        capture rowlock
        ;;
    mdl)
        hold 30 "BEGIN; SELECT COUNT(*) FROM orders WHERE status='new';"
        sleep 2
        hold 1 "ALTER TABLE orders ADD COLUMN note VARCHAR(32);"
        sleep 1
        crowd 8 1 "SELECT id, status FROM orders WHERE id=%d;"
        sleep 3
        capture mdl
        ;;
    ftwrl)
        # the dump's output blocks on a full pipe: its FTWRL stays held while it waits to write
        (mariadb-dump -h127.0.0.1 -P"$PORT" -uapp -papp --lock-all-tables shop items |
            (sleep 28; cat >/dev/null)) 2>/dev/null &
        sleep 2
        crowd 6 2000 "INSERT INTO orders VALUES (%d, 'new', 0);"
        sleep 3
        capture ftwrl
        ;;
    cpuhog)
        # niced ahead of the rest of the host's work, as a runaway job is: it must lead -top
        hog cpuhog stress-ng R stress-ng --cpu 2 --timeout $((RUN_TIME + 8))s
        ;;
    diskhog)
        hog diskhog fio D fio --name=fsync-writer --directory="$WORK" --rw=randwrite --bs=4k --size=128M \
            --fsync=1 --numjobs=4 --runtime=$((RUN_TIME + 8)) --time_based
        ;;
    aiohog)
        # asynchronous direct writes: fio's jobs wait for completions in io_getevents (wait channel
        # read_events, state S), never in D; four jobs keep 64 writes each in flight
        hog aiohog fio R fio --name=aio-writer --directory="$WORK" --ioengine=libaio --direct=1 --iodepth=64 \
            --numjobs=4 --rw=randwrite --bs=4k --size=128M --runtime=$((RUN_TIME + 8)) --time_based
        ;;
    fullscan)
        s=0
        while [ $s -lt 4 ]; do
            (end=$(($(date +%s) + 25)); while [ "$(date +%s)" -lt $end ]; do
                echo "SELECT COUNT(*) FROM items WHERE pad LIKE '%y%';"; done | $APP >/dev/null 2>&1) &
            s=$((s + 1))
        done
        sleep 4
        capture fullscan
        ;;
    tablecache)
        i=1
        while [ $i -le 400 ]; do echo "CREATE TABLE shop.t$i (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
INSERT INTO shop.t$i VALUES (1, $i);"; i=$((i + 1)); done | $ROOTSQL
        $ROOTSQL -e "SET GLOBAL table_open_cache = 64"
        s=0
        while [ $s -lt 6 ]; do  # each session reads the 400 tables in turn, from its own start, for 25 s
            (end=$(($(date +%s) + 25)); while [ "$(date +%s)" -lt $end ]; do
                i=0; while [ $i -lt 400 ]; do echo "SELECT v FROM t$(((i + s * 67) % 400 + 1)) WHERE id = 1;"
                i=$((i + 1)); done; done | $APP >/dev/null 2>&1) &
            s=$((s + 1))
        done
        sleep 4
        EXTRA="opentables1 opentables2" capture tablecache
        settle
        $ROOTSQL -e "SET GLOBAL table_open_cache = 2000" || true
        ;;
    esac
    settle
    $ROOTSQL -e "ALTER TABLE shop.orders DROP COLUMN IF EXISTS note; DELETE FROM shop.orders WHERE id > 1000" ||
        true
done
