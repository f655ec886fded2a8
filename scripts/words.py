"""Write the word lists of parsers/words/ from the real tools of this machine: the words a Linux kernel,
procps, sysstat, MariaDB and Percona Toolkit print of their own (labels, counters, states, messages),
never a value of a capture. A redacted share link serves a raw line's word only when its format's
vocabulary holds it (parsers/vocabulary.py).

    .venv/bin/python scripts/words.py          # rewrites parsers/words/linux.txt and mysql.txt

Sources (each read here, on the machine that runs this):
- linux: the names of /proc/vmstat, /proc/meminfo, /proc/slabinfo, /proc/interrupts (IRQ names and
  descriptions), ``sysctl -a`` keys, ``netstat -s`` texts, kernel threads' names (children of
  kthreadd), and the message strings of procps (vmstat, ps, top) and sysstat (mpstat, iostat, sar);
- mysql: the running MariaDB's SHOW GLOBAL VARIABLES and STATUS names, the names of the tables and
  columns of information_schema, performance_schema, mysql and sys, information_schema.KEYWORDS and
  SQL_FUNCTIONS, SHOW ENGINE INNODB STATUS's words, the message strings of the server binary (its
  thread states, InnoDB's and the error log's texts) and of errmsg.sys, Percona Toolkit's pt-stalk
  and pt-mysql-summary texts, ``mysqld --verbose --help`` option names.

Only words are kept (letters, digits, ``_``; lower-cased), of messages (strings of two words or more,
mostly letters) or of names; hosts, users, paths of this machine are not read.
"""

from __future__ import annotations

import getpass
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "parsers" / "words"
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: A word of a message: two letters or more, no digit soup (``A0f``, ``AWAVAUATUSH`` of machine code).
WORD = re.compile(r"(?:[a-z]{2,}|[A-Z][a-z]+|[A-Z]{2,8})(?:_?[0-9]+)?\Z")
#: A name: lower case with underscores, or Capitalised, or ``Name_with_parts``.
NAME = re.compile(r"[A-Za-z][a-z0-9]*(?:_[A-Za-z0-9]+)+\Z|[a-z]{2,}[0-9]*\Z|[A-Z][a-z]{2,}[0-9]*\Z")


def run(*cmd: str) -> str:
    """A command's output, empty when it is missing or fails."""
    if not shutil.which(cmd[0]):
        print(f"skipped: {cmd[0]} is not installed", file=sys.stderr)
        return ""
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace", check=False).stdout


def messages(text: str) -> set[str]:
    """Words of the strings of two words or more that are mostly letters (messages, labels, states)."""
    out: set[str] = set()
    for line in text.splitlines():
        if " " in line.strip() and sum(c.isalpha() or c == " " for c in line) >= 0.8 * len(line):
            out.update(t for t in TOKEN.findall(line) if WORD.match(t) or NAME.match(t))
    return out


def names(text: str) -> set[str]:
    """Every token of ``text`` shaped like a word or a name."""
    return {t for t in TOKEN.findall(text) if WORD.match(t) or NAME.match(t)}


def first_fields(text: str, sep: str | None = None) -> set[str]:
    """The first field of every line (a /proc file's names, a variable's name)."""
    return {line.split(sep)[0].strip().rstrip(":") for line in text.splitlines() if line.strip()}


