"""Cases built from real captures for the team-history tests (search, similarity, comparison).

``tests/fixtures/loads`` holds real MariaDB 10.11 captures of this machine (see its README): idle, and
64 sessions repeating one ``SELECT DISTINCT`` whose on-disk temporary table makes threads wait in
``do_unlinkat`` (D state). Each bundle is tarred as a customer's collection would be and ingested
through ``services.case_create`` + ``tasks.case_ingest``, the path of an upload.
"""

from __future__ import annotations

from pathlib import Path

from django.core.files import File

from tests.web.conftest import EXAMPLE_BUNDLE, make_tar
from web.cases import services
from web.ingest import tasks
from web.models import Case, Team

LOADS = Path(__file__).resolve().parent.parent / "fixtures" / "loads"
KINDS = ("processlist", "ps-eLo", "vmstat-t", "mysqladmin-ext_subset")


def load_bundle(tmp_path: Path, load: str, name: str) -> Path:
    """The capture ``load`` (``idle`` or ``tmptables-64``) as a .tar.gz of its four members."""
    members = {
        f"{name}/mariadb-10.11.19_{load}_{kind}.txt": (
            LOADS / f"mariadb-10.11.19_{load}_{kind}.txt"
        ).read_bytes()
        for kind in KINDS
    }
    return make_tar(tmp_path / f"{name}.tar.gz", members)


def ingest(path: Path, *, title: str = "", team: Team | None = None, **details: object) -> Case:
    """A ready case of the bundle at ``path`` (team: the default one), with ``details`` (customer,
    ticket, tags, notes) set as an engineer would."""
    with path.open("rb") as fh:
        case = services.case_create(
            user=None, file=File(fh), original_name=path.name, title=title, enqueue=False, team=team
        )
    tasks.case_ingest(case_id=case.pk)
    if details:
        services.case_update_details(
            case_id=case.pk,
            customer=str(details.get("customer", "")),
            ticket=str(details.get("ticket", "")),
            tags=list(details.get("tags", [])),  # type: ignore[arg-type]
            notes=str(details.get("notes", "")),
        )
    return Case.objects.get(pk=case.pk)


def example_case(**kwargs: object) -> Case:
    """The example bundle (pt-stalk 3.2.1, MariaDB, 64 sessions of a GROUP BY spilling to disk)."""
    return ingest(EXAMPLE_BUNDLE, **kwargs)  # type: ignore[arg-type]
