"""Slow query logs over a chosen span, made of the entries of the real-shaped MySQL 8.0 sample
(tests/fixtures/slowlog/mysql-8.0_log-slow-extra_hand.log, README there) with their times moved:
each entry keeps its lines, its ``# Time:`` and ``SET timestamp=`` say the time asked."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "slowlog" / "mysql-8.0_log-slow-extra_hand.log"
#: The sample's entries by what they run: (its fingerprint, its Query_time in seconds).
GIFT = 0  # SELECT COUNT(*) FROM orders WHERE note LIKE '%gift%'; 0.100123 s
SPENT = 1  # SELECT email, SUM(total) AS spent ... GROUP BY email ...; 0.3 s
RETURN = 3  # SELECT COUNT(*) FROM orders WHERE note LIKE '%return%': GIFT's class; 0.12 s
FINGERPRINTS = {
    GIFT: "select count(*) from orders where note like ?",
    SPENT: "select email, sum(total) as spent from orders group by email order by spent desc limit ?",
}
QUERY_TIME_S = {GIFT: 0.100123, SPENT: 0.3, RETURN: 0.12}


def _entries() -> tuple[str, list[str]]:
    lines = SAMPLE.read_text().splitlines(keepends=True)
    header, body = "".join(lines[:3]), "".join(lines[3:])
    return header, re.split(r"(?m)^(?=# Time: )", body)[1:]


def slow_log(entries: list[tuple[datetime, int]]) -> str:
    """A slow log of the sample's header and, for each ``(time, k)``, the sample's entry ``k`` (the
    constants above) at ``time`` (aware, UTC)."""
    header, sample = _entries()
    out = [header]
    for at, k in entries:
        entry = re.sub(r"(?m)^# Time: \S+", f"# Time: {at.strftime('%Y-%m-%dT%H:%M:%S.%f')}Z", sample[k])
        out.append(re.sub(r"SET timestamp=\d+;", f"SET timestamp={int(at.timestamp())};", entry))
    return "".join(out)
