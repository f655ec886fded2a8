"""Benchmark of the team's trends (``/trends/`` and ``GET /api/trends/``) over 10,000 cases and 100,000
findings.

    .venv/bin/python bench/trends.py [--cases 10000] [--other 1000] [--findings 100000] [--repeats 7] [--keep]

Creates ``<database>_trends_bench`` beside the database of ``CASEBOOK_DATABASE_URL`` afresh (a scratch
database, never the project's), seeds the cases of ``bench/history.py`` (``--cases`` of one team,
``--other`` of another, customers, findings with their rows), adds Finding rows until the database
holds ``--findings``, then gives the cases what the trends count: uploads spread over two years, a
ready time (1 minute to 30 hours after upload) for the ready ones, a verdict's root cause for 70 % of
them (ten keys, the first likelier), and a close (1 to 400 hours after upload) for 60 %. Signed in as
an engineer of the first team, it requests the trends page and the API (JSON and CSV; 4, 13 and 52
weeks, two years by week, a quarter by day, one team) through Django's test client in this process,
and prints the server time of each (median and max of ``--repeats`` after one warm-up) against the
300 ms target, and the plan PostgreSQL chose for the buckets' query. The database is dropped at the
end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parent))
import history  # noqa: E402 - bench/history.py, beside this file

ROOT = Path(__file__).resolve().parent.parent
BENCH_DB = (
    urlparse(os.environ.get("CASEBOOK_DATABASE_URL", "")).path.lstrip("/") or "casebook"
) + "_trends_bench"
TARGET_MS = 300.0
ROOT_CAUSES = (
    "tmp-table-churn",
    "commit-serialization",
    "disk-saturation",
    "cpu-saturation",
    "swap-activity",
    "lock-waits",
    "interrupt-storm",
    "table-cache-contention",
    "same-query-pileup",
    "cpu-steal",
)
#: What the trends count, given to the seeded cases in PostgreSQL (setseed: the same every run).
TREND_COLUMNS_SQL = [
    "SELECT setseed(0.20261128)",
    "UPDATE web_case SET created_at = now() - random() * interval '728 days'",
    f"""UPDATE web_case SET
        ingested_at = CASE WHEN status = 'ready'
            THEN created_at + interval '1 minute' + random() * interval '30 hours' END,
        root_cause_key = CASE WHEN status = 'ready' AND random() < 0.7
            THEN (ARRAY{list(ROOT_CAUSES)!r})[1 + least(floor(-ln(1 - random()) / 0.35), 9)::int] ELSE '' END,
        closed_at = CASE WHEN random() < 0.6
            THEN least(created_at + interval '1 hour' + random() * interval '400 hours', now()) END""",
    "VACUUM ANALYZE web_case",
]


def seed_trends(findings: int, rng: random.Random) -> int:
    """Findings up to ``findings`` rows, and the trends' columns of every case; returns the rows."""
    from django.db import connection

    from web.models import Case, Finding

    missing = findings - Finding.objects.count()
    case_ids = list(Case.objects.values_list("pk", flat=True))
    Finding.objects.bulk_create(
        (
            Finding(
                case_id=case_ids[i % len(case_ids)],
                position=10 + i // len(case_ids),
                key=rng.choice(history.FINDING_KEYS),
                severity=rng.choice(("critical", "warning", "info")),
                title="",
                summary="",
                recommendation="",
                rule_version=1,
            )
            for i in range(max(missing, 0))
        ),
        batch_size=5000,
    )
    with connection.cursor() as cur:
        for sql in TREND_COLUMNS_SQL:
            cur.execute(sql)
        cur.execute("VACUUM ANALYZE web_finding")
    return Finding.objects.count()


