#!/bin/sh
# Real collections with overlapping captures, one per load shape: pt-stalk and scripts/collect.sh
# run side by side on this machine over the same seconds while a load runs, packed as one bundle
# (pt-stalk's -vmstat beside collect.sh's `vmstat -t`, -mpstat beside `mpstat -P ALL`, -iostat
# beside `iostat -dxk -t`, -processlist beside a TS-marked processlist, the -overall runs...).
# See tests/fixtures/bundles/README.md ("Overlapping captures") for what each should show.
#
# Usage: sh scripts/make_overlap_bundles.sh OUTDIR [SHAPE...]     SHAPE: cpu io tmp commit (default: all)
# Env:   RUN_TIME (capture seconds, default 15), LOAD_S (load seconds, default 30), WARMUP_S (default 6)
# Needs: pt-stalk, sysbench, sysstat, mysql client, MariaDB at 127.0.0.1:3306 root without password.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUTDIR=$(cd "${1:?usage: make_overlap_bundles.sh OUTDIR [SHAPE...]}" && pwd)
shift
SHAPES=${*:-cpu io tmp commit}
RUN_TIME=${RUN_TIME:-15}
LOAD_S=${LOAD_S:-30}
WARMUP_S=${WARMUP_S:-6}
DB=casebook_overlap
MYSQL="mysql -uroot -h127.0.0.1"
SB="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=root --mysql-db=$DB --tables=1 --table-size=20000"
# pt-stalk members shipped; the others describe the build machine (df, netstat, sysctl) or are large.
SHIP="vmstat vmstat-overall mpstat mpstat-overall iostat iostat-overall processlist ps top meminfo
variables mysqladmin interrupts diskstats procstat procvmstat hostname output trigger"

load() {  # load SHAPE: runs in the foreground for LOAD_S seconds
    case $1 in
    cpu) $SB --threads=32 --time="$LOAD_S" oltp_point_select run >/dev/null ;;
    commit)  # seed 001 on a disk without a write cache: the reader makes every redo-log fsync wait
        readers 16 &
        $SB --threads=32 --time="$LOAD_S" oltp_write_only run >/dev/null
        wait ;;
    tmp) python3 "$ROOT/scripts/load_mariadb.py" --db "${DB}_tmp" --duration "$LOAD_S" >/dev/null ;;
    io) readers 48 ;;  # a backup-like reader keeps the disk's queue full
    esac
}

readers() {  # readers N: N direct 1 MiB readers of $WORK/big for LOAD_S seconds
    end=$(($(date +%s) + LOAD_S))
    while [ "$(date +%s)" -lt "$end" ]; do
        i=0
        while [ $i -lt "$1" ]; do
            dd if="$WORK/big" of=/dev/null bs=1M iflag=direct skip=$((i * 40)) count=40 2>/dev/null &
            i=$((i + 1))
        done
        wait
    done
}

WORK=
trap '[ -z "$WORK" ] || rm -rf "$WORK"' EXIT
for shape in $SHAPES; do
    WORK=$(mktemp -d /tmp/casebook-overlap.XXXXXX)
    case $shape in
    cpu | commit)
        $MYSQL -e "DROP DATABASE IF EXISTS $DB; CREATE DATABASE $DB"
        $SB --threads=1 oltp_common prepare >/dev/null ;;
    esac
    case $shape in
    io | commit) dd if=/dev/zero of="$WORK/big" bs=1M count=2048 oflag=direct 2>/dev/null ;;
    esac
    load "$shape" &
    LOAD_PID=$!
    sleep "$WARMUP_S"
    mkdir -p "$WORK/collect" "$WORK/ptstalk"
    sh "$ROOT/scripts/collect.sh" --duration "$RUN_TIME" --interval 1 --out "$WORK/collect" \
        --mysql-opts "-uroot -h127.0.0.1" >"$WORK/collect.log" 2>&1 &
    COLLECT_PID=$!
    pt-stalk --no-stalk --iterations=1 --run-time="$RUN_TIME" --sleep=1 --dest="$WORK/ptstalk" \
        --log="$WORK/pt-stalk.log" --pid="$WORK/pt-stalk.pid" \
        -- --user=root --host=127.0.0.1 --port=3306 >"$WORK/pt-stalk.stdout" 2>&1
    wait "$COLLECT_PID" || true
    wait "$LOAD_PID" || true
    $MYSQL -e "DROP DATABASE IF EXISTS $DB" || true
    for f in "$WORK"/ptstalk/*; do
        suffix=${f##*/????_??_??_??_??_??-}
        case " $(echo $SHIP) " in
        *" $suffix "*) [ -s "$f" ] || rm -f "$f" ;;
        *) rm -f "$f" ;;
        esac
    done
    python3 "$ROOT/scripts/clean_ps_args.py" "$WORK"/ptstalk/*-ps
    mkdir "$WORK/unpacked"
    tar -C "$WORK/unpacked" -xzf "$WORK"/collect/casebook-*.tar.gz  # collect.sh keeps only its tarball
    mv "$WORK"/unpacked/casebook-* "$WORK/collector"
    rm -f "$WORK/big"
    out="$OUTDIR/overlap-$shape.tar.gz"
    tar -C "$WORK" --owner=0 --group=0 --numeric-owner --sort=name -czf "$out" ptstalk collector
    echo "$out ($(wc -c <"$out") bytes)"
    rm -rf "$WORK"
    WORK=
done
