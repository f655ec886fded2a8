#!/usr/bin/env bash
# A customer's upload of several GB through an upload link, with a broken connection (issue 25):
# gunicorn (scripts/start web) on a spare loopback port over the database CASEBOOK_DATABASE_URL
# (default casebook_bench_upload, made and migrated here), a link made for it, then
# `collect.sh --upload LINK --send FILE` of GIB GiB of random bytes, its curl killed after CUT_S
# seconds (the script resumes from the offset the server says). Prints the resume line, the elapsed
# time, MB/s, whether the stored bundle's SHA-256 is the file's, and how often the token is in the
# web log. No worker runs: the case stays queued; this measures the upload.
#   bench/upload_link.sh [GIB (default 3)] [CUT_S (default 4)]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GIB=${1:-3}
CUT_S=${2:-4}
PORT=${PORT:-8799}
export CASEBOOK_DATABASE_URL=${CASEBOOK_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/casebook_bench_upload}
export CASEBOOK_BIND=127.0.0.1:$PORT CASEBOOK_WEB_WORKERS=2 CASEBOOK_PUBLIC_URL=http://127.0.0.1:$PORT
export CASEBOOK_MEDIA_ROOT=${CASEBOOK_MEDIA_ROOT:-/tmp/casebook-bench-upload-media}
export CASEBOOK_MAX_UPLOAD_BYTES=$(( (GIB + 1) << 30 ))
WORK=$(mktemp -d /tmp/casebook-upload-bench.XXXXXX)
WEB_PID=
cleanup() { [ -z "$WEB_PID" ] || kill "$WEB_PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

db=${CASEBOOK_DATABASE_URL##*/}
psql "${CASEBOOK_DATABASE_URL%/*}/postgres" -qc "drop database if exists \"$db\"" -qc "create database \"$db\"" 2>/dev/null
"$ROOT/.venv/bin/python" "$ROOT/manage.py" migrate -v0
token=$("$ROOT/.venv/bin/python" "$ROOT/manage.py" shell -v0 -c "
from django.contrib.auth import get_user_model
from web.models import Team, default_team_id
from web.uploads import services
u = get_user_model().objects.create_user('bench-upload', password=None)
Team.objects.get(pk=default_team_id()).members.add(u)
print(services.link_create(user=u, customer='ACME', ticket='BENCH-1').token)" | tail -1)

head -c $((GIB << 30)) /dev/urandom > "$WORK/bundle.bin"
want=$(sha256sum "$WORK/bundle.bin" | cut -d' ' -f1)
"$ROOT/scripts/start" web > "$WORK/web.log" 2>&1 &
WEB_PID=$!
for _ in $(seq 60); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.5; done

( sleep "$CUT_S"; pkill -f "curl.*127.0.0.1:$PORT/u/" || true ) &
start=$(date +%s.%N)
sh "$ROOT/scripts/collect.sh" --upload "http://127.0.0.1:$PORT/u/$token/" --send "$WORK/bundle.bin" 2>&1 \
  | sed "s/$token/<token>/g" | grep -E "resuming at|sent|interrupted" || true
end=$(date +%s.%N)
got=$("$ROOT/.venv/bin/python" "$ROOT/manage.py" shell -v0 -c "
from web.models import Case
c = Case.objects.order_by('-pk').first()
print(c.upload.sha256 if c else '-', c.upload.size if c else 0, c.customer if c else '', c.ticket if c else '')" | tail -1)
python3 - "$start" "$end" "$GIB" "$want" "$got" "$(grep -c "$token" "$WORK/web.log" || true)" <<'EOF'
import sys
start, end, gib, want, got, leaks = sys.argv[1:]
sha, size, customer, ticket = (got.split() + ["", "", "", ""])[:4]
secs = float(end) - float(start)
print(f"bundle         {gib} GiB ({int(gib) << 30:,} bytes) of random bytes, curl killed once")
print(f"elapsed        {secs:.1f} s  ({(int(gib) << 30) / secs / 1e6:.0f} MB/s, upload and resume and the hash and copy into storage)")
print(f"stored         {int(size or 0):,} bytes, SHA-256 {'equal to the file' if sha == want else 'DIFFERENT: ' + sha}; case customer {customer!r}, ticket {ticket!r}")
print(f"token in log   {leaks} line(s) of the web log")
EOF
