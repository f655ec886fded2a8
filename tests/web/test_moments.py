"""Moments: the processlist and thread snapshots nearest to a clicked instant, and the raw lines of
every source at that instant read back from the kept bundle; the sample index behind them; the view."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.test import Client

from tests.web.conftest import ingest_ready, make_tar
from web.cases import services
from web.ingest import tasks
from web.models import Case, SampleIndex
from web.timeline import moments

pytestmark = pytest.mark.django_db

# SHOW FULL PROCESSLIST\G as pt-stalk writes it (TS line per snapshot); a multi-line Info in row 3.
PROCESSLIST = """\
TS 1776790301.500000000 2026-04-21 16:51:41
*************************** 1. row ***************************
     Id: 7
   User: app
   Host: app1:50928
     db: shop
Command: Sleep
   Time: 100
  State: 
   Info: NULL
*************************** 2. row ***************************
     Id: 8
   User: app
   Host: app2:41002
     db: shop
Command: Query
   Time: 3
  State: Sending data
   Info: SELECT * FROM orders WHERE id = 42
*************************** 3. row ***************************
     Id: 9
   User: app
   Host: app2:41003
     db: shop
Command: Query
   Time: 12
  State: updating
   Info: UPDATE stock SET qty = qty - 1
WHERE sku = 'A-1'
TS 1776790303.500000000 2026-04-21 16:51:43
*************************** 1. row ***************************
     Id: 7
   User: app
   Host: app1:50928
     db: shop
Command: Sleep
   Time: 102
  State: 
   Info: NULL
"""  # noqa: W291 - MariaDB prints "State: " with its blank for a sleeping session

# ps -eLo pid,tid,ppid,user,stat,pcpu,comm,wchan:32 after the collector's TS line, two snapshots.
PS = """\
TS 1776790301.000000000 2026-04-21 16:51:41
    PID     TID    PPID USER     STAT %CPU COMMAND         WCHAN
   1208    1208       1 mysql    Ssl   1.0 mariadbd        do_epoll_wait
   1208    1301       1 mysql    D     0.5 mariadbd        do_unlinkat
   1208    1302       1 mysql    R    90.0 mariadbd        -
TS 1776790302.000000000 2026-04-21 16:51:42
    PID     TID    PPID USER     STAT %CPU COMMAND         WCHAN
   1208    1208       1 mysql    Ssl   1.0 mariadbd        do_epoll_wait
   1208    1301       1 mysql    R    20.0 mariadbd        -
   1208    1302       1 mysql    D     0.0 mariadbd        do_unlinkat
   1208    1303       1 mysql    D     5.0 mariadbd        jbd2_log_wait_commit
