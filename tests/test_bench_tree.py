"""bench/tree.py measures a command's whole process tree: CPU of a grandchild orphaned by its
parent counts (the measuring process is a subreaper), and memory a forked child shares with its
parent counts once in the summed PSS, twice in the summed RSS."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from bench.tree import descendants, summed

ROOT = Path(__file__).resolve().parent.parent
MIB = 1 << 20

#: Run in a process of its own: a subreaper waits for every orphan, which a test process must not.
MEASURE = """
import json, sys
from bench.tree import become_subreaper, run_tree
assert become_subreaper()
run = run_tree([sys.executable, "-c", sys.argv[1]], stdout=None)
print(json.dumps({k: v for k, v in vars(run).items() if k not in ("stderr", "seen")}))
"""


def _measure(script: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, textwrap.dedent(script)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


def test_the_cpu_of_a_grandchild_whose_parent_never_waits_for_it_counts() -> None:
    # the command forks a child that forks a grandchild burning ~0.6 s of CPU; the child exits at
    # once without waiting, so the grandchild is an orphan, and the command exits without waiting
    # for the child's grandchild either (os._exit)
    run = _measure(
        """
        import os, time
        r, w = os.pipe()
        if os.fork() == 0:
            if os.fork() == 0:
                os.read(r, 1)  # until the command has ended
                end = time.process_time() + 0.6
                while time.process_time() < end:
                    pass
                os._exit(0)
            os._exit(0)
        os.wait()
        os.write(w, b"x")
        os._exit(0)
        """
    )
    assert run["returncode"] == 0
    assert run["orphans"] == 1
    assert run["cpu_s"] >= 0.6


def test_pages_a_forked_child_shares_count_once_in_the_summed_pss() -> None:
    # 200 MiB written by the command, then a child forked that holds them shared; both wait on stdin
    command = textwrap.dedent(
        """
        import os, sys
        block = bytearray(os.urandom(1 << 20)) * 200
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(w)
            os.read(r, 1)
            os._exit(0)
        os.close(r)
        print("ready", flush=True)
        sys.stdin.read()
        os.close(w)
        os.waitpid(pid, 0)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline() == "ready\n"
        pids = descendants([proc.pid])
        pss, rss = summed(pids)
    finally:
        proc.communicate("", timeout=60)
    assert len(pids) == 2
    assert 200 * MIB <= pss < 240 * MIB
    assert rss >= 400 * MIB
