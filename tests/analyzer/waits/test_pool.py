"""The thread pool's holder reader (analyzer/waits/holders/pool.py) and its rule ``thread-pool-wait``, on
frames the real parsers build from pt-stalk-shaped ``-processlist`` and ``-mysqladmin`` text, with the
server variables of ``-variables``; the staged capture is tests/analyzer/test_staged_verdicts.py's."""

from __future__ import annotations

from analyzer import engine
from analyzer.timeline.timeline import Timeline
from analyzer.waits.holders import holders, pool
from analyzer.waits.holders.slots import NO_WAITS
from analyzer.waits.model import Resource
from parsers import mysqladmin, processlist
from parsers.base import ClockHints
from tests.analyzer.captures import START, mysqladmin_ext_text, processlist_text

HINTS = ClockHints(start_local=START, interval_s=1.0)
POOL = {
    "thread_handling": "pool-of-threads",
    "thread_pool_size": "1",
    "thread_pool_stall_limit": "60000",
    "thread_pool_oversubscribe": "1",
    "thread_pool_max_threads": "65536",
}
REPORT = "SELECT BENCHMARK(2000000000, MD5('x'))"


def _timeline(
    running: list[int], *, connected: int = 10, variables: dict[str, str] | None = None
) -> Timeline:
    """One snapshot per entry of ``running``: session 1001 runs REPORT for that many seconds (Time;
    None: not running), session 1002 idles; Threads_connected ``connected`` in every mysqladmin sample."""
    snaps = [
        [("report", "Query", t, "Executing", REPORT), ("report", "Sleep", t, "", "NULL")] for t in running
    ]
    pl = processlist_text(snaps)
    ma = mysqladmin_ext_text(
        len(running),
        per_s={"Connections": 5},
        gauges={
            "Threads_connected": connected,
            "Threadpool_threads": 3,
            "Threadpool_idle_threads": 2,
            "Threads_running": 2,
        },
    )
    sources = [
        processlist.parse(pl.splitlines(keepends=True), member="x-processlist", clock=HINTS),
        mysqladmin.parse(ma.splitlines(keepends=True), member="x-mysqladmin", clock=HINTS),
    ]
    tl = Timeline.from_sources(sources, ncpu=2)
    return Timeline(
        frames=tl.frames, ncpu=2, host="db1", variables=dict(POOL if variables is None else variables)
    )


def test_the_statement_holding_the_only_thread_group_is_the_holder() -> None:
    [h] = pool.thread_pool(_timeline([17, 18, 19, 20, 21]), NO_WAITS)
    assert h.resource is Resource.CPU and h.named
    assert (h.holder.kind, h.holder.id, h.holder.user) == ("session", "1001", "report")
    assert h.waiters == 8 and h.held_s == 4.0 and h.age_s == 21.0
    assert (
        h.fix.startswith("KILL 1001;")
        and "thread_pool_size = 2" in h.fix
        and "thread_pool_stall_limit" in h.fix
    )
    assert "Time 17 -> 21 s" in h.shown_by and "holding 1 of 1 thread group(s)" in h.shown_by


def test_holders_reads_the_pool_even_when_no_session_is_seen_waiting() -> None:
    tl = _timeline([17, 18, 19, 20, 21])
    assert [h.holder.id for h in holders(tl, NO_WAITS) if h.resource is Resource.CPU] == ["1001"]


def test_one_thread_per_connection_is_not_read() -> None:
    tl = _timeline([17, 18, 19, 20, 21], variables={"thread_handling": "one-thread-per-connection"})
    assert pool.thread_pool(tl, NO_WAITS) == []


def test_every_connection_seen_in_the_processlist_is_no_wait() -> None:
    assert pool.thread_pool(_timeline([17, 18, 19, 20, 21], connected=3), NO_WAITS) == []


def test_a_statement_seen_under_two_seconds_is_not_a_holder() -> None:
    """A new statement in every snapshot (Time 0, then 1 s): none runs long enough to hold a group."""
    [h] = pool.thread_pool(_timeline([0, 0, 0, 0, 1]), NO_WAITS)
    assert h.holder is None and not h.named and "0 long statement(s) for 1 thread group(s)" in h.contention


def test_a_free_thread_group_names_no_holder() -> None:
    [h] = pool.thread_pool(
        _timeline([17, 18, 19, 20, 21], variables={**POOL, "thread_pool_size": "2"}), NO_WAITS
    )
    assert (
        h.holder is None
        and "1 long statement(s) for 2 thread group(s) (thread_pool_size): session 1001 (21 s)"
        in h.contention
    )


def test_past_the_stall_limit_the_pool_adds_a_thread_and_names_no_holder() -> None:
    tl = _timeline([17, 18, 19, 20, 21], variables={**POOL, "thread_pool_stall_limit": "500"})
    [h] = pool.thread_pool(tl, NO_WAITS)
    assert h.holder is None


def test_the_rule_blames_the_holder_with_cpu_and_the_pool_in_its_words() -> None:
    [f] = engine.run(_timeline([17, 18, 19, 20, 21]), only=("thread-pool-wait",)).findings
    assert (f.culprit.kind, f.culprit.id) == ("session", "1001")
    assert f.title == "8 connections wait for CPU in the thread pool, held by session 1001 (report@app1)"
    assert f.recommendation.startswith("KILL 1001;")
    assert ("session", "1001") in f.subjects and f.severity.value == "warning"
