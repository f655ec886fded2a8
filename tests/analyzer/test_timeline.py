"""prepare(): the reduced frames the analysis keeps say the same things as the parsed ones."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pytest

from analyzer.timeline.irqs import IRQ_LINES_KEPT, OTHER_IRQ
from analyzer.timeline.timeline import Timeline, prepare, reduce_piece
from parsers import interrupts, ps, registry
from parsers.base import ClockHints
from parsers.ingest.cutting import split
from parsers.ingest.pieces import Work, parse_piece
from tests.analyzer.captures import processlist_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _parse(module, path: Path):
    return module.parse(path.read_text().splitlines(keepends=True), member=path.name, clock=ClockHints())


def test_folding_minor_irq_lines_keeps_every_cpu_total() -> None:
    parsed = _parse(interrupts, FIXTURES / "interrupts" / "linux-6.18_proc-interrupts_3snap.txt")
    before = parsed.frames["interrupts"]
    after = prepare(parsed).frames["interrupts"]
    assert before["irq"].nunique() > IRQ_LINES_KEPT + 1
    assert after["irq"].nunique() == IRQ_LINES_KEPT + 1
    assert OTHER_IRQ in set(after["irq"])
    totals = [
        f.astype({"cpu": "int64"}).groupby(["ts", "cpu"])["per_s"].sum().round(3) for f in (before, after)
    ]
    pd.testing.assert_series_equal(totals[0], totals[1], check_dtype=False)


def test_prepare_is_idempotent_for_interrupts() -> None:
    once = prepare(_parse(interrupts, FIXTURES / "interrupts" / "linux-6.18_proc-interrupts_3snap.txt"))
    twice = prepare(once)
    pd.testing.assert_frame_equal(once.frames["interrupts"], twice.frames["interrupts"])


def test_sleeping_threads_are_counted_not_kept() -> None:
    parsed = _parse(ps, FIXTURES / "ps" / "procps-ng-4.0.2_eLo-wchan.txt")
    raw = parsed.frames["ps_threads"]
    lean = prepare(parsed)
    counts = lean.frames["ps_state_counts"].groupby("state")["threads"].sum()
    assert counts.to_dict() == raw["state"].astype("string").value_counts().to_dict()
    kept = lean.frames["ps_threads"]
    assert set(kept["ts"]) == set(raw["ts"])  # every snapshot is still seen
    assert len(kept) < len(raw)
    assert (kept["state"].astype("string") != "S").sum() == (raw["state"].astype("string") != "S").sum()


def _ps_capture() -> str:
    text = (FIXTURES / "ps" / "procps-ng-4.0.2_eLo-wchan.txt").read_text()
    return "".join(  # the two snapshots again, 10 s later each time
        re.sub(r"^TS (\d+)", lambda m, k=k: f"TS {int(m.group(1)) + 10 * k}", text, flags=re.M)
        for k in range(4)
    )


def _processlist_capture() -> str:
    def session(n: int, snap: int) -> tuple[str, str, int, str, str]:
        if n % 5 == 1:
            return ("app", "Query", snap % 3, "Sending data", f"SELECT * FROM t WHERE id = {n * snap}")
        if n == 7:
            return ("event_scheduler", "Daemon", 900 + snap, "Waiting on empty queue", "NULL")
        return ("app", "Sleep", (n * 37 + snap) % 60, "", "NULL")

    return processlist_text([[session(n, snap) for n in range(1, 30)] for snap in range(8)])


@pytest.mark.parametrize(
    ("fmt", "capture", "counts"),
    [("ps", _ps_capture, "ps_state_counts"), ("processlist", _processlist_capture, "processlist_sessions")],
)
def test_rows_counted_by_the_parser_reduce_as_prepare_reduces_the_full_parse(fmt, capture, counts) -> None:
    """What an ingest does (``reduce_piece`` hands ``PARSE_OPTIONS`` to the parser) gives the frames
    that ``prepare`` gives from every row, piece by piece (each piece after the first starts with
    the last snapshot of the one before: its rows and counts must not count twice)."""
    pieces = list(split(b"", io.BytesIO(capture().encode()), piece_bytes=2048))
    assert len(pieces) > 2 and pieces[1].overlap_lines
    options = Work(reduce=reduce_piece).options(fmt)
    module = registry.by_format(fmt)
    for piece in pieces:
        lean = Work(reduce=reduce_piece)(fmt, piece, member=fmt, clock=ClockHints()).source
        full = Work(reduce=prepare)(fmt, piece, member=fmt, clock=ClockHints()).source
        parsed = parse_piece(module, piece, member=fmt, clock=ClockHints(), **options)
        assert counts in parsed.frames and len(parsed.main) < len(
            parse_piece(module, piece, member=fmt, clock=ClockHints()).main
        )
        assert lean.frames.keys() == full.frames.keys()
        for name, frame in full.frames.items():
            pd.testing.assert_frame_equal(lean.frames[name], frame, check_categorical=False)


def test_folding_keeps_the_busiest_lines_and_names_the_first_folded_line() -> None:
    parsed = _parse(interrupts, FIXTURES / "interrupts" / "linux-6.18_proc-interrupts_3snap.txt")
    before = parsed.frames["interrupts"].astype({"irq": "string"})
    after = prepare(parsed).frames["interrupts"]
    busiest = before.groupby("irq")["per_s"].sum().sort_values(ascending=False, kind="stable")
    assert set(after["irq"].astype("string")) - {OTHER_IRQ} == set(busiest.index[:IRQ_LINES_KEPT])
    folded = before[~before["irq"].isin(busiest.index[:IRQ_LINES_KEPT])]
    other = after[after["irq"] == OTHER_IRQ]
    first = folded.groupby(["ts", "cpu"])["line_no"].min()
    assert other.set_index(["ts", other["cpu"].astype("int64")])["line_no"].to_dict() == first.to_dict()
    # the first snapshot has no rates yet: its folded rows too
    assert other[other["ts"] == before["ts"].min()]["per_s"].isna().all()
    assert list(after.columns) == ["ts", "line_no", "irq", "cpu", "per_s"]
    assert after.equals(after.sort_values(["ts", "line_no"], kind="stable"))


def test_folding_snapshots_of_the_same_rows_at_once_or_row_by_row_gives_the_same_frame() -> None:
    from analyzer.timeline import irqs

    parsed = _parse(interrupts, FIXTURES / "interrupts" / "linux-6.18_proc-interrupts_3snap.txt")
    it = parsed.frames["interrupts"]
    assert irqs._snapshot_groups(
        it["ts"].to_numpy(dtype="datetime64[ns]").view("int64"),
        it["cpu"].to_numpy(),
        it["irq"].isin(["LOC"]).to_numpy(),
    )
    folded = irqs.fold_minor_irqs(it)

    def by_cpu(frame: pd.DataFrame) -> pd.DataFrame:  # rows of one (ts, line) come in the input's order
        return frame.sort_values(["ts", "line_no", "cpu"], kind="stable").reset_index(drop=True)

    # out of order (grouped by hashing), and one row short (snapshots unlike): the same groups
    shuffled = irqs.fold_minor_irqs(it.sample(frac=1, random_state=3))
    pd.testing.assert_frame_equal(by_cpu(folded), by_cpu(shuffled), check_exact=True)
    lost = it[it["line_no"] == it["line_no"].max()].index[-1]
    short = irqs.fold_minor_irqs(it.drop(index=lost))
    expected = irqs.fold_minor_irqs(it.drop(index=lost).sample(frac=1, random_state=3))
    pd.testing.assert_frame_equal(by_cpu(short), by_cpu(expected), check_exact=True)


def test_the_status_variables_the_analysis_reads_are_kept() -> None:
    from analyzer.rules import mysql
    from analyzer.timeline.series import MYSQLADMIN_GAUGES, MYSQLADMIN_RATES
    from analyzer.timeline.timeline import STATUS_KEPT
    from parsers import mysqladmin

    assert set(MYSQLADMIN_RATES) | set(MYSQLADMIN_GAUGES) <= STATUS_KEPT
    parsed = _parse(mysqladmin, FIXTURES / "mysqladmin" / "mariadb-10.11_ts-markers_ext_subset.txt")
    reduced = prepare(parsed)
    kept = set(reduced.frames["mysqladmin"]["variable"].astype("string"))
    assert kept == set(parsed.frames["mysqladmin"]["variable"].astype("string")) & STATUS_KEPT
    assert "Threads_running" in kept
    # every sample keeps the lines of its whole table, not only of the rows kept
    raw = parsed.frames["mysqladmin"].groupby("ts")["line_no"].agg(["min", "max"])
    lines = reduced.frames["sample_lines"].set_index("ts")
    assert (lines["line_no"] == raw["min"]).all() and (lines["line_end"] == raw["max"]).all()
    timeline = Timeline.from_sources([reduced], ncpu=2)
    with pytest.raises(ValueError, match="STATUS_KEPT"):
        mysql.status(timeline, "Bytes_received")
    assert len(mysql.status(timeline, "Threads_running")) == reduced.samples


def test_idle_sessions_are_counted_and_only_the_longest_idle_one_of_a_snapshot_kept() -> None:
    from parsers import processlist

    def row(n: int, id_: int, command: str, time_s: int, info: str = "NULL") -> str:
        return (
            f"*************************** {n}. row ***************************\n"
            f"     Id: {id_}\n   User: app\n   Host: h:1\n     db: shop\nCommand: {command}\n"
            f"   Time: {time_s}\n  State: {'Sending data' if command == 'Query' else ''}\n   Info: {info}\n"
        )

    text = (
        "TS 1776790301.0 2026-04-21 16:51:41\n"
        + row(1, 7, "Sleep", 5)
        + row(2, 8, "Sleep", 300)
        + row(3, 9, "Query", 2, "SELECT 1 FROM t WHERE a = 4")
        + row(4, 10, "Sleep", 300)
        + row(5, 11, "Sleep", 40)
        + row(6, 12, "Query", 0, "SHOW FULL PROCESSLIST")
        + "TS 1776790302.0 2026-04-21 16:51:42\n"
        + row(1, 7, "Sleep", 6)
        + row(2, 8, "Sleep", 301)
    )
    source = processlist.parse(text.splitlines(keepends=True), member="pl", clock=ClockHints())
    reduced = prepare(source)
    kept = reduced.frames["processlist"]
    # first 1: 7 (first row), 8 (longest idle, first of the two at 300 s), 9 (active), 12 (last row);
    # then 7 (first), 8 (last, and the longest idle)
    assert kept["id"].tolist() == [7, 8, 9, 12, 7, 8]
    assert reduced.frames["processlist_sessions"]["sessions"].tolist() == [6, 2]
    assert prepare(reduced).frames["processlist"]["id"].tolist() == kept["id"].tolist()  # idempotent


def test_interrupt_series_and_irq_cpu_rates_do_not_depend_on_the_slices_they_are_grouped_in(
    monkeypatch,
) -> None:
    from analyzer.timeline import series

    parsed = prepare(_parse(interrupts, FIXTURES / "interrupts" / "linux-6.18_proc-interrupts_3snap.txt"))
    tl = Timeline.from_sources([parsed])
    irq = tl.frame("interrupts").astype({"per_s": "float64"})
    stated = irq.groupby(["ts", "irq"], observed=True)["per_s"].sum(min_count=1).dropna()
    whole_series = series._interrupts(tl)[0]
    whole_rates = series.irq_cpu_rates(tl)
    monkeypatch.setattr(series, "GROUP_ROWS", 7)  # many slices, groups cut across them
    sliced_series = series._interrupts(tl)[0]
    sliced_rates = series.irq_cpu_rates(tl)
    key = ["series", "ts"]
    pd.testing.assert_frame_equal(
        whole_series.sort_values(key, ignore_index=True),
        sliced_series.sort_values(key, ignore_index=True),
        rtol=1e-12,
    )
    pd.testing.assert_frame_equal(whole_rates, sliced_rates, rtol=1e-6)
    got = whole_series.assign(irq=whole_series["series"].astype(str).str.removeprefix("interrupts.irq:"))
    got = got.dropna(subset=["value"]).set_index(["ts", "irq"])["value"].sort_index()
    assert len(got) and got.index.isin(stated.index).all()
    pd.testing.assert_series_equal(
        got, stated.reindex(got.index).rename("value"), check_names=False, rtol=1e-12
    )