"""

#: 2026-04-21 16:51:42.400 UTC: 0.9 s after the first processlist snapshot, 1.1 s before the second;
#: 0.4 s after the second ps snapshot.
AT = datetime(2026, 4, 21, 16, 51, 42, 400_000, tzinfo=UTC)
AT_MS = 1776790302400


def _ingest(tmp_path: Path, members: dict[str, str]) -> Case:
    return ingest_ready(make_tar(tmp_path / "b.tgz", {name: text.encode() for name, text in members.items()}))


@pytest.fixture
def case(tmp_path: Path) -> Case:
    return _ingest(tmp_path, {"c/processlist.txt": PROCESSLIST, "c/ps-threads.txt": PS})


def test_the_sample_index_holds_the_lines_of_each_sample(case: Case) -> None:
    rows = list(
        SampleIndex.objects.filter(case=case)
        .order_by("member", "ts")
        .values_list("member", "format", "line_start", "line_end")
    )
    assert rows == [
        ("c/processlist.txt", "processlist", 2, 29),
        ("c/processlist.txt", "processlist", 31, 39),
        ("c/ps-threads.txt", "ps", 3, 5),
        ("c/ps-threads.txt", "ps", 8, 11),
    ]


def test_reanalysis_replaces_the_sample_index(case: Case) -> None:
    services.case_reanalyze(case_id=case.pk, enqueue=False)
    tasks.case_ingest(case_id=case.pk)
    assert SampleIndex.objects.filter(case=case).count() == 4


def test_the_nearest_processlist_snapshot_is_chosen(case: Case) -> None:
    pl = moments.moment(case=case, at=AT)["processlist"]
    assert pl["ts"] == 1776790301500
    assert (pl["sessions"], pl["active"], pl["omitted"]) == (3, 2, 0)


def test_sessions_are_listed_active_first_then_longest_running(case: Case) -> None:
    rows = moments.moment(case=case, at=AT)["processlist"]["rows"]
    assert [(r["id"], r["time_s"], r["active"]) for r in rows] == [
        (9, 12, True),
        (8, 3, True),
        (7, 100, False),
    ]
    assert rows[0]["info"] == "UPDATE stock SET qty = qty - 1\nWHERE sku = 'A-1'"
    assert (rows[0]["member"], rows[0]["line_no"], rows[0]["state"]) == ("c/processlist.txt", 20, "updating")
    assert rows[1]["fingerprint"] == "select * from orders where id = ?"


def test_sessions_beyond_the_cap_are_counted_as_omitted(case: Case, monkeypatch) -> None:
    monkeypatch.setattr(moments, "MAX_SESSIONS", 2)
    pl = moments.moment(case=case, at=AT)["processlist"]
    assert [r["id"] for r in pl["rows"]] == [9, 8]
    assert pl["omitted"] == 1


def test_a_long_statement_is_cut_and_says_so(case: Case, monkeypatch) -> None:
    monkeypatch.setattr(moments, "MAX_INFO_CHARS", 10)
    first = moments.moment(case=case, at=AT)["processlist"]["rows"][0]
    assert (first["info"], first["info_cut"]) == ("UPDATE sto", True)


def test_the_nearest_thread_snapshot_lists_d_threads_first(case: Case) -> None:
    threads = moments.moment(case=case, at=AT)["threads"]
    assert threads["ts"] == 1776790302000
    assert threads["counts"] == {"D": 2, "R": 1, "S": 1}
    assert threads["total"] == 4
    assert [(r["tid"], r["state"], r["wchan"]) for r in threads["rows"]] == [
        (1303, "D", "jbd2_log_wait_commit"),
        (1302, "D", "do_unlinkat"),
        (1301, "R", ""),
    ]
    assert threads["rows"][0]["line_no"] == 11


def test_threads_beyond_the_cap_are_counted_as_omitted(case: Case, monkeypatch) -> None:
    monkeypatch.setattr(moments, "MAX_THREADS", 1)
    threads = moments.moment(case=case, at=AT)["threads"]
    assert [r["tid"] for r in threads["rows"]] == [1303]
    assert threads["omitted"] == 2


def test_raw_lines_are_exactly_those_of_each_sample_at_the_moment(case: Case) -> None:
    raw = moments.moment(case=case, at=AT)["raw"]
    assert raw["error"] is None and raw["omitted_sources"] == 0
    by_member = {s["member"]: s for s in raw["sources"]}
    assert list(by_member) == ["c/processlist.txt", "c/ps-threads.txt"]
    ps = by_member["c/ps-threads.txt"]
    assert (ps["format"], ps["ts"], ps["line_start"], ps["line_end"], ps["lines_cut"]) == (
        "ps",
        1776790302000,
        8,
        11,
        False,
    )
    assert ps["lines"] == PS.splitlines()[7:11]
    assert (
        ps["lines"][-1] == "   1208    1303       1 mysql    D     5.0 mariadbd        jbd2_log_wait_commit"
    )
    pl = by_member["c/processlist.txt"]
    assert (pl["line_start"], pl["line_end"]) == (2, 29)
    assert pl["lines"] == PROCESSLIST.splitlines()[1:29]
    assert pl["lines"][-1] == "WHERE sku = 'A-1'"


def test_raw_lines_beyond_the_cap_are_cut_and_say_so(case: Case, monkeypatch) -> None:
    monkeypatch.setattr(moments, "MAX_RAW_LINES", 3)
    pl = next(s for s in moments.moment(case=case, at=AT)["raw"]["sources"] if s["format"] == "processlist")
    assert pl["lines"] == [
        "*************************** 1. row ***************************",
        "     Id: 7",
        "   User: app",
    ]
    assert pl["lines_cut"] is True


def test_sources_beyond_the_cap_keep_the_nearest(case: Case, monkeypatch) -> None:
    monkeypatch.setattr(moments, "MAX_RAW_SOURCES", 1)
    raw = moments.moment(case=case, at=AT)["raw"]
    assert [s["member"] for s in raw["sources"]] == ["c/ps-threads.txt"]  # 0.4 s away, processlist 0.9 s
    assert raw["omitted_sources"] == 1


def test_a_source_sampled_far_from_the_moment_shows_no_raw_lines(case: Case) -> None:
    later = datetime(2026, 4, 21, 16, 51, 46, 600_000, tzinfo=UTC)  # 3.1 s after both last samples
    assert moments.moment(case=case, at=later)["raw"]["sources"] == []


def test_a_case_without_processlist_gives_null(tmp_path: Path) -> None:
    case = _ingest(tmp_path, {"c/ps-threads.txt": PS})
    result = moments.moment(case=case, at=AT)
    assert result["processlist"] is None
    assert result["threads"]["ts"] == 1776790302000


def test_a_case_without_threads_gives_null(tmp_path: Path) -> None:
    case = _ingest(tmp_path, {"c/processlist.txt": PROCESSLIST})
    assert moments.moment(case=case, at=AT)["threads"] is None


def test_the_view_answers_with_the_moment(engineer_client: Client, case: Case) -> None:
    response = engineer_client.get(f"/cases/{case.pk}/moment.json", {"t": str(AT_MS)})
    assert response.status_code == 200
    body = response.json()
    assert body["at"] == AT_MS
    assert body["processlist"]["ts"] == 1776790301500


def test_the_case_page_carries_the_moment_url(engineer_client: Client, case: Case) -> None:
    page = engineer_client.get(f"/cases/{case.pk}/").content.decode()
    assert f'data-moment-url="/cases/{case.pk}/moment.json"' in page


@pytest.mark.parametrize("t", ["", "abc", "nan", "inf", "-5", "1e30"])
def test_a_bad_time_is_400_with_a_message(engineer_client: Client, case: Case, t: str) -> None:
    response = engineer_client.get(f"/cases/{case.pk}/moment.json", {"t": t})
    assert response.status_code == 400
    assert response.json()["message"] == "t must be a time in epoch milliseconds"


def test_a_missing_time_is_400(engineer_client: Client, case: Case) -> None:
    assert engineer_client.get(f"/cases/{case.pk}/moment.json").status_code == 400


def test_anonymous_visitors_get_404(client: Client, case: Case) -> None:
    assert client.get(f"/cases/{case.pk}/moment.json", {"t": str(AT_MS)}).status_code == 404


def test_an_unknown_case_is_404(engineer_client: Client) -> None:
    assert engineer_client.get("/cases/999999/moment.json", {"t": str(AT_MS)}).status_code == 404


# Snapshots that end with sleeping threads, which the analysis does not keep one by one.
PS_ENDING_ASLEEP = """\
TS 1776790301.000000000 2026-04-21 16:51:41
    PID     TID    PPID USER     STAT %CPU COMMAND         WCHAN
   1208    1301       1 mysql    D     0.5 mariadbd        do_unlinkat
   1208    1302       1 mysql    S     0.0 mariadbd        futex_wait_queue
   1208    1303       1 mysql    S     0.0 mariadbd        futex_wait_queue
