#!/bin/sh
# A real pt-stalk collection with the server's slow query log shipped beside it, made against a
# scratch MariaDB of its own (never the server on 3306):
#   fullscan  8 sessions repeat a query that scans shop.items (200,000 rows, no index on pad) and
#             sorts it, while 2 sessions run point selects on shop.orders; slow_query_log on with
#             long_query_time=0 and log_slow_verbosity=query_plan (Full_scan, Filesort, Tmp_table_on_disk)
# See tests/fixtures/bundles/README.md ("Slow log") for what it shows.
#
# Usage: sh scripts/make_slowlog_bundle.sh OUTDIR [KIND]   (default: fullscan)
# Env:   PORT (scratch server port, default 3397), RUN_TIME (capture seconds, default 12)
# Needs: root (pt-stalk reads /proc of every process), mariadb-server 10.11, percona-toolkit 3.2.1.
set -eu

OUTDIR=$(cd "${1:?usage: make_slowlog_bundle.sh OUTDIR [KIND]}" && pwd)
KIND=${2:-fullscan}
PORT=${PORT:-3397}
RUN_TIME=${RUN_TIME:-12}
SHIP="vmstat mpstat iostat processlist ps top meminfo variables mysqladmin lock-waits transactions
innodbstatus1 innodbstatus2 hostname output trigger"

WORK=$(mktemp -d /tmp/casebook-slowlog.XXXXXX)
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
    --user=root --innodb-buffer-pool-size=64M --innodb-log-file-size=48M --max-connections=200 \
    --log-error="$WORK/error.log" --slow-query-log=0 --slow-query-log-file="$WORK/slow.log" \
    --long-query-time=0 --log-slow-verbosity=query_plan &
SERVER_PID=$!
# The server first, as on a database host: its own scheduler autogroup at nice -10, so that a shared
# build machine's other work does not take the CPUs its sessions saturate (the culprit must lead -top).
sleep 0.2
echo -10 >"/proc/$SERVER_PID/autogroup" 2>/dev/null || true
i=0
until mariadb --socket="$SOCK" -uroot -e 'SELECT 1' >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -lt 60 ] || { echo "scratch mariadbd did not start" >&2; exit 1; }
    sleep 1
done
ROOTSQL="mariadb --socket=$SOCK -uroot"
APP="mariadb -h127.0.0.1 -P$PORT -uapp -papp shop"
$ROOTSQL -e "CREATE DATABASE shop; USE shop; CREATE USER app@'%' IDENTIFIED BY 'app';
GRANT ALL ON shop.* TO app@'%';
CREATE TABLE shop.orders (id INT PRIMARY KEY, status VARCHAR(16), n INT) ENGINE=InnoDB;
INSERT INTO shop.orders SELECT seq, 'new', 0 FROM seq_1_to_1000;
CREATE TABLE shop.items (id INT PRIMARY KEY, pad CHAR(200)) ENGINE=InnoDB;
INSERT INTO shop.items SELECT seq, REPEAT('x', 200) FROM seq_1_to_200000;
SET GLOBAL slow_query_log = 1;"

LOAD_S=$((RUN_TIME + 20))
case $KIND in
fullscan)
    s=0
    while [ $s -lt 2 ]; do  # the application's point selects, about 20 a second each
        (end=$(($(date +%s) + LOAD_S)); n=0; while [ "$(date +%s)" -lt $end ]; do
            echo "SELECT status, n FROM orders WHERE id = $((n % 1000 + 1));"; n=$((n + 7)); sleep 0.05
        done | $APP >/dev/null 2>&1) &
        s=$((s + 1))
    done
    sleep 3
    s=0
    while [ $s -lt 8 ]; do  # the bad query: a full scan of 200,000 rows and a sort, none sent
        (end=$(($(date +%s) + LOAD_S - 3)); while [ "$(date +%s)" -lt $end ]; do
            echo "SELECT id, pad FROM items WHERE pad LIKE '%y%' ORDER BY pad DESC LIMIT 10;"; done |
            $APP >/dev/null 2>&1) &
        s=$((s + 1))
    done
    ;;
*) echo "unknown kind $KIND" >&2; exit 2 ;;
esac
sleep 5

dest=$WORK/slowlog-$KIND
mkdir -p "$dest"
pt-stalk --no-stalk --iterations=1 --run-time="$RUN_TIME" --sleep=1 --dest="$dest" \
    --log="$WORK/pt-stalk.log" --pid="$WORK/pt-stalk.pid" \
    -- --socket="$SOCK" --user=root >"$WORK/pt-stalk.stdout" 2>&1 || true
for f in "$dest"/*; do
    suffix=${f##*/????_??_??_??_??_??-}
    case " $(echo $SHIP) " in
    *" $suffix "*) [ -s "$f" ] || rm -f "$f" ;;
    *) rm -f "$f" ;;
    esac
done
python3 "$(dirname "$0")/clean_ps_args.py" "$dest"/*-ps
wait_children=$(jobs -p | grep -v "^$SERVER_PID\$" || true)
for p in $wait_children; do wait "$p" 2>/dev/null || true; done
# the slow log as a customer ships it beside the collection: the server's default name, host_name-slow.log
$ROOTSQL -e "FLUSH SLOW LOGS"
cp "$WORK/slow.log" "$dest/$(hostname)-slow.log"
out="$OUTDIR/slowlog-$KIND.tar.gz"
tar -C "$WORK" --owner=0 --group=0 --numeric-owner --sort=name -czf "$out" "slowlog-$KIND"
echo "$out ($(wc -c <"$out") bytes)"
