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


def map_in_workers(
    function: Callable[[Any], Any],
    items: Iterable[Any],
    *,
    workers: int,
    chunksize: int | None = None,
    start: Literal["fork", "spawn"] = "fork",
) -> list[Any]:
    """``[function(item) for item in items]`` computed by ``workers`` processes, in order.

    ``start``: ``fork`` (the workers share the caller's memory as it is: nothing but the items
    and results is pickled) or ``spawn`` (fresh interpreters, for libraries that run threads
    of their own, such as vl-convert). ``chunksize``: items handed to a worker at a time; by
    default about eight chunks per worker (fewer round trips, yet the work stays balanced).
    An exception in a worker is raised here; so is Ctrl-C, after the workers were stopped."""
    items = list(items)
    if chunksize is None:
        chunksize = max(1, len(items) // (workers * 8))
    context = multiprocessing.get_context(start)
    pool = context.Pool(workers, initializer=_ignore_interrupts)
    try:
        results = pool.map(function, items, chunksize)
    except BaseException:
        pool.terminate()
        pool.join()
        raise
    pool.close()
    pool.join()
    return results
