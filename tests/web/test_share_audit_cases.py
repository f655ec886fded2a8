"""The shapes an audit of redacted links found leaking, one test each: each planted value sits where
no format declared a field for it, and the link, rebuilding every raw line from safe tokens, serves
none of it. The lines are real-shaped (pt-stalk 3.2.1 on MariaDB 10.11 and MySQL 8.4, procps, MySQL
Shell); the planted values are ``zz...`` words no tool prints."""

from __future__ import annotations

import pytest

from web.sharing.redaction import formats
from web.sharing.redaction.redactor import REDACT_ALL, Redactor, Vocabulary

#: The case's values its declared fields name (what a link collects from the members).
VOCAB = Vocabulary(hosts=["app1.acme.io", "10.0.1.21"], users=["app"], schemas=["shop"])


def _served(fmt: str, lines: list[str]) -> str:
    out = formats.raw_lines(fmt, lines, Redactor(REDACT_ALL, VOCAB, b"audit"))
    assert out is not None
    return "\n".join(out)


def _assert_none_served(fmt: str, lines: list[str], planted: tuple[str, ...]) -> str:
    served = _served(fmt, lines)
    assert [p for p in planted if p.lower() in served.lower()] == [], served
    return served


def test_a_processlist_info_continuation_line_shaped_like_a_field_leaks_nothing() -> None:
    lines = [
        "*************************** 3. row ***************************",
        "     Id: 12",
        "   User: app",
        "   Host: 10.0.1.21:51234",
        "     db: shop",
        "Command: Query",
        "   Time: 3",
        "  State: Sending data",
        "   Info: SELECT id FROM orders WHERE note = 'see below'",
        "Customer: zzleak_customer_name and zzleak_card",
    ]
    served = _assert_none_served("processlist", lines, ("zzleak_customer_name", "zzleak_card"))
    assert "   Info: select id from orders where note = ?" in served
    assert "   User: user-1" in served and "  State: Sending data" in served


@pytest.mark.parametrize(
    ("fmt", "field"),
    [("innodb_trx", "trx_query"), ("lock_waits", "waiting_query"), ("lock_waits", "blocking_query")],
)
def test_the_same_continuation_in_transactions_and_lock_waits_leaks_nothing(fmt: str, field: str) -> None:
    lines = [
        "*************************** 1. row ***************************",
        f"{field}: UPDATE orders SET note = 'x'",
        "Reference: zzleak_reference_77 WHERE id = 5",
    ]
    _assert_none_served(fmt, lines, ("zzleak_reference_77",))


def test_an_innodb_statement_over_several_lines_with_a_set_line_on_its_own_leaks_nothing() -> None:
    lines = [
        "---TRANSACTION 4120, ACTIVE 12 sec starting index read",
        "mysql tables in use 1, locked 1",
        "LOCK WAIT 2 lock struct(s), heap size 1128, 1 row lock(s)",
        "MariaDB thread id 31, OS thread handle 140234, query id 922 app1.acme.io 10.0.1.21 app Updating",
        "UPDATE orders",
        "SET",
        "  note = 'zzleak_innodb_note', owner = 'zzleak_owner_col'",
        "WHERE id = 4",
        "------- TRX HAS BEEN WAITING 12 SEC FOR THIS LOCK TO BE GRANTED:",
    ]
    _assert_none_served("innodb_status", lines, ("zzleak_innodb_note", "zzleak_owner_col", "acme"))


def test_an_innodb_long_record_field_in_the_total_bytes_form_leaks_nothing() -> None:
    lines = [
        "RECORD LOCKS space id 5 page no 3 n bits 72 index PRIMARY of table `shop`.`orders` trx id 4120",
        "Record lock, heap no 2 PHYSICAL RECORD: n_fields 5; compact format; info bits 0",
        " 0: len 4; hex 80000004; asc     ;;",
        " 3: len 300; hex 7a7a6c65616b; asc zzleak_long_record_value zzleak_more...(total 300 bytes);",
    ]
    _assert_none_served("innodb_status", lines, ("zzleak_long_record_value", "zzleak_more"))


