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
