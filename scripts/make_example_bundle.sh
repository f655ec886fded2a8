#!/bin/sh
# Rebuild tests/fixtures/bundles/ptstalk-mariadb-tmptables.tar.gz: a real pt-stalk collection taken
# on this machine against the local MariaDB while scripts/load_mariadb.py runs 64 sessions of one
# on-disk-tmp-table GROUP BY. See tests/fixtures/bundles/README.md for what it should show.
#
# Usage: sh scripts/make_example_bundle.sh [OUT_TARBALL]
# Env:   RUN_TIME (pt-stalk --run-time, default 20), LOAD_S (load duration, default 40),
#        WARMUP_S (seconds of load before pt-stalk starts, default 8), MAX_BYTES (default 1048576).
# Needs: pt-stalk (percona-toolkit), sysbench, mysql client, MariaDB at 127.0.0.1:3306 root/no password.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/tests/fixtures/bundles/ptstalk-mariadb-tmptables.tar.gz}
RUN_TIME=${RUN_TIME:-20}
LOAD_S=${LOAD_S:-40}
WARMUP_S=${WARMUP_S:-8}
MAX_BYTES=${MAX_BYTES:-1048576}

WORK=$(mktemp -d /tmp/casebook-ptstalk.XXXXXX)
DEST=$WORK/ptstalk-mariadb-tmptables
LOAD_PID=
cleanup() {
    if [ -n "$LOAD_PID" ] && kill -0 "$LOAD_PID" 2>/dev/null; then
        kill -INT "$LOAD_PID" 2>/dev/null || true
        wait "$LOAD_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

python3 "$ROOT/scripts/load_mariadb.py" --duration "$LOAD_S" >"$WORK/load.log" 2>&1 &
LOAD_PID=$!
sleep "$WARMUP_S"

mkdir -p "$DEST"
# --no-stalk: collect at once, in the foreground, then exit after --iterations; mysql options after --.
pt-stalk --no-stalk --iterations=1 --run-time="$RUN_TIME" --sleep=1 --dest="$DEST" \
    --log="$WORK/pt-stalk.log" --pid="$WORK/pt-stalk.pid" \
    -- --user=root --host=127.0.0.1 --port=3306 >"$WORK/pt-stalk.stdout" 2>&1

wait "$LOAD_PID" || true
grep -E "transactions:|total time:" "$WORK/load.log" >&2 || true
LOAD_PID=

# Members shipped. The others are dropped and listed on stderr: df, disk-space and netstat describe
# this build machine's mounts and sockets, not the load; sysctl, slabinfo and transactions are large
# (hundreds of KiB) and not read by Casebook. Empty members are dropped too.
SHIP="vmstat vmstat-overall mpstat mpstat-overall iostat iostat-overall processlist ps top meminfo
variables mysqladmin interrupts diskstats procstat procvmstat netstat_s innodbstatus1 innodbstatus2
opentables1 opentables2 hostname output trigger"
dropped=
for f in "$DEST"/*; do
    name=$(basename "$f")
    suffix=${name#????_??_??_??_??_??-}
    case " $(echo $SHIP) " in
    *" $suffix "*) [ -s "$f" ] || { dropped="$dropped $suffix(empty)"; rm -f "$f"; } ;;
    *) dropped="$dropped $suffix($(wc -c <"$f"))"; rm -f "$f" ;;
    esac
done
[ -z "$dropped" ] || echo "dropped:$dropped" >&2

# ps -eaF lists every process of the build machine with its arguments: keep the full command line
# of the processes of this example (MariaDB, its clients, sysbench, pt-stalk, the load script: told
# by the program and its first argument) and cut every other one to the base name of its program,
# so no unrelated arguments ship. Kernel threads ([kworker/0:1]) are kept as they are.
python3 "$ROOT/scripts/clean_ps_args.py" "$DEST"/*-ps

mkdir -p "$(dirname "$OUT")"
tar -C "$WORK" --owner=0 --group=0 --numeric-owner --sort=name -czf "$OUT" "$(basename "$DEST")"
size=$(wc -c <"$OUT")
if [ "$size" -ge "$MAX_BYTES" ]; then
    echo "error: $OUT is $size bytes (limit $MAX_BYTES)" >&2
    exit 1
fi
echo "$OUT ($size bytes)"
