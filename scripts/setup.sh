#!/usr/bin/env bash
# Idempotent set-up shared by scripts/run and scripts/test (sourced, not run):
# the virtualenv with the pinned requirements, PostgreSQL and Redis up, the database migrated.
# Services are started with the commands this machine kind documents when they are down.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="$ROOT/.venv/bin/python"
export CASEBOOK_DATABASE_URL="${CASEBOOK_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/casebook}"
export CASEBOOK_REDIS_URL="${CASEBOOK_REDIS_URL:-redis://127.0.0.1:6379/0}"

say() { printf '\033[1m[casebook]\033[0m %s\n' "$*" >&2; }

setup_venv() {
  if [ ! -x "$PY" ]; then
    say "creating the virtualenv .venv"
    python3 -m venv .venv
  fi
  local want have
  want=$(sha256sum requirements.txt | cut -d' ' -f1)
  have=$(cat .venv/.requirements.sha256 2>/dev/null || true)
  if [ "$want" != "$have" ]; then
    say "installing the pinned requirements"
    .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
    echo "$want" > .venv/.requirements.sha256
  fi
  # The project's bytecode, written even where PYTHONDONTWRITEBYTECODE is set: every ingest starts
  # parse processes that import the parsers and the analysis (python -m parsers.ingest.pool).
  "$PY" -m compileall -q analyzer parsers web >/dev/null
}

apt_install() {
  # apt_install PACKAGE... : install Debian packages that are missing (this machine kind runs as root).
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]} from Debian's packages"
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

start_services() {
  if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
    say "starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start
    for _ in $(seq 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
  fi
  if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    say "starting Redis"
    mkdir -p /var/lib/redis /var/log/redis
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/ci.log
    for _ in $(seq 30); do redis-cli ping >/dev/null 2>&1 && break; sleep 1; done
  fi
}

setup_database() {
  local db
  db=$("$PY" -c "from urllib.parse import urlparse; import os; print(urlparse(os.environ['CASEBOOK_DATABASE_URL']).path.lstrip('/') or 'casebook')")
  if ! psql "${CASEBOOK_DATABASE_URL%/*}/postgres" -tAc "select 1 from pg_database where datname='$db'" | grep -q 1; then
    say "creating database $db"
    psql "${CASEBOOK_DATABASE_URL%/*}/postgres" -qc "create database \"$db\""
  fi
  scripts/start migrate  # migrations and the first login (the site admin), as the Docker image runs them
}
