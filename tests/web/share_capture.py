"""A real-shaped capture for the share tests: SHOW FULL PROCESSLIST\\G after pt-stalk's TS lines (three
snapshots, 1 s apart, MariaDB's column set, a multi-line Info) and vmstat -t of the same seconds,
holding literals, client hosts, MySQL users and schemas that a redacted link must never serve; and a
second capture holding the server's own name, its replication source, IPv6 clients and passwords
(``server_processlist``, ``server_ps``, ``server_slave_status``).
"""

from __future__ import annotations

from collections.abc import Callable

#: Values that must not appear in any byte a fully redacted link serves, by kind.
SECRETS = {
    "literals": ["alice@example.org", "4111-1111-1111-1111", "987654321", "Secret Customer Name", "77.25"],
    "hosts": ["10.20.30.41", "10.20.30.42", "app-web-07.acme-corp.internal"],
    "users": ["acme_checkout", "acme_report"],
    "schemas": ["acmeshop_prod", "acme_billing"],
}


def _session(
    sid: int, user: str, host: str, db: str, command: str, time_s: int, state: str, info: str
) -> str:
    return (
        f"*************************** {sid}. row ***************************\n"
        f"      Id: {sid + 100}\n"
        f"    User: {user}\n"
        f"    Host: {host}\n"
        f"      db: {db}\n"
        f" Command: {command}\n"
        f"    Time: {time_s}\n"
        f"   State: {state}\n"
        f"    Info: {info}\n"
        f"Progress: 0.000\n"
    )


#: The three snapshots of both captures, 1 s apart.
_EPOCHS = (1776790301, 1776790302, 1776790303)


def _snapshots(rows_of: Callable[[int], list[tuple]]) -> str:
    """Three processlist snapshots, pt-stalk's TS line before each; ``rows_of(i)``: the sessions of
    snapshot ``i`` (``_session``'s arguments after ``sid``)."""
    out = []
    for i, epoch in enumerate(_EPOCHS):
        out.append(f"TS {epoch}.500000000 2026-04-21 16:51:{41 + i:02d}\n")
        out.extend(_session(n, *row) for n, row in enumerate(rows_of(i), start=1))
    return "".join(out)


def processlist() -> str:
    return _snapshots(_shop_sessions)


def _shop_sessions(i: int) -> list[tuple]:
    return [
        ("system user", "", "NULL", "Daemon", 900, "InnoDB purge worker", "NULL"),
        (
            "acme_checkout",
            "10.20.30.41:51234",
            "acmeshop_prod",
            "Query",
            2 + i,
            "Sending data",
            "SELECT id, total FROM orders WHERE customer_email = 'alice@example.org' AND total > 77.25",
        ),
        (
            "acme_checkout",
            "10.20.30.42:40022",
            "acmeshop_prod",
            "Query",
            1,
            "Updating",
            "UPDATE acmeshop_prod.orders SET note = 'Secret Customer Name'\n  WHERE id = 987654321",
        ),
        (
            "acme_report",
            "app-web-07.acme-corp.internal:33060",
            "acme_billing",
            "Query",
            5 + i,
            "Creating sort index",
            'SELECT * FROM acme_billing.invoices WHERE card = "4111-1111-1111-1111" ORDER BY created',
        ),
        ("acme_report", "app-web-07.acme-corp.internal:33061", "acme_billing", "Sleep", 40, "", "NULL"),
        ("root", "localhost", "NULL", "Query", 0, "starting", "SHOW FULL PROCESSLIST"),
    ]


VMSTAT = (
    "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----\n"
    " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC\n"
    " 9  0      0 104588800 10433708 236728672    0    0     5    93  800 1200 90  8  2  0  0 2026-04-21 "
    "16:51:41\n"
    " 9  1      0 104555712 10433708 236731536    0    0     0 43336 42713 85374 91  7  2  0  0 2026-04-21 "
    "16:51:42\n"
    " 8  0      0 104574640 10433708 236735136    0    0     0 54908 50910 111742 92  6  2  0  0 "
    "2026-04-21 16:51:43\n"
)


