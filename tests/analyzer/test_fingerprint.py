"""parsers/fingerprint.py: pt-fingerprint's rules, case by case.

Every expected value of CASES is the output of the real ``pt-fingerprint --query '...'`` (Percona
Toolkit 3.2.1) for the same input. OPERATORS are where Casebook differs on purpose: pt-fingerprint
takes a ``+`` or ``-`` for the start of a number (``n + 1`` -> ``n ? ?``, ``k=k+1`` -> ``k=k?``,
``0x1F`` -> ``?f``: its outputs are quoted beside each case); here only literals become ``?``.
"""

from __future__ import annotations

import pandas as pd
import pytest

from analyzer.statements.fingerprint import fingerprint, fingerprint_all, fingerprints

CASES = [
    (
        "SELECT * FROM t WHERE id IN (1, 2, 3) AND name = 'bob' LIMIT 10, 20",
        "select * from t where id in(?+) and name = ? limit ?",
    ),
    ("INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y')", "insert into t (a, b) values(?+)"),
    ("select  name from users   where id=42 -- by id", "select name from users where id=? "),
    ("SELECT * FROM orders_2024 ORDER BY created ASC, id ASC", "select * from orders_? order by created, id"),
    ("CALL update_stats(1, 'x')", "call update_stats"),
    ("use sbtest", "use ?"),
    ("SELECT /*!40001 SQL_NO_CACHE */ * FROM `t`", "mysqldump"),
    (
        'SELECT a FROM t WHERE b = "x" OR c = NULL OR d = TRUE /* note */ LIMIT 5 OFFSET 10',
        "select a from t where b = ? or c = ? or d = true limit ?",
    ),
    ("select 1 union select 1 union all select 1", "select ? /*repeat union all*/"),
    (
        "SELECT SUM(k) FROM sbtest3 WHERE id BETWEEN 4981 AND 5080",
        "select sum(k) from sbtest? where id between ? and ?",
    ),
    ("administrator command: Ping", "administrator command: Ping"),
    ("REPLACE INTO x VALUES(1,2)", "replace into x values(?+)"),
    ("SELECT * FROM t WHERE a IN ( 'a','b' ) and b in (?)", "select * from t where a in(?+) and b in(?+)"),
    ("select * from t  order by a desc, b asc limit 1", "select * from t order by a desc, b limit ?"),
]


@pytest.mark.parametrize(("sql", "expected"), CASES, ids=[c[1][:40] for c in CASES])
def test_fingerprint_matches_pt_fingerprint(sql: str, expected: str) -> None:
    assert fingerprint(sql) == expected


#: (statement, Casebook's fingerprint, pt-fingerprint 3.2.1's output for the same statement)
OPERATORS = [
    (
        "UPDATE t SET n = n + 1 WHERE id = 2",
        "update t set n = n + ? where id = ?",
        "update t set n = n ? ? where id = ?",
    ),
    (
        "UPDATE sbtest7 SET k=k+1 WHERE id=4990",
        "update sbtest? set k=k+? where id=?",
        "update sbtest? set k=k? where id=?",
    ),
    ("SELECT a - 1, 3-1, a-b FROM t", "select a - ?, ?-?, a-b from t", "select a ? ?, ?, a? from t"),
    ("SELECT 0x1F, -5, +3.5e10, 'it\\'s' FROM d", "select ?, ?, ?, ? from d", "select ?f, ?, ?, ? from d"),
    (
        "SELECT 1e-5, -.5, x - -3, (-2), a*-1 FROM t WHERE c = -4 AND d = 5-3",
        "select ?, ?, x - ?, (?), a*? from t where c = ? and d = ?-?",
        "select ?, ?, x ? ?, (?), a*? from t where c = ? and d = ?",
    ),
]


