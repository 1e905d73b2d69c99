"""Work spread over worker processes, stopped at once and cleanly by Ctrl-C.

``kb check``, ``kb compare``, ``kb derive`` and ``kb charts`` spread thousands of files over
the cores. A pool of ``concurrent.futures`` hung on Ctrl-C: each worker got the interrupt too
and could die holding a lock of the pool's queues, and the pool's exit then waited for it
forever (regression: two Ctrl-C during ``kb derive`` at 10,000 runs left three processes
waiting on each other). Here the workers ignore Ctrl-C; the main process, interrupted, ends
them (``Pool.terminate``) and the interrupt goes on to the command line, which says so in one
line.

Like ``errors.py``, this module belongs to no stage: every stage may use it.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from types import GeneratorType
from typing import Any, Literal

from pgbench_kb.errors import WorkerLost

#: The niceness of workers that work *beside* the caller (``behind=True``): when the cores are
#: all busy, the caller — whose work the others wait for — runs first.
BEHIND = 10


#: Worker processes a stage starts at most: beyond four, the sharing costs more than it gives.
MAX_WORKERS = 4


def cores() -> int:
    """The machine's processors (at least 1)."""
    return os.cpu_count() or 1


def fork_safe() -> bool:
    """Whether worker processes may be forked from this one: not once polars (the transaction
    log parser's CSV reader) was loaded here. Its thread pool does not survive a fork: a forked
    child that parsed a log with it waited forever (a test session that parsed logs, then
    derived the shipped site of over 500 runs, hung). ``kb`` itself forks before it reads any
    log, so its commands keep their workers."""
    return "polars" not in sys.modules


def worker_count() -> int:
    """How many worker processes a stage starts (one per core, at most ``MAX_WORKERS``; one,
    so the work stays in this process, when forking is not safe: ``fork_safe``)."""
    return min(cores(), MAX_WORKERS) if fork_safe() else 1


def _ignore_interrupts(nice: int = 0) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if nice:
        os.nice(nice)


