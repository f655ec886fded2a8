#!/usr/bin/env python3
"""Cut the command line of unrelated processes in a captured ``ps -eaF`` listing to its program's
base name, in place (for bundles made on a shared build machine: other processes' arguments are not
part of the example). Kept whole: MariaDB, its clients, sysbench, pt-stalk, the load scripts, dd
(the I/O load), stress-ng and fio (the hogs), kernel threads; ``TS`` and header lines are kept as they are.

Usage: python3 scripts/clean_ps_args.py FILE...
"""

from __future__ import annotations

import re
import sys

KEEP = re.compile(
    r"mariadb|mysqld|mysql|sysbench|pt-stalk|load_mariadb|collect\.sh|stress-ng|^fio\b|^dd\b|^\["
)
ROW = re.compile(r"^((?:\S+\s+){10})(\S.*)$")  # UID PID PPID C SZ RSS PSR STIME TTY TIME | CMD


def clean(path: str) -> None:
    out = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = ROW.match(line.rstrip("\n"))
            if line.startswith(("TS ", "UID ")) or not m or KEEP.search(" ".join(m.group(2).split()[:2])):
                out.append(line.rstrip("\n"))
            else:
                out.append(m.group(1) + m.group(2).split()[0].rsplit("/", 1)[-1])
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(out) + "\n")


if __name__ == "__main__":
    for name in sys.argv[1:]:
        clean(name)
