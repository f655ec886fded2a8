"""The ingest stage of bench/run.py (its step 3): a fresh process runs ``case_create`` then
``case_ingest`` on a scratch database, with wrappers that time each stage and sample its RSS; the
parent watches the process's time and memory and collects the events it prints (bench/run.py's
docstring describes the figures).
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from bench.procstats import (
    MIB,
    ROOT,
    cpu_seconds,
    maxrss_bytes,
    profiled,
    python,
    rss_bytes,
    system_cpu_seconds,
    tree_rss_bytes,
)

#: bench/run.py, which runs ``ingest_one`` in its child process (``--_ingest-one``).
RUN_SCRIPT = Path(__file__).resolve().parent / "run.py"
#: ``casebook_bench`` by default; ``<database>_bench`` beside the database of CASEBOOK_DATABASE_URL, so
#: that two checkouts on one machine (each with its own database and migrations) never share it.
BENCH_DB = (urlparse(os.environ.get("CASEBOOK_DATABASE_URL", "")).path.lstrip("/") or "casebook") + "_bench"
BENCH_DB_URL = f"postgres://postgres@127.0.0.1:5432/{BENCH_DB}"
#: Uploaded copies of the bundle go here, never into the project's var/media.
BENCH_MEDIA = "/tmp/casebook-bench-media"
#: How often the ingest process samples its own RSS (s).
RSS_SAMPLE_S = 0.2
#: Lines the ingest process writes for the parent start with this, the rest is Django's logging.
EVENT_PREFIX = "@@bench "
#: Set to another checkout's root: the ingest process imports the project's code from there.
CODE_ENV = "CASEBOOK_BENCH_CODE"


def ensure_database(root: Path = ROOT) -> None:
    """Create the benchmark database afresh, then ``manage.py migrate`` it (that of the checkout at
    ``root``): it is scratch, and a database left by another checkout (other migrations applied)
    must not decide this run."""
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{BENCH_DB}"')
    subprocess.run(
        [python(), "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=root,
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
    """Child side: a stack of named stages with wall time and the peak RSS sampled inside each (the
    rules, run beside the writes in a forked child, are timed there: ``_timed_in_child``)."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.records: list[dict[str, Any]] = []
        #: peak RSS per open stage, by its depth in the stack
        self.peaks: dict[int, int] = {}
        self.counter = itertools.count()
        self.tallies: dict[str, tuple[float, int, float]] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        #: (all processes, the worker alone, the stage) at the largest sample
        self.peak_split: tuple[int, int, str] = (0, 0, "")
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        while not self.stop.wait(RSS_SAMPLE_S):
            rss = tree_rss_bytes()
            with self.lock:
                for key in self.peaks:
                    self.peaks[key] = max(self.peaks[key], rss)
                if rss > self.peak_split[0]:  # the largest sample: how much of it is the worker's
                    self.peak_split = (rss, rss_bytes() or 0, self.stack[-1] if self.stack else "")

    @contextlib.contextmanager
    def stage(self, name: str, **extra: Any):  # noqa: ANN201 - context manager
        """A stage of the ingest's thread, nested in the one running (the stack)."""
        with self.lock:
            depth = len(self.stack)
            order = next(self.counter)
            self.stack.append(name)
            self.peaks[depth] = tree_rss_bytes()
        _event("stage", name=name, depth=depth, **extra)
        t, cpu, thread_cpu = time.perf_counter(), cpu_seconds(), time.thread_time()
        try:
            yield
        finally:
            seconds = time.perf_counter() - t
            cpu_end, thread_cpu = cpu_seconds(), time.thread_time() - thread_cpu
            with self.lock:
                self.stack.pop()
                peak = max(self.peaks.pop(depth, 0), tree_rss_bytes())
            record = {
                "stage": name,
                "order": order,
                "depth": depth,
                "seconds": round(seconds, 3),
                "peak_rss_bytes": peak,
                # CPU seconds inside the stage: this process (every thread), this thread, and the
                # child processes (parse processes; a forked child once reaped)
                "cpu_worker_s": round(cpu_end["worker"] - cpu["worker"], 3),
                "cpu_thread_s": round(thread_cpu, 3),
                "cpu_children_s": round(cpu_end["parse processes"] - cpu["parse processes"], 3),
                **extra,
            }
            self.records.append(record)
            _event("stage_end", **record)


