"""scripts/collect.sh, run for real: 4 s at 1 s against the local MariaDB, under dash.

The collector is a POSIX sh script customers run on their database server; these tests run it once
(module fixture, ~4.5 s) and read the tarball it prints, then check its shape file by file, its
behaviour when a tool is missing and on SIGTERM, and that ``parsers.ingest.bundle.read_bundle`` puts every
source on one overlapping window. Needs dash, procps, sysstat, the mysql client and MariaDB at
127.0.0.1:3306 (root, no password); skipped when dash or the server is absent.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from tests.servers import wait_for

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "collect.sh"
MYSQL_OPTS = "-uroot -h127.0.0.1"
DURATION_S = 4
#: 4 s at 1 s: samples at t = 0, 1, 2, 3 (the loop's k x interval < duration).
SAMPLES = 4
#: vmstat and iostat run one report more than SAMPLES: the first averages since boot.
CONTINUOUS_REPORTS = SAMPLES + 1
TS_RE = re.compile(r"^TS (\d{10}\.\d{9}) (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})$")
SNAPSHOT_FILES = ("ps-threads.txt", "interrupts.txt", "processlist.txt", "mysqladmin.txt")
#: A 1 s loop whose four snapshots take tens of ms stays on its slots; 0.5 s of slack absorbs a
#: busy CI machine without letting a loop that drifts by a whole interval pass.
SLOT_SLACK_S = 0.5


def _mysql_up() -> bool:
    if shutil.which("mysql") is None:
        return False
    done = subprocess.run(
        ["mysql", *MYSQL_OPTS.split(), "-N", "-e", "SELECT 1"], capture_output=True, text=True, timeout=10
    )
    return done.returncode == 0


@dataclass(frozen=True)
class Run:
    """One finished collector run: its tarball, the unpacked directory, stdout/stderr."""

    tarball: Path
    root: Path
    stdout: str
    stderr: str

    def text(self, name: str) -> str:
        return (self.root / name).read_text()

    def manifest(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for line in self.text("manifest.txt").splitlines():
            key, _, value = line.partition(": ")
            out[key] = value
        return out


def _run(out: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60) -> Run:
    done = subprocess.run(
        ["dash", str(SCRIPT), "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return _unpack(Path(done.stdout.strip()), done.stdout, done.stderr)


def _unpack(tarball: Path, stdout: str, stderr: str) -> Run:
    dest = tarball.parent / "unpacked"
    with tarfile.open(tarball) as tar:
        tar.extractall(dest, filter="data")
    (top,) = list(dest.iterdir())
    return Run(tarball=tarball, root=top, stdout=stdout, stderr=stderr)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    if shutil.which("dash") is None:
        pytest.skip("dash is not installed")
    if not _mysql_up():
        pytest.skip("MariaDB/MySQL at 127.0.0.1:3306 (root) is not reachable")
    out = tmp_path_factory.mktemp("collect")
    return _run(out, "--duration", str(DURATION_S), "--interval", "1", "--mysql-opts", MYSQL_OPTS)


def _ts_lines(text: str) -> list[re.Match[str]]:
    return [m for line in text.splitlines() if (m := TS_RE.match(line))]


# ---------------------------------------------------------------------------------------------
# The script itself
# ---------------------------------------------------------------------------------------------
def test_script_passes_dash_syntax_check() -> None:
    if shutil.which("dash") is None:
        pytest.skip("dash is not installed")
    done = subprocess.run(["dash", "-n", str(SCRIPT)], capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")


def test_rejects_a_non_numeric_duration(tmp_path: Path) -> None:
    if shutil.which("dash") is None:
        pytest.skip("dash is not installed")
    done = subprocess.run(
        ["dash", str(SCRIPT), "--out", str(tmp_path), "--duration", "1m"], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "--duration must be a positive whole number, got '1m'" in done.stderr
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# The tarball and the manifest
# ---------------------------------------------------------------------------------------------
def test_prints_the_tarball_path_named_after_host_and_start(run: Run) -> None:
    host = re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname())
    assert re.fullmatch(rf"casebook-{re.escape(host)}-\d{{8}}T\d{{6}}\.tar\.gz", run.tarball.name)
    assert run.tarball.is_file()


def test_tarball_holds_one_directory_named_like_it(run: Run) -> None:
    with tarfile.open(run.tarball) as tar:
        tops = {name.split("/", 1)[0] for name in tar.getnames()}
    assert tops == {run.tarball.name.removesuffix(".tar.gz")}


def test_tarball_holds_the_expected_files(run: Run) -> None:
    names = sorted(p.name for p in run.root.iterdir())
    # performance_schema is OFF on the test server (MariaDB's default), so no pfs-threads.txt nor
    # ps-locks.txt (tests/test_collector_locks.py has them); errors.txt is only kept when a tool wrote
    # to stderr.
    expected = [
        "interrupts.txt",
        "iostat.txt",
        "manifest.txt",
        "meminfo.txt",
        "mpstat-intr.txt",
        "mpstat.txt",
        "mysqladmin.txt",
        "processlist.txt",
        "ps-threads.txt",
        "variables.txt",
        "vmstat.txt",
    ]
    assert [n for n in names if n not in ("errors.txt", "pfs-threads.txt", "ps-locks.txt")] == expected


def test_manifest_describes_host_and_run(run: Run) -> None:
    m = run.manifest()
    assert m["casebook_collector"] == "1"
    assert m["hostname"] == socket.gethostname()
    assert m["nproc"] == str(os.cpu_count())
    assert m["kernel"] == platform.release()
    assert re.fullmatch(r"[+-]\d{4}", m["utc_offset"])
    assert (m["interval"], m["duration"], m["samples"], m["stopped_by"]) == ("1", "4", "4", "duration")
    assert m["missing"] == "none"


def test_manifest_start_epoch_precedes_every_ts_line(run: Run) -> None:
    start = float(run.manifest()["start_epoch"])
    first = min(float(_ts_lines(run.text(f))[0].group(1)) for f in SNAPSHOT_FILES)
    assert 0 <= first - start < 1


def test_manifest_names_the_exact_commands(run: Run) -> None:
    m = run.manifest()
    assert m["command.vmstat.txt"] == "vmstat -t -n 1 5"
    assert m["command.mpstat.txt"] == "mpstat -P ALL 1 4"
    assert m["command.mpstat-intr.txt"] == "mpstat -I SUM -P ALL 1 4"
    assert m["command.iostat.txt"] == "iostat -dxk -t 1 5"
    assert m["command.ps-threads.txt"] == "ps -eLo pid,tid,ppid,user,stat,pcpu,comm,wchan:32"
    assert m["command.interrupts.txt"] == "cat /proc/interrupts"
    assert m["command.processlist.txt"] == "mysql -uroot -h127.0.0.1 -e 'SHOW FULL PROCESSLIST\\G'"
    assert m["command.mysqladmin.txt"] == "mysqladmin -uroot -h127.0.0.1 extended-status"


def test_manifest_says_why_metadata_locks_are_not_captured(run: Run) -> None:
    done = subprocess.run(
        ["mysql", *MYSQL_OPTS.split(), "-N", "-B", "-e", "SELECT @@performance_schema"],
        capture_output=True,
        text=True,
        timeout=10,
    )
    if done.stdout.strip() != "0":
        pytest.skip("performance_schema is ON on the local server")
    assert not (run.root / "ps-locks.txt").exists()
    assert run.manifest()["skipped.ps-locks.txt"] == "performance_schema is OFF (@@performance_schema = 0)"


def test_manifest_records_tool_versions(run: Run) -> None:
    m = run.manifest()
    assert m["version.vmstat"].startswith("vmstat from procps")
    assert m["version.mpstat"].startswith("sysstat version ")
    assert "Distrib" in m["version.mysql"]


def test_manifest_masks_a_password(tmp_path: Path) -> None:
    if shutil.which("dash") is None or not _mysql_up():
        pytest.skip("dash or MariaDB absent")
    # A wrong password: the connection fails, which must not be fatal, and the value never shows.
    done = subprocess.run(
        [
            "dash",
            str(SCRIPT),
            "--out",
            str(tmp_path),
            "--duration",
            "1",
            "--mysql-opts",
            "-uroot -pS3cr3t -h127.0.0.1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    run = _unpack(Path(done.stdout.strip()), done.stdout, done.stderr)
    manifest = run.text("manifest.txt")
    assert "S3cr3t" not in manifest + done.stderr
    assert run.manifest()["mysql_opts"] == "-uroot -p*** -h127.0.0.1"


# ---------------------------------------------------------------------------------------------
# Sources: TS lines and per-line timestamps
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SNAPSHOT_FILES)
def test_snapshot_file_has_one_ts_line_per_sample(run: Run, name: str) -> None:
    assert len(_ts_lines(run.text(name))) == SAMPLES


@pytest.mark.parametrize("name", SNAPSHOT_FILES)
def test_snapshots_keep_the_interval(run: Run, name: str) -> None:
    epochs = [float(m.group(1)) for m in _ts_lines(run.text(name))]
    steps = [b - a for a, b in zip(epochs, epochs[1:], strict=False)]
    assert all(abs(step - 1) < SLOT_SLACK_S for step in steps), steps


def test_ts_line_epoch_and_wall_clock_agree(run: Run) -> None:
    offset = run.manifest()["utc_offset"]
    sign = 1 if offset[0] == "+" else -1
    offset_s = sign * (int(offset[1:3]) * 3600 + int(offset[3:5]) * 60)
    for m in _ts_lines(run.text("processlist.txt")):
        utc = pd.Timestamp(float(m.group(1)), unit="s")
        wall = pd.Timestamp(m.group(2))
        assert (wall - utc).total_seconds() - offset_s == pytest.approx(0, abs=1)


def test_vmstat_has_a_timestamp_on_every_report(run: Run) -> None:
    lines = run.text("vmstat.txt").splitlines()
    assert TS_RE.match(lines[0])
    assert lines[1].startswith("procs ") and lines[1].endswith("-----timestamp-----")
    rows = lines[3:]
    assert len(rows) == CONTINUOUS_REPORTS
    assert all(re.search(r" \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$", row) for row in rows), rows


def test_mpstat_has_iso_banner_date_and_a_report_per_sample(run: Run) -> None:
    text = run.text("mpstat.txt")
    banner = text.splitlines()[1]
    assert re.search(r"\t\d{4}-\d{2}-\d{2} \t", banner), banner
    all_rows = [ln for ln in text.splitlines() if re.match(r"^\d{2}:\d{2}:\d{2}\s+all\s", ln)]
    assert len(all_rows) == SAMPLES
    per_cpu = [ln for ln in text.splitlines() if re.match(r"^\d{2}:\d{2}:\d{2}\s+\d+\s", ln)]
    assert len(per_cpu) == SAMPLES * os.cpu_count()


def test_mpstat_intr_reports_interrupts_per_cpu(run: Run) -> None:
    lines = run.text("mpstat-intr.txt").splitlines()
    assert sum(1 for ln in lines if re.match(r"^\d{2}:\d{2}:\d{2}\s+CPU\s+intr/s$", ln)) == SAMPLES
    assert sum(1 for ln in lines if re.match(r"^\d{2}:\d{2}:\d{2}\s+all\s+\d+\.\d{2}$", ln)) == SAMPLES


def test_iostat_has_an_iso_time_with_offset_per_report(run: Run) -> None:
    text = run.text("iostat.txt")
    stamps = re.findall(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{4}$", text, flags=re.M)
    assert len(stamps) == CONTINUOUS_REPORTS
    assert len(re.findall(r"^Device +r/s .*%util$", text, flags=re.M)) == CONTINUOUS_REPORTS


def test_ps_threads_lists_mariadbd_threads_with_wchan(run: Run) -> None:
    text = run.text("ps-threads.txt")
    headers = [ln.split() for ln in text.splitlines() if ln.lstrip().startswith("PID ")]
    assert headers == [["PID", "TID", "PPID", "USER", "STAT", "%CPU", "COMMAND", "WCHAN"]] * SAMPLES
    first = text.split("\nTS ")[0].splitlines()[2:]
    mariadb = [ln.split() for ln in first if ln.split()[6:7] in (["mariadbd"], ["mysqld"])]
    assert len({row[1] for row in mariadb}) > 1  # several threads (TIDs) of the server process
    assert len({row[0] for row in mariadb}) == 1


def test_interrupts_snapshots_have_a_cpu_header_and_loc_row(run: Run) -> None:
    blocks = run.text("interrupts.txt").split("TS ")[1:]
    assert len(blocks) == SAMPLES
    for block in blocks:
        lines = block.splitlines()
        assert lines[1].split() == [f"CPU{i}" for i in range(os.cpu_count())]
        assert any(ln.lstrip().startswith("LOC:") for ln in lines)


def test_processlist_snapshots_show_the_collector_session(run: Run) -> None:
    blocks = run.text("processlist.txt").split("\nTS ")
    assert len(blocks) == SAMPLES
    assert all("Info: SHOW FULL PROCESSLIST" in block for block in blocks)


def test_mysqladmin_snapshots_are_absolute_status_tables(run: Run) -> None:
    uptimes = [
        int(v) for v in re.findall(r"^\| Uptime +\| (\d+) +\|$", run.text("mysqladmin.txt"), flags=re.M)
    ]
    assert len(uptimes) == SAMPLES
    assert uptimes == sorted(uptimes) and uptimes[-1] - uptimes[0] in (2, 3, 4)


def test_variables_captured_once(run: Run) -> None:
    lines = run.text("variables.txt").splitlines()
    assert TS_RE.match(lines[0])
    assert lines[1] == "Variable_name\tValue"
    assert any(ln.startswith("tmp_table_size\t") for ln in lines)


# ---------------------------------------------------------------------------------------------
# Never fatal, bounded, cleaned up
# ---------------------------------------------------------------------------------------------
def _path_without(tmp_path: Path, *programs: str) -> Path:
    """A directory of links to every program of /usr/bin, /bin, /usr/sbin, /sbin but ``programs``."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for d in ("/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        for entry in Path(d).iterdir():
            target = bindir / entry.name
            if entry.name not in programs and not target.exists() and not target.is_symlink():
                target.symlink_to(entry)
    return bindir


