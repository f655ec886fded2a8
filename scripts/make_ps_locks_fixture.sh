#!/bin/bash
# A -ps-locks-transactions member as pt-stalk 3.2.1 writes it on MySQL 8 (it skips MariaDB: it compares
# the version with "5.6" as a string): its ps_locks_transactions() function, read from the installed
# pt-stalk, run 3 times 1 s apart with a SHOW FULL PROCESSLIST\G beside it each time (as
# pt-stalk's loop does), against a scratch MariaDB 10.11 with performance_schema and the MDL
# instrument on, where an ALTER waits for the metadata lock of an idle open transaction.
# Usage (as root): bash scripts/make_ps_locks_fixture.sh OUTDIR; writes PREFIX-ps-locks-transactions
# and PREFIX-processlist there (PREFIX: the start time, as pt-stalk names its members).
set -eu
OUT=$(cd "${1:?usage: make_ps_locks_fixture.sh OUTDIR}" && pwd)
W=$(mktemp -d /tmp/pslocks.XXXXXX)
mariadb-install-db --no-defaults --datadir=$W/data --auth-root-authentication-method=socket --skip-test-db >/dev/null
mariadbd --no-defaults --datadir=$W/data --socket=$W/sock --port=3398 --bind-address=127.0.0.1 --user=root \
  --innodb-buffer-pool-size=32M --lock-wait-timeout=60 --performance-schema=ON \
  --performance-schema-instrument='transaction=ON' --performance-schema-instrument='wait/lock/metadata/sql/mdl=ON' \
  --performance-schema-consumer-events-transactions-current=ON --log-error=$W/err.log &
SP=$!
for i in $(seq 30); do mariadb --socket=$W/sock -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 1; done
M="mariadb --socket=$W/sock -uroot"
$M -e "CREATE DATABASE shop; USE shop; CREATE USER app@'%' IDENTIFIED BY 'app'; GRANT ALL ON shop.* TO app@'%';
CREATE TABLE orders (id INT PRIMARY KEY, status VARCHAR(16)) ENGINE=InnoDB; INSERT INTO orders SELECT seq, 'new' FROM seq_1_to_100;"
APP="mariadb -h127.0.0.1 -P3398 -uapp -papp shop"
(echo "BEGIN; SELECT COUNT(*) FROM orders;"; sleep 14) | $APP >/dev/null 2>&1 &
sleep 1
(echo "ALTER TABLE orders ADD COLUMN note VARCHAR(32);"; sleep 1) | $APP >/dev/null 2>&1 &
sleep 2
CMD_MYSQL=mariadb; EXT_ARGV="--socket=$W/sock --user=root"
PREFIX=$(date -u +%Y_%m_%d_%H_%M_%S)
outfile=$OUT/$PREFIX-ps-locks-transactions
# pt-stalk's own function, taken from the installed pt-stalk (3.2.1) and run as it is
eval "$(sed -n '/^ps_locks_transactions() {/,/^}/p' "$(command -v pt-stalk)")"
for i in 1 2 3; do
    $M -e "SHOW FULL PROCESSLIST\G" >> "$OUT/$PREFIX-processlist"
    ps_locks_transactions $outfile
    sleep 1
done
wait_kids=$(jobs -p | grep -v "^$SP$" || true); for p in $wait_kids; do wait $p || true; done
kill $SP; wait $SP || true; rm -rf $W