def _event(kind: str, **data: Any) -> None:
    sys.stdout.write(EVENT_PREFIX + json.dumps({"event": kind, **data}, default=str) + "\n")
    sys.stdout.flush()


def _timed_in_child(stages: _Stages, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """The rules in the forked child that the ingest runs them in, timed and sent as a stage beside
    the writes. The child takes none of the stages' locks (another thread of the parent may have
    held one when it forked); its peak is the tree's at the end."""
    order, depth = next(stages.counter), len(stages.stack)
    t = time.perf_counter()
    try:
        return fn(*args, **kwargs)
    finally:
        record = {"stage": "rules (engine.run_hosts)", "order": order, "depth": depth}
        seconds = round(time.perf_counter() - t, 3)
        _event(
            "stage_end", **record, seconds=seconds, peak_rss_bytes=tree_rss_bytes(os.getppid()), forked=True
        )


def _instrument(stages: _Stages) -> None:
    """Wrap the ingest's stages (in this process only) to time them and see their memory."""
    import analyzer.engine
    import parsers.ingest.bundle
    import web.ingest.pipeline
    import web.timeline.bulk
    from analyzer.timeline.timeline import Timeline

    def wrap(owner: Any, attr: str, label: str) -> None:
        original = getattr(owner, attr)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with stages.stage(label):
                return original(*args, **kwargs)

        setattr(owner, attr, wrapper)

    wrap(web.ingest.pipeline, "parse_upload", "parse (read_bundle)")
    run_rules = analyzer.engine.run_hosts
    ingest_pid = os.getpid()

    def rules_wrapper(*args: Any, **kwargs: Any) -> Any:
        if os.getpid() != ingest_pid:  # in the ingest's forked child (pipeline._Rules)
            return _timed_in_child(stages, run_rules, *args, **kwargs)
        with stages.stage("rules (engine.run_hosts)"):
            return run_rules(*args, **kwargs)

    analyzer.engine.run_hosts = rules_wrapper  # type: ignore[assignment]
    if importlib.util.find_spec("web.ingest.prepare") is not None:  # analysis, then publish (issue 40)
        import web.ingest.prepare

        _time_analysis(web.ingest.prepare.Analysis, ingest_pid)
        wrap(web.ingest.pipeline, "publish", "write (publish)")
        wrap(web.ingest.prepare, "aggregate_series", "aggregate_series")
        wrap(web.timeline.bulk, "copy_series", "write series")
    else:  # another checkout's code, from before: the series aggregated by the writes
        _time_analysis(web.ingest.pipeline._Analysis, ingest_pid)
        wrap(web.ingest.pipeline, "_replace_derived", "write (_replace_derived)")
        wrap(web.ingest.pipeline, "aggregate_series", "aggregate_series")
        wrap(web.timeline.bulk, "write_series", "write series")

    def tally(owner: Any, attr: str, label: str) -> None:
        """Many calls, one line: their summed wall time (reported once, after the ingest)."""
        original = getattr(owner, attr)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t, cpu = time.perf_counter(), time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                seconds, calls, cpu_s = stages.tallies.get(label, (0.0, 0, 0.0))
                stages.tallies[label] = (
                    seconds + time.perf_counter() - t,
                    calls + 1,
                    cpu_s + time.thread_time() - cpu,
                )

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


def _time_analysis(analysis: Any, ingest_pid: int) -> None:
    """``Analysis.of`` (web/ingest/prepare.py: the rules and the case row's top lists) timed in CPU seconds of
    the thread that runs it, wherever that is (the ingest's thread, a thread beside the writes, a forked
    child): a ``rules_cpu`` event, with the process it ran in."""
    of = analysis.of.__func__

    def of_wrapper(cls: type, *args: Any, **kwargs: Any) -> Any:
        cpu = time.thread_time()
        try:
            return of(cls, *args, **kwargs)
        finally:
            _event("rules_cpu", cpu_s=round(time.thread_time() - cpu, 3), in_ingest=os.getpid() == ingest_pid)

    analysis.of = classmethod(of_wrapper)


def ingest_one(bundle: Path, keep: bool) -> None:
    """Child side: case_create then case_ingest, timed, with stage events on stdout. With
    ``CODE_ENV`` set, the project's code is that checkout's (bench/stages.py --checkout)."""
    if os.environ.get(CODE_ENV):
        sys.path.insert(0, os.environ[CODE_ENV])
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
    _event("start", rss_bytes=rss_bytes())
    with bundle.open("rb") as fh:
        t = time.perf_counter()
        with stages.stage("upload (case_create)"):
            case = services.case_create(
                user=None, file=File(fh, name=bundle.name), original_name=bundle.name, enqueue=False
            )
        upload_s = time.perf_counter() - t
    t = time.perf_counter()
    cpu0, sys0 = cpu_seconds(), system_cpu_seconds()
    with stages.stage("ingest (case_ingest)"), profiled("ingest"):
        tasks.case_ingest(case_id=case.pk)
    ingest_s = time.perf_counter() - t
    cpu = {k: round(v - cpu0[k], 2) for k, v in cpu_seconds().items()}
    system = {k: round(v - sys0[k], 2) for k, v in system_cpu_seconds().items()}
    peak = maxrss_bytes()
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
        "tallies": {
            k: {"seconds": round(v[0], 3), "calls": v[1], "cpu_s": round(v[2], 3)}
            for k, v in stages.tallies.items()
        },
        "case_warnings": case.warnings,
        "stages": stages.records,
    }
    if not keep:
        with contextlib.suppress(Exception):
            case.upload.file.delete(save=False)
        case.delete()
    _event("result", **result)