@pytest.mark.parametrize(("sql", "expected", "pt"), OPERATORS, ids=[c[1][:40] for c in OPERATORS])
def test_only_literals_become_placeholders_operators_stay(sql: str, expected: str, pt: str) -> None:
    assert fingerprint(sql) == expected
    assert expected != pt  # where pt-fingerprint reads the operator as a number


def test_multi_line_statement_collapses_to_one_line() -> None:
    sql = "SELECT c\n  FROM sbtest1\n WHERE id = 7\n"
    assert fingerprint(sql) == "select c from sbtest? where id = ?"


def test_fingerprints_keeps_index_name_and_missing_values() -> None:
    s = pd.Series(["SELECT 1", pd.NA, "SELECT 2"], index=[10, 11, 12], name="info", dtype="string")
    out = fingerprints(s)
    assert out.index.tolist() == [10, 11, 12] and out.name == "info"
    assert out.tolist() == ["select ?", pd.NA, "select ?"]


def test_fingerprints_of_an_all_missing_series_is_all_missing() -> None:
    out = fingerprints(pd.Series([None, None], dtype=object))
    assert out.isna().all() and len(out) == 2


def test_the_number_pattern_matches_what_the_plain_alternation_matches() -> None:
    """``_NUMBER`` is written digit-first for speed; it must cut exactly what the rule as stated
    (hexadecimal ``0x..``, or a digit and pt's ``[0-9a-f.xb]`` tail with an exponent's sign) cuts."""
    import random
    import re

    from analyzer.statements.fingerprint import _NUMBER

    stated = re.compile(r"0x[0-9a-fA-F]+|[0-9][0-9a-f.xb]*(?:(?<=e)[+-][0-9]+)?")
    shapes = ["0x1F", "00x1F", "10x5", "0X1F", "0x", "0xg", "1e+5", "1.5e-3", "2b", "x1", "a0x1", "9x1F"]
    rnd = random.Random(13)
    alphabet = "0123456789abcdefxXABeE+-. ()'_,="
    texts = shapes + ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 24))) for _ in range(20_000)]
    assert [_NUMBER.sub("?", t) for t in texts] == [stated.sub("?", t) for t in texts]


def test_many_statements_at_once_give_each_statements_fingerprint() -> None:
    statements = [
        *(case[0] for case in CASES + OPERATORS),
        "select 'open quote from t where a = 1",
        'select "a" from t where b = "open',
        "select 'it\\'s' from t",
        "select 'a\x00b' from t where c = 1",
        "",
        "INSERT INTO t VALUES (1), (2)",
        "insert into t (a, b) values (1, 2)",
        "REPLACE INTO t VALUES (1) ,\n (2)",
        "  call p(1)",
        "Call p(2)",
        "use db",
        "USE db\n",
        "update t set a = 1",
        "administrator command: Ping",
        "select 1 # note",
        "select 2 -- note",
        "/* x */ select 3",
        "\tselect 4",
    ]
    assert fingerprint_all(statements) == [fingerprint(sql) for sql in statements]  # one holds a NUL
    joinable = [sql for sql in statements if "\x00" not in sql]
    assert fingerprint_all(joinable) == [fingerprint(sql) for sql in joinable]
    cache: dict[str, str] = {}
    assert fingerprint_all(statements[:3], cache) == fingerprint_all(statements[:3], cache)
    assert fingerprint_all([]) == []


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        # SHOW PROCESSLIST (without FULL) keeps 100 characters of Info: cut inside the password
        ("CREATE USER 'acme_ro'@'%' IDENTIFIED BY 'Cu-S3c", "create user ?@? identified by '***'"),
        ('SET PASSWORD FOR app = "N3w-S3c', "set password for app = '***'"),
        ("SELECT * FROM t WHERE note = 'cut in the mid", "select * from t where note = 'cut in the mid"),
    ],
)
def test_a_statement_cut_inside_its_password_loses_it(sql: str, expected: str) -> None:
    assert fingerprint(sql) == expected
    assert fingerprint_all([sql]) == [expected]