# ------------------------------------------------------------------ the server's name, IPv6, passwords
#: A pt-stalk collection of the server db-prod-17.acme-corp.internal: its -hostname member, a
#: SHOW FULL PROCESSLIST\G with IPv6 clients (MySQL writes ``address:port``; an IPv4 client of a
#: server listening on IPv6 is ``::ffff:a.b.c.d:port``) and statements that set passwords, and a
#: ``ps -eaF`` listing (pt-stalk's -ps, here after TS lines) whose command lines hold passwords (a
#: MySQL Shell among them: ``user:password@host``), and
#: SHOW SLAVE STATUS\G naming the replication source (its binary logs are named after it).
SERVER = "db-prod-17.acme-corp.internal"
#: Values a redacted link must not serve, by kind; passwords are never served, on any link.
SERVER_SECRETS = {
    "servers": ["db-prod-17", "db-src-03"],  # the server, its replication source
    "addresses": ["2001:db8:ac::7", "fe80::a1b2:3ff:fe4c:5d6e", "10.20.30.44"],
    "passwords": ["Ro-S3cret-Pw", "Repl-S3cret", "Adm1n-S3cret", "Tr1gg3r-Pw", "Dump-S3cret", "Sh3ll-S3cret"],
}


def server_processlist() -> str:
    return _snapshots(_admin_sessions)


def _admin_sessions(i: int) -> list[tuple]:
    return [
        ("system user", "", "NULL", "Daemon", 900, "InnoDB purge worker", "NULL"),
        (
            "acme_admin",
            "2001:db8:ac::7:51234",
            "NULL",
            "Query",
            1 + i,
            "starting",
            "CREATE USER 'acme_ro'@'%' IDENTIFIED BY 'Ro-S3cret-Pw'",
        ),
        (
            "acme_admin",
            "::ffff:10.20.30.44:40100",
            "NULL",
            "Query",
            2 + i,
            "starting",
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='10.20.30.9', SOURCE_PASSWORD='Repl-S3cret'",
        ),
        ("root", "localhost", "NULL", "Query", 0, "starting", "SHOW FULL PROCESSLIST"),
    ]


def server_ps() -> str:
    header = "UID          PID    PPID  C    SZ   RSS PSR STIME TTY          TIME CMD\n"
    rows = (
        "root           1       0  0 22505  9600  24 16:00 ?        00:00:00 /usr/lib/systemd/systemd "
        "--system\n"
        "mysql       5555       1  9 1161740 1061220 12 16:02 ?     00:04:53 /usr/sbin/mysqld\n"
        "root        1939     865  0 25724  5484   3 16:00 ?        00:00:00 /sbin/dhclient -d -q -pf "
        "/var/run/dhclient-ens33.pid\n"
        "root       14016   13962  0 11562  8448  44 16:51 pts/0    00:00:00 /bin/mysqladmin -uacme_admin "
        "-pAdm1n-S3cret -P3306 ext -i1 -c30\n"
        "root       14017   13962  0 11562  8448  44 16:51 pts/0    00:00:00 mysql -uacme_admin -p -h "
        "fe80::a1b2:3ff:fe4c:5d6e%eth0 -P3306\n"
        "root       14018   13962  0 28761  7680   3 16:51 pts/0    00:00:00 sudo ./pt-stalk --no-stalk "
        "--user=acme_admin --password=Tr1gg3r-Pw --dest=/tmp/pt/collected/db-prod-17/\n"
        "root       14019   13962  0 28761  7680   3 16:51 pts/0    00:00:00 mysqldump --user acme_admin "
        "--password Dump-S3cret --single-transaction acme\n"
        "root       14020   13962  0 93078  6808   3 16:51 pts/1    00:00:00 mysqlsh "
        "acme_admin:Sh3ll-S3cret@db-src-03.acme-corp.internal:3306 --sql\n"
    )
    return "".join(
        f"TS {epoch}.400000000 2026-04-21 16:51:{41 + i:02d}\n{header}{rows}"
        for i, epoch in enumerate(_EPOCHS)
    )


def server_slave_status() -> str:
    row = (
        "*************************** 1. row ***************************\n"
        "               Slave_IO_State: Waiting for source to send event\n"
        "                  Master_Host: db-src-03.acme-corp.internal\n"
        "                  Master_Port: 3306\n"
        "              Master_Log_File: db-src-03-bin.000042\n"
        "          Read_Master_Log_Pos: 19230\n"
        "               Relay_Log_File: db-prod-17-relay-bin.000007\n"
        "        Relay_Master_Log_File: db-src-03-bin.000042\n"
        "             Slave_IO_Running: Yes\n"
        "            Slave_SQL_Running: Yes\n"
        "          Exec_Master_Log_Pos: 19230\n"
        "        Seconds_Behind_Master: 0\n"
        "      Slave_SQL_Running_State: Replica has read all relay log; waiting for more updates\n"
    )
    return "".join(
        f"TS {epoch}.600000000 2026-04-21 16:51:{41 + i:02d}\n{row}" for i, epoch in enumerate(_EPOCHS)
    )
