#!/bin/sh
# collect.sh - Casebook collector: capture Linux and MySQL/MariaDB diagnostics for a bounded time and
# pack them into one tarball to upload to Casebook.
#
# Read-only: it runs vmstat, mpstat, iostat, ps, cat /proc/..., and the mysql client with SHOW /
# SELECT statements only; it writes nothing but its own directory under --out and the tarball.
# Bounded: it stops after --duration seconds, or as soon as its directory reaches --max-mb, or on
# Ctrl-C / SIGTERM (what was captured so far is still packed). Needs only a POSIX sh, procps,
# sysstat and the mysql client; a missing tool is reported (stderr and manifest) and skipped.
#
# Usage: sh collect.sh [--duration SECONDS] [--interval SECONDS] [--max-mb MB] [--out DIR]
#                      [--mysql-opts "OPTIONS"] [--upload URL [--send DIR|FILE]]
#   --duration  seconds to capture (default 60)
#   --interval  seconds between samples (default 1; whole seconds, as vmstat/mpstat/iostat need)
#   --max-mb    stop collecting when the capture directory reaches this size (default 200)
#   --out       where to write the directory and the tarball (default: current directory)
#   --mysql-opts  options for mysql / mysqladmin, split on blanks (default: $MYSQL_OPTS), e.g.
#               "-uroot -h127.0.0.1" or "--defaults-extra-file=/root/casebook.cnf" (best for a
#               password: it keeps it off the command line; a -p/--password value is masked in
#               the manifest).
#   --upload    a Casebook upload link (https://HOST/u/<token>/): send the tarball there with curl
#               (tus 1.0: resumes after a broken connection from the offset the server has, retrying
#               up to --tries times, waiting 2, 4 ... 60 s between tries). The link's token is never
#               printed.
#   --send      with --upload: collect nothing, send DIR (an existing pt-stalk or OSWatcher
#               directory, packed as DIR-name.tar.gz under --out) or FILE (an existing tarball) as is.
#               Run again after a failure, the same FILE resumes where it stopped (FILE.upload-url).
#   --tries     attempts of the upload (default 30)
# Prints the tarball's path on stdout: casebook-<host>-<YYYYmmddTHHMMSS>.tar.gz, holding one
# directory of that name.
#
# What each file holds and how its samples are timed (every file starts with a TS line):
#   vmstat.txt       vmstat -t -n I N+1      runs in the background; per-line date+time (-t) in the
#                                            server's zone (named in the header); first line since boot
#   mpstat.txt       mpstat -P ALL I N       in the background; banner date (ISO) + time of day per row
#   mpstat-intr.txt  mpstat -I SUM -P ALL I N   same clock as mpstat.txt
#   iostat.txt       iostat -dxk -t I N+1    in the background; per-report ISO time with UTC offset
#   ps-threads.txt   ps -eLo pid,tid,ppid,user,stat,pcpu,comm,wchan:32   every interval, after a TS line
#   interrupts.txt   cat /proc/interrupts    every interval, after a TS line
#   processlist.txt  mysql -e 'SHOW FULL PROCESSLIST\G'   every interval, after a TS line
#   mysqladmin.txt   mysqladmin extended-status            every interval, after a TS line (absolute)
#   variables.txt    mysql -e 'SHOW GLOBAL VARIABLES'      once
#   pfs-threads.txt  mysql -e 'SELECT * FROM performance_schema.threads\G'   once, if enabled
#   ps-locks.txt     mysql -e 'select t.processlist_id, ml.* from performance_schema.metadata_locks ml
#                    join performance_schema.threads t on (ml.owner_thread_id=t.thread_id)\G'
#                                            every interval, after a TS line and the statement echoed
#                                            (pt-stalk's -ps-locks-transactions shape): who holds and
#                                            who waits for metadata locks, user locks (GET_LOCK) and
#                                            the global read / backup lock; only when performance_schema
#                                            is ON and its instrument wait/lock/metadata/sql/mdl enabled
#                                            (MariaDB's default: disabled; MySQL 8's: enabled)
#   meminfo.txt      cat /proc/meminfo                     once
#   manifest.txt     key: value lines (host, nproc, kernel, utc_offset, start_epoch, versions,
#                    command.<file>, clock.<file>, skipped.<file> and why, missing tools, why
#                    it stopped)
#   errors.txt       the tools' stderr (only when not empty)
# A TS line is `TS <epoch.ns> <YYYY-MM-DD HH:MM:SS>`, both parts from one `date` call.
#
# Why vmstat/mpstat/iostat run continuously in the background instead of one short run per loop:
# a run of `mpstat I 1` lasts I seconds, so per-sample runs would either stall the loop or leave
# gaps and overlaps between measurement windows; one long run gives back-to-back intervals, and its
# own per-line time (vmstat -t, iostat -t with S_TIME_FORMAT=ISO) or banner date + time of day
# (mpstat) gives the clock, anchored by the TS line written just before it starts.