def requests_to_time(team_id: int) -> list[tuple[str, str]]:
    """(label, URL) of each request measured."""
    two_years = "since=" + (time.strftime("%Y-%m-%d", time.gmtime(time.time() - 729 * 86400)))
    return [
        ("API, last 13 weeks (default)", "/api/trends/"),
        ("API, last 4 weeks", "/api/trends/?weeks=4"),
        ("API, last 52 weeks", "/api/trends/?weeks=52"),
        ("API, two years by week", f"/api/trends/?{two_years}"),
        ("API, 13 weeks by day", "/api/trends/?weeks=13&by=day"),
        ("API, 52 weeks, one team", f"/api/trends/?weeks=52&team={team_id}"),
        ("API, 52 weeks as CSV", "/api/trends/?weeks=52&export=csv"),
        ("page, last 13 weeks", "/trends/"),
        ("page, last 52 weeks", "/trends/?weeks=52"),
        ("page, two years by week", f"/trends/?{two_years}"),
    ]


def counted(response) -> int:  # noqa: ANN001 - a test client response
    """The cases a trends answer counts (JSON, CSV, or the page's JSON for its charts)."""
    kind = response.get("Content-Type", "")
    if kind.startswith("text/csv"):
        return sum(int(row.split(",")[2]) for row in response.content.decode().splitlines()[1:])
    if kind.startswith("application/json"):
        return sum(b["cases"] for b in response.json()["buckets"])
    shown = re.search(rb'id="trends-data" type="application/json">(.*?)</script>', response.content, re.S)
    return sum(b["cases"] for b in json.loads(shown.group(1))["trends"]["buckets"])


def plan(user, weeks: int) -> str:  # noqa: ANN001 - a user
    """The plan nodes PostgreSQL chose for the buckets' query of the last ``weeks`` weeks."""
    from django.db import connection
    from django.utils import timezone

    from web.trends import selectors

    r = selectors.TrendRange.last_weeks(weeks, today=timezone.now().date())
    sql, params = selectors.bucket_rows(user=user, r=r).query.sql_with_params()
    with connection.cursor() as cur:
        cur.execute("EXPLAIN " + sql, params)
        lines = [row[0] for row in cur.fetchall()]
    return "; ".join(
        line.strip().lstrip("-> ").split("  (")[0] for line in lines if "Scan" in line or "Aggregate" in line
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", type=int, default=10_000, help="cases of the engineer's team (default 10,000)")
    p.add_argument("--other", type=int, default=1_000, help="cases of another team (default 1,000)")
    p.add_argument("--findings", type=int, default=100_000, help="Finding rows in all (default 100,000)")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--keep", action="store_true", help="keep the benchmark database")
    args = p.parse_args(argv)

    history.ensure_database(BENCH_DB)
    os.environ.update(CASEBOOK_DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{BENCH_DB}")
    os.environ.update(DJANGO_SETTINGS_MODULE="web.settings")
    os.environ.setdefault("CASEBOOK_LOG_LEVEL", "WARNING")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.test import Client

    t0 = time.perf_counter()
    facts = history.seed(args.cases, args.other)
    findings = seed_trends(args.findings, random.Random(history.SEED))
    print(
        f"seeded {args.cases:,} cases of the team, {args.other:,} of another team and {findings:,} "
        "findings "
        f"in {time.perf_counter() - t0:.1f} s (database {BENCH_DB})"
    )
    user = facts["user"]
    client = Client()
    client.force_login(user)
    print(f"\n{'request':<38} {'median ms':>9} {'max ms':>8} {'status':>6} {'cases':>8}")
    worst = 0.0
    try:
        for label, url in requests_to_time(user.teams.get().pk):
            median, peak, status, rows = history.measure(client, url, args.repeats, count=counted)
            worst = max(worst, median)
            print(f"{label:<38} {median:>9.1f} {peak:>8.1f} {status:>6} {rows:>8}")
        print(f"\nplan of the buckets' query (52 weeks): {plan(user, 52)}")
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep:
            history.drop_database(BENCH_DB)
    print(
        f"load average during the run: {' '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} "
        "CPUs)"
    )
    verdict = "within" if worst < TARGET_MS else "ABOVE"
    print(f"\nslowest median {worst:.1f} ms: {verdict} the {TARGET_MS:.0f} ms target")
    return 0 if worst < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
