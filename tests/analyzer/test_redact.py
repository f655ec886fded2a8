"""analyzer/redact.py: pseudonyms, whole-token replacement, statement text in every processlist layout."""

from __future__ import annotations

import pandas as pd

from analyzer.redact import Choices, Redactor, Vocabulary, VocabularyBuilder, processlist_lines

VOCAB = Vocabulary(
    hosts=["10.1.2.3", "app1.acme.io"], users=["shop", "app"], schemas=["acme_prod"], literals=4, statements=2
)


def test_known_values_get_pseudonyms_numbered_in_sorted_order() -> None:
    r = Redactor(Choices(), VOCAB, b"k")
    assert r.text("shop@10.1.2.3:5555 app on app1.acme.io, db acme_prod") == (
        "user-2@host-1:5555 user-1 on host-2, db db-1"
    )


def test_a_value_is_replaced_only_as_a_whole_token() -> None:
    r = Redactor(Choices(), VOCAB, b"k")
    assert (
        r.text("app1 application web-app shop_2 acme_prod_x") == "app1 application web-app shop_2 acme_prod_x"
    )
    longer = r.text("110.1.2.3 10.1.2.33")  # other addresses: keyed pseudonyms, not host-1's
    assert "host-1" not in longer and "10.1.2.3" not in longer
    assert r.text("SELECT * FROM `acme_prod`.`t` JOIN acme_prod.u") == "SELECT * FROM `db-1`.`t` JOIN db-1.u"


def test_host_names_are_matched_whatever_their_case_and_unknown_ips_get_keyed_pseudonyms() -> None:
    r = Redactor(Choices(), VOCAB, b"link-1")
    other = Redactor(Choices(), VOCAB, b"link-2")
    assert r.text("APP1.ACME.IO") == "host-2"
    first = r.text("from 192.168.7.9")
    assert first.startswith("from host-") and first == r.text("from 192.168.7.9")
    assert other.text("from 192.168.7.9") != first  # another link, another pseudonym
    assert r.text("127.0.0.1 localhost") == "127.0.0.1 localhost"


def test_only_the_chosen_kinds_are_replaced() -> None:
    r = Redactor(Choices(literals=False, hosts=False, users=True, schemas=False), VOCAB)
    assert r.text("shop 10.1.2.3 acme_prod") == "user-2 10.1.2.3 acme_prod"
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
    b.add_processlist(
        pd.DataFrame(
            {
                "user": ["shop", "root", "system user", "app"],
                "host": ["10.1.2.3:4000", "localhost", "", "app1.acme.io:1"],
                "db": ["acme_prod", "mysql", None, "acme_prod"],
                "info": ["SELECT 'a', 1", "NULL", None, "SELECT 2"],
            }
        )
    )
    b.add_processlist(pd.DataFrame({"processlist_user": ["pfs_user"], "processlist_info": ["SELECT 3"]}))
    v = b.vocabulary()
    assert (v.hosts, v.users, v.schemas) == (
        ["10.1.2.3", "app1.acme.io"],
        ["app", "pfs_user", "shop"],
        ["acme_prod"],
    )
    assert (v.literals, v.statements) == (4, 3)


def test_what_is_left_of_a_value_cut_to_a_length_is_redacted_too() -> None:
    r = Redactor(Choices(), VOCAB, b"k")
    assert r.text("select * from acme_pr…") == "select * from ?…"  # a chart label cut at 80 characters
    label = "query 'select a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q from acme_p'"
    assert r.text(label) == label.replace("acme_p'", "?'")  # an evidence label
    long = "running select a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p from "
    assert r.text(long + "APP1.AC") == long + "?"  # at the end of a text cut to a length
    assert r.text(long + "acm") == long + "?"
    assert r.text(long + "ac") == long + "ac"  # two characters tell little
    assert r.text("acme") == "acme" and r.text("the acm") == "the acm"  # short texts were not cut
    assert r.sql("SELECT * FROM acme_pr", cut=True) == "select * from ?…"
    assert r.text("acme is fine, so is the app, acme_prod.t") == "acme is fine, so is the user-1, db-1.t"