set -u
set -f

COLLECTOR_VERSION=1
DURATION=60
INTERVAL=1
MAX_MB=200
OUT=.
MYSQL_OPTS=${MYSQL_OPTS:-}
UPLOAD_URL=
SEND=
TRIES=30

PS_COLUMNS=pid,tid,ppid,user,stat,pcpu,comm,wchan:32
# pt-stalk 3.x's metadata-locks query, word for word: Casebook reads ps-locks.txt as it reads
# pt-stalk's -ps-locks-transactions (the echoed statement starts each snapshot).
PS_LOCKS_SQL='select t.processlist_id, ml.* from performance_schema.metadata_locks ml join performance_schema.threads t on (ml.owner_thread_id=t.thread_id)'
MDL_INSTRUMENT_SQL="SELECT ENABLED FROM performance_schema.setup_instruments WHERE NAME = 'wait/lock/metadata/sql/mdl'"

me=collect.sh

usage() {
    sed -n '/^# Usage:/,/^# Prints/p' "$0" 2>/dev/null | sed -e '$d' -e 's/^# \{0,1\}//'
}

die() {
    echo "$me: $*" >&2
    exit 2
}

need_value() {
    [ $# -ge 2 ] || die "$1 needs a value"
}

while [ $# -gt 0 ]; do
    case $1 in
    --duration) need_value "$@"; DURATION=$2; shift 2 ;;
    --duration=*) DURATION=${1#*=}; shift ;;
    --interval) need_value "$@"; INTERVAL=$2; shift 2 ;;
    --interval=*) INTERVAL=${1#*=}; shift ;;
    --max-mb) need_value "$@"; MAX_MB=$2; shift 2 ;;
    --max-mb=*) MAX_MB=${1#*=}; shift ;;
    --out) need_value "$@"; OUT=$2; shift 2 ;;
    --out=*) OUT=${1#*=}; shift ;;
    --mysql-opts) need_value "$@"; MYSQL_OPTS=$2; shift 2 ;;
    --mysql-opts=*) MYSQL_OPTS=${1#*=}; shift ;;
    --upload) need_value "$@"; UPLOAD_URL=$2; shift 2 ;;
    --upload=*) UPLOAD_URL=${1#*=}; shift ;;
    --send) need_value "$@"; SEND=$2; shift 2 ;;
    --send=*) SEND=${1#*=}; shift ;;
    --tries) need_value "$@"; TRIES=$2; shift 2 ;;
    --tries=*) TRIES=${1#*=}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
    esac
done

for pair in "duration:$DURATION" "interval:$INTERVAL" "max-mb:$MAX_MB" "tries:$TRIES"; do
    case ${pair#*:} in
    '' | *[!0-9]* | 0*) die "--${pair%%:*} must be a positive whole number, got '${pair#*:}'" ;;
    esac
done

LC_ALL=C
S_TIME_FORMAT=ISO
export LC_ALL S_TIME_FORMAT
unset LANG LANGUAGE LC_TIME LC_NUMERIC 2>/dev/null

# ---------------------------------------------------------------------------------------------
# Upload to a Casebook upload link (tus 1.0: POST makes the upload, HEAD gives the offset the
# server has, PATCH sends the rest of the file from there)
# ---------------------------------------------------------------------------------------------
case $UPLOAD_URL in
'' | http://* | https://*) ;;
*) die "--upload must be an http:// or https:// upload link" ;;
esac
[ -z "$SEND" ] || [ -n "$UPLOAD_URL" ] || die "--send needs --upload URL"
[ -z "$UPLOAD_URL" ] || UPLOAD_URL=${UPLOAD_URL%/}/

