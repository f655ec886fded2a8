"""A bundle with a member of every format of the parser registry, each made from a real capture under
tests/fixtures/ with planted values in every field that can hold one: a literal, a MySQL user, a
client host (a name and an address), a schema, the server's host name and its replication source.

The captures are those of their fixture folders (pt-stalk 3.2.1 on MariaDB 10.11, MySQL Shell's
diagnostics, procps, sysstat); only values are edited here, so every line keeps its real shape.
Two formats have no capture of their own under tests/fixtures/ (pt-stalk's ``-threads`` and
``-mutex-status1``): their members are written here in the layout their parsers document
(performance_schema.threads ``\\G``, SHOW ENGINE INNODB MUTEX).
"""

from __future__ import annotations

import io
import re
import tarfile
import zipfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

#: What no byte of a fully redacted link may hold, by kind.
PLANTED = {
    "literal": ["zz-planted-literal-9f3", "918273645"],
    "user": ["planted_user_q7"],
    "host": ["planted-client-7.example.net", "10.77.66.55"],
    "schema": ["planted_schema_k2"],
    "server": ["planted-server-5", "planted-server-6", "planted-source-8"],
}
#: The shapes an audit of redacted links found leaking: values where no format declares a field
#: (``_AUDIT_EDITS``). No redacted link serves them; a link without redaction does.
PLANTED["audit"] = [
    "zzaudit-customer-31",  # a processlist Info continuation line shaped like "Word: ..."
    "zzaudit-trx-ref-32",  # the same in -transactions
    "zzaudit-lockwait-ref-33",  # and in -lock-waits
    "zzaudit-innodb-note-34",  # an InnoDB statement over several lines, a SET line on its own
    "zzaudit-record-35",  # an InnoDB long record field, "(total N bytes);"
    "zzaudit-errorlog-row-36",  # an error log's record dump
    "zzaudit-crash-literal-37",  # a crash report's query over several lines
    "zzaudit_crash_line_38",
    "zzaudit_fn_39",  # a ps command line: a statement without FROM
    "zzaudit-arg-40",
    "zzaudit_dump_user_41",  # mysqldump -u USER -h HOST --databases DB
    "zzaudit-dump-host-42",
    "zzaudit_dump_db_43",
    "zzaudit_from_db_45",  # Replicate_Rewrite_DB
    "zzaudit_to_db_46",
    "zzaudit_shell_user_47",  # MySQL Shell and Router connection strings, user:password@host
    "zzaudit-shell-host-49",
    "zzaudit_router_user_50",
    "zzaudit-router-host-52",
]
#: Passwords planted in the same shapes: never served, on any link, redacted or not.
PASSWORDS = ["zzaudit-pw-44", "zzaudit-shell-pw-48", "zzaudit-router-pw-51"]
LITERAL, NUMBER = PLANTED["literal"]
USER = PLANTED["user"][0]
HOST, ADDRESS = PLANTED["host"]
SCHEMA = PLANTED["schema"][0]
SERVER, SHELL_SERVER, SOURCE = PLANTED["server"]