def test_missing_tool_is_reported_not_fatal(tmp_path: Path) -> None:
    if shutil.which("dash") is None:
        pytest.skip("dash is not installed")
    bindir = _path_without(tmp_path, "mpstat")
    out = tmp_path / "out"
    run = _run(out, "--duration", "1", "--mysql-opts", MYSQL_OPTS, env={**os.environ, "PATH": str(bindir)})
    assert "collect.sh: mpstat not found: mpstat.txt, mpstat-intr.txt not captured" in run.stderr
    assert run.manifest()["missing"] == "mpstat"
    assert not (run.root / "mpstat.txt").exists()
    assert (run.root / "vmstat.txt").is_file()


#: What the stand-in mysqladmin prints per call: 40,000 lines of 16 bytes = 640,000 bytes, so a
#: 1 MB cap is passed at the second snapshot.
FAKE_MYSQLADMIN = """#!/bin/sh
case "$*" in
*--version*) echo "mysqladmin  Ver 0 (test stand-in)" ;;
*) yes '| Uptime   | 1 |' | head -n 40000 ;;
esac
"""


def test_max_mb_stops_collection_when_reached(tmp_path: Path) -> None:
    if shutil.which("dash") is None or not _mysql_up():
        pytest.skip("dash or MariaDB absent")
    bindir = _path_without(tmp_path, "mysqladmin")
    fake = bindir / "mysqladmin"
    fake.write_text(FAKE_MYSQLADMIN)
    fake.chmod(0o755)
    out = tmp_path / "out"
    started = time.monotonic()
    run = _run(
        out,
        "--duration",
        "30",
        "--max-mb",
        "1",
        "--mysql-opts",
        MYSQL_OPTS,
        env={**os.environ, "PATH": str(bindir)},
    )
    assert time.monotonic() - started < 10
    assert "reached" in run.stderr and "(--max-mb 1): stopping" in run.stderr
    assert (run.manifest()["stopped_by"], run.manifest()["samples"]) == ("size", "2")
    assert len(_ts_lines(run.text("mysqladmin.txt"))) == 2


