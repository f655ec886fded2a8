"""Benchmark a bundle end to end (issue 4, "Speed and memory"): decompression baseline, each parser
on one core, and the whole ingest from upload to READY with its PostgreSQL writes.

Usage::

    .venv/bin/python bench/run.py BUNDLE [--json] [--skip-parsers] [--skip-ingest]
                                         [--timeout 1800] [--max-rss-gib 8] [--keep-case]
                                         [--profile DIR]

What it prints (bench/README.md explains each figure and the targets):

1. ``gzip -dc BUNDLE | wc -l``: wall time over the same bytes (best of three, page cache warm). The
   yardstick of the ingest target (<= 5x, then 3x).
2. Per parser: each member is first decompressed to a scratch file under /tmp (not timed), then read
   in a fresh process exactly as ``parsers/ingest/bundle.py`` reads it (``io.TextIOWrapper`` utf-8 with
   ``errors="replace"``, the first ``registry.HEAD_LINES`` lines to ``registry.detect``, then
   ``registry.by_format(FORMAT).parse(chain(head, rest), member=..., clock=ClockHints(...))``); timed:
   that parse call. Reported: MB/s of member text (MB = 10^6 bytes), rows/s of the main frame, CPU
   seconds (user+sys; > wall means more than one core was used), peak RSS of that process.
3. Ingest: a fresh process with ``DJANGO_SETTINGS_MODULE=web.settings`` and
   ``CASEBOOK_DATABASE_URL=postgres://postgres@127.0.0.1:5432/casebook_bench`` (created afresh and
   migrated; uploads stored under /tmp/casebook-bench-media) runs
   ``web.cases.services.case_create(user=None, file=File(fh), original_name=..., enqueue=False)`` (timed as
   "upload") then ``web.ingest.tasks.case_ingest(case_id=...)`` (timed as "ingest": the body the Celery
   worker runs). Reported: wall times, ingest / gzip|wc ratio, peak RSS (``ru_maxrss``), the case's
   final status, and a breakdown by stage (parse per member, timeline, rules, aggregate, COPY writes)
   with the peak RSS seen in each stage (sampled every 0.2 s). The stage wrappers are installed in the
   benchmark process only; no project code is changed. The case is deleted afterwards unless
   ``--keep-case``.

The benchmark process is killed (and the stage it was in reported) past ``--timeout`` seconds or
``--max-rss-gib`` of resident memory, so that a runaway ingest cannot take the machine down.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
#: ``casebook_bench`` by default; ``<database>_bench`` beside the database of CASEBOOK_DATABASE_URL, so
#: that two checkouts on one machine (each with its own database and migrations) never share it.
BENCH_DB = (urlparse(os.environ.get("CASEBOOK_DATABASE_URL", "")).path.lstrip("/") or "casebook") + "_bench"
BENCH_DB_URL = f"postgres://postgres@127.0.0.1:5432/{BENCH_DB}"
#: Uploaded copies of the bundle go here, never into the project's var/media.
BENCH_MEDIA = "/tmp/casebook-bench-media"
#: Targets of DESIGN.md ("Targets").
PARSER_TARGET_MB_S = 50.0
INGEST_TARGET_RATIO = 5.0
INGEST_NEXT_TARGET_RATIO = 3.0
RSS_TARGET_BYTES = 1 << 30
#: Members smaller than this are context (meminfo, variables): their MB/s is dominated by start-up
#: costs and is not held to the parser target.
PARSER_TARGET_MIN_BYTES = 1_000_000
#: How often the ingest process samples its own RSS (s).
RSS_SAMPLE_S = 0.2
#: Lines the ingest process writes for the parent start with this, the rest is Django's logging.
EVENT_PREFIX = "@@bench "
MB = 1e6
MIB = 1 << 20
#: With --profile, the benchmark processes dump cProfile stats into the directory this names.
PROFILE_ENV = "CASEBOOK_BENCH_PROFILE"


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------
def _maxrss_bytes() -> int:
    """Peak resident set size of this process (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _children(pid: int | str = "self") -> list[int]:
    """The live child processes of a process (of the ingest: its parse processes)."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                out.extend(int(child) for child in fh.read().split())
    return out


def _live_cpu_seconds(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of a live process, from /proc/<pid>/stat (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick  # utime, stime (proc(5) fields 14, 15)


def _cpu_seconds(*, system_only: bool = False) -> dict[str, float]:
    """User + system CPU seconds of this process (``worker``) and of its child processes (``parse
    processes``: those that ended, from getrusage, and those still running, kept by the worker
    between bundles, from /proc); with ``system_only`` the system (kernel) part only."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    live = [_live_cpu_seconds(pid) for pid in _children()]
    if system_only:
        return {"worker": me.ru_stime, "parse processes": kids.ru_stime + sum(s for _, s in live)}
    return {
        "worker": me.ru_utime + me.ru_stime,
        "parse processes": kids.ru_utime + kids.ru_stime + sum(u + s for u, s in live),
    }


def _system_cpu_seconds() -> dict[str, float]:
    """The system (kernel) part of ``_cpu_seconds``: page faults of fresh memory, pipes, files."""
    return _cpu_seconds(system_only=True)


def _rss_bytes(pid: int | str = "self") -> int | None:
    """Current resident set size of a process, from /proc/<pid>/statm (None when it is gone)."""
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _tree_rss_bytes(pid: int | str = "self") -> int:
    """Resident set size of a process and all its descendants (the ingest's parse processes)."""
    total, todo = 0, [os.getpid() if pid == "self" else int(pid)]
    while todo:
        current = todo.pop()
        total += _rss_bytes(current) or 0
        todo.extend(_children(current))
    return total


@contextlib.contextmanager
def _profiled(name: str):  # noqa: ANN201 - context manager
    """cProfile the block into $CASEBOOK_BENCH_PROFILE/<name>.prof when --profile asked for it."""
    where = os.environ.get(PROFILE_ENV)
    if not where:
        yield
        return
    import cProfile

    prof = cProfile.Profile()
    prof.enable()
    try:
        yield
    finally:
        prof.disable()
        prof.dump_stats(str(Path(where) / f"{name}.prof"))


def _cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _python() -> str:
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _mib(n: float | None) -> str:
    return "-" if n is None else f"{n / MIB:,.0f} MiB"


# ---------------------------------------------------------------------------------------------
# (1) gzip -dc | wc -l
# ---------------------------------------------------------------------------------------------
def gzip_wc(bundle: Path, repeats: int = 3) -> dict[str, Any]:
    """Best wall time of ``gzip -dc BUNDLE | wc -l`` over ``repeats`` runs; the line count."""
    with bundle.open("rb") as fh:  # warm the page cache so that every stage reads the same way
        while fh.read(1 << 24):
            pass
    best, lines = float("inf"), 0
    for _ in range(repeats):
        t = time.perf_counter()
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", 'gzip -dc -- "$1" | wc -l', "gzip-wc", str(bundle)],
            capture_output=True,
            text=True,
            check=True,
        )
        best = min(best, time.perf_counter() - t)
        lines = int(done.stdout.strip())
    return {"seconds": round(best, 3), "lines": lines}


