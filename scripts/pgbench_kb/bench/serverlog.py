"""When checkpoints ran during a trial, from the part of the server's log the harness kept.

``scripts/bench.sh`` starts its server with ``log_checkpoints=on``, ``log_timezone=UTC`` and
``log_line_prefix='%m [%p] '``, and keeps what the log gained while pgbench ran as
``server-log.txt`` in the trial folder, beside ``pgbench_started_ms`` (the Unix time in ms at
which it started pgbench) in ``trial.tsv``. A checkpoint is two lines::

    2026-11-27 02:10:30.004 UTC [4242] LOG:  checkpoint starting: time
    2026-11-27 02:10:57.120 UTC [4242] LOG:  checkpoint complete: wrote 2410 buffers (14.7%); ...
        write=26.9 s, sync=0.004 s, total=27.1 s; ...

The words after ``starting:`` are the reason (``time``, ``wal``, ``immediate force wait``...);
the complete line has had the same shape since 8.3 (later versions add fields after it), so
one pattern reads every version the harness can run.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

_STAMP = r"(?P<stamp>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?) UTC \[\d+\] LOG:  "
STARTING_RE = re.compile(_STAMP + r"checkpoint starting: (?P<reason>[a-z -]+?)\s*$")
COMPLETE_RE = re.compile(
    _STAMP + r"checkpoint complete: wrote (?P<buffers>\d+) buffers \([\d.]+%\)"
    r".*?write=(?P<write>[\d.]+) s, sync=(?P<sync>[\d.]+) s, total=(?P<total>[\d.]+) s"
)


def _seconds_after(stamp: str, started_ms: int) -> float:
    when = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S.%f" if "." in stamp else "%Y-%m-%d %H:%M:%S")
    epoch_ms = when.replace(tzinfo=UTC).timestamp() * 1000
    return round((epoch_ms - started_ms) / 1000, 3)


def _number(text: str) -> float:
    return round(float(text), 3)


def checkpoints(log_text: str, started_ms: int) -> list[dict[str, Any]]:
    """The checkpoints in ``log_text``, in the order they started, times in seconds after
    ``started_ms``. A checkpoint whose start is not in the text (it began before pgbench) has
    ``started_s`` and ``reason`` null; one not complete when the text ends, ``completed_s`` and
    the write figures null."""
    found: list[dict[str, Any]] = []
    open_one: dict[str, Any] | None = None
    for line in log_text.splitlines():
        start = STARTING_RE.match(line)
        if start:
            open_one = {
                "started_s": _seconds_after(start["stamp"], started_ms),
                "reason": start["reason"],
                "completed_s": None,
                "buffers_written": None,
                "write_s": None,
                "sync_s": None,
                "total_s": None,
            }
            found.append(open_one)
            continue
        done = COMPLETE_RE.match(line)
        if not done:
            continue
        if open_one is None:
            open_one = {"started_s": None, "reason": None}
            found.append(open_one)
        open_one.update(
            completed_s=_seconds_after(done["stamp"], started_ms),
            buffers_written=int(done["buffers"]),
            write_s=_number(done["write"]),
            sync_s=_number(done["sync"]),
            total_s=_number(done["total"]),
        )
        open_one = None
    return found