#: Edits of every member: (pattern, replacement). The capture's own values (user ``app``, schema
#: ``shop``, clients on ``localhost``, the server ``vm``/``db1``, the row ``id=42``) become planted ones.
_EDITS = (
    (r"localhost 127\.0\.0\.1 app ", f"{HOST} {ADDRESS} {USER} "),  # InnoDB's MySQL thread id line
    (r"10\.0\.1\.2\d app ", f"{ADDRESS} {USER} "),
    (r"localhost:(\d+)", rf"{HOST}:\1"),
    (r"10\.0\.1\.2\d:(\d+)", rf"{ADDRESS}:\1"),
    (r"blocking_host: localhost", f"blocking_host: {HOST}"),
    (r"(?<![\w./-])app(?![\w.-])", USER),
    (r"(?<![\w./-])shop(?![\w-])", SCHEMA),
    (r"(?<![\w./-])vm(?![\w.-])", SERVER),
    (r"(?<![\w./-])db1(?![\w.-])", SHELL_SERVER),
    (r"WHERE id=42", f"WHERE email='{LITERAL}' AND id={NUMBER}"),
    (r"'user0@example\.com'", f"'{LITERAL}'"),
    (r"WHERE id = 77120", f"WHERE id = {NUMBER}"),
    (r"asc paid;;", f"asc {LITERAL};;"),
    (
        r"db: 'unconnected' user: 'unauthenticated' host: 'localhost'",
        f"db: '{SCHEMA}' user: '{USER}' host: '{HOST}'",
    ),
    (r"IP address '10\.0\.9\.14'", f"IP address '{ADDRESS}'"),
    (r"127\.0\.0\.1:(3\d{4})(\s+)TIME_WAIT", rf"{ADDRESS}:\1\2TIME_WAIT"),
    (r"Master_Host: 127\.0\.0\.1", f"Master_Host: {SOURCE}.example.net"),
    (r"Master_User: repl", f"Master_User: {USER}"),
    (
        r"Last_SQL_Error: \n",
        (
            f"Last_SQL_Error: Error 'Duplicate entry '{LITERAL}' for key 'PRIMARY'' on query. Default "
            f"database: '{SCHEMA}'. Query: 'INSERT INTO t VALUES ('{LITERAL}', {NUMBER})'\n"
        ),
    ),
)


_AUDIT_PS = (
    "root     17990 17001  0  2000  3000   1 15:52 pts/0    00:00:00 mysql -e SELECT "
    "zzaudit_fn_39('zzaudit-arg-40')\n"
    "root     17991 17001  0  2000  3000   1 15:52 pts/0    00:00:00 mysqldump -u zzaudit_dump_user_41 -h "
    "zzaudit-dump-host-42 -pzzaudit-pw-44 --databases zzaudit_dump_db_43\n"
    "root     17992 17001  0  2000  3000   1 15:52 pts/0    00:00:00 mysqlsh "
    "zzaudit_shell_user_47:zzaudit-shell-pw-48@zzaudit-shell-host-49:3306\n"
    "root     17993 17001  0  2000  3000   1 15:52 pts/0    00:00:00 mysqlrouter --bootstrap "
    "zzaudit_router_user_50:zzaudit-router-pw-51@zzaudit-router-host-52:3306\n"
)
#: The audit's shapes (``PLANTED["audit"]``, ``PASSWORDS``), planted in the members whose formats hold them.
_AUDIT_EDITS = (
    (r"(    Info: UPDATE orders[^\n]*\n)(Progress:)", r"\1Customer: zzaudit-customer-31\n\2"),
    (r"( trx_query: UPDATE orders[^\n]*\n)", r"\1Reference: zzaudit-trx-ref-32 WHERE id = 7\n"),
    (r"(     waiting_query: UPDATE orders[^\n]*\n)", r"\1Reference: zzaudit-lockwait-ref-33\n"),
    (
        r"(query id 35 [^\n]*\n)UPDATE orders SET (n=n\+1 WHERE[^\n]*)\n",
        r"\1UPDATE orders\nSET\n  note = 'zzaudit-innodb-note-34', \2\n",
    ),
    (
        r"(PHYSICAL RECORD: n_fields \d+; compact format; info bits \d+\n)",
        r"\1 9: len 300; hex 7a7a6175; asc zzaudit-record-35 and more...(total 300 bytes);\n",
    ),
    (
        r"(2026-11-27 16:01:40 0 \[Note\] InnoDB: 128 rollback segments are active\.\n)",
        # an event's lines (an [ERROR] and what follows it), which the moment shows
        (
            r"\g<1>"
            r"2026-11-27 16:01:40 0 [ERROR] mysqld got signal 11 ;\n"
            r"InnoDB: Record in index `PRIMARY` of table `shop`.`orders` was not found on update\n"
            r" 1: len 16; hex 7a7a; asc zzaudit-errorlog-row-36;;\n"
            r"Query (0x7f2a1c0123d0): UPDATE orders SET note='zzaudit-crash-literal-37'\n"
            r"  , owner = zzaudit_crash_line_38 WHERE id = 3\n"
            r"Connection ID (thread ID): 31\n"
        ),
    ),
    (r"(UID +PID +PPID +C +SZ +RSS +PSR +STIME +TTY +TIME +CMD\n)", lambda m: m.group(1) + _AUDIT_PS),
    (r"Replicate_Rewrite_DB: \n", "Replicate_Rewrite_DB: (zzaudit_from_db_45,zzaudit_to_db_46)\n"),
)