class InWorkers:
    """``[function(item) for item in items]`` started in ``workers`` processes now and
    collected later (``results``), so the caller works meanwhile. Use it as a context
    manager: leaving the block by an exception (Ctrl-C included) stops the workers.

    ``start``: ``fork`` (the workers share the caller's memory as it is: nothing but the items
    and results is pickled) or ``spawn`` (fresh interpreters, for libraries that run threads
    of their own, such as vl-convert). ``chunksize``: items handed to a worker at a time; by
    default about eight chunks per worker (fewer round trips, yet the work stays balanced)."""

    def __init__(
        self,
        function: Callable[[Any], Any],
        items: Iterable[Any],
        *,
        workers: int,
        chunksize: int | None = None,
        start: Literal["fork", "spawn"] = "fork",
    ) -> None:
        items = list(items)
        if chunksize is None:
            chunksize = max(1, len(items) // (workers * 8))
        context = multiprocessing.get_context(start)
        self.pool = context.Pool(workers, initializer=_ignore_interrupts)
        try:
            self.pending = self.pool.map_async(function, items, chunksize)
        except BaseException:
            self.stop()
            raise

    def results(self) -> list[Any]:
        """The results, in order, once every worker is done; an exception in a worker is
        raised here."""
        try:
            results = self.pending.get()
        except BaseException:
            self.stop()
            raise
        self.pool.close()
        self.pool.join()
        return results

    def stop(self) -> None:
        self.pool.terminate()
        self.pool.join()

    def __enter__(self) -> InWorkers:
        return self

    def __exit__(self, kind: object, _value: object, _trace: object) -> None:
        if kind is not None:
            self.stop()


def map_in_workers(
    function: Callable[[Any], Any],
    items: Iterable[Any],
    *,
    workers: int,
    chunksize: int | None = None,
    start: Literal["fork", "spawn"] = "fork",
) -> list[Any]:
    """``[function(item) for item in items]`` computed by ``workers`` processes, in order
    (``InWorkers``, waited for at once). An exception in a worker is raised here; so is
    Ctrl-C, after the workers were stopped."""
    with InWorkers(function, items, workers=workers, chunksize=chunksize, start=start) as work:
        return work.results()


class Forked:
    """``function()`` started now in one forked process (which shares the caller's memory as
    it is: nothing is pickled but the result), collected later (``result``), so the caller
    works meanwhile. A generator ``function`` sends each value it yields as it goes (what
    ``TwoSteps`` receives step by step). Use it as a context manager: leaving the block by an
    exception (Ctrl-C included) ends the process. An exception in ``function`` is raised by
    ``result``. ``behind``: the process runs at a lower priority (``BEHIND``)."""

    def __init__(self, function: Callable[[], Any], *, behind: bool = False) -> None:
        context = multiprocessing.get_context("fork")
        self.pipe, there = context.Pipe(duplex=False)
        nice = BEHIND if behind else 0
        self.process = context.Process(target=_forked, args=(function, there, nice))
        try:
            self.process.start()
        finally:
            there.close()

    def _receive(self) -> Any:
        """The next value the process sent; an exception it sent is raised here."""
        try:
            status, value = self.pipe.recv()
        except EOFError:
            self.stop()
            raise WorkerLost(
                f"a worker process ended before it was done (exit status {self.process.exitcode})",
                hint="it was killed, perhaps for want of memory; run the command again",
            ) from None
        except BaseException:
            self.stop()
            raise
        if status == "error":
            self.stop()
            raise value
        return value

    def result(self) -> Any:
        """What ``function`` returned, once the process is done."""
        value = self._receive()
        self.process.join()
        return value

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.terminate()
        self.process.join()

    def __enter__(self) -> Forked:
        return self

    def __exit__(self, kind: object, _value: object, _trace: object) -> None:
        if kind is not None:
            self.stop()


def _forked(function: Callable[[], Any], pipe: Any, nice: int) -> None:
    """Worker of ``Forked``: what ``function`` returns as one message — or, when it is a
    generator, each value it yields as one message — or the exception it raised."""
    _ignore_interrupts(nice)
    try:
        made = function()
        if isinstance(made, GeneratorType):
            for value in made:
                pipe.send(("ok", value))
        else:
            pipe.send(("ok", made))
    except Exception as exc:  # sent whole: raised again by the caller
        pipe.send(("error", exc))
    finally:
        pipe.close()


#: Results a ``TwoSteps`` worker sends at a time.
STEP_PART = 500


class TwoSteps:
    """Two steps over ``items`` in ``workers`` forked processes, each keeping a fixed share of
    the items between the steps: ``first(item)`` returns ``(result, kept)``; the results of the
    first step come back at once (``first_results``), while the workers go on with
    ``second(item, kept)``, whose results ``second_results`` waits for. What ``first`` keeps
    never crosses a process boundary: a step that would otherwise read every item again
    starts from it.

    The workers ignore Ctrl-C; leaving the block by an exception (Ctrl-C included) ends them.
    An exception in a step is raised here, in either ``*_results``. ``behind``: the second
    step runs at a lower priority (``BEHIND``): the caller works meanwhile, and goes first."""

    def __init__(
        self,
        first: Callable[[Any], tuple[Any, Any]],
        second: Callable[[Any, Any], Any],
        items: Iterable[Any],
        *,
        workers: int,
        behind: bool = False,
    ) -> None:
        self.items = list(items)
        self.shares = [list(range(w, len(self.items), workers)) for w in range(workers)]
        self.workers: list[Forked] = []
        try:
            for share in self.shares:
                mine = [self.items[i] for i in share]
                steps = partial(_two_steps, first, second, mine, BEHIND if behind else 0)
                self.workers.append(Forked(steps))
        except BaseException:
            self.stop()
            raise

    def _collect(self) -> list[Any]:
        """One step's results, from each worker in one or more parts (``_two_steps``), read as
        they come, so that this process takes them in while the workers go on."""
        results: list[Any] = [None] * len(self.items)
        done = [0] * len(self.workers)
        waiting = {worker.pipe: n for n, worker in enumerate(self.workers) if self.shares[n]}
        try:
            while waiting:
                for pipe in multiprocessing.connection.wait(list(waiting)):
                    n = waiting[pipe]
                    share = self.shares[n]
                    for value in self.workers[n]._receive():
                        results[share[done[n]]] = value
                        done[n] += 1
                    if done[n] == len(share):
                        del waiting[pipe]
                        done[n] = 0
        except BaseException:
            self.stop()
            raise
        return results

    def first_results(self) -> list[Any]:
        """The first step's results, in the order of the items."""
        return self._collect()

    def second_ready(self) -> bool:
        """Whether every worker has begun to send its second step's results (after
        ``first_results``): ``second_results`` will not wait for the step itself."""
        return all(worker.pipe.poll() for worker in self.workers)

    def second_results(self) -> list[Any]:
        """The second step's results, in the order of the items (the workers then end on
        their own: ``join`` waits for that)."""
        return self._collect()

    def join(self) -> None:
        for worker in self.workers:
            worker.process.join()

    def stop(self) -> None:
        for worker in self.workers:
            worker.stop()

    def __enter__(self) -> TwoSteps:
        return self

    def __exit__(self, kind: object, _value: object, _trace: object) -> None:
        """Leaving the block waits for the workers to end, or — by an exception — ends them."""
        if kind is not None:
            self.stop()
        else:
            self.join()


def _two_steps(
    first: Callable[[Any], tuple[Any, Any]],
    second: Callable[[Any, Any], Any],
    items: list[Any],
    nice: int,
) -> Iterator[list[Any]]:
    """Worker of ``TwoSteps``: the first step's results in messages of ``STEP_PART`` results
    (read while the step goes on), the second's in one."""
    kept = []
    part = []
    for item in items:
        result, keep = first(item)
        kept.append(keep)
        part.append(result)
        if len(part) == STEP_PART:
            yield part
            part = []
    if part:
        yield part
    if nice:
        os.nice(nice)
    # One message: sent in parts, the step would wait for the caller to read each part.
    yield [second(item, keep) for item, keep in zip(items, kept, strict=True)]