# The link as messages show it: its token masked.
shown_url() {
    printf '%s' "$UPLOAD_URL" | sed 's#/u/[^/?]*#/u/...#'
}

# header NAME FILE: the value of HTTP header NAME in the header dump FILE (last response, no CR).
header() {
    tr -d '\r' <"$2" | awk -v n="$1" 'BEGIN { n = tolower(n) } index(tolower($0), n ":") == 1 { v = substr($0, length(n) + 2); sub(/^[ \t]+/, "", v) } END { print v }'
}

# tus_status: the HTTP status of the last response in the header dump $HDR.
tus_status() {
    tr -d '\r' <"$HDR" | awk '/^HTTP\// && $2 !~ /^1/ { s = $2 } END { print s }'
}

# upload_file FILE: send FILE to the link, resuming; returns 0 once the server has every byte.
upload_file() {
    command -v curl >/dev/null 2>&1 || die "curl not found: install curl to use --upload"
    file=$1
    size=$(wc -c <"$file" | tr -d ' ')
    state=$file.upload-url
    HDR=$(mktemp "${TMPDIR:-/tmp}/casebook-upload.XXXXXX") || die "mktemp failed"
    name=$(basename "$file" | base64 | tr -d '\n')
    curl_opts="-sS --connect-timeout 20 -H Tus-Resumable:1.0.0"
    tries=0
    wait_s=2
    location=
    [ ! -s "$state" ] || location=$(cat "$state")
    while [ "$tries" -lt "$TRIES" ]; do
        tries=$((tries + 1))
        if [ -z "$location" ]; then
            # shellcheck disable=SC2086 # curl_opts is split on purpose
            curl $curl_opts -D "$HDR" -o /dev/null -X POST -H "Upload-Length: $size" \
                -H "Upload-Metadata: filename $name" "${UPLOAD_URL}files/" || true
            code=$(tus_status)
            case $code in
            201) location=$(header Location "$HDR"); printf '%s\n' "$location" >"$state" ;;
            404) rm -f "$HDR"; die "the upload link is unknown, expired, revoked or used up: ask for a new one" ;;
            413) rm -f "$HDR"; die "$file is $size bytes: more than this link takes" ;;
            4*) rm -f "$HDR"; die "the server refused the upload (HTTP $code)" ;;
            *) echo "$me: upload not started (HTTP ${code:-no answer}); trying again in $wait_s s" >&2 ;;
            esac
        fi
        if [ -n "$location" ]; then
            # shellcheck disable=SC2086
            curl $curl_opts -D "$HDR" -o /dev/null -I "$location" || true
            code=$(tus_status)
            offset=$(header Upload-Offset "$HDR")
            if [ "$code" = 404 ]; then
                rm -f "$HDR" "$state"
                die "the upload link no longer answers (expired or revoked)"
            fi
            if [ "$code" = 200 ] && [ "$offset" = "$size" ]; then
                rm -f "$HDR" "$state"
                echo "$me: sent $file ($size bytes) to $(shown_url)" >&2
                return 0
            fi
            if [ "$code" = 200 ] && [ -n "$offset" ]; then
                [ "$offset" = 0 ] || echo "$me: resuming at byte $offset of $size" >&2
                # curl -C OFFSET -T FILE sends the file from OFFSET on (Content-Length: the rest).
                # shellcheck disable=SC2086
                curl $curl_opts -D "$HDR" -o /dev/null -X PATCH -C "$offset" -T "$file" \
                    -H "Upload-Offset: $offset" -H "Content-Type: application/offset+octet-stream" \
                    "$location" || true
                code=$(tus_status)
                if [ "$code" = 204 ] && [ "$(header Upload-Offset "$HDR")" = "$size" ]; then
                    continue  # the HEAD of the next round confirms it
                fi
                echo "$me: upload interrupted (HTTP ${code:-no answer}); resuming in $wait_s s" >&2
            else
                echo "$me: the server did not give the offset (HTTP ${code:-no answer}); trying again in $wait_s s" >&2
            fi
        fi
        sleep "$wait_s"
        wait_s=$((wait_s * 2))
        [ "$wait_s" -le 60 ] || wait_s=60
    done
    rm -f "$HDR"
    echo "$me: upload not complete after $TRIES tries; run the same command again to resume" >&2
    return 1
}