def planted(text: str) -> str:
    """``text`` with the capture's own values replaced by the planted ones (``_EDITS``), and the
    audit's shapes planted (``_AUDIT_EDITS``)."""
    for pattern, new in (*_EDITS, *_AUDIT_EDITS):
        text = re.sub(pattern, new, text)
    return text


def _tar_members(bundle: str, *names: str) -> dict[str, bytes]:
    out = {}
    with tarfile.open(FIXTURES / "bundles" / bundle) as tar:
        for member in tar.getmembers():
            if member.isfile() and (
                not names or member.name.rsplit("-", 1)[-1] in names or member.name.endswith(names)
            ):
                out[member.name.rsplit("/", 1)[-1]] = tar.extractfile(member).read()
    return out


def _threads() -> str:
    rows = []
    for n, (tid, pid, user, host, db, info) in enumerate(
        [
            (
                52,
                "11",
                USER,
                f"{HOST}:40412",
                SCHEMA,
                f"UPDATE orders SET note = '{LITERAL}'\n  WHERE id = {NUMBER}",
            ),
            (1, "NULL", "NULL", "NULL", "NULL", "NULL"),
        ],
        start=1,
    ):
        rows.append(
            f"*************************** {n}. row ***************************\n"
            f"          THREAD_ID: {tid}\n"
            f"               NAME: thread/sql/one_connection\n"
            f"               TYPE: FOREGROUND\n"
            f"     PROCESSLIST_ID: {pid}\n"
            f"   PROCESSLIST_USER: {user}\n"
            f"   PROCESSLIST_HOST: {host}\n"
            f"     PROCESSLIST_DB: {db}\n"
            f"PROCESSLIST_COMMAND: Query\n"
            f"   PROCESSLIST_TIME: 3\n"
            f"  PROCESSLIST_STATE: updating\n"
            f"   PROCESSLIST_INFO: {info}\n"
            f"   PARENT_THREAD_ID: NULL\n"
            f"               ROLE: NULL\n"
            f"       INSTRUMENTED: YES\n"
            f"            HISTORY: YES\n"
            f"    CONNECTION_TYPE: TCP/IP\n"
            f"       THREAD_OS_ID: {6120 + n}\n"
        )
    return "".join(
        f"TS {1795794773 + i}.009325313 2026-11-27 15:52:{53 + i}\n" + "".join(rows) for i in range(3)
    )


def _mutex_status() -> str:
    return "".join(
        f"TS {1795794773 + i}.100000000 2026-11-27 15:52:{53 + i}\n"
        "Type\tName\tStatus\n"
        f"InnoDB\trwlock: dict0dict.cc:2455\twaits={3 + i}\n"
        f"InnoDB\trwlock: btr0sea.cc:211\twaits={5 + i}\n"
        for i in range(3)
    )


def _slowlog() -> str:
    """The real MariaDB slow log's header and its entries on schema ``shop`` (tests/fixtures/slowlog/),
    their client a planted host and address and the row of its ``UPDATE`` a planted number (the
    user, schema and literal are planted by ``_EDITS``)."""
    lines = (
        (FIXTURES / "slowlog" / "mariadb-10.11_query_plan-explain_sysbench.log").read_text().splitlines(True)
    )
    text = "".join(lines[:3] + lines[5929:5930] + lines[5999:6049])
    text = text.replace("@  [127.0.0.1]", f"@ {HOST} [{ADDRESS}]")
    return text.replace("WHERE id = 1;", f"WHERE id = {NUMBER};")