TS 1776790302.000000000 2026-04-21 16:51:42
    PID     TID    PPID USER     STAT %CPU COMMAND         WCHAN
   1208    1301       1 mysql    R    20.0 mariadbd        -
   1208    1302       1 mysql    S     0.0 mariadbd        futex_wait_queue
   1208    1303       1 mysql    S     0.0 mariadbd        futex_wait_queue
"""


def test_a_snapshot_ending_with_sleeping_threads_keeps_all_its_lines(tmp_path: Path) -> None:
    case = _ingest(tmp_path, {"c/ps-threads.txt": PS_ENDING_ASLEEP})
    rows = list(SampleIndex.objects.filter(case=case).order_by("ts").values_list("line_start", "line_end"))
    assert rows == [(3, 5), (8, 10)]
    threads = moments.threads_at(case=case, at=AT)
    assert threads["ts"] == 1776790302000
    assert threads["counts"] == {"R": 1, "S": 2} and threads["total"] == 3
    assert [(r["tid"], r["state"]) for r in threads["rows"]] == [(1301, "R")]
    raw = moments.raw_at(case=case, at=AT)["sources"][0]
    assert raw["lines"] == PS_ENDING_ASLEEP.splitlines()[7:10]


@pytest.mark.django_db(transaction=True)
def test_moments_are_read_from_several_threads_at_once(tmp_path: Path) -> None:
    """As under threaded gunicorn: each request thread decompresses the kept text at the same time."""
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    case = _ingest(tmp_path, {"c/processlist.txt": PROCESSLIST, "c/ps-threads.txt": PS})
    want = moments.moment(case=case, at=AT)
    assert want["raw"] and want["processlist"]

    def read(_: int) -> dict[str, object]:
        try:
            return moments.moment(case=Case.objects.get(pk=case.pk), at=AT)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(read, range(64)))
    assert all(g == want for g in got)
