"""web/sharing/redaction/redactor.py: pseudonyms, whole-token replacement, statement text in every processlist
layout, IPv6 addresses, the server's own names, passwords."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from parsers import innodb_status, mysqld_errorlog, mysqlsh, processlist, slave_status, threads
from parsers.passwords import mask_secrets
from web.sharing.redaction import formats
from web.sharing.redaction.literals import processlist_lines
from web.sharing.redaction.redactor import (
    REDACT_ALL,
    Choices,
    Redactor,
    Vocabulary,
    VocabularyBuilder,
    server_names,
)

VOCAB = Vocabulary(
    hosts=["10.1.2.3", "app1.acme.io"], users=["shop", "app"], schemas=["acme_prod"], literals=4, statements=2
)


def test_known_values_get_pseudonyms_numbered_in_sorted_order() -> None:
    r = Redactor(Choices(), VOCAB, b"k")
    assert r.pseudonymised("shop@10.1.2.3:5555 app on app1.acme.io, db acme_prod") == (
        "user-2@host-1:5555 user-1 on host-2, db db-1"
    )


def test_a_value_is_replaced_only_as_a_whole_token() -> None:
    r = Redactor(Choices(), VOCAB, b"k")
    assert (
        r.pseudonymised("app1 application web-app shop_2 acme_prod_x")
        == "app1 application web-app shop_2 acme_prod_x"
    )
    longer = r.pseudonymised("110.1.2.3 10.1.2.33")  # other addresses: keyed pseudonyms, not host-1's
    assert "host-1" not in longer and "10.1.2.3" not in longer
    assert (
        r.pseudonymised("SELECT * FROM `acme_prod`.`t` JOIN acme_prod.u")
        == "select * from `db-1`.`t` join db-1.u"
    )  # a statement: its fingerprint


def test_host_names_are_matched_whatever_their_case_and_unknown_ips_get_keyed_pseudonyms() -> None:
    r = Redactor(Choices(), VOCAB, b"link-1")
    other = Redactor(Choices(), VOCAB, b"link-2")
    assert r.pseudonymised("APP1.ACME.IO") == "host-2"
    first = r.pseudonymised("from 192.168.7.9")
    assert first.startswith("from host-") and first == r.pseudonymised("from 192.168.7.9")
    assert other.pseudonymised("from 192.168.7.9") != first  # another link, another pseudonym
    assert r.pseudonymised("127.0.0.1 localhost") == "127.0.0.1 localhost"


def test_only_the_chosen_kinds_are_replaced() -> None:
    r = Redactor(Choices(literals=False, hosts=False, users=True, schemas=False), VOCAB)
    assert r.pseudonymised("shop 10.1.2.3 acme_prod") == "user-2 10.1.2.3 acme_prod"
    assert r.sql("SELECT 'x'") == "SELECT 'x'"
    assert Redactor(Choices(), VOCAB).sql("SELECT 'x' FROM acme_prod.t") == "select ? from db-1.t"


def test_walk_redacts_every_string_value_and_leaves_keys_and_numbers() -> None:
    r = Redactor(Choices(), Vocabulary(users=["shop", "case", "findings"], schemas=["acme_prod", "urlsdb"]))
    data = {
        "shop": [{"label": "acme_prod.t"}, [1.0, None]],
        "case": "findings",
        "urls": [[1, 2.5], [2, None]],
    }
    assert r.walk(data) == {
        "shop": [{"label": "db-1.t"}, [1.0, None]],
        "case": "user-2",
        "urls": [[1, 2.5], [2, None]],
    }


def test_statements_in_vertical_output_become_fingerprints_line_for_line() -> None:
    lines = [
        "TS 1776790301.5 2026-04-21 16:51:41",
        "*************************** 1. row ***************************",
        "   User: shop",
        "   Info: UPDATE t SET note = 'a secret",
        "it goes on' WHERE id = 42",
        "Progress: 0.000",
        "   Info: NULL",
    ]
    assert processlist_lines(lines) == [
        lines[0],
        lines[1],
        "   User: shop",
        "   Info: update t set note = ? where id = ?",
        "",
        "Progress: 0.000",
        "   Info: NULL",
    ]


def test_statements_in_table_and_batch_output_become_fingerprints() -> None:
    table = [
        "+----+------+-----------+------+---------+------+-------+------------------------+",
        "| Id | User | Host      | db   | Command | Time | State | Info                   |",
        "| 7  | shop | h:1       | d    | Query   | 3    | x     | SELECT 'card 4111' + 1 |",
    ]
    out = processlist_lines(table)
    assert out[:2] == table[:2]
    assert "4111" not in out[2] and "select ? + ?" in out[2]
    batch = ["Id\tUser\tHost\tdb\tCommand\tTime\tState\tInfo", "7\tshop\th:1\td\tQuery\t3\tx\tSELECT 99"]
    assert processlist_lines(batch) == [batch[0], "7\tshop\th:1\td\tQuery\t3\tx\tselect ?"]


def test_a_statement_cut_inside_a_string_leaks_nothing_of_it() -> None:
    assert processlist_lines(["   Info: SELECT * FROM t WHERE a = 'top sec"]) == [
        "   Info: select * from t where a = ?"
    ]
    assert processlist_lines(["ret' AND b = 7"]) == ["?"]  # the rest of a statement begun earlier


def test_the_builder_collects_hosts_without_ports_and_leaves_builtins() -> None:
    b = VocabularyBuilder()
    _add(
        b,
        pd.DataFrame(
            {
                "user": ["shop", "root", "system user", "app"],
                "host": ["10.1.2.3:4000", "localhost", "", "app1.acme.io:1"],
                "db": ["acme_prod", "mysql", None, "acme_prod"],
                "info": ["SELECT 'a', 1", "NULL", None, "SELECT 2"],
            }
        ),
    )
    formats.collect(
        b,
        threads.SENSITIVE,
        {"pfs_threads": pd.DataFrame({"processlist_user": ["pfs_user"], "processlist_info": ["SELECT 3"]})},
    )
    v = b.vocabulary()
    assert (v.hosts, v.users, v.schemas) == (
        ["10.1.2.3", "app1.acme.io"],
        ["app", "pfs_user", "shop"],
        ["acme_prod"],
    )
    assert (v.literals, v.statements) == (4, 3)


def test_what_is_left_of_a_value_cut_to_a_length_is_redacted_too() -> None:
    r = Redactor(Choices(), VOCAB, b"k")
    assert (
        r.pseudonymised("select * from acme_pr…") == "select * from ?…"
    )  # a chart label cut at 80 characters
    label = "query 'select a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q from acme_p'"
    assert r.pseudonymised(label) == label.replace("acme_p'", "?'")  # an evidence label
    long = "running select a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p from "
    names = Redactor(Choices(literals=False), VOCAB, b"k")  # not read as a statement: names alone
    assert names.pseudonymised(long + "APP1.AC") == long + "?"  # at the end of a text cut to a length
    assert r.pseudonymised(long + "acm") == long + "?"
    assert r.pseudonymised(long + "ac") == long + "ac"  # two characters tell little
    assert (
        r.pseudonymised("acme") == "acme" and r.pseudonymised("the acm") == "the acm"
    )  # short texts were not cut
    assert r.sql("SELECT * FROM acme_pr", cut=True) == "select * from ?…"
    assert (
        r.pseudonymised("acme is fine, so is the app, acme_prod.t")
        == "acme is fine, so is the user-1, db-1.t"
    )


# ------------------------------------------------------------------ IPv6 addresses
@pytest.mark.parametrize(
    ("line", "keyed"),
    [
        (
            "    Host: 2001:db8:85a3::8a2e:370:7334:51234",
            "2001:db8:85a3::8a2e:370:7334",
        ),  # MySQL: address:port
        ("connect from 2001:0db8:85a3:0000:0000:8a2e:0370:7334", "2001:db8:85a3::8a2e:370:7334"),  # full
        ("    Host: fe80::a1b2:3ff:fe4c:5d6e%eth0", "fe80::a1b2:3ff:fe4c:5d6e"),  # link-local, zone
        ("mysql -h [2001:db8::10]:3306", "2001:db8::10"),  # brackets and port
        (
            "tcp6       0      0 2001:db8::10:3306       2001:db8::77:44128      ESTABLISHED",
            "2001:db8::77:44128",
        ),
    ],
)
def test_an_ipv6_address_gets_a_keyed_pseudonym(line: str, keyed: str) -> None:
    r = Redactor(Choices(), VOCAB, b"k")
    out = r.pseudonymised(line)
    assert re.search(r"host-[0-9a-f]{6}", out), out
    assert keyed not in out and "%eth0" not in out and r.pseudonymised(line) == out  # the same on the link
    assert Redactor(Choices(hosts=False), VOCAB, b"k").pseudonymised(line) == line  # hosts not chosen


def test_an_ipv6_address_keeps_its_brackets_and_port_and_is_the_same_however_written() -> None:
    r = Redactor(Choices(), VOCAB, b"k")
    name = r.pseudonymised("2001:db8::10")
    assert r.pseudonymised("[2001:db8::10]:3306") == f"[{name}]:3306"
    assert r.pseudonymised("2001:0DB8:0000:0000:0000:0000:0000:0010") == name


def test_an_ipv4_mapped_address_is_its_ipv4_host() -> None:
    r = Redactor(Choices(), VOCAB, b"k")
    assert r.pseudonymised("    Host: ::ffff:10.1.2.3:40022") == "    Host: host-1:40022"  # a known host
    assert (
        r.pseudonymised("::ffff:192.168.7.9")
        == r.pseudonymised("192.168.7.9")
        == r.pseudonymised("::ffff:c0a8:709")
    )


@pytest.mark.parametrize(
    "line",
    [
        "TS 1776790301.500000000 2026-04-21 16:43:21",
        "16:43:21     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle",
        "2026-04-21T16:43:21.123456+02:00 12:34:56 1:02:03:04",
        "link/ether 00:1a:2b:3c:4d:5e brd ff:ff:ff:ff:ff:ff",
        "port_name 21:00:00:24:ff:4c:a8:5e",  # a Fibre Channel WWN: eight groups of two
        "#3  0x0000000001a2b3c4 in Item_func::val_int() at sql/item_func.cc:1234",
        "#4  dd::cache::Dictionary_client::acquire<dd::Table> std::map<int, int>::find dead::beef",
        "tcp6       0      0 :::33060                :::*                    LISTEN      5555/mysqld",
        "    Host: ::1:42180",
        "bind-address [::1]:3306 ::ffff:127.0.0.1 ::",
    ],
)
def test_times_mac_addresses_names_and_loopback_are_not_taken_for_ipv6(line: str) -> None:
    assert Redactor(Choices(), VOCAB, b"k").pseudonymised(line) == line


def test_the_builder_collects_ipv6_clients_without_their_port() -> None:
    b = VocabularyBuilder()
    _add(
        b,
        pd.DataFrame(
            {
                "user": ["app", "app", "app"],
                "host": ["2001:db8::5:53412", "::ffff:10.1.2.3:40022", "[fe80::1]:3306"],
                "db": [None, None, None],
                "info": [None, None, None],
            }
        ),
    )
    assert b.vocabulary().hosts == ["10.1.2.3", "2001:db8::5", "fe80::1"]


# ------------------------------------------------------------------ the server's own names
SERVERS = Vocabulary(
    hosts=["10.1.2.3", "db-prod-17.acme.io"],
    users=["shop"],
    servers=server_names("db-prod-17.acme.io", [{"host": "db-prod-17"}, {"host": "mysql"}]),
)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("hostname\tdb-prod-17", "hostname\tserver-1"),  # -variables
        (
            "slow_query_log_file\t/var/lib/mysql/db-prod-17-slow.log",
            "slow_query_log_file\t/var/lib/mysql/server-1-slow.log",
        ),
        (
            "relay_log_index\t/var/lib/mysql/db-prod-17-relay-bin.index",
            "relay_log_index\t/var/lib/mysql/server-1-relay-bin.index",
        ),
        ("kernel.hostname = db-prod-17", "kernel.hostname = server-1"),  # -sysctl
        (
            "Linux 5.14.0-611.el9.x86_64 (DB-PROD-17.acme.io) \t04/21/2026 \t_x86_64_\t(64 CPU)",
            "Linux 5.14.0-611.el9.x86_64 (server-1) \t04/21/2026 \t_x86_64_\t(64 CPU)",
        ),
        (
            "2026_04_21_16_44_20 Removing empty file /tmp/pt/collected/db-prod-17//2026_04_21_16_43_19-dmesg",
            "2026_04_21_16_44_20 Removing empty file /tmp/pt/collected/server-1//2026_04_21_16_43_19-dmesg",
        ),
        (
            "casebook-db-prod-17.acme.io-20260421T165141/vmstat.txt",
            "casebook-server-1-20260421T165141/vmstat.txt",
        ),
        (
            "archive/oswvmstat/db-prod-17_vmstat_26.04.21.1600.dat",
            "archive/oswvmstat/server-1_vmstat_26.04.21.1600.dat",
        ),
    ],
)
def test_the_servers_own_name_becomes_server_n_in_file_names_and_headers(line: str, expected: str) -> None:
    assert Redactor(Choices(), SERVERS, b"k").pseudonymised(line) == expected


def test_a_server_name_is_not_replaced_inside_a_longer_name_and_generic_names_are_kept() -> None:
    r = Redactor(Choices(), SERVERS, b"k")
    assert r.pseudonymised("db-prod-171 xdb-prod-17 /var/lib/mysql/ mysql.user") == (
        "db-prod-171 xdb-prod-17 /var/lib/mysql/ mysql.user"
    )
    assert r.report()["servers"] == 1 and r.report()["hosts"] == 1  # the server is not a client host
    assert r.pseudonymised("    Host: db-prod-17.acme.io:3306") == "    Host: server-1:3306"
    assert Redactor(Choices(hosts=False), SERVERS, b"k").pseudonymised("db-prod-17") == "db-prod-17"


def test_the_builder_takes_a_replicas_source_for_a_server() -> None:
    b = VocabularyBuilder()
    _add(b, pd.DataFrame({"channel": [""], "source_host": ["DB-SRC-03.acme.io"], "io_running": ["Yes"]}))
    v = b.vocabulary()
    assert (v.hosts, v.servers) == ([], ["db-src-03.acme.io"])
    r = Redactor(Choices(), v, b"k")
    assert r.pseudonymised("              Master_Log_File: db-src-03-bin.000042") == (
        "              Master_Log_File: server-1-bin.000042"
    )


def test_server_names_come_from_the_captures_headers_variables_and_manifest() -> None:
    metas = [
        {"host": "node0", "variant": "iostat -dx"},
        {"manifest": {"hostname": "db1.acme.io", "nproc": "8"}},
        {"variables": {"hostname": "db1", "report_host": "172.31.10.2", "wsrep_cluster_address": "gcomm://"}},
        {"pdsh_host": "web-3"},
        {"host": "not a host name"},
    ]
    assert server_names(None, metas) == ["172.31.10.2", "db1", "db1.acme.io", "node0", "web-3"]


def test_the_servers_name_is_redacted_in_a_real_pt_stalk_collection(samples: Path) -> None:
    """My-gather example1 (host node0): its -hostname, -variables, -sysctl, -trigger, -output and -ps."""
    folder = samples / "My-gather" / "pt-stalk" / "example1"
    variables = dict(
        line.split("\t", 1)
        for line in (folder / "2026_04_21_16_43_19-variables").read_text().splitlines()
        if "\t" in line
    )
    servers = server_names(None, [{"variables": variables}])
    assert servers == ["172.31.10.2", "node0"]  # report_host, hostname
    r = Redactor(Choices(), Vocabulary(servers=servers), b"k")
    for suffix in ("hostname", "variables", "sysctl", "trigger", "output", "ps"):
        text = (folder / f"2026_04_21_16_43_19-{suffix}").read_text()
        redacted = "\n".join(r.pseudonymised(line) for line in text.splitlines())
        assert "node0" not in redacted and "172.31.10.2" not in redacted, suffix
        assert "server-2" in redacted, suffix  # node0 (172.31.10.2 is server-1)


# ------------------------------------------------------------------ passwords
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            (
                "root       14016   13962  0 11562  8448  44 16:51 pts/0    00:00:00 /bin/mysqladmin -uroot "
                "-pS3cr3t -P3306 ext -i1 -c30"
            ),
            (
                "root       14016   13962  0 11562  8448  44 16:51 pts/0    00:00:00 /bin/mysqladmin -uroot "
                "-p*** -P3306 ext -i1 -c30"
            ),
        ),
        (
            (
                "root        7122    5620  0 28761  7680   3 16:43 pts/0    00:00:00 sudo ./pt-stalk "
                "--no-stalk --user=root --password=S3cr3t --dest=/tmp/pt"
            ),
            (
                "root        7122    5620  0 28761  7680   3 16:43 pts/0    00:00:00 sudo ./pt-stalk "
                "--no-stalk --user=root --password=*** --dest=/tmp/pt"
            ),
        ),
        ("mysqldump --user root --password S3cr3t shop", "mysqldump --user root --password *** shop"),
        (
            "sysbench --mysql-user=sb --mysql-password='S3 cr3t' run",
            "sysbench --mysql-user=sb --mysql-password=*** run",
        ),
        (
            "perl /usr/bin/pt-table-checksum -p S3cr3t h=db1,u=root,p=S3cr3t,P=3306",
            "perl /usr/bin/pt-table-checksum -p *** h=db1,u=root,p=***,P=3306",
        ),
        ("mydumper -u backup -p S3cr3t -B shop", "mydumper -u backup -p *** -B shop"),
        (
            "python app.py --dsn mysql://shop:S3cr3t@10.0.0.5:3306/shop",
            "python app.py --dsn mysql://shop:***@10.0.0.5:3306/shop",
        ),
        ("MYSQL_PWD=S3cr3t mysql -uroot", "MYSQL_PWD=*** mysql -uroot"),
        (
            "CREATE USER 'ro'@'%' IDENTIFIED WITH caching_sha2_password BY 'S3cr3t'",
            "CREATE USER 'ro'@'%' IDENTIFIED WITH caching_sha2_password BY '***'",
        ),
        ("ALTER USER u IDENTIFIED BY 'N3w' REPLACE 'Old'", "ALTER USER u IDENTIFIED BY '***' REPLACE '***'"),
        (
            "GRANT USAGE ON *.* TO u IDENTIFIED BY PASSWORD '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'",
            "GRANT USAGE ON *.* TO u IDENTIFIED BY PASSWORD '***'",
        ),
        ("SET PASSWORD FOR 'app'@'%' = PASSWORD('S3cr3t')", "SET PASSWORD FOR 'app'@'%' = PASSWORD('***')"),
        (
            "CHANGE MASTER TO MASTER_HOST='db2', MASTER_PASSWORD='S3cr3t', MASTER_PORT=3306",
            "CHANGE MASTER TO MASTER_HOST='db2', MASTER_PASSWORD='***', MASTER_PORT=3306",
        ),
        (
            'CHANGE REPLICATION SOURCE TO SOURCE_USER="repl", SOURCE_PASSWORD = "S3cr3t"',
            "CHANGE REPLICATION SOURCE TO SOURCE_USER=\"repl\", SOURCE_PASSWORD = '***'",
        ),
        ("START REPLICA USER='repl' PASSWORD='S3cr3t'", "START REPLICA USER='repl' PASSWORD='***'"),
        (
            "   Info: ALTER USER 'app'@'%' IDENTIFIED BY 'S3cr3t-cut-short…",
            "   Info: ALTER USER 'app'@'%' IDENTIFIED BY '***'",
        ),
    ],
)
def test_passwords_on_command_lines_and_in_statements_are_masked(line: str, expected: str) -> None:
    assert mask_secrets(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "root       14017   13962  0 11562  8448  44 16:51 pts/0    00:00:00 mysql -uroot -p shop",  # prompts; shop is the db
        "root       14017   13962  0 11562  8448  44 16:51 pts/0    00:00:00 mysql -uroot -p -h db1 -P3306",
        (
            "root        1939     865  0 25724  5484   3 Oct25 ?        00:00:00 /sbin/dhclient -d -q -pf "
            "/var/run/dhclient-ens33.pid"
        ),
        (
            "root        1730    1690  0 12:52 ?        00:00:00 logger -p daemon.err -t mysqld_safe -i -t "
            "mysqld"
        ),
        "  -p, --password[=name] ",
        "Password to use when connecting to server. If password is",
        "mysqld --password-history=5 --default-password-lifetime=0",
        "update mysql.user set authentication_string = ? where user = ?",
    ],
)
def test_what_is_not_a_password_is_left_as_it_is(line: str) -> None:
    assert mask_secrets(line) == line


def _add(builder: VocabularyBuilder, frame: pd.DataFrame) -> None:
    """A processlist frame (or SHOW SLAVE STATUS's) into ``builder`` as its format declares."""
    if "source_host" in frame:
        formats.collect(builder, slave_status.SENSITIVE, {"replica_status": frame})
    else:
        formats.collect(builder, processlist.SENSITIVE, {"processlist": frame})


def test_passwords_are_masked_whatever_the_link_redacts() -> None:
    none = Choices(literals=False, hosts=False, users=False, schemas=False)
    r = Redactor(none, VOCAB, b"k")
    assert r.text("mysql -ushop -pS3cr3t") == "mysql -ushop -p***"
    assert r.sql("CREATE USER shop IDENTIFIED BY 'S3cr3t'") == "CREATE USER shop IDENTIFIED BY '***'"
    assert formats.raw_lines("ps", ["root 1 0 0 ? 00:00:00 mysql -pS3cr3t"], r) == [
        "root 1 0 0 ? 00:00:00 mysql -p***"
    ]


def test_values_glued_to_a_clients_short_options_are_redacted() -> None:
    r = Redactor(Choices(), VOCAB, b"k")
    assert (
        r.pseudonymised("mysql -ushop -hAPP1.acme.io -Dacme_prod -h10.1.2.3")
        == "mysql -uuser-2 -hhost-2 -Ddb-1 -hhost-1"
    )


def test_no_line_of_the_real_samples_without_an_ipv4_address_is_changed(samples: Path) -> None:
    """ps, top, netstat, iostat, mpstat, processlist, variables, mysql --help ... of every sample: no
    password and no IPv6 address there, so nothing is taken for one (times, MAC addresses, options)."""
    r = Redactor(Choices(literals=False), Vocabulary(), b"k")
    dotted = re.compile(r"\d+\.\d+\.\d+\.\d+")
    changed = []
    for path in sorted(p for p in samples.rglob("*") if p.is_file() and p.suffix not in (".bz2", ".gz")):
        for line in path.read_text(errors="replace").splitlines():
            if not dotted.search(line) and r.pseudonymised(line) != line:
                changed.append((path.name, line))
    assert changed == []


# ------------------------------------------------------------------ each format's raw lines
def _shown(fmt: str, lines: list[str], choices: Choices = REDACT_ALL) -> list[str] | None:
    return formats.raw_lines(fmt, lines, Redactor(choices, VOCAB, b"k"))


def test_lock_waits_show_both_statements_as_fingerprints() -> None:
    lines = [
        "     waiting_query: UPDATE orders SET n=n+1 WHERE email='a@b.c'",
        "waiting_table_lock: `acme_prod`.`orders`",
        "     blocking_host: app1.acme.io",
        "    blocking_query: UPDATE orders SET n=n+1",
        "  WHERE id=42",
    ]
    assert _shown("lock_waits", lines) == [
        "     waiting_query: update orders set n=n+? where email=?",
        "waiting_table_lock: `db-1`.`?`",  # a table's name is no word of the format
        "     blocking_host: host-2",
        "    blocking_query: update orders set n=n+? where id=?",
        "",
    ]


def test_innodb_status_shows_the_statement_under_a_thread_line_and_no_row_value() -> None:
    lines = [
        "---TRANSACTION 49, ACTIVE 4 sec starting index read",
        "MariaDB thread id 24, OS thread handle 1310, query id 35 app1.acme.io 10.1.2.3 shop Updating",
        "UPDATE orders SET note = 'private'",
        "WHERE id=42",
        "------- TRX HAS BEEN WAITING 3913884 us FOR THIS LOCK TO BE GRANTED:",
        " 3: len 4; hex 70616964; asc paid;;",
    ]
    assert _shown("innodb_status", lines) == [
        lines[0],
        "MariaDB thread id 24, OS thread handle 1310, query id 35 host-2 host-1 user-2 Updating",
        "update orders set note = ? where id=?",
        "",
        lines[4],
        " 3: len 4; hex ?; asc ?;;",
    ]


def test_the_error_log_shows_a_crashed_statement_as_its_fingerprint() -> None:
    assert _shown("mysqld-error-log", ["Query (0x7f3a): SELECT * FROM t WHERE a = 'x'"]) == [
        "Query (0x7f3a): select * from t where a = ?"
    ]


def test_an_undeclared_format_is_withheld_on_a_redacted_link_only() -> None:
    assert _shown("hostname", ["db1"]) is None
    none = Choices(literals=False, hosts=False, users=False, schemas=False)
    assert _shown("hostname", ["db1 -pS3cret"], none) == ["db1 -pS3cret"]  # no client: no password


def test_the_vocabulary_takes_what_declared_lines_name() -> None:
    b = VocabularyBuilder()
    formats.collect_lines(
        b,
        mysqld_errorlog.SENSITIVE,
        [
            (
                "2026-11-27 16:01:46 20 [Warning] Aborted connection 20 to db: 'acme_crm' user: 'crm' host: "
                "'crm1.acme.io'"
            )
        ],
    )
    formats.collect(
        b,
        innodb_status.SENSITIVE,
        {"innodb_transactions": pd.DataFrame({"client": ["gw 10.9.8.7 ops updating"]})},
    )
    v = b.vocabulary()
    assert (v.hosts, v.users, v.schemas) == (["10.9.8.7", "crm1.acme.io", "gw"], ["crm", "ops"], ["acme_crm"])


def test_the_vocabulary_takes_mysql_shells_replication_user_from_its_result() -> None:
    b = VocabularyBuilder()
    lines = [
        "# Query:",
        "#\tSHOW REPLICA STATUS",
        "#",
        "# Replica_IO_State\tSource_Host\tSource_User",
        "Waiting\tdb0\trepl_acme",
    ]
    formats.collect_lines(b, mysqlsh.SENSITIVE, lines)
    assert b.vocabulary().users == ["repl_acme"]
