"""``manage.py analyze BUNDLE [--json] [--sync]``: ingest a bundle as a case without the web server.

It goes through the same code path as an upload: ``services.case_create`` keeps the original, then
the ingest task runs on a Celery worker (default: the command waits for it) or inline (``--sync``).
Exit status 0 when the case is ready; 1 with a one-line reason on stderr when it is not.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.files import File
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from web.cases import selectors, services
from web.ingest.tasks import case_ingest_task
from web.models import FINAL_STATUSES, Case, CaseStatus, Team

#: How often the command looks at the case while a worker processes it.
POLL_S = 0.5


def _migrate_if_needed() -> None:
    """Bring the database schema up to date first: the command is often the first thing run after an
    upgrade, before any web server would have migrated."""
    executor = MigrationExecutor(connection)
    if executor.migration_plan(executor.loader.graph.leaf_nodes()):
        call_command("migrate", interactive=False, verbosity=0)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class Command(BaseCommand):
    help = "Ingest a diagnostic bundle as a case and print its sources and findings."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "bundle", type=Path, help="a .tar[.gz|.bz2|.xz|.zst], .zip or single capture file"
        )
        parser.add_argument("--json", action="store_true", help="print the case report as one JSON document")
        parser.add_argument(
            "--sync", action="store_true", help="run the ingest task inline instead of on a worker"
        )
        parser.add_argument("--title", default="", help="a title for the case")
        parser.add_argument(
            "--team", default="", help="the team the case belongs to (default: the default team)"
        )
        parser.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for the worker")
        parser.add_argument(
            "--reuse",
            action="store_true",
            help="report the ready case of an identical upload (same sha256) instead of a new one",
        )

    def handle(self, *args: object, **opts: object) -> None:
        path: Path = opts["bundle"]  # type: ignore[assignment]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        _migrate_if_needed()
        existing = selectors.ready_case_with_sha256(sha256=_sha256(path)) if opts["reuse"] else None
        if existing is not None:
            self._report(existing, bool(opts["json"]))
            return
        with path.open("rb") as fh:
            try:
                case = services.case_create(
                    user=None,
                    file=File(fh),
                    original_name=path.name,
                    title=str(opts["title"]),
                    enqueue=not opts["sync"],
                    team=self._team(str(opts["team"])),
                )
            except ValidationError as exc:
                raise CommandError(" ".join(exc.messages)) from exc
        if opts["sync"]:
            case_ingest_task(case.pk)  # the task body, run in this process
        else:
            self._wait(case.pk, float(opts["timeout"]))  # type: ignore[arg-type]
        self._report(Case.objects.select_related("upload").get(pk=case.pk), bool(opts["json"]))

    def _team(self, name: str) -> Team | None:
        if not name:
            return None
        team = Team.objects.filter(name=name).first()
        if team is None:
            raise CommandError(f"no team named {name!r} (manage.py create_engineer --team makes one)")
        return team

    def _report(self, case: Case, as_json: bool) -> None:
        report = selectors.case_report(case=case)
        if as_json:
            self.stdout.write(json.dumps(report, indent=2, default=str))
        else:
            self._summary(report)
        if case.status != CaseStatus.READY:
            sys.stderr.write(
                f"case {case.pk} {case.status}: {case.failure_reason or 'not finished'}\n".replace("\n", " ")
                + "\n"
            )
            sys.exit(1)

    def _wait(self, case_id: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if Case.objects.filter(pk=case_id, status__in=FINAL_STATUSES).exists():
                return
            time.sleep(POLL_S)
        sys.stderr.write(
            f"case {case_id}: no worker finished it within {timeout:.0f} s (is a Celery worker running?)\n"
        )
        sys.exit(1)

    def _summary(self, report: dict) -> None:
        self.stdout.write(f"case {report['case']} {report['status']}: {report['url']}")
        for s in report["sources"]:
            if not s["samples"]:  # read for context (host, CPUs, settings), not a time series
                self.stdout.write(f"  context {s['format']:<13} {s['member']}")
                continue
            self.stdout.write(
                f"  source {s['format']:<12} {s['samples']:>6} samples  {s['start']} .. {s['end']}  [{s['clock']}]  "
                f"{s.get('role') or '-':<7}  {s['member']}"
            )
        for n in report["not_used"]:
            self.stdout.write(f"  not used {n['member']}: {n['reason']}")
        for f in report["findings"]:
            self.stdout.write(f"  {f['severity'].upper():<8} {f['key']}: {f['title']}")