def test_an_error_log_record_dump_and_a_crash_query_over_several_lines_leak_nothing() -> None:
    lines = [
        (
            "2026-04-21 16:51:41 0 [ERROR] InnoDB: Record in index `PRIMARY` of table `shop`.`orders` was not "
            "found"
        ),
        "2026-04-21 16:51:41 0 [Note] InnoDB: n_fields 3; compact format; info bits 0",
        " 1: len 16; hex 7a7a; asc zzleak_dumped_row;;",
        "Query (0x7f2a1c0123d0): UPDATE orders SET note='zzleak_crash_literal'",
        "  , owner = zzleak_crash_second_line WHERE id = 3",
        "Connection ID (thread ID): 31",
    ]
    _assert_none_served(
        "mysqld_errorlog", lines, ("zzleak_dumped_row", "zzleak_crash_literal", "zzleak_crash_second_line")
    )


def test_ps_command_lines_a_statement_without_from_and_mysqldump_leak_nothing() -> None:
    lines = [
        "UID          PID    PPID  C    SZ   RSS PSR STIME TTY          TIME CMD",
        (
            "root       14020   13962  0 11562  8448  44 16:51 pts/0    00:00:00 mysql -e SELECT "
            "zzleak_function('zzleak_arg')"
        ),
        (
            "root       14021   13962  0 11562  8448  44 16:51 pts/0    00:00:00 mysqldump -u zzleak_dump_user "
            "-h zzleak-dump-host.example --databases zzleak_dump_db"
        ),
    ]
    _assert_none_served(
        "ps",
        lines,
        ("zzleak_function", "zzleak_arg", "zzleak_dump_user", "zzleak-dump-host", "zzleak_dump_db"),
    )


def test_replicate_rewrite_db_leaks_nothing() -> None:
    lines = [
        "*************************** 1. row ***************************",
        "               Slave_IO_State: Waiting for master to send event",
        "          Replicate_Rewrite_DB: (zzleak_from_db,zzleak_to_db)",
        "              Replicate_Do_DB: shop",
    ]
    served = _assert_none_served("slave_status", lines, ("zzleak_from_db", "zzleak_to_db"))
    assert "Replicate_Do_DB: db-1" in served


def test_mysql_shell_and_router_connection_strings_leak_neither_user_password_nor_host() -> None:
    lines = [
        "# Query: SELECT * FROM performance_schema.threads",
        "# THREAD_ID\tNAME\tPROCESSLIST_INFO",
        "52\tthread/mysqlx/worker\t\\connect zzleak_shell_user:zzleak_shell_pw@zzleak-shell-host:3306",
        "53\tthread/sql/one_connection\tmysqlsh zzleak_router_user:zzleak_router_pw@zzleak-router:6446",
    ]
    _assert_none_served(
        "mysqlsh",
        lines,
        (
            "zzleak_shell_user",
            "zzleak_shell_pw",
            "zzleak-shell-host",
            "zzleak_router_user",
            "zzleak_router_pw",
        ),
    )


def test_a_schemas_pseudonym_in_a_statement_is_not_redacted_again() -> None:
    """The verdict's statement read ``from db-1.t`` in one place and ``from db-?t`` in another: a
    fingerprint whose schema already has its pseudonym was fingerprinted again."""
    r = Redactor(REDACT_ALL, VOCAB, b"audit")
    culprit = r.marked_sql("SELECT c FROM shop.t WHERE id = 7")
    assert r.walk({"statement": culprit}) == {"statement": "select c from db-1.t where id = ?"}
    assert r.walk(r.walk({"summary": "query 'SELECT c FROM shop.t WHERE id = 7' ran 9 s"})) == {
        "summary": "query 'select c from db-1.t where id = ?' ran 9 s"
    }