def ingest_stage(bundle: Path, timeout: float, max_rss: int, keep: bool, root: Path = ROOT) -> dict[str, Any]:
    """Run ``ingest_one`` in a fresh process, watch its RSS and time, collect its events. ``root``:
    the checkout whose code is run (this one by default)."""
    ensure_database(root)
    log = Path(tempfile.mkstemp(prefix="casebook-bench-ingest-", suffix=".log")[1])
    args = [python(), str(RUN_SCRIPT), "--_ingest-one", str(bundle)]
    if keep:
        args.append("--keep-case")
    events: list[dict[str, Any]] = []
    with log.open("w") as err:
        env = _django_env()
        if root.resolve() != ROOT:
            env[CODE_ENV] = str(root.resolve())
        proc = subprocess.Popen(args, cwd=root, env=env, stdout=subprocess.PIPE, stderr=err, text=True)

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
            rss = tree_rss_bytes(proc.pid)
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
    forked = [e for e in events if e.get("event") == "stage_end" and e.get("forked")]  # the rules' child
    result["stages"] += [{k: v for k, v in e.items() if k != "event"} for e in forked]
    result["rules_cpu"] = [
        {k: v for k, v in e.items() if k != "event"} for e in events if e.get("event") == "rules_cpu"
    ]
    result["peak_tree_rss_bytes"] = max(seen_rss, result["peak_rss_bytes"])
    return result


def _open_stages(events: list[dict[str, Any]]) -> list[str]:
    stack: list[str] = []
    for e in events:
        if e["event"] == "stage":
            stack.append(e["name"])
        elif e["event"] == "stage_end" and stack and not e.get("forked"):
            stack.pop()
    return stack
