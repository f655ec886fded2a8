"""The upload links' periodic task: temporary files of transfers that can no longer finish are deleted
(``services.transfers_discard_stale``), every hour from the beat (``CELERY_BEAT_SCHEDULE``)."""

from __future__ import annotations

import logging

from celery import shared_task

from web.uploads import services

log = logging.getLogger(__name__)


@shared_task(name="casebook.sweep_upload_links", ignore_result=True)
def sweep_upload_links() -> int:
    """Discard the stale transfers; how many were discarded."""
    count = services.transfers_discard_stale()
    if count:
        log.info("upload links: %s unfinished transfer(s) of expired or revoked links discarded", count)
    return count
