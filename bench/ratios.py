"""The ingest through the command line against its floor, and the process tree's peak memory.

Usage::

    .venv/bin/python bench/ratios.py BUNDLE [BUNDLE ...] [--rounds 3] [--before DIR] [--json]
                                     [--timeout 1800] [--max-rss-gib 4]

For each bundle, ``--rounds`` times: ``gzip -dc BUNDLE | wc -l`` (the floor: the time it takes just
to read every byte once) and right after it ``manage.py analyze --sync --json BUNDLE`` in a fresh
process, the path where Django and the parse processes start cold (set-up, migration check, upload,
parse, rules, writes, report). Both run under ``bench.tree.run_tree``, which measures the whole
process tree (its docstring says exactly what is and is not counted):

- wall seconds, and their ratio (analyze / the floor timed just before it): moves with the machine,
  since the command uses every core and the floor about one;
- **CPU seconds of the whole tree** (user + system of the command and every descendant: parse
  processes, the rules' forked child, orphans reparented here as this process is a subreaper), and
  of the floor's (bash, gzip, wc), and their ratio: the figure that a busy machine disturbs least;
- the **peak PSS summed over the tree** (smaps_rollup every 0.1 s; a page shared by a forked child
  and its parent counts once), beside the peak summed RSS (every 0.05 s) reported before;
- the CPU seconds of the PostgreSQL backends serving the command's database (outside the tree).

The bundle is read once first so that both read it from the page cache.

With ``--before DIR`` (another checkout of the project, e.g. ``git worktree add /tmp/before
<commit>`` with its own ``.venv``), the same is run there too, alternately: round 1 this checkout
then DIR, round 2 DIR first, and so on, each with its own database and media directory, so that a
machine whose speed drifts affects both alike. Reported per checkout and bundle: each run's
seconds, floor and ratio (analyze / the floor timed just before it), the median ratio, the tree's
peak, and the findings; a finding the other checkout has and this one lacks is named.

Databases ``<database of CASEBOOK_DATABASE_URL>_ratios_{after,before}_<pid>`` are created and migrated
afresh by each checkout's own ``manage.py migrate``, and dropped at the end; uploads go under /tmp.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.procstats import MIB  # noqa: E402
from bench.tree import become_subreaper, run_tree  # noqa: E402

#: The database named in CASEBOOK_DATABASE_URL, the stem of the scratch databases.
DB_STEM = (urlparse(os.environ.get("CASEBOOK_DATABASE_URL", "")).path.lstrip("/") or "casebook") + "_ratios"


class Checkout:
    """One checkout of the project, its own scratch database and media directory."""

    def __init__(self, label: str, root: Path) -> None:
        self.label, self.root = label, root.resolve()
        self.python = str(self.root / ".venv" / "bin" / "python")
        if not Path(self.python).exists():
            raise SystemExit(f"{self.root}: no .venv/bin/python (symlink the project's .venv there)")
        self.db = f"{DB_STEM}_{label}_{os.getpid()}"  # two runs at once never drop each other's
        self.media = Path(tempfile.mkdtemp(prefix=f"casebook-ratios-{label}-"))

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            DJANGO_SETTINGS_MODULE="web.settings",
            CASEBOOK_DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{self.db}",
            CASEBOOK_MEDIA_ROOT=str(self.media),
            CASEBOOK_LOG_LEVEL=env.get("CASEBOOK_LOG_LEVEL", "WARNING"),
        )
        return env

    def set_up(self) -> None:
        """A fresh database migrated by this checkout, and its bytecode compiled (as installed)."""
        _psql(f'DROP DATABASE IF EXISTS "{self.db}" WITH (FORCE)')
        _psql(f'CREATE DATABASE "{self.db}"')
        run = {"cwd": self.root, "env": self.env(), "check": True}
        subprocess.run([self.python, "manage.py", "migrate", "--noinput", "-v", "0"], **run)
        subprocess.run([self.python, "-m", "compileall", "-q", "analyzer", "parsers", "web"], **run)

    def tear_down(self) -> None:
        _psql(f'DROP DATABASE IF EXISTS "{self.db}" WITH (FORCE)')
        shutil.rmtree(self.media, ignore_errors=True)


def _psql(sql: str) -> None:
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(sql)


def floor_seconds(bundle: Path) -> tuple[float, float]:
    """Wall and CPU seconds (bash, gzip and wc) of ``gzip -dc BUNDLE | wc -l``."""
    run = run_tree(
        ["bash", "-o", "pipefail", "-c", 'gzip -dc -- "$1" | wc -l', "floor", str(bundle)],
        stdout=subprocess.DEVNULL,
    )
    if run.returncode:
        raise SystemExit(f"gzip -dc {bundle} | wc -l failed: {run.stderr.decode(errors='replace')}")
    return run.seconds, run.cpu_s


def analyze(checkout: Checkout, bundle: Path, timeout: float, max_rss: int) -> dict[str, Any]:
    """``manage.py analyze --sync --json BUNDLE`` in ``checkout``: wall and CPU seconds of its
    process tree, its peak summed PSS and RSS (bytes), the database backends' CPU seconds, the case's
    status and findings. Killed past ``timeout`` s or ``max_rss`` bytes of summed RSS."""
    out = tempfile.TemporaryFile()
    run = run_tree(
        [checkout.python, "manage.py", "analyze", "--sync", "--json", str(bundle)],
        cwd=checkout.root,
        env=checkout.env(),
        stdout=out,
        db_name=checkout.db,
        timeout=timeout,
        max_rss=max_rss,
    )
    out.seek(0)
    result: dict[str, Any] = {
        "seconds": round(run.seconds, 3),
        "cpu_seconds": round(run.cpu_s, 2),
        "cpu_polled_seconds": round(run.cpu_polled_s, 2),
        "peak_pss_bytes": run.peak_pss_bytes,
        "peak_rss_bytes": run.peak_rss_bytes,
        "db_cpu_seconds": None if run.db_cpu_s is None else round(run.db_cpu_s, 2),
        "orphans": run.orphans,
    }
    try:
        report = json.loads(out.read())
    except ValueError:
        report = {}
    result["status"] = report.get("status") or run.killed or f"exit {run.returncode}"
    result["findings"] = sorted(
        f"{f['key']}" + (f" [{f['host']}]" if f.get("host") else "") for f in report.get("findings", [])
    )
    if run.returncode:
        result["error"] = (run.killed or run.stderr.decode(errors="replace").strip()[-500:]) or None
    return result


def rounds(
    checkouts: list[Checkout], bundles: list[Path], n: int, timeout: float, max_rss: int
) -> list[dict[str, Any]]:
    """``n`` rounds, the checkouts' order swapped every round; one record per run."""
    runs = []
    for i in range(n):
        order = checkouts if i % 2 == 0 else checkouts[::-1]
        for bundle in bundles:
            for checkout in order:
                floor, floor_cpu = floor_seconds(bundle)
                floor, floor_cpu = (
                    round(floor, 4),
                    round(floor_cpu, 2),
                )  # the ratios are of the figures reported
                run = analyze(checkout, bundle, timeout, max_rss)
                run.update(
                    round=i + 1,
                    checkout=checkout.label,
                    bundle=bundle.name,
                    floor_seconds=floor,
                    floor_cpu_seconds=floor_cpu,
                    ratio=round(run["seconds"] / floor, 2),
                    cpu_ratio=round(run["cpu_seconds"] / max(floor_cpu, 0.01), 2),
                )
                print(_line(run), file=sys.stderr, flush=True)
                runs.append(run)
    return runs


