"""The wait model as data: the resources a MySQL or MariaDB session waits for, what a state means,
and the columns of the per-snapshot waits frame.

A senior engineer reads a capture by asking, for every session, what it waits for and who holds it.
The manuals name the wait in the session's State (``Waiting for table metadata lock``), in its
transaction (``trx_state`` ``LOCK WAIT``), or not at all (``Sleep``: the client's turn). This module
fixes the words: ``Resource`` (what is waited for), ``StateMeaning`` (one manual entry: a state, the
thread that shows it, the servers that print it, its resource and the page that says so) and
``WAIT_COLUMNS`` (one row per waiting session per snapshot, ``analyzer.waits.read.waits``).

Sources: MySQL 8.4 Reference Manual, "Examining Server Thread (Process) Information" (the thread
state pages) and "Internal Locking Methods"; MariaDB Server documentation, "Thread States".
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Resource(enum.StrEnum):
    """What a session or thread waits for (the value is the word the findings print)."""

    #: An InnoDB row (record or gap) lock held by another transaction (innodb_trx ``LOCK WAIT``).
    ROW_LOCK = "row lock"
    #: A metadata lock (MySQL 8.4 "Metadata Locking"): table, schema, stored program, trigger, event,
    #: and GET_LOCK()'s user-level locks, which the server takes through the same subsystem.
    METADATA_LOCK = "metadata lock"
    #: A table-level lock of the server's own lock manager (LOCK TABLES, MyISAM/MEMORY/MERGE tables):
    #: MySQL 8.4 "Internal Locking Methods" describes it apart from metadata and row locks.
    TABLE_LOCK = "table lock"
    #: FLUSH TABLES WITH READ LOCK, the commit lock it takes, MariaDB's BACKUP STAGE / backup lock and
    #: MySQL's LOCK INSTANCE FOR BACKUP.
    GLOBAL_READ_LOCK = "global read or backup lock"
    #: A full file system (the server waits for free space: MySQL 8.4 "How MySQL Handles a Full Disk").
    DISK_SPACE = "disk space"
    #: Block-device I/O: a thread in uninterruptible sleep (ps STAT ``D``) in the block layer's wait
    #: channels (``io_schedule``; the kernel's Documentation/block). Not a processlist state.
    DISK_IO = "disk I/O"
    #: The redo log or binary log written and flushed (group commit, fsync) at commit.
    LOG_FLUSH = "redo or binlog flush"
    #: A semi-synchronous replica's acknowledgement of a commit.
    REPLICA_ACK = "replica acknowledgement"
    #: A replica's own applier: its workers' queues, the commit order they keep, relay log space
    #: (MySQL 8.4 "Replication SQL Thread States": ``Waiting for Replica Workers to free pending
    #: events``, ``Waiting for preceding transaction to commit``).
    REPLICA_APPLY = "replica applier"
    #: Galera certification of a write-set.
    GALERA_CERTIFICATION = "Galera certification"
    #: Galera flow control, or the cluster's total order (apply or commit order, TOI DDL).
    GALERA_FLOW_CONTROL = "Galera flow control or apply order"
    #: The table cache, open files or the table definition cache (``Opening tables``).
    TABLE_CACHE = "table cache or open files"
    #: The query cache's lock (MySQL 5.7 / MariaDB "Query Cache Thread States": ``Waiting for query
    #: cache lock``), a global mutex every cached statement takes.
    QUERY_CACHE = "query cache lock"
    #: A CPU. No manual state says a session waits for one; kept for thread pool or InnoDB
    #: concurrency queues when a capture shows them (not yet).
    CPU = "CPU"
    #: The client or the network: reading from or writing to the client, or a transaction left open
    #: while its session is idle (Sleep): the application's turn.
    CLIENT = "client or network"
    #: A replica waiting for its source's events (the I/O thread's connection, the SQL thread's
    #: relay log caught up).
    SOURCE = "replication source"
    #: A connection slot: max_connections or an account's max_user_connections reached, new
    #: connections refused (Connection_errors_max_connections); held by the sessions connected.
    CONNECTION_SLOT = "connection slot"
    #: InnoDB purge of the undo history (History list length): it waits for the oldest read view,
    #: held by a transaction (MySQL 8.4 "Purge Configuration"; MariaDB "InnoDB Purge").
    PURGE = "purge of the undo history"
    #: Working, or idle with nothing held: not a wait for a shared resource.
    NOTHING = "nothing"
    #: A state no table entry knows: reported, never dropped.
    UNKNOWN = "unknown"


#: How ``StateMeaning.state`` is compared with a session's state (case-insensitive, as MySQL and
#: MariaDB spell the same stage ``statistics`` and ``Statistics``).
MATCHES = ("exact", "prefix", "regex")
#: The kinds of thread a state belongs to (``StateMeaning.thread``).
THREADS = (
    "client",
    "replica_io",
    "replica_sql",
    "replica_worker",
    "source_dump",
    "galera",
    "event_scheduler",
    "system",
)
#: The servers a state is printed by (``StateMeaning.servers``).
SERVERS = ("mysql", "mariadb")
#: Which column of a capture an entry reads (``StateMeaning.column``): the processlist's State, its
#: Command (read when the State is empty), or an InnoDB transaction's state (INNODB_TRX
#: ``trx_state``, the monitor's TRANSACTIONS).
COLUMNS = ("state", "command", "trx_state")


@dataclass(frozen=True, slots=True)
class StateMeaning:
    """One state as a manual lists it.

    ``state``: the text as the manual writes it (for ``regex``, a pattern); ``match``: one of
    ``MATCHES``; ``resource``: what a thread in this state waits for; ``thread``: one of ``THREADS``;
    ``servers``: which of ``SERVERS`` print it; ``source``: the page that says so (a URL);
    ``note``: the manual's meaning in our words, one line; ``column``: one of ``COLUMNS`` (an
    extension of the agreed shape: a Command and a State can share a word with two meanings,
    Command ``Statistics`` and State ``statistics``).
    """

    state: str
    match: str
    resource: Resource
    thread: str
    servers: frozenset[str]
    source: str
    note: str
    column: str = "state"

    def __post_init__(self) -> None:
        if self.match not in MATCHES:
            raise ValueError(f"match {self.match!r} is not one of {MATCHES}")
        if self.thread not in THREADS:
            raise ValueError(f"thread {self.thread!r} is not one of {THREADS}")
        if not self.servers or not self.servers <= frozenset(SERVERS):
            raise ValueError(f"servers {sorted(self.servers)} are not among {SERVERS}")
        if self.column not in COLUMNS:
            raise ValueError(f"column {self.column!r} is not one of {COLUMNS}")
        if not self.source.startswith("https://"):
            raise ValueError(f"source {self.source!r} is not a page a reader can open")


#: The frames a waits row comes from (``source_frame``): the processlist, INFORMATION_SCHEMA.INNODB_TRX,
#: pt-stalk ``-lock-waits``, SHOW ENGINE INNODB STATUS, performance_schema.threads, ps.
SOURCE_FRAMES = ("processlist", "innodb_trx", "lock_waits", "innodb_status", "threads", "ps")

#: The columns of the waits frame (``analyzer.waits.read.waits``), one row per session (or server
#: thread) per snapshot that waits for something (a resource, ``CPU``, ``CLIENT`` or ``UNKNOWN``; a
#: session waiting for ``NOTHING`` is no row):
#:
#: - ``ts`` datetime64[ns, UTC]: the snapshot; ``host``: the server (``Timeline.host``);
#: - ``session`` Int64: processlist Id (NA for a thread with no session); ``trx_id`` string: its
#:   InnoDB transaction, when a transaction list shows one (NA otherwise);
#: - ``user``, ``client`` (Host without its port), ``db``, ``command``; ``time_s`` Int64 (Time);
#: - ``state``: the State (for a ps thread, its wait channel); ``resource`` category of
#:   ``Resource`` values; ``object``: what it waits on when the bundle says (a table, a lock,
#:   a wait channel; NA otherwise); ``source_frame``: one of ``SOURCE_FRAMES``;
#: - ``holder_kind``, ``holder_id``: who holds what it waits for (a ``Culprit`` kind and id),
#:   NA until holders are read (a later step).
#:
#: The text columns (all but ``trx_id``) are categories of their names: a day of 1,000 sessions a
#: snapshot is millions of rows of a few names each.
WAIT_COLUMNS = (
    "ts",
    "host",
    "session",
    "trx_id",
    "user",
    "client",
    "db",
    "command",
    "time_s",
    "state",
    "resource",
    "object",
    "source_frame",
    "holder_kind",
    "holder_id",
)