if [ -n "$SEND" ]; then
    if [ -d "$SEND" ]; then
        mkdir -p "$OUT" || die "cannot create $OUT"
        OUT=$(cd "$OUT" && pwd) || die "cannot enter $OUT"
        src=$(cd "$SEND" && pwd) || die "cannot enter $SEND"
        base=$(basename "$src" | tr -c 'A-Za-z0-9._\n-' '_')
        TARBALL=$OUT/$base-$(date +%Y%m%dT%H%M%S).tar.gz
        tar -C "$(dirname "$src")" -czf "$TARBALL" "$(basename "$src")" || die "tar of $SEND failed"
    elif [ -f "$SEND" ]; then
        TARBALL=$SEND
    else
        die "--send: $SEND is neither a directory nor a file"
    fi
    upload_file "$TARBALL" || exit 1
    echo "$TARBALL"
    exit 0
fi

# ---------------------------------------------------------------------------------------------
# Set-up
# ---------------------------------------------------------------------------------------------
have() {
    command -v "$1" >/dev/null 2>&1
}

HOST=$(hostname 2>/dev/null || uname -n)
SAFE_HOST=$(printf '%s' "$HOST" | tr -c 'A-Za-z0-9._-' '_')
STAMP=$(date +%Y%m%dT%H%M%S)
NAME=casebook-$SAFE_HOST-$STAMP
mkdir -p "$OUT" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd) || die "cannot enter $OUT"
DIR=$OUT/$NAME
mkdir "$DIR" || die "cannot create $DIR"
MANIFEST=$DIR/manifest.txt
ERRORS=$DIR/errors.txt
: >"$ERRORS"

# Samples the loop takes: one at start + k x interval while k x interval < duration.
SAMPLES=$(((DURATION + INTERVAL - 1) / INTERVAL))
MAX_KIB=$((MAX_MB * 1024))

MISSING=
BG_PIDS=
STOP=
STOPPED_BY=duration

note_missing() { # tool, what is lost
    MISSING="${MISSING:+$MISSING, }$1"
    echo "$me: $1 not found: $2 not captured" >&2
}

mf() { # key, value...: one manifest line
    key=$1
    shift
    printf '%s: %s\n' "$key" "$*" >>"$MANIFEST"
}

ts() {
    date '+TS %s.%N %F %T'
}

now() {
    date +%s.%N
}

first_line() {
    "$@" 2>&1 | sed -n '/./{p;q;}'
}

mask() { # hide a password given on the command line
    printf ' %s\n' "$*" | sed -e 's/ -p[^ ]*/ -p***/g' -e 's/--password=[^ ]*/--password=***/g' \
        -e 's/^ //'
}

mysql_run() { # mysql client with the user's options; stdin closed
    # shellcheck disable=SC2086 # MYSQL_OPTS is split on blanks on purpose
    mysql $MYSQL_OPTS "$@" </dev/null
}

mysqladmin_run() {
    # shellcheck disable=SC2086
    mysqladmin $MYSQL_OPTS "$@" </dev/null
}

stop_bg() {
    for pid in $BG_PIDS; do
        kill "$pid" 2>/dev/null
    done
    for pid in $BG_PIDS; do
        wait "$pid" 2>/dev/null
    done
    BG_PIDS=
}

on_signal() {
    STOP=1
    STOPPED_BY=signal
    stop_bg
}

on_exit() {
    stop_bg
}

trap on_signal INT TERM HUP
trap on_exit EXIT

