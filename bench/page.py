"""Benchmark of the case page (issue 12): server time of the page and of its JSON, and what the
first paint downloads, for cases of any length.

For each case (ingested first from a bundle, or given by id) it requests, in process through
Django's test client (so the time is the server's: middleware, view, queries, template or JSON
encoding; no network), each a few times and reports the median:

- ``page``: the case page's HTML;
- ``first paint JSON``: ``timeline.json`` as the page loads it (the overview stored at ingest);
- ``zoom 1/10``, ``zoom 1/2``: ``timeline.json?start=&end=`` for a tenth and a half of the capture,
  around its middle (the detail the page fetches after a zoom);
- ``moment``: ``moment.json?t=`` at several instants spread over the capture.

Usage (PostgreSQL and Redis up, ``CASEBOOK_DATABASE_URL`` naming a migrated database)::

    .venv/bin/python bench/page.py BUNDLE [BUNDLE ...]      # ingest each, then measure
    .venv/bin/python bench/page.py --case 12 --case 14       # measure cases already ingested
    .venv/bin/python bench/page.py ... --json                # machine-readable

Bundles: ``bench/generate_bundle.py`` (``--minutes 10``, ``--minutes 60``, and for a day
``--minutes 1440 --interval 10`` with fewer threads and sessions). Prints one table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Requests per measure; the median is reported (the first, which warms caches, is included).
REPEAT = 5
#: Moments asked per case, spread evenly over the capture.
MOMENTS = 5


def _setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "web.settings")
    import django

    django.setup()


def _ingest(path: Path) -> int:
    from django.core.files import File

    from web.cases import services
    from web.ingest import tasks

    with path.open("rb") as fh:
        case = services.case_create(user=None, file=File(fh), original_name=path.name, enqueue=False)
    started = time.perf_counter()
    tasks.case_ingest(case_id=case.pk)
    print(f"ingested {path.name} as case {case.pk} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return case.pk


def _timed(client, url: str) -> tuple[float, int, int]:
    """(milliseconds, bytes, status) of one GET."""
    started = time.perf_counter()
    response = client.get(url)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return (time.perf_counter() - started) * 1000.0, len(body), response.status_code


def _median(client, urls: list[str]) -> dict[str, float]:
    runs = [_timed(client, u) for u in urls]
    bad = [(u, s) for u, (_, _, s) in zip(urls, runs, strict=True) if s != 200]
    if bad:
        raise SystemExit(f"request failed: {bad[0][0]} answered {bad[0][1]}")
    return {
        "ms": round(statistics.median(r[0] for r in runs), 1),
        "max_ms": round(max(r[0] for r in runs), 1),
        "bytes": int(statistics.median(r[1] for r in runs)),
    }


def measure(case_id: int) -> dict[str, object]:
    """The figures of one case (see the module docstring)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from web.models import Case

    case = Case.objects.get(pk=case_id)
    if case.status != "ready" or not case.window_start:
        raise SystemExit(f"case {case_id} is {case.status}, not ready with a window")
    user, _ = get_user_model().objects.get_or_create(username="bench-page")
    case.team.members.add(user)  # an engineer of the case's team (web.cases.selectors.cases_for)
    client = Client()
    client.force_login(user)
    start = case.window_start.timestamp() * 1000
    end = case.window_end.timestamp() * 1000
    span = end - start
    base = f"/cases/{case_id}"

    def zoom(fraction: float) -> str:
        mid = start + span / 2
        return (
            f"{base}/timeline.json?start={mid - span * fraction / 2:.0f}&end={mid + span * fraction / 2:.0f}"
        )

    moments = [f"{base}/moment.json?t={start + span * (k + 0.5) / MOMENTS:.0f}" for k in range(MOMENTS)]
    return {
        "case": case_id,
        "host": case.host,
        "length_s": round(span / 1000),
        "page": _median(client, [f"{base}/"] * REPEAT),
        "first_paint_json": _median(client, [f"{base}/timeline.json"] * REPEAT),
        "zoom_tenth": _median(client, [zoom(0.1)] * REPEAT),
        "zoom_half": _median(client, [zoom(0.5)] * REPEAT),
        "moment": _median(client, moments),
    }


def _length(seconds: int) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bundles", nargs="*", type=Path, help="bundles to ingest and measure")
    p.add_argument("--case", type=int, action="append", default=[], help="a case already ingested")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if not args.bundles and not args.case:
        p.error("give bundles or --case")
    _setup()
    ids = [*args.case, *(_ingest(b) for b in args.bundles)]
    results = [measure(i) for i in ids]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print("server time in ms (median of 5, max), bytes of JSON")
    print(
        f"{'case':>6} {'length':>8} | {'page':>14} | {'first paint JSON':>24} | {'zoom 1/10':>22} | "
        f"{'zoom 1/2':>22} | {'moment':>22}"
    )
    for r in results:
        cells = [
            f"{r[k]['ms']:>6} ({r[k]['max_ms']:>5})" + (f" {r[k]['bytes']:>9,} B" if k != "page" else "")
            for k in ("page", "first_paint_json", "zoom_tenth", "zoom_half", "moment")
        ]
        print(f"{r['case']:>6} {_length(r['length_s']):>8} | " + " | ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
