"""Tests for ``python -m parsers`` (parsers/__main__.py), run as a subprocess on the project's fixtures."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from parsers import registry

ROOT = Path(__file__).resolve().parents[2]
VMSTAT_T = "vmstat/procps-ng-4.0.2_t_1_3.txt"  # vmstat -t 1 3, TZ=UTC
VMSTAT_PLAIN = "vmstat/procps-ng-4.0.2_1_3.txt"  # vmstat 1 3
PROCESSLIST = "processlist/mariadb-10.11.19_table_ts.txt"  # two TS-marked SHOW FULL PROCESSLIST tables
MPSTAT_SUM = "mpstat/mpstat-12.6.1_I-SUM_P-ALL.txt"  # mpstat -I SUM -P ALL 1 2
BUNDLE = "bundles/ptstalk-mariadb-tmptables.tar.gz"

VMSTAT_COLUMNS = [
    "ts",
    "line_no",
    "since_boot",
    "r",
    "b",
    "swpd_kib",
    "free_kib",
    "buff_kib",
    "cache_kib",
    "si",
    "so",
    "bi",
    "bo",
    "in",
    "cs",
    "us",
    "sy",
    "id",
    "wa",
    "st",
    "ts_source",
]


def run(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "parsers", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_json(*args: object) -> dict:
    proc = run(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# --- --json ---------------------------------------------------------------------------------------


def test_json_describes_a_vmstat_t_capture(fixtures: Path) -> None:
    doc = run_json(fixtures / VMSTAT_T)
    assert {k: doc[k] for k in ("format", "member", "clock", "ts_is_local", "samples", "start", "end")} == {
        "format": "vmstat",
        "member": "procps-ng-4.0.2_t_1_3.txt",
        "clock": "per-line",
        "ts_is_local": False,
        "samples": 3,
        "start": "2026-11-22T12:27:06+00:00",
        "end": "2026-11-22T12:27:08+00:00",
    }
    assert doc["frames"] == {"vmstat": {"rows": 3, "columns": VMSTAT_COLUMNS}}
    assert doc["warnings"] == []
    assert doc["meta"]["timezone"] == "UTC"


def test_json_rows_are_records_of_the_main_frame(fixtures: Path) -> None:
    doc = run_json(fixtures / VMSTAT_T)
    assert doc["frame"] == "vmstat"
    assert [r["ts"] for r in doc["rows"]] == [
        "2026-11-22T12:27:06+00:00",
        "2026-11-22T12:27:07+00:00",
        "2026-11-22T12:27:08+00:00",
    ]
    first = doc["rows"][0]
    assert (first["line_no"], first["since_boot"], first["r"], first["free_kib"], first["cs"]) == (
        3,
        True,
        56,
        23676192,
        1646,
    )
    assert doc["rows"][2]["id"] == 1


def test_json_keeps_marker_nanoseconds_and_null_for_sql_null(fixtures: Path) -> None:
    doc = run_json(fixtures / PROCESSLIST)
    assert (doc["clock"], doc["samples"]) == ("ts-marker", 2)
    assert doc["start"] == "2026-11-22T12:30:18.330032491+00:00"
    row = doc["rows"][1]  # `| 673 | root | 127.0.0.1:34030 | NULL | Query | 3 | User sleep | ...`
    assert (row["id"], row["db"], row["time_s"], row["ts"]) == (
        673,
        None,
        3,
        "2026-11-22T12:30:18.330032491+00:00",
    )


def test_json_lists_warnings_with_line_code_and_message(fixtures: Path) -> None:
    doc = run_json(fixtures / VMSTAT_PLAIN)
    assert doc["warnings"] == [
        {
            "line": 0,
            "code": "no-start-time",
            "message": "no marker, no -t column and no start time: times count from 1970",
        }
    ]


def test_pt_stalk_file_name_gives_the_start_time(fixtures: Path, tmp_path: Path) -> None:
    named = tmp_path / "2026_11_22_12_27_10-vmstat"
    shutil.copyfile(fixtures / VMSTAT_PLAIN, named)
    doc = run_json(named)
    assert doc["hints"] == {
        "layout": "pt-stalk",
        "start_local": "2026-11-22T12:27:10",
        "interval_s": 1.0,
        "utc_offset_s": None,
    }
    assert (doc["clock"], doc["ts_is_local"]) == ("inferred", True)
    assert (doc["start"], doc["end"]) == ("2026-11-22T12:27:10+00:00", "2026-11-22T12:27:12+00:00")


def test_loose_file_has_no_clock_hints(fixtures: Path) -> None:
    doc = run_json(fixtures / VMSTAT_T)
    assert doc["hints"] == {"layout": "loose", "start_local": None, "interval_s": None, "utc_offset_s": None}


def test_frame_option_picks_another_frame(fixtures: Path) -> None:
    doc = run_json(fixtures / MPSTAT_SUM, "--frame", "mpstat_cpu")
    assert doc["frame"] == "mpstat_cpu"
    assert doc["rows"] == []
    assert doc["frames"]["mpstat_intr"]["rows"] == 6


# --- --csv ----------------------------------------------------------------------------------------


def test_csv_prints_the_main_frame_with_iso_ts(fixtures: Path) -> None:
    proc = run(fixtures / VMSTAT_T, "--csv")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        ",".join(VMSTAT_COLUMNS),
        "2026-11-22T12:27:06+00:00,3,True,56,0,0,23676192,19356,623912,0,0,2133,6444,570,1646,16,6,77,1,0,line",
        "2026-11-22T12:27:07+00:00,4,False,48,0,0,23676192,19356,623912,0,0,36,4,1296,26064,82,16,2,0,0,line",
        "2026-11-22T12:27:08+00:00,5,False,65,0,0,23676192,19356,623912,0,0,0,0,1094,26051,86,13,1,0,0,line",
    ]


def test_csv_of_a_chosen_frame(fixtures: Path) -> None:
    proc = run(fixtures / MPSTAT_SUM, "--csv", "--frame", "mpstat_intr")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "ts,line_no,since_boot,cpu,intr_per_s"
    assert lines[1] == "2026-11-22T12:26:40+00:00,4,False,-1,721.0"
    assert lines[-1] == "2026-11-22T12:26:41+00:00,11,False,1,365.0"
    assert len(lines) == 7


@pytest.mark.parametrize(
    ("suffix", "compress"), [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)]
)
def test_compressed_single_file_reads_like_the_plain_one(
    fixtures: Path, tmp_path: Path, suffix, compress
) -> None:
    packed = tmp_path / f"vmstat-t.txt{suffix}"
    packed.write_bytes(compress((fixtures / VMSTAT_T).read_bytes()))
    plain = run(fixtures / VMSTAT_T, "--csv")
    proc = run(packed, "--csv")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == plain.stdout


# --- summary --------------------------------------------------------------------------------------


def test_summary_names_format_clock_window_frames_and_warnings(fixtures: Path) -> None:
    proc = run(fixtures / VMSTAT_PLAIN)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1] == "format:   vmstat (procps-ng)"
    assert lines[3].startswith("clock:    inferred")
    assert lines[4] == "samples:  3, 1970-01-01T00:00:00+00:00 .. 1970-01-01T00:00:02+00:00"
    assert lines[6] == "  vmstat: 3 rows; " + ", ".join(VMSTAT_COLUMNS)
    assert lines[-2:] == [
        "warnings: 1",
        "  line 0 [no-start-time] no marker, no -t column and no start time: times count from 1970",
    ]


def test_summary_shows_every_frame_with_its_row_count(fixtures: Path) -> None:
    proc = run(fixtures / MPSTAT_SUM)
    assert proc.returncode == 0, proc.stderr
    frames = [ln.split(";")[0] for ln in proc.stdout.splitlines() if ln.startswith("  mpstat_")]
    assert frames == ["  mpstat_intr: 6 rows", "  mpstat_cpu: 0 rows", "  mpstat_irq: 0 rows"]


# --- failures -------------------------------------------------------------------------------------


def test_unrecognised_format_exits_2_naming_the_file(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\nworld\n")
    proc = run(notes)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"python -m parsers: {notes}: format not recognised (first line: 'hello')\n"


def test_parse_error_exits_1_with_member_and_line(fixtures: Path) -> None:
    proc = run(fixtures / VMSTAT_PLAIN, "--format", "mpstat")
    assert proc.returncode == 1
    assert proc.stderr == (
        "python -m parsers: procps-ng-4.0.2_1_3.txt line 1: not mpstat output: "
        "expected a sysstat banner or an mpstat header\n"
    )


def test_unknown_format_name_exits_2(fixtures: Path) -> None:
    proc = run(fixtures / VMSTAT_T, "--format", "sar")
    assert proc.returncode == 2
    known = ", ".join(m.FORMAT for m in registry.parsers())  # in detection order
    assert proc.stderr.startswith(f"python -m parsers: unknown format 'sar' (known: {known})")


def test_unknown_frame_exits_2(fixtures: Path) -> None:
    proc = run(fixtures / VMSTAT_T, "--csv", "--frame", "iostat")
    assert proc.returncode == 2
    assert proc.stderr == "python -m parsers: procps-ng-4.0.2_t_1_3.txt: no frame 'iostat' (frames: vmstat)\n"


def test_missing_file_exits_2(tmp_path: Path) -> None:
    proc = run(tmp_path / "absent.txt")
    assert proc.returncode == 2
    assert proc.stderr == f"python -m parsers: {tmp_path / 'absent.txt'}: no such file\n"


def test_archive_is_refused_with_exit_2(fixtures: Path) -> None:
    proc = run(fixtures / BUNDLE)
    assert proc.returncode == 2
    assert "an archive (tar or zip)" in proc.stderr
    assert proc.stdout == ""


def test_truncated_gzip_exits_1(fixtures: Path, tmp_path: Path) -> None:
    packed = tmp_path / "vmstat.txt.gz"
    packed.write_bytes(gzip.compress((fixtures / VMSTAT_T).read_bytes())[:40])
    proc = run(packed)
    assert proc.returncode == 1
    assert proc.stderr.startswith(
        f"python -m parsers: {packed}: the compressed upload is truncated or corrupt"
    )


def test_csv_and_json_are_exclusive(fixtures: Path) -> None:
    proc = run(fixtures / VMSTAT_T, "--csv", "--json")
    assert proc.returncode == 2
    assert "not allowed with argument" in proc.stderr


# --- one reading path with the upload ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "suffix", "fmt", "samples", "skipped"),
    [
        ("pasted_mpstat-P-ALL-5_prose.txt", ".txt", "mpstat", 2, "lines 1-3, 20-21 skipped"),
        ("pasted_iostat-dx_note.txt", ".sql", "iostat", 2, "lines 1-3, 12-13 skipped"),
    ],
)
def test_a_pasted_capture_reads_as_an_upload_reads_it(
    fixtures: Path, tmp_path: Path, name: str, suffix: str, fmt: str, samples: int, skipped: str
) -> None:
    """Prose around an mpstat table, a ``.sql`` note holding iostat: what the bundle reader makes of
    the member, the command line makes of the file (tests/parsers/test_pasted.py for the upload)."""
    note = tmp_path / f"note{suffix}"
    shutil.copy(fixtures / "context" / name, note)
    doc = run_json(note)
    assert (doc["format"], doc["samples"]) == (fmt, samples)
    assert doc["warnings"][0]["code"] == "pasted-note"
    assert doc["warnings"][0]["message"].startswith(skipped)


def test_a_file_cut_inside_a_line_says_so_as_an_upload_does(fixtures: Path, tmp_path: Path) -> None:
    text = (fixtures / VMSTAT_T).read_bytes()
    cut = tmp_path / "vmstat.txt"
    cut.write_bytes(text[: text.rindex(b"\n", 0, len(text) - 1) + 10])
    doc = run_json(cut)
    assert doc["samples"] == 2
    assert [w["code"] for w in doc["warnings"]][-1] == "truncated"
