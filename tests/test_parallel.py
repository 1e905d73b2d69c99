"""Work in worker processes (pgbench_kb/parallel.py): results in order, errors raised, and a
Ctrl-C that stops everything at once (regression: two Ctrl-C during kb derive at 10,000 runs
left the command and its workers waiting on each other for good)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time

import pytest

from pgbench_kb.parallel import map_in_workers


def square(value: int) -> int:
    return value * value


def fail_on_three(value: int) -> int:
    if value == 3:
        raise ValueError("three")
    return value


def sleep_long(_value: int) -> int:
    time.sleep(60)
    return 0


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_results_come_in_order(start: str) -> None:
    assert map_in_workers(square, range(50), workers=2, chunksize=3, start=start) == [
        n * n for n in range(50)
    ]


def test_an_error_in_a_worker_is_raised_here() -> None:
    with pytest.raises(ValueError, match="three"):
        map_in_workers(fail_on_three, range(6), workers=2)
    assert multiprocessing.active_children() == []


def test_ctrl_c_stops_the_workers_at_once() -> None:
    """SIGINT to this process (what Ctrl-C sends the whole process group; the workers ignore
    it) while the workers are busy for a minute: KeyboardInterrupt within seconds, no worker
    left behind."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            map_in_workers(sleep_long, range(4), workers=2)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, before)
    assert time.monotonic() - started < 15
    assert multiprocessing.active_children() == []


def halve_and_keep(value: int) -> tuple[int, int]:
    return value // 2, value * 10


def add_kept(value: int, kept: int) -> int:
    if value == 7:
        raise ValueError("seven")
    return value + kept


def test_two_steps_give_both_results_in_order_from_what_the_first_kept() -> None:
    from pgbench_kb.parallel import TwoSteps

    with TwoSteps(halve_and_keep, lambda v, k: v + k, range(20), workers=2) as work:
        assert work.first_results() == [n // 2 for n in range(20)]
        assert work.second_results() == [n + n * 10 for n in range(20)]
    assert multiprocessing.active_children() == []


def test_an_error_in_the_second_step_is_raised_here_and_no_worker_is_left() -> None:
    from pgbench_kb.parallel import TwoSteps

    with (
        pytest.raises(ValueError, match="seven"),
        TwoSteps(halve_and_keep, add_kept, range(10), workers=2) as work,
    ):
        assert work.first_results() == [n // 2 for n in range(10)]
        work.second_results()
    assert multiprocessing.active_children() == []


def test_ctrl_c_between_the_steps_stops_the_workers() -> None:
    from pgbench_kb.parallel import TwoSteps

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with (
            pytest.raises(KeyboardInterrupt),
            TwoSteps(halve_and_keep, lambda v, k: sleep_long(v), range(4), workers=2) as work,
        ):
            work.first_results()
            work.second_results()
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, before)
    assert time.monotonic() - started < 15
    assert multiprocessing.active_children() == []


def forty_two() -> int:
    return 42


def three_parts():
    yield from ([1], [2, 3], [4])


def niceness_and_fail(fail: bool) -> int:
    if fail:
        raise ValueError("no")
    return os.getpriority(os.PRIO_PROCESS, 0)


def test_a_forked_function_gives_its_result_its_yields_or_its_error() -> None:
    from functools import partial

    from pgbench_kb.parallel import Forked

    with Forked(forty_two) as work:
        assert work.result() == 42
    with Forked(three_parts) as work:
        assert [work._receive() for _ in range(3)] == [[1], [2, 3], [4]]
        work.process.join()
    with pytest.raises(ValueError, match="no"), Forked(partial(niceness_and_fail, True)) as work:
        work.result()
    assert multiprocessing.active_children() == []


def test_a_process_behind_the_caller_runs_at_a_lower_priority() -> None:
    """Work started beside the caller (``behind``) must not slow the caller's own: on two
    cores, kb derive's analysis goes first."""
    from functools import partial

    from pgbench_kb.parallel import BEHIND, Forked

    mine = os.getpriority(os.PRIO_PROCESS, 0)
    with Forked(partial(niceness_and_fail, False), behind=True) as work:
        assert work.result() == min(mine + BEHIND, 19)
    with Forked(partial(niceness_and_fail, False)) as work:
        assert work.result() == mine


def test_ctrl_c_ends_a_forked_process_at_once() -> None:
    from functools import partial

    from pgbench_kb.parallel import Forked

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt), Forked(partial(sleep_long, 0)) as work:
            work.result()
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, before)
    assert time.monotonic() - started < 15
    assert multiprocessing.active_children() == []


def test_the_first_step_sent_in_parts_comes_back_whole_and_in_order(monkeypatch) -> None:
    from pgbench_kb import parallel

    monkeypatch.setattr(parallel, "STEP_PART", 3)
    with parallel.TwoSteps(halve_and_keep, lambda v, k: v + k, range(23), workers=2) as work:
        assert work.first_results() == [n // 2 for n in range(23)]
        assert work.second_results() == [n + n * 10 for n in range(23)]
    with parallel.TwoSteps(halve_and_keep, lambda v, k: v + k, range(1), workers=2) as work:
        assert work.first_results() == [0]  # a worker with no share sends nothing
        assert work.second_results() == [0]
    assert multiprocessing.active_children() == []


def killed() -> int:
    os._exit(3)


def test_a_worker_killed_before_it_is_done_is_one_line_not_a_traceback() -> None:
    """A worker that dies (the kernel ended it for want of memory, say) is a KbError: the
    command line says so in one line."""
    from pgbench_kb.errors import WorkerLost
    from pgbench_kb.parallel import Forked

    with pytest.raises(WorkerLost, match="ended before it was done \\(exit status 3\\)"):
        Forked(killed).result()
    assert multiprocessing.active_children() == []