# start_bg FILE COMMAND...: TS line, then the tool replaces the subshell (so $! is the tool itself).
start_bg() {
    f=$1
    shift
    mf "command.$f" "$*"
    (
        ts
        exec "$@"
    ) >>"$DIR/$f" 2>>"$ERRORS" &
    BG_PIDS="$BG_PIDS $!"
}

# snap FILE COMMAND...: one sample, after its TS line.
snap() {
    f=$1
    shift
    {
        ts
        "$@"
    } >>"$DIR/$f" 2>>"$ERRORS"
}

# ps_locks: the metadata-locks query echoed, then its \G rows (one query).
ps_locks() {
    printf '%s\\G\n' "$PS_LOCKS_SQL"
    mysql_run -e "$PS_LOCKS_SQL\\G"
}

# ---------------------------------------------------------------------------------------------
# What is there
# ---------------------------------------------------------------------------------------------
HAVE_VMSTAT=
HAVE_MPSTAT=
HAVE_IOSTAT=
HAVE_PS=
HAVE_MYSQL=
HAVE_MYSQLADMIN=
if have vmstat; then HAVE_VMSTAT=1; else note_missing vmstat vmstat.txt; fi
if have mpstat; then HAVE_MPSTAT=1; else note_missing mpstat "mpstat.txt, mpstat-intr.txt"; fi
if have iostat; then HAVE_IOSTAT=1; else note_missing iostat iostat.txt; fi
if have ps; then HAVE_PS=1; else note_missing ps ps-threads.txt; fi
if have mysql; then
    HAVE_MYSQL=1
else
    note_missing mysql "processlist.txt, variables.txt, pfs-threads.txt, ps-locks.txt"
fi
if have mysqladmin; then HAVE_MYSQLADMIN=1; else note_missing mysqladmin mysqladmin.txt; fi

MYSQL_OK=
MYSQL_ERROR=
SERVER_VERSION=
PFS=
MDL=
if [ -n "$HAVE_MYSQL" ]; then
    if SERVER_VERSION=$(mysql_run -N -B -e 'SELECT VERSION()' 2>"$DIR/.mysql-check"); then
        MYSQL_OK=1
        PFS=$(mysql_run -N -B -e 'SELECT @@performance_schema' 2>/dev/null)
        # metadata_locks stays empty while the MDL instrument is off: then it is not captured.
        [ "$PFS" != 1 ] || MDL=$(mysql_run -N -B -e "$MDL_INSTRUMENT_SQL" 2>/dev/null)
    else
        MYSQL_ERROR=$(sed -n '/./{p;q;}' "$DIR/.mysql-check")
        SERVER_VERSION=
        echo "$me: cannot query MySQL with options '$(mask "$MYSQL_OPTS")': $MYSQL_ERROR" >&2
        echo "$me: processlist, mysqladmin, variables, threads and metadata locks are not captured" >&2
    fi
    rm -f "$DIR/.mysql-check"
fi
if [ -n "$HAVE_MYSQLADMIN" ] && [ -z "$MYSQL_OK" ]; then
    HAVE_MYSQLADMIN=
fi

NPROC=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || grep -c '^processor' /proc/cpuinfo)

# ---------------------------------------------------------------------------------------------
# Manifest, first part
# ---------------------------------------------------------------------------------------------
START=$(now)
START_LOCAL=$(date '+%F %T')
{
    echo "casebook_collector: 1"
    echo "collector_version: $COLLECTOR_VERSION"
    echo "hostname: $HOST"
    echo "nproc: $NPROC"
    echo "kernel: $(uname -r)"
    echo "utc_offset: $(date +%z)"
    echo "timezone: $(date +%Z)"
    echo "start_epoch: $START"
    echo "start_local: $START_LOCAL"
    echo "interval: $INTERVAL"
    echo "duration: $DURATION"
    echo "max_mb: $MAX_MB"
    echo "samples_planned: $SAMPLES"
    echo "lc_all: $LC_ALL"
    echo "s_time_format: $S_TIME_FORMAT"
    echo "mysql_opts: $(mask "$MYSQL_OPTS")"
} >"$MANIFEST"
[ -z "$HAVE_VMSTAT" ] || mf version.vmstat "$(first_line vmstat -V)"
[ -z "$HAVE_MPSTAT" ] || mf version.mpstat "$(first_line mpstat -V)"
[ -z "$HAVE_IOSTAT" ] || mf version.iostat "$(first_line iostat -V)"
[ -z "$HAVE_PS" ] || mf version.ps "$(first_line ps -V)"
[ -z "$HAVE_MYSQL" ] || mf version.mysql "$(first_line mysql --version)"
[ -z "$HAVE_MYSQLADMIN" ] || mf version.mysqladmin "$(first_line mysqladmin --version)"
[ -z "$SERVER_VERSION" ] || mf version.server "$SERVER_VERSION"
[ -z "$MYSQL_ERROR" ] || mf mysql_error "$MYSQL_ERROR"