#: The server's own names in its binary: ``Status_names``, ``Master_SSL_CA_File``, ``variable_names``.
SERVER_NAME = re.compile(r"[A-Z][a-z]+(?:_[A-Za-z0-9]+)+\Z|[a-z]+(?:_[a-z0-9]+)+\Z")
#: Columns of MySQL 8.0/8.4 that a MariaDB server does not have (MySQL 8.4 Reference Manual: "SHOW
#: REPLICA STATUS Statement", "The data_locks Table", "The metadata_locks Table", "The
#: innodb_lock_waits and x$innodb_lock_waits Views", "The threads Table").
MYSQL8 = """
Source_Host Source_User Source_Port Source_Log_File Read_Source_Log_Pos Relay_Source_Log_File
Exec_Source_Log_Pos Replica_IO_Running Replica_SQL_Running Replica_IO_State Seconds_Behind_Source
Source_SSL_Allowed Source_SSL_CA_File Source_SSL_CA_Path Source_SSL_Cert Source_SSL_Cipher Source_SSL_Key
Source_SSL_Verify_Server_Cert Source_Server_Id Source_UUID Source_Info_File Source_Retry_Count
Source_Bind Source_SSL_Crl Source_SSL_Crlpath Source_TLS_Version Source_public_key_path
Get_Source_public_key Replica_SQL_Running_State Retrieved_Gtid_Set Executed_Gtid_Set Auto_Position
Replicate_Rewrite_DB Channel_Name Network_Namespace Last_IO_Error_Timestamp Last_SQL_Error_Timestamp
ENGINE ENGINE_LOCK_ID ENGINE_TRANSACTION_ID THREAD_ID EVENT_ID OBJECT_SCHEMA OBJECT_NAME PARTITION_NAME
SUBPARTITION_NAME INDEX_NAME OBJECT_INSTANCE_BEGIN LOCK_TYPE LOCK_MODE LOCK_STATUS LOCK_DATA
LOCK_DURATION OWNER_THREAD_ID OWNER_EVENT_ID SOURCE REQUESTING_ENGINE_LOCK_ID BLOCKING_ENGINE_LOCK_ID
wait_started wait_age wait_age_secs locked_table locked_table_schema locked_table_name
locked_table_partition locked_table_subpartition locked_index locked_type waiting_trx_id
waiting_trx_started waiting_trx_age waiting_trx_rows_locked waiting_trx_rows_modified waiting_pid
waiting_query waiting_lock_id waiting_lock_mode blocking_trx_id blocking_pid blocking_query
blocking_lock_id blocking_lock_mode blocking_trx_started blocking_trx_age blocking_trx_rows_locked
blocking_trx_rows_modified sql_kill_blocking_query sql_kill_blocking_connection
PROCESSLIST_ID PROCESSLIST_USER PROCESSLIST_HOST PROCESSLIST_DB PROCESSLIST_COMMAND PROCESSLIST_TIME
PROCESSLIST_STATE PROCESSLIST_INFO PARENT_THREAD_ID ROLE INSTRUMENTED HISTORY CONNECTION_TYPE
THREAD_OS_ID RESOURCE_GROUP EXECUTION_ENGINE CONTROLLED_MEMORY MAX_CONTROLLED_MEMORY TOTAL_MEMORY
MAX_TOTAL_MEMORY TELEMETRY_ACTIVE FOREGROUND BACKGROUND SHARED_READ SHARED_WRITE SHARED_UPGRADABLE
SHARED_NO_WRITE SHARED_NO_READ_WRITE SHARED_READ_ONLY INTENTION_EXCLUSIVE EXCLUSIVE PENDING GRANTED
VICTIM KILLED STATEMENT TRANSACTION EXPLICIT variable_source variables_info gtid_mode super_read_only
rpl_semi_sync_source_status rpl_semi_sync_replica_status innodb_os_log_fsyncs GROUP_NAME SOURCE_UUID
Log_name File_size Encrypted REPEATABLE_READ READ_COMMITTED READ_UNCOMMITTED SERIALIZABLE
"""


#: Processes of every database server's host (their names as ps and top print them).
SYSTEM_PROCESSES = """
init systemd kthreadd mysqld mysqld_safe mariadbd mariadb mysql mysqladmin mysqldump mariadb-dump
mysqlsh mysqlrouter xtrabackup mariabackup pt-stalk pt-summary pt-mysql-summary pt-query-digest
bash sh dash sleep timeout cat tail head cut awk sed grep gzip xz zstd tar ps top vmstat mpstat iostat
sar pidstat sadc perf gdb strace sshd cron crond rsyslogd journald udevd dbus chronyd ntpd
"""


#: The directories of the Filesystem Hierarchy Standard 3.0 and of a MySQL server's files, as paths
#: in command lines, mounts and messages show them.
FHS = """
bin boot dev etc home lib lib32 lib64 libexec media mnt opt proc root run sbin srv sys tmp usr var
cache crash games include local lock log mail share spool src systemd init sysconfig default
mysql mysqld mariadb my cnf conf pid sock socket data datadir tmpdir binlog relay relaylog innodb
"""


