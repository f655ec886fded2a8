#!/usr/bin/env python
"""Django's command-line entry point for Casebook."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "web.settings")
    from django.core.management import execute_from_command_line

    if sys.argv[1:2] == ["analyze"] and "--sync" in sys.argv[2:]:
        from web.ingest.work import read_ahead

        read_ahead(sys.argv[2:])  # the parse processes start, and read the bundle, while Django sets up
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
