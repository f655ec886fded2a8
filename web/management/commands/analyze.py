"""``manage.py analyze BUNDLE [BUNDLE ...] [--json] [--sync] [--team NAME] [--user NAME]``: ingest bundles as
one case without the web server.

It goes through the same code path as an upload: ``services.case_create`` keeps the first bundle,
``services.case_add_bundle`` each further one (another host's capture of the same incident: the
case is read over all of them, hosts merged by name), then the ingest task runs on a Celery worker
(default: the command waits for it) or inline (``--sync``). Exit status 0 when the case is ready; 1
with a one-line reason on stderr when it is not.

The case goes to ``--team`` or the default team. With ``--user`` it is that engineer's upload, under
the upload team rule of the page and the API (``services.team_for_new_case``): his only team, or
``--team`` naming one of his when he is in several (refused otherwise, his teams listed).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.files import File
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import OperationalError, connection
from django.db.migrations.executor import MigrationExecutor
from psycopg import connect, sql

from web.cases import selectors, services
from web.ingest.tasks import case_ingest
from web.ingest.work import analyze_arguments
from web.models import FINAL_STATUSES, Case, CaseStatus, Team

#: How often the command looks at the case while a worker processes it.
POLL_S = 0.5


def _create_database_if_missing() -> None:
    """Create the database ``CASEBOOK_DATABASE_URL`` names when the server has none of that name: the
    command may be the first thing run on a fresh machine, before ``scripts/run`` would have made it.
    Any other connection failure is raised as it is."""
    try:
        connection.ensure_connection()
    except OperationalError as exc:
        if "does not exist" not in str(exc):
            raise
        db = connection.settings_dict
        with connect(
            dbname="postgres",
            host=db["HOST"],
            port=db["PORT"],
            user=db["USER"],
            password=db["PASSWORD"] or None,
            autocommit=True,
        ) as maintenance:
            maintenance.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db["NAME"])))


def _migrate_if_needed() -> None:
    """Bring the database schema up to date first (creating the database when it is missing): the
    command is often the first thing run after an upgrade or on a fresh machine, before any web
    server would have migrated."""
    _create_database_if_missing()
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
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        analyze_arguments(parser)

    def handle(self, *args: object, **opts: object) -> None:
        paths: list[Path] = opts["bundle"]  # type: ignore[assignment]
        path, more = paths[0], paths[1:]
        for p in paths:
            if not p.is_file():
                raise CommandError(f"{p}: no such file")
        _migrate_if_needed()
        existing = (
            selectors.ready_case_with_sha256(sha256=_sha256(path)) if opts["reuse"] and not more else None
        )
        if existing is not None:
            self._report(existing, bool(opts["json"]))
            return
        try:
            with path.open("rb") as fh:
                case = services.case_create(
                    user=self._user(str(opts["user"])),
                    file=File(fh),
                    original_name=path.name,
                    title=str(opts["title"]),
                    enqueue=not opts["sync"] and not more,
                    team=self._team(str(opts["team"])),
                )
            for p in more:
                with p.open("rb") as fh:
                    services.case_add_bundle(
                        case_id=case.pk, user=None, file=File(fh), original_name=p.name, enqueue=False
                    )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        if more and not opts["sync"]:
            services.case_reanalyze(case_id=case.pk)  # queued once, over every bundle
        if opts["sync"]:
            # the task's body in this process, without the task's start of a next bundle's parse
            # processes (a worker's; the command ends here): those started by manage.py serve it
            case_ingest(case_id=case.pk)
        else:
            self._wait(case.pk, float(opts["timeout"]))  # type: ignore[arg-type]
        self._report(Case.objects.select_related("upload").get(pk=case.pk), bool(opts["json"]))

    def _user(self, name: str):  # noqa: ANN202 - a user or None
        if not name:
            return None
        user = get_user_model().objects.filter(username=name, is_active=True).first()
        if user is None:
            raise CommandError(f"no active engineer named {name!r}")
        return user

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
        for h in report.get("hosts") or []:
            self.stdout.write(
                f"  host {h['name']}: {h['ncpu'] or '?'} CPUs, UTC offset {h['clock']['utc_offset_s']} s, "
                f"{len(h['sources'])} members ({h['name_origin']})"
            )
        for s in report["sources"]:
            if not s["samples"]:  # read for context (host, CPUs, settings), not a time series
                self.stdout.write(f"  context {s['format']:<13} {s['member']}")
                continue
            self.stdout.write(
                f"  source {s['format']:<12} {s['samples']:>6} samples  {s['start']} .. {s['end']}  "
                f"[{s['clock']}]  "
                f"{s.get('role') or '-':<7}  {s['member']}"
            )
        for n in report["not_used"]:
            self.stdout.write(f"  not used {n['member']}: {n['reason']}")
        for f in report["findings"]:
            where = f"[{f['host'] or ', '.join(f['hosts'])}] " if len(report.get("hosts") or []) > 1 else ""
            self.stdout.write(f"  {f['severity'].upper():<8} {where}{f['key']}: {f['title']}")