# ---------------------------------------------------------------------------------------------
# Continuous tools (background)
# ---------------------------------------------------------------------------------------------
if [ -n "$HAVE_VMSTAT" ]; then
    start_bg vmstat.txt vmstat -t -n "$INTERVAL" $((SAMPLES + 1))
    mf clock.vmstat.txt "per-line (vmstat -t, zone named in the header); first line since boot"
fi
if [ -n "$HAVE_MPSTAT" ]; then
    start_bg mpstat.txt mpstat -P ALL "$INTERVAL" "$SAMPLES"
    mf clock.mpstat.txt "header+time-of-day (ISO banner date, HH:MM:SS per row, local time)"
    start_bg mpstat-intr.txt mpstat -I SUM -P ALL "$INTERVAL" "$SAMPLES"
    mf clock.mpstat-intr.txt "header+time-of-day (ISO banner date, HH:MM:SS per row, local time)"
fi
if [ -n "$HAVE_IOSTAT" ]; then
    start_bg iostat.txt iostat -dxk -t "$INTERVAL" $((SAMPLES + 1))
    mf clock.iostat.txt "per-line (iostat -t, ISO with UTC offset); first report since boot"
fi

# ---------------------------------------------------------------------------------------------
# Once
# ---------------------------------------------------------------------------------------------
if [ -r /proc/meminfo ]; then
    snap meminfo.txt cat /proc/meminfo
    mf command.meminfo.txt "cat /proc/meminfo"
else
    note_missing /proc/meminfo meminfo.txt
fi
if [ -n "$MYSQL_OK" ]; then
    snap variables.txt mysql_run -e 'SHOW GLOBAL VARIABLES'
    mf command.variables.txt "mysql $(mask "$MYSQL_OPTS") -e 'SHOW GLOBAL VARIABLES'"
    if [ "$PFS" = 1 ]; then
        snap pfs-threads.txt mysql_run -e 'SELECT * FROM performance_schema.threads\G'
        mf command.pfs-threads.txt "mysql $(mask "$MYSQL_OPTS") -e 'SELECT * FROM performance_schema.threads\\G'"
    else
        mf skipped.pfs-threads.txt "performance_schema is OFF (@@performance_schema = ${PFS:-unknown})"
    fi
fi

# ---------------------------------------------------------------------------------------------
# Snapshot loop: sample k at START + k x INTERVAL
# ---------------------------------------------------------------------------------------------
SNAP_CLOCK="ts-marker (a TS line before each snapshot)"
if [ -n "$HAVE_PS" ]; then
    mf command.ps-threads.txt "ps -eLo $PS_COLUMNS"
    mf clock.ps-threads.txt "$SNAP_CLOCK"
fi
if [ -r /proc/interrupts ]; then
    mf command.interrupts.txt "cat /proc/interrupts"
    mf clock.interrupts.txt "$SNAP_CLOCK"
else
    note_missing /proc/interrupts interrupts.txt
