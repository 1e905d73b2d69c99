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
import signal
from collections.abc import Callable, Iterable
from typing import Any, Literal


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


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


class TwoSteps:
    """Two steps over ``items`` in ``workers`` forked processes, each keeping a fixed share of
    the items between the steps: ``first(item)`` returns ``(result, kept)``; the results of the
    first step come back at once (``first_results``), while the workers go on with
    ``second(item, kept)``, whose results ``second_results`` waits for. What ``first`` keeps
    never crosses a process boundary: a step that would otherwise read every item again
    starts from it.

    The workers ignore Ctrl-C; leaving the block by an exception (Ctrl-C included) ends them.
    An exception in a step is raised here, in either ``*_results``."""

    def __init__(
        self,
        first: Callable[[Any], tuple[Any, Any]],
        second: Callable[[Any, Any], Any],
        items: Iterable[Any],
        *,
        workers: int,
    ) -> None:
        self.items = list(items)
        self.shares = [list(range(w, len(self.items), workers)) for w in range(workers)]
        context = multiprocessing.get_context("fork")
        self.pipes = []
        self.processes = []
        try:
            for share in self.shares:
                here, there = context.Pipe(duplex=False)
                process = context.Process(
                    target=_two_steps, args=(first, second, [self.items[i] for i in share], there)
                )
                process.start()
                there.close()
                self.pipes.append(here)
                self.processes.append(process)
        except BaseException:
            self.stop()
            raise

    def _collect(self) -> list[Any]:
        results: list[Any] = [None] * len(self.items)
        for pipe, share in zip(self.pipes, self.shares, strict=True):
            try:
                status, values = pipe.recv()
            except EOFError:
                self.stop()
                raise RuntimeError("a worker process stopped before it was done") from None
            if status == "error":
                self.stop()
                raise values
            for index, value in zip(share, values, strict=True):
                results[index] = value
        return results

    def first_results(self) -> list[Any]:
        """The first step's results, in the order of the items."""
        return self._collect()

    def second_results(self) -> list[Any]:
        """The second step's results, in the order of the items, once every worker is done."""
        results = self._collect()
        for process in self.processes:
            process.join()
        return results

    def stop(self) -> None:
        for process in self.processes:
            if process.is_alive():
                process.terminate()
            process.join()

    def __enter__(self) -> TwoSteps:
        return self

    def __exit__(self, kind: object, _value: object, _trace: object) -> None:
        if kind is not None:
            self.stop()


def _two_steps(
    first: Callable[[Any], tuple[Any, Any]],
    second: Callable[[Any, Any], Any],
    items: list[Any],
    pipe: Any,
) -> None:
    """Worker of ``TwoSteps``: each step's results sent as one message (or the exception)."""
    _ignore_interrupts()
    try:
        done = [first(item) for item in items]
        pipe.send(("ok", [result for result, _kept in done]))
        kept = [k for _result, k in done]
        del done
        pipe.send(("ok", [second(item, k) for item, k in zip(items, kept, strict=True)]))
    except Exception as exc:  # sent whole: raised again by the caller
        pipe.send(("error", exc))
    finally:
        pipe.close()
