"""The verdict of every staged wait incident (tests/analyzer/staged.py, bundles made by
scripts/make_wait_bundles.sh): its root cause names the resource waited for, the holder the capture
shows holding (or no culprit when it shows none), and the fix that holder needs.

Each bundle is analysed as the ingest does (``engine.run_hosts``, as tests/analyzer/test_bundle_verdicts.py
does). A process is never a disk's consumer without per-process I/O evidence (pidstat -d, /proc/PID/io,
or its threads in state D).
"""

from __future__ import annotations

from functools import cache

import pytest

from analyzer import engine
from analyzer.findings import Finding
from tests.analyzer.staged import STAGED, Expected
from tests.analyzer.test_bundle_verdicts import BUNDLES, _analyse

#: Evidence series or labels that are per-process I/O (what may name a process as a disk's consumer).
PER_PROCESS_IO = ("pidstat", "proc_io", "/io", "state d", "d state", "uninterruptible")


@cache
def _outcome(name: str) -> engine.Outcome:
    return _analyse(BUNDLES / f"{name}.tar.gz")


def _text(f: Finding) -> str:
    return " ".join((f.title, f.explanation)).lower()


def test_every_staged_bundle_is_a_fixture() -> None:
    assert all((BUNDLES / f"{name}.tar.gz").is_file() for name in STAGED)
    assert {p.name.removesuffix(".tar.gz") for p in BUNDLES.glob("waits-*.tar.gz")} == set(STAGED)


@pytest.mark.parametrize("name", sorted(STAGED))
def test_the_root_cause_names_the_resource_waited_for(name: str) -> None:
    want: Expected = STAGED[name]
    v = _outcome(name).verdict
    assert v.root_cause is not None, v.headline
    assert want.resource.value.lower() in _text(v.root_cause), (v.root_cause.key, v.headline)
    missing = [w for w in want.root_words if w.lower() not in _text(v.root_cause)]
    assert not missing, (missing, v.headline)


@pytest.mark.parametrize("name", sorted(STAGED))
def test_the_root_cause_names_the_holder_shown_or_none(name: str) -> None:
    want = STAGED[name]
    v = _outcome(name).verdict
    assert v.root_cause is not None, v.headline
    culprit = v.root_cause.culprit
    if want.holder_kind is None:
        assert culprit is None, (culprit, v.headline)
        return
    assert culprit is not None, v.headline
    assert culprit.kind == want.holder_kind, (culprit, v.headline)
    if want.holder_id is not None:
        assert culprit.id == want.holder_id, (culprit, v.headline)
    if want.host is not None:
        assert want.host in (v.root_cause.host, *v.root_cause.hosts), (v.root_cause.host, v.root_cause.hosts)


@pytest.mark.parametrize("name", sorted(STAGED))
def test_the_fix_is_the_holders(name: str) -> None:
    want = STAGED[name]
    fix = _outcome(name).verdict.fix.lower()
    missing = [w for w in want.fix_words if w.lower() not in fix]
    assert not missing, (missing, fix)
    wrong = [w for w in want.fix_not if w.lower() in fix]
    assert not wrong, (wrong, fix)


@pytest.mark.parametrize("name", sorted(STAGED))
def test_no_process_is_a_disks_consumer_without_per_process_io(name: str) -> None:
    for f in _outcome(name).findings:
        c = f.culprit
        if c is None or c.kind != "process":
            continue
        if f.key != "io-consumer" and "disk" not in _text(f):
            continue
        shown = " ".join(f"{e.series} {e.label}" for e in (*c.evidence, *f.evidence)).lower()
        assert any(w in shown for w in PER_PROCESS_IO), (f.key, f.host, c)