def summary(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (bundle, checkout): the median and range of the ratio, the tree's peak, findings lost
    against any other checkout's runs of the bundle."""
    out = []
    for bundle in dict.fromkeys(r["bundle"] for r in runs):
        mine = [r for r in runs if r["bundle"] == bundle]
        for label in dict.fromkeys(r["checkout"] for r in mine):
            rs = [r for r in mine if r["checkout"] == label]
            have = set().union(*(r["findings"] for r in rs))
            others = set().union(*(r["findings"] for r in mine if r["checkout"] != label))
            lost = sorted(others - set.intersection(*(set(r["findings"]) for r in rs)))
            ratios = [r["ratio"] for r in rs]
            cpu_ratios = [r["cpu_ratio"] for r in rs]
            db = [r["db_cpu_seconds"] for r in rs if r.get("db_cpu_seconds") is not None]
            out.append(
                {
                    "bundle": bundle,
                    "checkout": label,
                    "runs": len(rs),
                    "statuses": sorted({r["status"] for r in rs}),
                    "ratio_median": round(statistics.median(ratios), 2),
                    "ratio_min": min(ratios),
                    "ratio_max": max(ratios),
                    "seconds_median": round(statistics.median(r["seconds"] for r in rs), 2),
                    "floor_median": round(statistics.median(r["floor_seconds"] for r in rs), 3),
                    "cpu_seconds_median": round(statistics.median(r["cpu_seconds"] for r in rs), 2),
                    "floor_cpu_median": round(statistics.median(r["floor_cpu_seconds"] for r in rs), 2),
                    "cpu_ratio_median": round(statistics.median(cpu_ratios), 2),
                    "cpu_ratio_min": min(cpu_ratios),
                    "cpu_ratio_max": max(cpu_ratios),
                    "peak_pss_mib_min": round(min(r["peak_pss_bytes"] for r in rs) / MIB),
                    "peak_pss_mib_max": round(max(r["peak_pss_bytes"] for r in rs) / MIB),
                    "db_cpu_median": round(statistics.median(db), 2) if db else None,
                    "peak_rss_mib_max": round(max(r["peak_rss_bytes"] for r in rs) / MIB),
                    "peak_rss_mib_min": round(min(r["peak_rss_bytes"] for r in rs) / MIB),
                    "findings": len(have),
                    "findings_lost": lost,
                }
            )
    return out


def _line(run: dict[str, Any]) -> str:
    return (
        f"  round {run['round']}  {run['checkout']:<7} {run['bundle']:<28} analyze {run['seconds']:8.2f} s"
        f"  floor {run['floor_seconds']:6.2f} s  = {run['ratio']:5.2f}x"
        f"  CPU {run['cpu_seconds']:7.2f} s (floor {run['floor_cpu_seconds']:5.2f} s) = "
        f"{run['cpu_ratio']:5.2f}x"
        f"  PSS {run['peak_pss_bytes'] / MIB:6,.0f} MiB  RSS {run['peak_rss_bytes'] / MIB:6,.0f} MiB"
        f"  db {_s(run.get('db_cpu_seconds'))}"
        f"  {run['status']}, {len(run['findings'])} findings"
    )


def _s(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.2f} s"


def print_summary(rows: list[dict[str, Any]]) -> None:
    print(
        f"{'bundle':<28} {'checkout':<8} runs  ratio median (range)   analyze  floor    CPU (floor)        "
        f" CPU ratio (range)   tree PSS peak    tree RSS peak   db CPU   findings"
    )
    for r in rows:
        print(
            f"{r['bundle']:<28} {r['checkout']:<8} {r['runs']:>4}  {r['ratio_median']:5.2f}x "
            f"({r['ratio_min']:.2f}-{r['ratio_max']:.2f})"
            f"   {r['seconds_median']:6.2f} s {r['floor_median']:5.2f} s"
            f"  {r['cpu_seconds_median']:6.2f} s ({r['floor_cpu_median']:5.2f} s)"
            f"  {r['cpu_ratio_median']:5.2f}x ({r['cpu_ratio_min']:.2f}-{r['cpu_ratio_max']:.2f})"
            f"  {r['peak_pss_mib_min']:,}-{r['peak_pss_mib_max']:,} MiB  "
            f"{r['peak_rss_mib_min']:,}-{r['peak_rss_mib_max']:,} MiB"
            f"  {_s(r['db_cpu_median'])}"
            f"  {r['findings']} {'LOST ' + ', '.join(r['findings_lost']) if r['findings_lost'] else ''}  "
            f"{'/'.join(r['statuses'])}"
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bundle", type=Path, nargs="+")
    p.add_argument("--rounds", type=int, default=3, help="runs of each bundle per checkout (default 3)")
    p.add_argument("--before", type=Path, metavar="DIR", help="another checkout, run alternately")
    p.add_argument("--json", action="store_true", help="print runs and summary as JSON")
    p.add_argument("--timeout", type=float, default=1800, help="per analyze run (s; default 1800)")
    p.add_argument("--max-rss-gib", type=float, default=4, help="kill a run past this tree RSS (default 4)")
    args = p.parse_args(argv)
    bundles = [b.resolve() for b in args.bundle]
    for b in bundles:
        if not b.is_file():
            p.error(f"{b}: no such file")
        with b.open("rb") as fh:  # into the page cache
            while fh.read(1 << 24):
                pass
    become_subreaper()  # orphans of a command come here and count in its tree (bench.tree)
    checkouts = [Checkout("after", ROOT)] + ([Checkout("before", args.before)] if args.before else [])
    try:
        for c in checkouts:
            c.set_up()
        runs = rounds(checkouts, bundles, args.rounds, args.timeout, int(args.max_rss_gib * (1 << 30)))
    finally:
        for c in checkouts:
            c.tear_down()
    rows = summary(runs)
    if args.json:
        print(json.dumps({"runs": runs, "summary": rows}, indent=2))
    else:
        print_summary(rows)
    return 0 if all(r["status"] == "ready" for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
