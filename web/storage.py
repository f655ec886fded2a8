"""What Casebook keeps in Django's default storage (``CASEBOOK_STORAGE_URL``: a folder, or an S3
bucket through django-storages) and its removal with the case it belongs to.

- ``Upload.file``: the original bundle, under ``bundles/<year>/<month>/``;
- the fan-out's pieces and work files, under ``ingest-work/case-<id>/`` (web/ingest/fanout.py).

Django does not delete a ``FileField`` 's file with its row; the receivers connected here
(``connect``, from ``WebConfig.ready``) do it once the deleting transaction commits, whatever deleted
the case (the admin, a shell, a view), so that nothing of a deleted case stays in the bucket.
"""

from __future__ import annotations

import contextlib
import logging
import os

from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models.signals import post_delete

log = logging.getLogger(__name__)

#: Where the fan-out's pieces, plans and outcomes live in the storage (web/ingest/fanout.py).
WORK_DIR = "ingest-work"


def case_work_dir(case_id: int) -> str:
    """The storage folder of one case's fan-out work files."""
    return f"{WORK_DIR}/case-{case_id}"


def work_generations() -> dict[int, list[int]]:
    """The fan-out work folders in the storage: case id -> the generations that have a
    ``gen-<n>`` folder (names of another shape are ignored)."""
    out: dict[int, list[int]] = {}
    try:
        cases, _ = default_storage.listdir(WORK_DIR)
    except FileNotFoundError:
        return out
    for case in cases:
        if not case.startswith("case-") or not case[5:].isdigit():
            continue
        try:
            gens, _ = default_storage.listdir(f"{WORK_DIR}/{case}")
        except FileNotFoundError:
            continue
        out[int(case[5:])] = sorted(int(g[4:]) for g in gens if g.startswith("gen-") and g[4:].isdigit())
    return out


def remove_tree(folder: str) -> None:
    """Delete ``folder`` of the storage and everything under it (missing: nothing to do). On S3 a
    folder is a key prefix: its objects go, and with them the folder."""
    try:
        folders, files = default_storage.listdir(folder)
    except FileNotFoundError:
        return
    for name in files:
        default_storage.delete(f"{folder}/{name}")
    for sub in folders:
        remove_tree(f"{folder}/{sub}")
    remove_empty_folder(folder)


def remove_empty_folder(folder: str) -> None:
    """On a file system, remove ``folder`` once it is empty (a storage without folders: nothing to do)."""
    with contextlib.suppress(OSError, NotImplementedError):
        os.rmdir(default_storage.path(folder))


def _delete_upload_file(sender, instance, **kwargs) -> None:  # noqa: ANN001 - Django's signal
    name = instance.file.name
    if name:
        transaction.on_commit(lambda: _delete_quietly(name, instance.case_id))


def _delete_quietly(name: str, case_id: int) -> None:
    try:
        default_storage.delete(name)
    except Exception:  # noqa: BLE001 - the case is gone already; say what was left behind
        log.exception("case %s: its upload %s could not be deleted from the storage", case_id, name)


def _delete_work_files(sender, instance, **kwargs) -> None:  # noqa: ANN001 - Django's signal
    case_id = instance.pk
    transaction.on_commit(lambda: _remove_work_quietly(case_id))


def _remove_work_quietly(case_id: int) -> None:
    try:
        remove_tree(case_work_dir(case_id))
    except Exception:  # noqa: BLE001 - as above
        log.exception("case %s: its work files could not be deleted from the storage", case_id)


def connect() -> None:
    """Connect the receivers that delete a case's objects with it (called once, at start-up)."""
    from web.models import AddedUpload, Case, Upload

    post_delete.connect(_delete_upload_file, sender=Upload, dispatch_uid="casebook-upload-file")
    post_delete.connect(_delete_upload_file, sender=AddedUpload, dispatch_uid="casebook-added-upload-file")
    post_delete.connect(_delete_work_files, sender=Case, dispatch_uid="casebook-case-work-files")
