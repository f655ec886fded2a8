#!/usr/bin/env python3
"""Bounded tmp-table load against a local MariaDB, for the shipped example pt-stalk bundle.

It creates the database ``casebook_load`` with one table ``t`` of ``--rows`` rows (default 2,000)
whose ``grp`` column is a VARCHAR(255) holding ~192-byte strings in 500 distinct values, then runs
``--sessions`` (default 64) client sessions that all repeat the SAME query::

    SELECT grp, COUNT(*), SUM(n) FROM casebook_load.t GROUP BY grp ORDER BY NULL

The GROUP BY needs an internal temporary table. Each session sets ``tmp_table_size`` and
``max_heap_table_size`` to ``--tmp-table-size`` (default 16 KiB), far below the ~100 KiB the 500
groups take in a MEMORY (HEAP) table, so every query starts in HEAP and MariaDB converts it to an
on-disk Aria table part way (``Created_tmp_disk_tables`` grows by one per query; the processlist
shows ``Sending data`` mostly, then ``Converting HEAP to Aria``, ``Removing tmp table``, ``Writing
to net``). ``ORDER BY NULL`` keeps MariaDB from sorting the groups (no ``Creating sort index``).

The sessions are run by sysbench 1.0 with a custom Lua script (written to a temporary file), which
keeps them to ``--duration`` seconds (default 40). On exit the database is dropped, also on
Ctrl-C. Connection: ``--host``/``--port``/``--user``/``--password`` (default 127.0.0.1:3306 root,
no password); the ``mysql`` client is used for set-up and clean-up.

Exit code 0 on success, 2 when a tool is missing, 1 when a client command fails.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DB = "casebook_load"

#: Distinct ``grp`` values: small enough that each query is a few ms of CPU (fast, repeated), large
#: enough (500 x ~200 bytes) that the HEAP temporary table outgrows a 16 KiB tmp_table_size.
GROUPS = 500

QUERY = f"SELECT grp, COUNT(*), SUM(n) FROM {DB}.t GROUP BY grp ORDER BY NULL"

LUA = """\
-- casebook tmp-table load: every session repeats one GROUP BY that spills HEAP to Aria
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  con:query("SET SESSION tmp_table_size = {tmp}, max_heap_table_size = {tmp}")
end

function event()
  con:query("{query}")
end

function thread_done()
  con:disconnect()
end
"""


def mysql_cmd(args: argparse.Namespace) -> list[str]:
    """The ``mysql`` client command line (batch mode) for ``args``' connection options."""
    cmd = ["mysql", "-B", "-N", f"-h{args.host}", f"-P{args.port}", f"-u{args.user}"]
    if args.password:
        cmd.append(f"-p{args.password}")
    return cmd


def run_sql(args: argparse.Namespace, sql: str) -> None:
    """Run ``sql`` through the mysql client; raise ``subprocess.CalledProcessError`` on failure."""
    subprocess.run(mysql_cmd(args), input=sql, text=True, check=True, stdout=subprocess.DEVNULL)


def setup_sql(rows: int) -> str:
    """DDL + data: ``rows`` rows, ``grp`` a 192-byte string in ``GROUPS`` distinct values."""
    return f"""
DROP DATABASE IF EXISTS {DB};
CREATE DATABASE {DB};
USE {DB};
CREATE TABLE {DB}.t (id INT PRIMARY KEY, grp VARCHAR(255) NOT NULL, n INT NOT NULL) ENGINE=InnoDB;
INSERT INTO {DB}.t (id, grp, n)
  SELECT seq, REPEAT(MD5(seq % {GROUPS}), 6), seq % 97 FROM seq_1_to_{rows};
ANALYZE TABLE {DB}.t;
"""


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: set up, run the load for ``--duration`` s, drop the database."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=int, default=40, help="seconds of load (default 40)")
    p.add_argument("--sessions", type=int, default=64, help="concurrent client sessions (default 64)")
    p.add_argument("--rows", type=int, default=2000, help="rows in casebook_load.t (default 2000)")
    p.add_argument("--tmp-table-size", type=int, default=16384, help="session tmp_table_size, bytes")
    p.add_argument("--db", default=DB, help=f"database to create and drop (default {DB})")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=3306)
    p.add_argument("--user", default="root")
    p.add_argument("--password", default="")
    args = p.parse_args(argv)

    for tool in ("mysql", "sysbench"):
        if shutil.which(tool) is None:
            print(f"load_mariadb: {tool} not found", file=sys.stderr)
            return 2

    try:
        run_sql(args, setup_sql(args.rows).replace(DB, args.db))
        with tempfile.TemporaryDirectory(prefix="casebook-load-") as tmp:
            script = Path(tmp) / "tmptables.lua"
            script.write_text(LUA.format(tmp=args.tmp_table_size, query=QUERY.replace(DB, args.db)))
            cmd = [
                "sysbench",
                f"--threads={args.sessions}",
                f"--time={args.duration}",
                "--events=0",
                "--report-interval=10",
                "--db-driver=mysql",
                f"--mysql-host={args.host}",
                f"--mysql-port={args.port}",
                f"--mysql-user={args.user}",
                f"--mysql-password={args.password}",
                f"--mysql-db={args.db}",
                str(script),
                "run",
            ]
            subprocess.run(cmd, check=True, cwd=tmp)
    except subprocess.CalledProcessError as exc:
        print(f"load_mariadb: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        try:
            run_sql(args, f"DROP DATABASE IF EXISTS {args.db};")
        except subprocess.CalledProcessError as exc:
            print(f"load_mariadb: clean-up failed: {exc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
