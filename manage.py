#!/usr/bin/env python
"""Django's command-line entry point for Casebook."""

import os
import sys


def main() -> None:
    sync_analyze = sys.argv[1:2] == ["analyze"] and "--sync" in sys.argv[2:]
    if sync_analyze:
        from parsers.ingest.children import exec_tuned

        exec_tuned()  # malloc tuned as a worker's: this process joins the pieces a worker would
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "web.settings")
    from django.core.management import execute_from_command_line

    if sync_analyze:
        from django.conf import settings

        from parsers.ingest.children import start_early

        start_early(int(settings.CASEBOOK_PARSE_PROCESSES or 0))  # they import while this process does
        from web.ingest.work import read_ahead

        read_ahead(sys.argv[2:])  # the parse processes start, and read the bundle, while Django sets up
    execute_from_command_line(sys.argv)
    if sync_analyze:
        _end_now()


def _end_now() -> None:
    """End a command whose work is done and printed without the interpreter's teardown, which frees a
    bundle's frames object by object (a few tenths of a second): connections closed, logs and output
    flushed, then ``os._exit(0)``, as the parse processes end."""
    import logging

    from django.db import connections

    connections.close_all()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