def test_sigterm_packs_what_was_captured_and_stops_background_tools(tmp_path: Path) -> None:
    if shutil.which("dash") is None:
        pytest.skip("dash is not installed")
    # An odd duration makes the background command lines unique on this machine.
    duration = 37
    proc = subprocess.Popen(
        [
            "dash",
            str(SCRIPT),
            "--out",
            str(tmp_path),
            "--duration",
            str(duration),
            "--mysql-opts",
            MYSQL_OPTS,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Stopped once two samples are written, however long a busy machine takes to write them.
    wait_for(
        "two mysqladmin samples",
        lambda: any(len(_ts_lines(p.read_text())) >= 2 for p in tmp_path.glob("*/mysqladmin.txt")),
        timeout_s=60,
        every_s=0.1,
    )
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=15)
    assert proc.returncode == 0, stderr
    run = _unpack(Path(stdout.strip()), stdout, stderr)
    assert run.manifest()["stopped_by"] == "signal"
    assert 2 <= int(run.manifest()["samples"]) <= 4
    args = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert f"vmstat -t -n 1 {duration + 1}" not in args
    assert f"mpstat -P ALL 1 {duration}" not in args


# ---------------------------------------------------------------------------------------------
# Through the product: parsers.ingest.bundle.read_bundle
# ---------------------------------------------------------------------------------------------
SIX_SOURCES = ("vmstat", "mpstat", "iostat", "ps", "interrupts", "processlist")


def test_read_bundle_finds_the_six_sources_on_one_window(run: Run) -> None:
    from parsers.ingest.bundle import read_bundle

    bundle = read_bundle(run.tarball)
    sources = {fmt: bundle.by_format(fmt) for fmt in SIX_SOURCES}
    assert {fmt: bool(found) for fmt, found in sources.items()} == dict.fromkeys(SIX_SOURCES, True)
    timed = [s for found in sources.values() for s in found]
    assert all(s.samples >= SAMPLES for s in timed), [(s.member, s.samples) for s in timed]
    latest_start = max(s.start for s in timed)
    earliest_end = min(s.end for s in timed)
    assert latest_start <= earliest_end, [(s.member, s.start, s.end) for s in timed]


def test_read_bundle_leaves_no_source_file_unused(run: Run) -> None:
    from parsers.ingest.bundle import read_bundle

    bundle = read_bundle(run.tarball)
    unused = {Path(n.member).name for n in bundle.not_used}
    assert unused.isdisjoint(
        {
            "vmstat.txt",
            "mpstat.txt",
            "mpstat-intr.txt",
            "iostat.txt",
            "ps-threads.txt",
            "interrupts.txt",
            "processlist.txt",
        }
    ), bundle.not_used


def test_read_bundle_processlist_snapshot_time_is_its_ts_marker(run: Run) -> None:
    from parsers.ingest.bundle import read_bundle

    bundle = read_bundle(run.tarball)
    (source,) = bundle.by_format("processlist")
    first_marker = _ts_lines(run.text("processlist.txt"))[0]
    expected = pd.Timestamp(int(float(first_marker.group(1))), unit="s", tz="UTC")
    first_ts = source.main.loc[source.main["snapshot"] == 0, "ts"].iloc[0]
    assert first_ts.floor("s") == expected


def test_read_bundle_takes_host_and_offset_from_the_manifest(run: Run) -> None:
    from parsers.ingest.bundle import read_bundle

    bundle = read_bundle(run.tarball)
    assert (bundle.layout, bundle.host, bundle.ncpu) == ("collector", socket.gethostname(), os.cpu_count())
    assert bundle.utc_offset_origin == "manifest (date +%z)"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--send", "/tmp"], "--send needs --upload URL"),
        (["--upload", "ftp://example.com/u/x/"], "--upload must be an http:// or https:// upload link"),
        (
            ["--upload", "http://127.0.0.1:9/u/x/", "--send", "/nonexistent/dir"],
            "is neither a directory nor a file",
        ),
        (["--upload", "http://127.0.0.1:9/u/x/", "--tries", "0"], "--tries must be a positive whole number"),
    ],
)
def test_upload_options_are_checked_before_anything_runs(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done = subprocess.run(
        ["dash", str(SCRIPT), "--out", str(tmp_path), *args], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2 and message in done.stderr
    assert list(tmp_path.iterdir()) == []  # nothing collected, nothing packed
