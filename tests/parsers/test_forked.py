"""parsers.ingest.forked: a call worked out in a forked child, its result or error sent back."""

from __future__ import annotations

import os
import pickle
import signal
import threading

import numpy as np
import pandas as pd
import pytest

from parsers.ingest import forked


def _busiest(frame: pd.DataFrame) -> tuple[int, pd.Series]:
    """The child's pid and a reduction of a frame the parent holds (read, shared, in the child)."""
    return os.getpid(), frame.groupby("cpu")["per_s"].sum().sort_values(ascending=False)


def test_the_child_reads_the_parents_frames_and_sends_back_what_it_worked_out() -> None:
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"cpu": rng.integers(0, 64, 200_000), "per_s": rng.random(200_000)})
    child = forked.start(_busiest, frame)
    pid, totals = child.result()
    assert pid == child.pid != os.getpid()
    pd.testing.assert_series_equal(totals, _busiest(frame)[1])
    with pytest.raises(ChildProcessError):  # reaped: no zombie left behind
        os.waitpid(child.pid, os.WNOHANG)


def _fails(message: str) -> None:
    raise KeyError(message)


def test_what_the_call_raises_is_raised_in_the_parent() -> None:
    with pytest.raises(KeyError, match="no such column"):
        forked.start(_fails, "no such column").result()


class _Unpicklable(Exception):
    def __reduce__(self):  # noqa: ANN204 - pickle's protocol
        raise TypeError("not this one")


def _fails_unpicklably() -> None:
    raise _Unpicklable("held a socket")


def test_an_error_that_does_not_pickle_comes_back_as_its_text() -> None:
    with pytest.raises(RuntimeError, match="_Unpicklable: held a socket"):
        forked.start(_fails_unpicklably).result()


def _local_function():  # noqa: ANN202 - returns what pickle cannot send
    return lambda: None


def test_a_result_that_does_not_pickle_is_an_error_not_a_hang() -> None:
    with pytest.raises((AttributeError, pickle.PicklingError), match="pickle"):
        forked.start(_local_function).result()


def _sleeps() -> int:
    threading.Event().wait(60)
    return 1


def test_a_killed_child_is_reported_lost_and_reaped() -> None:
    child = forked.start(_sleeps)
    os.kill(child.pid, signal.SIGKILL)  # as the OOM killer would
    with pytest.raises(forked.ForkLost, match="without a result"):
        child.result()
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)
    with pytest.raises(forked.ForkLost, match="taken already"):
        child.result()


def test_the_parents_garbage_collector_is_left_as_it_was() -> None:
    import gc

    frozen = gc.get_freeze_count()
    forked.start(os.getpid).result()
    assert gc.get_freeze_count() == frozen


def test_a_child_reaped_already_is_never_signalled() -> None:
    """``cancel`` after ``result`` (the writes failed once the outcome was taken) must not signal the
    pid, which the system may have given to another process since."""
    child = forked.start(os.getpid)
    assert child.result() == child.pid
    child.cancel()  # no ProcessLookupError, no signal to whoever has the pid now


def test_a_cancelled_child_is_killed_and_reaped_and_has_no_result() -> None:
    child = forked.start(_sleeps)
    child.cancel()
    with pytest.raises(ChildProcessError):  # reaped, not left a zombie
        os.waitpid(child.pid, os.WNOHANG)
    with pytest.raises(forked.ForkLost, match="taken already"):
        child.result()


class _Unreadable(Exception):
    """Pickles, but does not unpickle: its constructor needs two arguments and gets one."""

    def __init__(self, a: str, b: str) -> None:
        super().__init__(f"{a} {b}")


def _fails_unreadably() -> None:
    raise _Unreadable("a", "b")


def test_a_result_that_does_not_unpickle_is_lost_not_raised_as_something_else() -> None:
    with pytest.raises(forked.ForkLost, match="could not be read"):
        forked.start(_fails_unreadably).result()


def test_a_child_past_its_time_is_killed_reaped_and_reported_timed_out() -> None:
    child = forked.start(_sleeps)  # would answer only after 60 s
    with pytest.raises(forked.ForkTimedOut, match="within 0.2 s"):
        child.result(timeout_s=0.2)
    with pytest.raises(ChildProcessError):  # killed and reaped: no zombie, no child left running
        os.waitpid(child.pid, os.WNOHANG)
    with pytest.raises(forked.ForkLost, match="taken already"):
        child.result()


def test_a_child_that_answers_in_time_is_not_cut_short() -> None:
    frame = pd.DataFrame({"cpu": [0, 1, 1], "per_s": [1.0, 2.0, 3.0]})
    pid, totals = forked.start(_busiest, frame).result(timeout_s=60)
    assert pid != os.getpid()
    pd.testing.assert_series_equal(totals, _busiest(frame)[1])
