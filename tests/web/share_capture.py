"""A real-shaped capture for the share tests: SHOW FULL PROCESSLIST\\G after pt-stalk's TS lines (three
snapshots, 1 s apart, MariaDB's column set, a multi-line Info) and vmstat -t of the same seconds,
holding literals, client hosts, MySQL users and schemas that a redacted link must never serve.
"""

from __future__ import annotations

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


def processlist() -> str:
    out = []
    for i, epoch in enumerate((1776790301, 1776790302, 1776790303)):
        out.append(f"TS {epoch}.500000000 2026-04-21 16:51:{41 + i:02d}\n")
        rows = [
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
        out.extend(_session(n, *row) for n, row in enumerate(rows, start=1))
    return "".join(out)


VMSTAT = (
    "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----\n"
    " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC\n"
    " 9  0      0 104588800 10433708 236728672    0    0     5    93  800 1200 90  8  2  0  0 2026-04-21 16:51:41\n"
    " 9  1      0 104555712 10433708 236731536    0    0     0 43336 42713 85374 91  7  2  0  0 2026-04-21 16:51:42\n"
    " 8  0      0 104574640 10433708 236735136    0    0     0 54908 50910 111742 92  6  2  0  0 2026-04-21 16:51:43\n"
)
