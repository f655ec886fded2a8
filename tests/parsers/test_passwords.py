"""parsers/passwords.py: every form of a password a capture quotes is masked, and what only looks
like one stays (the forms of tests/web/test_redaction.py, which came first, are not repeated here)."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from analyzer.findings import Culprit, Evidence, Finding, Severity, Window
from parsers.passwords import mask_secrets, masked, may_hold_secrets

PS = "root       14016   13962  0 11562  8448  44 16:51 pts/0    00:00:00 "


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # MySQL Shell and Router: user:password@host without a scheme
        ("\\connect root:S3cr3t@db1:3306", "\\connect root:***@db1:3306"),
        ("\\c clusteradmin:S3cr3t@10.0.0.5", "\\c clusteradmin:***@10.0.0.5"),
        (PS + "mysqlsh root:S3cr3t@db1:3306 --sql", PS + "mysqlsh root:***@db1:3306 --sql"),
        (
            PS + "mysqlrouter --bootstrap admin:S3%40cr3t@db1:3306 --user=mysqlrouter",
            PS + "mysqlrouter --bootstrap admin:***@db1:3306 --user=mysqlrouter",
        ),
        ("dba.configureInstance('icadmin:S3cr3t@db2:3306')", "dba.configureInstance('icadmin:***@db2:3306')"),
        ("mysqlsh --uri=root:S3cr3t@[::1]:33060", "mysqlsh --uri=root:***@[::1]:33060"),
        ("mysqlsh mysqlx://root:S3cr3t@db1:33060/shop", "mysqlsh mysqlx://root:***@db1:33060/shop"),
        (
            "shell.connect({user: 'root', password: 'S3cr3t', host: 'db1'})",
            "shell.connect({user: 'root', password: '***', host: 'db1'})",
        ),
        ('{"user": "root", "password": "S3cr3t"}', '{"user": "root", "password": "***"}'),
        # command lines
        (PS + "mysqlsh --password S3cr3t -h db1", PS + "mysqlsh --password *** -h db1"),
        (PS + "mysqlsh --dbpassword=S3cr3t", PS + "mysqlsh --dbpassword=***"),
        (PS + "mysqld --ssl-key-password=S3cr3t", PS + "mysqld --ssl-key-password=***"),
        (PS + "mysqlpump -uroot -pS3cr3t --all-databases", PS + "mysqlpump -uroot -p*** --all-databases"),
        (PS + "mariadb-dump -uroot -pS3cr3t shop", PS + "mariadb-dump -uroot -p*** shop"),
        (PS + "mariabackup --backup -uroot -pS3cr3t", PS + "mariabackup --backup -uroot -p***"),
        (PS + "xtrabackup --backup --user=root -pS3cr3t", PS + "xtrabackup --backup --user=root -p***"),
        (PS + "/usr/bin/mysqlrouter -pS3cr3t", PS + "/usr/bin/mysqlrouter -p***"),
        (
            PS + "mysql -uroot -p'S3 cr3t' -e 'show processlist'",
            PS + "mysql -uroot -p*** -e 'show processlist'",
        ),
        (
            PS + "mysqldump -u backup -h db1 -pS3cr3t --databases shop",
            PS + "mysqldump -u backup -h db1 -p*** --databases shop",
        ),
        (PS + "sshpass -p S3cr3t ssh db1", PS + "sshpass -p *** ssh db1"),
        (
            PS + "MYSQL_ROOT_PASSWORD=S3cr3t docker-entrypoint.sh mysqld",
            PS + "MYSQL_ROOT_PASSWORD=*** docker-entrypoint.sh mysqld",
        ),
        (
            "psql host=db1 user=app password=S3cr3t dbname=shop",
            "psql host=db1 user=app password=*** dbname=shop",
        ),
        ("Server=db1;Uid=app;Pwd=S3cr3t;", "Server=db1;Uid=app;Pwd=***;"),
        # statements
        (
            "CREATE USER 'app'@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('S3cr3t')",
            "CREATE USER 'app'@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('***')",
        ),
        (
            (
                "CREATE USER app IDENTIFIED VIA mysql_native_password USING "
                "'*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'"
            ),
            "CREATE USER app IDENTIFIED VIA mysql_native_password USING '***'",
        ),
        (
            "ALTER USER root@localhost IDENTIFIED VIA unix_socket OR ed25519 USING PASSWORD('S3cr3t')",
            "ALTER USER root@localhost IDENTIFIED VIA unix_socket OR ed25519 USING PASSWORD('***')",
        ),
        ("SET PASSWORD = 'S3cr3t'", "SET PASSWORD = '***'"),
        ("SET PASSWORD FOR app@'%' = 'N3w' REPLACE 'Old'", "SET PASSWORD FOR app@'%' = '***' REPLACE '***'"),
        (
            "ALTER USER 'app'@'%' IDENTIFIED WITH caching_sha2_password BY 'S3cr3t' RETAIN CURRENT PASSWORD",
            "ALTER USER 'app'@'%' IDENTIFIED WITH caching_sha2_password BY '***' RETAIN CURRENT PASSWORD",
        ),
        ("CREATE USER x IDENTIFIED BY 'secret'", "CREATE USER x IDENTIFIED BY '***'"),
        ("create user x identified by 'secr", "create user x identified by '***'"),  # a fingerprint cut short
        (
            "START GROUP_REPLICATION USER='rpl', PASSWORD='S3cr3t'",
            "START GROUP_REPLICATION USER='rpl', PASSWORD='***'",
        ),
        (
            "CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (USER 'u', PASSWORD 'S3cr3t')",
            "CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (USER 'u', PASSWORD '***')",
        ),
        # settings
        ("wsrep_sst_auth=sst:S3cr3t", "wsrep_sst_auth=sst:***"),
        ("wsrep-sst-auth = sst:S3cr3t", "wsrep-sst-auth = sst:***"),
        ("wsrep_sst_auth\tsst:S3cr3t", "wsrep_sst_auth\tsst:***"),
        ("password = S3cr3t", "password = ***"),
        ('password="S3 cr3t"', "password=***"),
        (
            "  loose-group_replication_recovery_password = S3cr3t  ",
            "  loose-group_replication_recovery_password = ***  ",
        ),
        ("--password=S3cr3t", "--password=***"),  # my_print_defaults client
        ("report_password\tS3cr3t", "report_password\t***"),
        (
            "| report_password                                   | S3cr3t  |",
            "| report_password                                   | ***  |",
        ),
        ("MYSQL_PWD=S3cr3t", "MYSQL_PWD=***"),
    ],
)
def test_each_form_of_a_password_is_masked(line: str, expected: str) -> None:
    assert mask_secrets(line) == expected
    assert mask_secrets(expected) == expected  # masking twice changes nothing more


@pytest.mark.parametrize(
    "line",
    [
        "2026-04-21T16:51:00.123456Z 12:30:45@db1 started",  # a time, not user:password
        "Oct 25 12:30:45@host",
        "Access denied for user 'app'@'10.0.0.7' (using password: YES)",
        "connected to 'repl@db2:3306', retry-time: 60 retries: 1",
        "mail ann.lee@example.com about it, mailto:ann.lee@example.com",
        "| 17 | app | 10.0.0.7:53412 | shop | Query | 3 | executing | select 1 |",
        PS + "mysql -uroot -p -h db1 -P3306",
        PS + "mysqld --basedir=/usr --port=3306 --socket=/var/run/mysqld/mysqld.sock",
        "default_password_lifetime\t0",
        "disconnect_on_expired_password\tOFF",
        "| disconnect_on_expired_password | ON |",
        "old_passwords\tOFF",
        "report_password\t",
        "validate_password.policy = MEDIUM",
        "password_history = 5",
        "  -p, --password[=name] ",
        "select * from wp_posts where post_password = '' and post_status = 'publish'",
        "update mysql.user set authentication_string = ? where user = ?",
        "Password to use when connecting to server. If password is",
        "fe80::1%eth0 and std::map and 00:1a:2b:3c:4d:5e",
        "LOAD DATA INFILE '/tmp/x' USING 'utf8'",
        "SELECT * FROM a JOIN b USING (id)",
        "PWD=/root OLDPWD=/home/app",
    ],
)
def test_what_only_looks_like_a_password_stays(line: str) -> None:
    assert mask_secrets(line) == line


def test_a_text_without_a_hint_is_not_searched_further() -> None:
    assert not may_hold_secrets("vmstat 1 10 r b swpd free buff cache 12:30:45")
    assert may_hold_secrets("root:x@db1")


def test_masked_walks_json_and_keeps_what_did_not_change() -> None:
    points = [1.0, 2.5, None]
    clean = {"label": "select ?", "v": points}
    assert masked(clean) is clean
    data = {"rows": [{"info": "CREATE USER x IDENTIFIED BY 'secret'", "time_s": 3}], "t": points}
    out = masked(data)
    assert out["rows"][0]["info"] == "CREATE USER x IDENTIFIED BY '***'"
    assert out["t"] is points and data["rows"][0]["info"].endswith("'secret'")  # the input is not changed
    assert masked({"query SET PASSWORD = 'x'": 1}) == {"query SET PASSWORD = '***'": 1}  # keys too


def test_masked_rebuilds_a_finding_with_its_culprit_and_evidence_masked() -> None:
    t = pd.Timestamp("2026-04-21 16:51:00", tz="UTC")
    finding = Finding(
        key="long-statement",
        severity=Severity.WARNING,
        title="A session ran mysqldump -uroot -pS3cr3t for 300 s",
        explanation="ALTER USER app IDENTIFIED BY 'S3cr3t' waited",
        windows=(Window(t, t),),
        evidence=(Evidence("command mysql -pS3cr3t", "mysql -pS3cr3t", "", "ps.cmd", "ps", (3, 3)),),
        recommendation="Rotate it.",
        culprit=Culprit(kind="process", id="981", statement="mysqldump -uroot -pS3cr3t shop"),
    )
    out = masked(finding)
    assert "S3cr3t" not in repr(out)
    assert out.severity is Severity.WARNING and out.windows is finding.windows
    assert out.culprit.statement == "mysqldump -uroot -p*** shop"
    assert out.evidence[0] == dataclasses.replace(
        finding.evidence[0], label="command mysql -p***", value="mysql -p***"
    )