def _summaries() -> dict[str, str]:
    """The real pt-summary and pt-mysql-summary reports (tests/fixtures/summaries/), beside the
    collection as a support bundle carries them: the host ``vm`` (planted by ``_EDITS``), a client
    address of Network Connections, a mount point named after the schema; the account the report ran
    as, the Processlist tables' user, client address and schema (``app``, ``shop``: ``_EDITS``), the
    replica of Slave Hosts, the data directory, the configuration file's bind address."""
    folder = FIXTURES / "summaries"
    system = (folder / "pt-summary-3.2.1_debian12.out").read_text()
    system = re.sub(r"(?m)^    127\.0\.0\.1( +\d+)$", rf"    {ADDRESS}\1", system)
    system = system.replace("  /dev/shm\n", f"  /srv/{SCHEMA}\n", 1)
    server = (folder / "pt-mysql-summary-3.2.1_mariadb-10.11_source.out").read_text()
    server = server.replace("User | root@127.0.0.1", f"User | {USER}@{HOST}")
    server = re.sub(r"(?m)^  127\.0\.0\.1( +\d+ +\d+ +\d+ +\d+)$", rf"  {ADDRESS}\1", server)
    server = server.replace("     Host: 127.0.0.1", f"     Host: {SOURCE}.example.net")
    server = server.replace("/tmp/sumrepl/src/", f"/srv/{SCHEMA}/")
    server = server.replace(
        "bind-address                        = 127.0.0.1", f"bind-address                        = {ADDRESS}"
    )
    for old, new in ((system, "    127.0.0.1"), (server, "root@127.0.0.1")):
        assert new not in old
    return {"pt-summary.out": system, "pt-mysql-summary.out": server}


def members() -> dict[str, bytes]:
    """Every member of the planted bundle: ``planted/`` (a pt-stalk collection: the row-lock capture
    and the host members of others, on the server ``SERVER``) and ``mysql-diagnostics-.../`` (MySQL
    Shell's results of another server, ``SHELL_SERVER``): a case of two hosts."""
    pt = _tar_members("culprit-rowlock.tar.gz")
    pt.update(
        _tar_members(
            "ptstalk-mariadb-fullfs-crash.tar.gz",
            "log_error",
            "sysctl",
            "disk-space",
            "netstat",
            "slabinfo",
            "numastat",
        )
    )
    pt.update(_tar_members("culprit-tablecache.tar.gz", "opentables1"))
    pt.update(_tar_members("overlap-commit.tar.gz", "diskstats", "interrupts", "procvmstat"))
    pt.update(_tar_members("ptstalk-mariadb-tmptables.tar.gz", "netstat_s"))
    with tarfile.open(FIXTURES / "bundles" / "cluster-replica-lag.tar.gz") as tar:
        pt["2026_11_27_19_23_35-slave-status"] = tar.extractfile(
            "replica-lag/db-b/2026_11_27_19_23_35-slave-status"
        ).read()
    pt["2026_11_27_16_35_06-ps-locks-transactions"] = (
        FIXTURES / "ps-locks" / "2026_11_27_16_35_06-ps-locks-transactions"
    ).read_bytes()
    pt["2026_11_27_15_52_53-threads"] = _threads().encode()
    pt["2026_11_27_15_52_53-mutex-status1"] = _mutex_status().encode()
    pt["pasted-vmstat.txt"] = (FIXTURES / "context" / "pasted_vmstat-w-t_headerless.txt").read_bytes()
    pt["2026_11_27_15_52_53-slow.log"] = _slowlog().encode()
    pt.update({name: text.encode() for name, text in _summaries().items()})
    out = {f"planted/{name}": planted(data.decode("utf-8")).encode() for name, data in pt.items()}
    with zipfile.ZipFile(FIXTURES / "mysqlsh" / "highload-db1.zip") as z:
        for name in z.namelist():
            if name.endswith((".tsv", "/instance", "/error_log")):
                out[name] = planted(z.read(name).decode("utf-8")).encode()
    return out


def bundle(path: Path) -> Path:
    """The planted bundle written as a ``.tar.gz`` at ``path``."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in sorted(members().items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path