fi
if [ -n "$MYSQL_OK" ]; then
    mf command.processlist.txt "mysql $(mask "$MYSQL_OPTS") -e 'SHOW FULL PROCESSLIST\\G'"
    mf clock.processlist.txt "$SNAP_CLOCK"
    if [ -n "$HAVE_MYSQLADMIN" ]; then
        mf command.mysqladmin.txt "mysqladmin $(mask "$MYSQL_OPTS") extended-status"
        mf clock.mysqladmin.txt "$SNAP_CLOCK"
    fi
    if [ "$PFS" != 1 ]; then
        mf skipped.ps-locks.txt "performance_schema is OFF (@@performance_schema = ${PFS:-unknown})"
    elif [ "$MDL" != YES ]; then
        mf skipped.ps-locks.txt "the instrument wait/lock/metadata/sql/mdl is not enabled" \
            "(setup_instruments ENABLED = ${MDL:-unknown}): performance_schema.metadata_locks stays empty"
    else
        mf command.ps-locks.txt "mysql $(mask "$MYSQL_OPTS") -e '$PS_LOCKS_SQL\\G'"
        mf clock.ps-locks.txt "$SNAP_CLOCK, then the statement echoed"
    fi
fi

k=0
while [ -z "$STOP" ] && [ "$k" -lt "$SAMPLES" ]; do
    [ -z "$HAVE_PS" ] || snap ps-threads.txt ps -eLo "$PS_COLUMNS"
    [ ! -r /proc/interrupts ] || snap interrupts.txt cat /proc/interrupts
    if [ -n "$MYSQL_OK" ]; then
        snap processlist.txt mysql_run -e 'SHOW FULL PROCESSLIST\G'
        [ "$MDL" != YES ] || snap ps-locks.txt ps_locks
        [ -z "$HAVE_MYSQLADMIN" ] || snap mysqladmin.txt mysqladmin_run extended-status
    fi
    k=$((k + 1))
    [ -z "$STOP" ] || break
    used=$(du -sk "$DIR" 2>/dev/null | awk '{print $1}')
    if [ "${used:-0}" -ge "$MAX_KIB" ]; then
        STOPPED_BY=size
        echo "$me: $DIR reached ${used} KiB (--max-mb $MAX_MB): stopping" >&2
        break
    fi
    [ "$k" -lt "$SAMPLES" ] || break
    # Sleep to the next slot; a late loop (slow tools) goes on at once instead of drifting further.
    wait_s=$(awk -v s="$START" -v k="$k" -v i="$INTERVAL" -v n="$(now)" \
        'BEGIN { d = s + k * i - n; if (d > 0) printf "%.3f\n", d; else print 0 }')
    [ "$wait_s" = 0 ] || sleep "$wait_s"
done

# ---------------------------------------------------------------------------------------------
# Finish: let the background tools write their last interval (bounded), then pack
# ---------------------------------------------------------------------------------------------
trap '' INT TERM HUP
if [ "$STOPPED_BY" = duration ] && [ -n "$BG_PIDS" ]; then
    # The background runs end by themselves about one interval after the loop; wait at most that
    # plus GRACE_S, then stop them.
    GRACE_S=3
    deadline=$(awk -v s="$START" -v d="$DURATION" -v i="$INTERVAL" -v g="$GRACE_S" 'BEGIN { printf "%.3f\n", s + d + i + g }')
    while :; do
        alive=
        for pid in $BG_PIDS; do
            if kill -0 "$pid" 2>/dev/null; then alive=1; fi
        done
        [ -n "$alive" ] || break
        late=$(awk -v t="$deadline" -v n="$(now)" 'BEGIN { print (n >= t) ? 1 : 0 }')
        [ "$late" = 0 ] || break
        sleep 1
    done
fi
stop_bg

mf end_epoch "$(now)"
mf samples "$k"
mf stopped_by "$STOPPED_BY"
mf missing "${MISSING:-none}"
set +f
for f in "$DIR"/*; do
    [ -s "$f" ] || rm -f "$f"
done
set -f
mf size_kib "$(du -sk "$DIR" | awk '{print $1}')"

TARBALL=$OUT/$NAME.tar.gz
if tar -C "$OUT" -czf "$TARBALL" "$NAME"; then
    rm -rf "$DIR"
    if [ -n "$UPLOAD_URL" ]; then
        upload_file "$TARBALL" || { echo "$TARBALL"; exit 1; }
    fi
    echo "$TARBALL"
else
    echo "$me: tar failed; the capture is left in $DIR" >&2
    exit 1
fi