def linux() -> set[str]:
    words: set[str] = set(FHS.split())
    for path in ("/proc/vmstat", "/proc/meminfo"):
        words |= set(TOKEN.findall(" ".join(first_fields(Path(path).read_text()))))
    words |= names(" ".join(first_fields(Path("/proc/slabinfo").read_text())))
    words |= names(Path("/proc/slabinfo").read_text().splitlines()[1])
    for line in Path("/proc/interrupts").read_text().splitlines():
        label = line.split(":", 1)[0].strip()
        if label.isalpha():  # the kernel's names of its own interrupts: NMI, LOC, SPU, PMI, RES ...
            words.add(label)
        words |= names(re.sub(r"^\s*\S+:(?:\s+\d+)*", "", line))
    words |= names(" ".join(k.split("=")[0] for k in run("sysctl", "-a").splitlines()).replace(".", " "))
    netstat = run("netstat", "-s")
    words |= messages(netstat) | set(TOKEN.findall(netstat)) - {
        t for t in TOKEN.findall(netstat) if t[0].isdigit()
    }
    kthreads = run("ps", "--ppid", "2", "-o", "comm=") + "\n" + SYSTEM_PROCESSES
    words |= names(re.sub(r"[/:]", " ", kthreads))
    for tool in ("vmstat", "ps", "top", "mpstat", "iostat", "sar", "df", "free", "numastat"):
        path = shutil.which(tool)
        if path:
            words |= messages(run("strings", "-n", "4", path))
    for args in (
        ("vmstat", "1", "1"),
        ("vmstat", "-w", "-t", "1", "1"),
        ("mpstat", "-P", "ALL", "1", "1"),
        ("iostat", "-dx", "1", "1"),
        ("df", "-k"),
        ("top", "-b", "-n", "1"),
    ):
        head = run(*args).splitlines()[:8]
        words |= names("\n".join(head))
    return {w.lower() for w in words}


def mysql() -> set[str]:
    def query(sql: str) -> str:
        return run("mariadb", "-uroot", "-N", "-B", "-e", sql)

    words: set[str] = set()
    words |= first_fields(query("SHOW GLOBAL VARIABLES"), "\t") | first_fields(
        query("SHOW GLOBAL STATUS"), "\t"
    )
    words |= names(
        query(
            "SELECT table_name, column_name FROM information_schema.COLUMNS WHERE table_schema IN "
            "('information_schema','performance_schema','mysql','sys')"
        )
    )
    words |= names(query("SELECT word FROM information_schema.KEYWORDS"))
    words |= names(query("SELECT function FROM information_schema.SQL_FUNCTIONS"))
    words |= names(query("SHOW ENGINE INNODB STATUS"))
    server = shutil.which("mariadbd") or "/usr/sbin/mariadbd"
    strings = run("strings", "-n", "4", server)
    words |= messages(strings) | {line for line in strings.splitlines() if SERVER_NAME.match(line)}
    words |= set(MYSQL8.split())
    options = run(server, "--no-defaults", "--verbose", "--help")
    words |= {m.replace("-", "_") for m in re.findall(r"^\s*--([a-z][a-z0-9-]*)", options, re.M)}
    for errmsg in Path("/usr/share/mysql/english").glob("errmsg.sys"):
        words |= messages(run("strings", "-n", "4", str(errmsg)))
    for tool in ("pt-stalk", "pt-mysql-summary", "pt-summary"):
        path = shutil.which(tool)
        if path:
            words |= messages(Path(path).read_text(errors="replace"))
    return {w.lower() for w in words if TOKEN.fullmatch(w)}


def main() -> None:
    OUT.mkdir(exist_ok=True)
    # This machine's own names are not words of the tools (a server named "db1" in a message).
    own = {p.lower() for p in re.split(r"[.-]", socket.gethostname()) if p} | {getpass.getuser().lower()}
    own -= {"root", "mysql", "localhost"}
    for name, make in (("linux", linux), ("mysql", mysql)):
        words = sorted(w for w in make() - own if len(w) >= 2)
        (OUT / f"{name}.txt").write_text("\n".join(words) + "\n")
        print(f"parsers/words/{name}.txt: {len(words)} words")


if __name__ == "__main__":
    main()