# ---------------------------------------------------------------------------------------------
# (2) Parsers, one member per process
# ---------------------------------------------------------------------------------------------
def parse_one(path: Path, member: str) -> dict[str, Any]:
    """Child side: parse ``path`` as the ingest parses a member, in this one process, and report as
    JSON: snapshot captures cut into pieces at their markers, any other member as one piece; timed:
    each piece decoded and parsed (``parsers.ingest.pieces.parse_piece``), not the reading and cutting nor
    the join of the pieces (the ingest's figures have those)."""
    import pandas as pd  # noqa: F401 - imported before the clock starts, like in the worker

    from parsers import registry
    from parsers.base import ClockHints
    from parsers.ingest import pieces
    from parsers.ingest.bundle import head_of
    from parsers.layout import place

    size = path.stat().st_size
    where = place(member)
    with path.open("rb") as raw:
        first, head = head_of(raw)
        module = registry.detect(head)
        if module is None:
            return {"member": member, "bytes": size, "format": None, "error": "format not recognised"}
        fmt = module.FORMAT
        hints = ClockHints(start_local=where.start_local, interval_s=where.interval_s)
        # One-time costs (the reader's and pandas' first calls, caches) are paid once by a
        # long-lived parse process, not per member: the first lines are parsed once, untimed.
        with contextlib.suppress(Exception):
            pieces.parse_piece(
                module, pieces.whole(first[: first.rfind(b"\n") + 1]), member=member, clock=hints
            )
        if pieces.in_snapshots(fmt, head):
            cut = pieces.split(first, raw)
        else:
            cut = iter([pieces.whole(first + raw.read())])
        rss_before = _rss_bytes()
        wall = cpu = 0.0
        parsed = []
        try:
            with _profiled(f"parse-{Path(member).name}"):
                for piece in cut:  # reading and cutting the member are not the parser's time
                    cpu0, t0 = _cpu_s(), time.perf_counter()
                    parsed.append(pieces.parse_piece(module, piece, member=member, clock=hints))
                    wall, cpu = wall + time.perf_counter() - t0, cpu + _cpu_s() - cpu0
        except Exception as exc:  # noqa: BLE001 - reported as the member's result, like bundle.py
            return {"member": member, "bytes": size, "format": fmt, "error": f"{type(exc).__name__}: {exc}"}
    source = pieces.join(parsed)
    frames = {name: len(frame) for name, frame in source.frames.items()}
    # What the result keeps (the rest of the peak RSS was transient): deep, so strings count.
    frame_bytes = int(sum(frame.memory_usage(deep=True).sum() for frame in source.frames.values()))
    main_rows = len(source.main)
    return {
        "member": member,
        "format": fmt,
        "bytes": size,
        "seconds": round(wall, 4),
        "cpu_seconds": round(cpu, 4),
        "mb_per_s": round(size / MB / wall, 1) if wall > 0 else None,
        "mb_per_cpu_s": round(size / MB / cpu, 1) if cpu > 0 else None,
        "rows": main_rows,
        "rows_per_s": round(main_rows / wall) if wall > 0 else None,
        "frames": frames,
        "samples": source.samples,
        "warnings": len(source.warnings),
        "warning_examples": [str(w) for w in source.warnings[:3]],
        "rss_before_bytes": rss_before,
        "peak_rss_bytes": _maxrss_bytes(),
        "frame_bytes": frame_bytes,
    }


