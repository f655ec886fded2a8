"""A generated history for the trends tests: cases of a team uploaded over the last weeks, each with a
status, a verdict's root cause (set directly, as the ingest would), a customer, a ready time and, for
some, a close. Deterministic for a seed; the times are relative to ``now``."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from web.models import Case, CaseStatus, Team

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
CUSTOMERS = ("Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark")


def generated_history(
    team: Team, *, now: datetime, weeks: int = 13, cases: int = 240, seed: int = 7
) -> list[Case]:
    """``cases`` cases of ``team`` uploaded at random over the last ``weeks`` ISO weeks up to ``now``
    (the current one included, as the trends' default range counts them): about 5 %
    failed, 3 % still queued, the rest ready 1 minute to 30 hours after upload; 70 % with a root
    cause (the first causes likelier); 60 % of the analysed ones closed 1 to 400 hours after upload;
    customers from a few names, in varying letter case."""
    rng = random.Random(seed)
    monday = (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    since = monday - timedelta(weeks=weeks - 1)
    span_s = int((now - since).total_seconds())
    made = Case.objects.bulk_create(Case(team=team, title=f"generated {i}") for i in range(cases))
    for case in made:
        case.created_at = since + timedelta(seconds=rng.randrange(span_s))
        roll = rng.random()
        if roll < 0.05:
            case.status, case.failure_reason = CaseStatus.FAILED, "No supported capture was found."
        elif roll < 0.08:
            case.status = CaseStatus.QUEUED
        else:
            case.status = CaseStatus.READY
            case.ingested_at = case.created_at + timedelta(minutes=rng.randrange(1, 30 * 60))
            if rng.random() < 0.7:
                case.root_cause_key = ROOT_CAUSES[min(int(rng.expovariate(0.35)), len(ROOT_CAUSES) - 1)]
        if case.status != CaseStatus.QUEUED and rng.random() < 0.6:
            closed = case.created_at + timedelta(minutes=rng.randrange(60, 400 * 60))
            case.closed_at = min(closed, now)
        name = rng.choice(CUSTOMERS)
        case.customer = name.upper() if rng.random() < 0.2 else name
    Case.objects.bulk_update(
        made,
        ["created_at", "status", "failure_reason", "ingested_at", "root_cause_key", "closed_at", "customer"],
        batch_size=500,
    )
    return made
