"""The Celery application; configuration comes from Django settings prefixed ``CELERY_``."""

import logging.config
import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "web.settings")

app = Celery("casebook")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Each task sits beside the code it runs: the ingest (tasks), its fan-out, the sweeper.
for module in ("tasks", "fanout", "sweeper"):
    app.autodiscover_tasks(["web.ingest"], related_name=module)
app.autodiscover_tasks(["web.notifications"])  # mails and webhooks of a finished case
app.autodiscover_tasks(["web.uploads"], related_name="tasks")  # upload links' temporary files


@signals.setup_logging.connect
def _log_like_the_web(**kwargs: object) -> None:
    """Worker and beat log through settings.LOGGING (JSON lines) instead of Celery's own format."""
    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)
    logging.captureWarnings(True)  # Python warnings become log lines too


@signals.worker_process_init.connect
def _start_parse_processes(**kwargs: object) -> None:
    """Each worker process starts its parse processes as it starts
    (``web.ingest.pipeline.warm_parse_processes``): the first bundle it takes then does not wait for them."""
    from web.ingest import pipeline  # not at the top: Django is set up after this module loads

    pipeline.warm_parse_processes()
