"""What each piece of an ingest gets, wherever it is parsed (``ingest_work``), and the start of the
parse processes of ``manage.py analyze --sync`` before Django sets up (``start_parse_processes``).

No Django import here beyond its lazy settings: ``manage.py`` calls ``start_parse_processes`` before
``django.setup()``, so that the parse processes import pandas and the parsers while the command's
own process sets Django up, checks the migrations and keeps the upload.
"""

from __future__ import annotations

from collections.abc import Callable

from analyzer.timeline import reduce_piece
from parsers.base import ParsedSource
from parsers.ingest.pieces import Work
from parsers.ingest.pool import keep_warm

#: What the ingest keeps of each parsed piece, handed to the pipeline and applied where the piece was
#: parsed (parsers/ingest/pieces.py).
PIECE_REDUCER = reduce_piece


def ingest_work(reduce: Callable[[ParsedSource], ParsedSource] = PIECE_REDUCER) -> Work:
    """What each piece of an ingest gets: reduced by ``reduce`` (the pipeline's reducer), its text
    kept; the same ``Work`` as ``read_bundle`` builds from what the pipeline hands it, so that parse
    processes started ahead are the ones an ingest takes."""
    return Work(reduce=reduce, keep_text=True)


def start_parse_processes() -> None:
    """Start the ingest's parse processes now (``CASEBOOK_PARSE_PROCESSES`` of them, read from the
    settings module without setting Django up), without waiting for them: ``manage.py analyze
    --sync`` calls it first thing. The ingest takes them (``parsers.ingest.pool.warmed``); a bundle
    that needs none leaves them to be closed at exit."""
    from django.conf import settings  # noqa: PLC0415 - lazy: reads DJANGO_SETTINGS_MODULE only

    processes = int(settings.CASEBOOK_PARSE_PROCESSES or 0)
    if processes > 0:
        keep_warm(processes, work=ingest_work())