def parsers_stage(bundle: Path, scratch: Path, timeout: float) -> list[dict[str, Any]]:
    """Decompress each member to ``scratch`` (untimed), then time its parser in a fresh process."""
    results: list[dict[str, Any]] = []
    with tarfile.open(bundle, mode="r|*") as tar:
        for info in tar:
            if not info.isfile():
                continue
            name = info.name
            base = name.rsplit("/", 1)[-1]
            if base == "manifest.txt":
                continue  # context read by bundle.py itself, not a parser
            path = scratch / base
            src = tar.extractfile(info)
            if src is None:
                continue
            with path.open("wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            try:
                done = subprocess.run(
                    [_python(), str(Path(__file__).resolve()), "--_parse-one", str(path), name],
                    cwd=ROOT,
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                )
                if done.returncode != 0:
                    tail = done.stderr.strip().splitlines()[-3:]
                    result = {"member": name, "bytes": path.stat().st_size, "error": " | ".join(tail)}
                else:
                    result = json.loads(done.stdout.strip().splitlines()[-1])
            except subprocess.TimeoutExpired:
                result = {"member": name, "bytes": path.stat().st_size, "error": f"timeout after {timeout} s"}
            finally:
                path.unlink()
            results.append(result)
            print(f"  parsed {base}", file=sys.stderr)
    return results


# ---------------------------------------------------------------------------------------------
# (3) Ingest: upload to READY, in a fresh process
# ---------------------------------------------------------------------------------------------
def ensure_database() -> None:
    """Create the benchmark database afresh, then ``manage.py migrate`` it: it is scratch, and a
    database left by another checkout (other migrations applied) must not decide this run."""
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{BENCH_DB}"')
    subprocess.run(
        [_python(), "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=_django_env(),
        check=True,
    )


def _django_env() -> dict[str, str]:
    from parsers.ingest.malloc import MALLOC_TUNABLES

    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="web.settings",
        CASEBOOK_DATABASE_URL=BENCH_DB_URL,
        CASEBOOK_MEDIA_ROOT=BENCH_MEDIA,
        CASEBOOK_LOG_LEVEL=env.get("CASEBOOK_LOG_LEVEL", "WARNING"),
    )
    env.setdefault("GLIBC_TUNABLES", MALLOC_TUNABLES)  # as scripts/start gives a worker
    return env


class _Stages:
    """Child side: a stack of named stages with wall time and the peak RSS sampled inside each, and
    stages run by another thread beside them (``beside``)."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.records: list[dict[str, Any]] = []
        #: peak RSS per open stage: its depth in the stack, or -1 - its order for one beside it
        self.peaks: dict[int, int] = {}
        self.counter = itertools.count()
        self.tallies: dict[str, tuple[float, int]] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        #: (all processes, the worker alone, the stage) at the largest sample
        self.peak_split: tuple[int, int, str] = (0, 0, "")
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        while not self.stop.wait(RSS_SAMPLE_S):
            rss = _tree_rss_bytes()
            with self.lock:
                for key in self.peaks:
                    self.peaks[key] = max(self.peaks[key], rss)
                if rss > self.peak_split[0]:  # the largest sample: how much of it is the worker's
                    self.peak_split = (rss, _rss_bytes() or 0, self.stack[-1] if self.stack else "")

    @contextlib.contextmanager
    def stage(self, name: str, **extra: Any):  # noqa: ANN201 - context manager
        """A stage of the ingest's thread, nested in the one running (the stack)."""
        with self._span(name, extra, on_stack=True):
            yield

    @contextlib.contextmanager
    def beside(self, name: str):  # noqa: ANN201 - context manager
        """A stage that another thread runs beside the stack's (the rules, beside the writes):
        listed where it starts, one level below the stage running then."""
        with self._span(name, {"beside": True}, on_stack=False):
            yield

    @contextlib.contextmanager
    def _span(self, name: str, extra: dict[str, Any], *, on_stack: bool):  # noqa: ANN202
        with self.lock:
            depth = len(self.stack)
            order = next(self.counter)
            key = depth if on_stack else -1 - order
            if on_stack:
                self.stack.append(name)
            self.peaks[key] = _tree_rss_bytes()
        if on_stack:
            _event("stage", name=name, depth=depth, **extra)
        t = time.perf_counter()
        try:
            yield
        finally:
            seconds = time.perf_counter() - t
            with self.lock:
                if on_stack:
                    self.stack.pop()
                peak = max(self.peaks.pop(key, 0), _tree_rss_bytes())
            record = {
                "stage": name,
                "order": order,
                "depth": depth,
                "seconds": round(seconds, 3),
                "peak_rss_bytes": peak,
                **extra,
            }
            self.records.append(record)
            _event("stage_end", **record)


def _event(kind: str, **data: Any) -> None:
    sys.stdout.write(EVENT_PREFIX + json.dumps({"event": kind, **data}, default=str) + "\n")
    sys.stdout.flush()


def _instrument(stages: _Stages) -> None:
    """Wrap the ingest's stages (in this process only) to time them and see their memory."""
    import analyzer.engine
    import parsers.ingest.bundle
    import web.ingest.pipeline
    import web.timeline.bulk
    from analyzer.timeline import Timeline

    def wrap(owner: Any, attr: str, label: str) -> None:
        original = getattr(owner, attr)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with stages.stage(label):
                return original(*args, **kwargs)

        setattr(owner, attr, wrapper)

    wrap(web.ingest.pipeline, "parse_upload", "parse (read_bundle)")
    run_rules = analyzer.engine.run

    def rules_wrapper(*args: Any, **kwargs: Any) -> Any:
        on_its_own = threading.current_thread() is not threading.main_thread()
        with (stages.beside if on_its_own else stages.stage)("rules (engine.run)"):
            return run_rules(*args, **kwargs)

    analyzer.engine.run = rules_wrapper  # type: ignore[assignment]
    wrap(web.ingest.pipeline, "_replace_derived", "write (_replace_derived)")
    wrap(web.ingest.pipeline, "aggregate_series", "aggregate_series")
    wrap(web.timeline.bulk, "write_series", "write series")

    def tally(owner: Any, attr: str, label: str) -> None:
        """Many calls, one line: their summed wall time (reported once, after the ingest)."""
        original = getattr(owner, attr)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                seconds, calls = stages.tallies.get(label, (0.0, 0))
                stages.tallies[label] = (seconds + time.perf_counter() - t, calls + 1)

        setattr(owner, attr, wrapper)

    import parsers.ingest.pieces

    tally(parsers.ingest.pieces._Member, "take", "take parsed pieces back (wait + keep text)")
    tally(web.ingest.pipeline.DetailWriter, "keep", "keep the raw text (COPY of compressed chunks)")

    from_sources = Timeline.from_sources

    def timeline_wrapper(cls: type, *args: Any, **kwargs: Any) -> Any:
        with stages.stage("timeline (Timeline.from_sources)"):
            return from_sources(*args, **kwargs)

    Timeline.from_sources = classmethod(timeline_wrapper)  # type: ignore[method-assign, assignment]

    read = parsers.ingest.bundle._Reader.read

    def read_wrapper(self: Any, member: Any) -> None:
        with stages.stage(f"member {member.name.rsplit('/', 1)[-1]}"):
            read(self, member)

    parsers.ingest.bundle._Reader.read = read_wrapper  # type: ignore[method-assign]


def ingest_one(bundle: Path, keep: bool) -> None:
    """Child side: case_create then case_ingest, timed, with stage events on stdout."""
    import django

    django.setup()
    from django.core.files import File
    from django.db.models import Count, Sum
    from django.db.models.functions import Length

    from web.cases import services
    from web.ingest import pipeline, tasks
    from web.models import Case, RawChunk, Series

    # a running worker: its parse processes started with it (web/celery.py) and wait, ready
    pipeline.warm_parse_processes(wait=True)
    stages = _Stages()
    _instrument(stages)
    _event("start", rss_bytes=_rss_bytes())
    with bundle.open("rb") as fh:
        t = time.perf_counter()
        with stages.stage("upload (case_create)"):
            case = services.case_create(
                user=None, file=File(fh, name=bundle.name), original_name=bundle.name, enqueue=False
            )
        upload_s = time.perf_counter() - t
    t = time.perf_counter()
    cpu0, sys0 = _cpu_seconds(), _system_cpu_seconds()
    with stages.stage("ingest (case_ingest)"), _profiled("ingest"):
        tasks.case_ingest(case_id=case.pk)
    ingest_s = time.perf_counter() - t
    cpu = {k: round(v - cpu0[k], 2) for k, v in _cpu_seconds().items()}
    system = {k: round(v - sys0[k], 2) for k, v in _system_cpu_seconds().items()}
    peak = _maxrss_bytes()
    stages.stop.set()
    case = Case.objects.get(pk=case.pk)
    result = {
        "case_id": case.pk,
        "status": case.status,
        "failure_reason": case.failure_reason,
        "upload_seconds": round(upload_s, 3),
        "ingest_seconds": round(ingest_s, 3),
        "ingest_cpu_seconds": cpu,
        "ingest_system_cpu_seconds": system,
        "peak_split": stages.peak_split,
        "peak_rss_bytes": peak,
        "sources": case.sources.count(),
        "not_used": list(case.not_used.values_list("member", "reason")),
        "findings": list(case.findings.values_list("key", flat=True)),
        "series": Series.objects.filter(case=case).count(),
        "series_points": sum(
            len(t) for t in Series.objects.filter(case=case).values_list("ts_us", flat=True)
        ),
        "raw_chunks": RawChunk.objects.filter(case=case).aggregate(
            chunks=Count("id"), bytes=Sum(Length("text_zstd"))
        ),
        "tallies": {k: {"seconds": round(v[0], 3), "calls": v[1]} for k, v in stages.tallies.items()},
        "case_warnings": case.warnings,
        "stages": stages.records,
    }
    if not keep:
        with contextlib.suppress(Exception):
            case.upload.file.delete(save=False)
        case.delete()
    _event("result", **result)


def ingest_stage(bundle: Path, timeout: float, max_rss: int, keep: bool) -> dict[str, Any]:
    """Run ``ingest_one`` in a fresh process, watch its RSS and time, collect its events."""
    ensure_database()
    log = Path(tempfile.mkstemp(prefix="casebook-bench-ingest-", suffix=".log")[1])
    args = [_python(), str(Path(__file__).resolve()), "--_ingest-one", str(bundle)]
    if keep:
        args.append("--keep-case")
    events: list[dict[str, Any]] = []
    with log.open("w") as err:
        proc = subprocess.Popen(
            args, cwd=ROOT, env=_django_env(), stdout=subprocess.PIPE, stderr=err, text=True
        )

        def reader() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.startswith(EVENT_PREFIX):
                    events.append(json.loads(line[len(EVENT_PREFIX) :]))

        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        t0 = time.perf_counter()
        seen_rss, killed = 0, None
        while proc.poll() is None:
            time.sleep(0.2)
            rss = _tree_rss_bytes(proc.pid)
            seen_rss = max(seen_rss, rss)
            elapsed = time.perf_counter() - t0
            if rss > max_rss:
                killed = f"RSS {rss / MIB:,.0f} MiB passed --max-rss-gib after {elapsed:.0f} s"
            elif elapsed > timeout:
                killed = f"still running after --timeout {timeout:.0f} s (RSS {rss / MIB:,.0f} MiB)"
            if killed:
                proc.kill()
                proc.wait()
                break
        thread.join(timeout=5)
    result = next((e for e in events if e["event"] == "result"), None)
    if result is None:
        open_stages = _open_stages(events)
        stderr_tail = log.read_text(errors="replace").strip().splitlines()[-5:]
        return {
            "error": killed or f"the ingest process exited with {proc.returncode}",
            "in_stage": open_stages,
            "elapsed_seconds": round(time.perf_counter() - t0, 1),
            "max_rss_seen_bytes": seen_rss,
            "stages_done": [e for e in events if e["event"] == "stage_end"],
            "stderr_tail": stderr_tail,
            "log": str(log),
        }
    log.unlink()
    result.pop("event", None)
    result["peak_tree_rss_bytes"] = max(seen_rss, result["peak_rss_bytes"])
    return result


def _open_stages(events: list[dict[str, Any]]) -> list[str]:
    stack: list[str] = []
    for e in events:
        if e["event"] == "stage":
            stack.append(e["name"])
        elif e["event"] == "stage_end" and stack:
            stack.pop()
    return stack


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------
def bundle_facts(bundle: Path) -> dict[str, Any]:
    """Compressed size; uncompressed text bytes per member (read from the tar headers)."""
    members: dict[str, int] = {}
    with tarfile.open(bundle, mode="r|*") as tar:
        for info in tar:
            if info.isfile():
                members[info.name] = info.size
    return {
        "path": str(bundle),
        "compressed_bytes": bundle.stat().st_size,
        "text_bytes": sum(members.values()),
        "members": members,
    }


def print_report(report: dict[str, Any]) -> None:
    facts, gz = report["bundle"], report["gzip_wc"]
    print(f"bundle      {facts['path']}")
    print(
        f"            {facts['compressed_bytes'] / MIB:,.1f} MiB compressed, {facts['text_bytes'] / MIB:,.1f} MiB "
        f"of text in {len(facts['members'])} members, {gz['lines']:,} lines"
    )
    rate = facts["text_bytes"] / MB / gz["seconds"]
    print(f"\n(1) gzip -dc | wc -l          {gz['seconds']:8.2f} s   ({rate:,.0f} MB/s of text)")
    if report.get("parsers") is not None:
        print(
            f"\n(2) parsers, one fresh process per member (target >= {PARSER_TARGET_MB_S:g} MB per CPU second)"
        )
        print(
            f"    {'member':<18}{'format':<12}{'MB':>9}{'wall s':>9}{'cpu s':>8}{'MB/s':>8}"
            f"{'rows':>12}{'rows/s':>12}{'peak RSS':>11}{'frames':>11}{'warn':>6}  target"
        )
        for r in report["parsers"]:
            base = r["member"].rsplit("/", 1)[-1]
            if r.get("error"):
                print(f"    {base:<18}{str(r.get('format')):<12}{r['bytes'] / MB:9.1f}  ERROR {r['error']}")
                continue
            verdict = (
                "n/a (small)"
                if r["bytes"] < PARSER_TARGET_MIN_BYTES
                else ("ok" if (r["mb_per_cpu_s"] or 0) >= PARSER_TARGET_MB_S else "MISSED")
            )
            print(
                f"    {base:<18}{r['format']:<12}{r['bytes'] / MB:9.1f}{r['seconds']:9.2f}{r['cpu_seconds']:8.2f}"
                f"{r['mb_per_s']:8.1f}{r['mb_per_cpu_s'] or 0:8.1f}{r['rows']:12,}{r['rows_per_s']:12,}{_mib(r['peak_rss_bytes']):>11}"
                f"{_mib(r.get('frame_bytes')):>11}{r['warnings']:6}  {verdict}"
            )
    ing = report.get("ingest")
    if ing is None:
        return
    print("\n(3) ingest: case_create + case_ingest, PostgreSQL casebook_bench")
    if ing.get("error"):
        print(f"    FAILED TO FINISH: {ing['error']}")
        print(
            f"    in stage: {' > '.join(ing['in_stage']) or '-'}; elapsed {ing['elapsed_seconds']} s; "
            f"max RSS seen {_mib(ing['max_rss_seen_bytes'])}"
        )
        for s in ing["stages_done"]:
            print(
                f"      done: {'  ' * s['depth']}{s['stage']:<40}{s['seconds']:9.2f} s  peak {_mib(s['peak_rss_bytes'])}"
            )
        for line in ing["stderr_tail"]:
            print(f"    stderr: {line}")
        return
    ratio = ing["ingest_seconds"] / gz["seconds"]
    verdict = (
        "ok"
        if ratio <= INGEST_NEXT_TARGET_RATIO
        else ("ok (first step)" if ratio <= INGEST_TARGET_RATIO else "MISSED")
    )
    print(f"    upload (case_create)     {ing['upload_seconds']:9.2f} s")
    print(
        f"    ingest (case_ingest)     {ing['ingest_seconds']:9.2f} s   = {ratio:.1f}x gzip|wc "
        f"(target <= {INGEST_TARGET_RATIO:g}x, then {INGEST_NEXT_TARGET_RATIO:g}x): {verdict}"
    )
    cpu = ing.get("ingest_cpu_seconds")
    if cpu:
        print(
            f"    CPU                      {sum(cpu.values()):9.2f} s   worker {cpu['worker']:.2f} s + parse "
            f"processes {cpu['parse processes']:.2f} s (user + system; {os.cpu_count()} CPUs)"
        )
    system = ing.get("ingest_system_cpu_seconds")
    if system:
        print(
            f"      of which system          {sum(system.values()):5.2f} s   worker {system['worker']:.2f} s + parse "
            f"processes {system['parse processes']:.2f} s (page faults of fresh memory, pipes, files)"
        )
    tree = ing.get("peak_tree_rss_bytes", ing["peak_rss_bytes"])
    rss_ok = "ok" if tree < RSS_TARGET_BYTES else "MISSED"
    print(
        f"    peak RSS                 {_mib(tree):>11}   (target < 1 GiB): {rss_ok}   worker process, plus its "
        f"parse processes (sampled every {RSS_SAMPLE_S:g} s); the worker alone: {_mib(ing['peak_rss_bytes'])}"
    )
    split = ing.get("peak_split")
    if split and split[0]:
        print(
            f"      at the largest sample    {_mib(split[0]):>11}   worker {_mib(split[1])} + parse processes "
            f"{_mib(split[0] - split[1])}, in stage {split[2]!r}"
        )
    print(
        f"    final status             {ing['status']}{'  ' + ing['failure_reason'] if ing['failure_reason'] else ''}"
    )
    print(
        f"    rows written             {ing['series']:,} series ({ing['series_points']:,} points), {ing['raw_chunks']['chunks']:,} raw "
        f"chunks ({(ing['raw_chunks']['bytes'] or 0) / MIB:,.1f} MiB); {ing['sources']} sources, "
        f"{len(ing['findings'])} findings"
    )
    if ing["not_used"]:
        print(f"    not used                 {ing['not_used']}")
    print("    stages (wall s, peak RSS sampled inside):")
    for s in sorted(ing["stages"], key=lambda s: s.get("order", 0)):
        print(
            f"      {'  ' * s['depth']}{s['stage']:<44}{s['seconds']:9.2f} s  {_mib(s['peak_rss_bytes']):>10}"
            + ("   in a thread, beside the writes" if s.get("beside") else "")
        )
    print("    inside the parse, summed over calls:")
    for label, t in ing.get("tallies", {}).items():
        print(f"      {label:<46}{t['seconds']:9.2f} s  ({t['calls']:,} calls)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bundle", type=Path, nargs="?")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--skip-parsers", action="store_true")
    p.add_argument("--skip-ingest", action="store_true")
    p.add_argument("--timeout", type=float, default=1800, help="per benchmark process (s; default 1800)")
    p.add_argument("--max-rss-gib", type=float, default=8, help="kill the ingest past this RSS (default 8)")
    p.add_argument("--keep-case", action="store_true", help="keep the case in casebook_bench afterwards")
    p.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        help="write cProfile stats (parse-<member>.prof, ingest.prof) to DIR; timings then include "
        "the profiler's overhead: use them to find hot functions, not as figures",
    )
    p.add_argument("--_parse-one", nargs=2, metavar=("PATH", "MEMBER"), help=argparse.SUPPRESS)
    p.add_argument("--_ingest-one", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args._parse_one:
        print(json.dumps(parse_one(Path(args._parse_one[0]), args._parse_one[1])))
        return 0
    if args.bundle is None:
        p.error("the following arguments are required: bundle")
    if args._ingest_one:
        ingest_one(args.bundle.resolve(), args.keep_case)
        return 0
    bundle = args.bundle.resolve()
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
        os.environ[PROFILE_ENV] = str(args.profile.resolve())
    report: dict[str, Any] = {"bundle": bundle_facts(bundle), "machine": {"cpus": os.cpu_count()}}
    report["gzip_wc"] = gzip_wc(bundle)
    if not args.skip_parsers:
        scratch = Path(tempfile.mkdtemp(prefix="casebook-bench-members-"))
        try:
            report["parsers"] = parsers_stage(bundle, scratch, args.timeout)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    if not args.skip_ingest:
        # the project's bytecode, as a deployed install has it (Dockerfile, scripts/setup.sh): parse
        # processes then do not compile the sources again where PYTHONDONTWRITEBYTECODE is set
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", "analyzer", "parsers", "web"], cwd=ROOT, check=True
        )
        print("  ingesting ...", file=sys.stderr)
        report["ingest"] = ingest_stage(
            bundle, args.timeout, int(args.max_rss_gib * (1 << 30)), args.keep_case
        )
        if "ingest_seconds" in report["ingest"]:
            report["ingest"]["ratio_to_gzip_wc"] = round(
                report["ingest"]["ingest_seconds"] / report["gzip_wc"]["seconds"], 2
            )
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print_report(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
