"""Checkpoints on a run's page: the spans its progress chart shades, the column of its data
table, and the sentence under the chart.

Two records say something about checkpoints during a run. ``results.checkpoints`` (harness
runs since checkpoint times were recorded) has each one's start and end in seconds into the run,
read from the server's log; ``server_stats`` has only their number, from the server's counters.
The chart is marked from the first only: with the counters alone the sentence says how many ran
and that their times are not known.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.analyze.stability import ran_during

#: Listed one by one in the sentence up to this many; beyond, the first ones and "N more".
LISTED = 4


@dataclass(frozen=True)
class Span:
    """One checkpoint: ``start`` None when it began before pgbench, ``end`` None when it was
    still running when pgbench ended (seconds into the run)."""

    start: float | None
    end: float | None
    reason: str | None
    buffers: int | None

    def covers(self, low: float, high: float) -> bool:
        """Whether the checkpoint ran during any of the interval (low, high]."""
        return ran_during(self.start, self.end, low, high)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def spans_of(run: dict[str, Any]) -> list[Span] | None:
    """The recorded checkpoints, or None when the run file does not record their times."""
    found = (run.get("results") or {}).get("checkpoints")
    if not isinstance(found, list):
        return None
    spans = []
    for item in found:
        if not isinstance(item, dict):
            continue
        buffers = item.get("buffers_written")
        spans.append(
            Span(
                start=_number(item.get("started_s")),
                end=_number(item.get("completed_s")),
                reason=item.get("reason") if isinstance(item.get("reason"), str) else None,
                buffers=buffers if isinstance(buffers, int) and buffers >= 0 else None,
            )
        )
    return spans


def kind(reason: str | None) -> str:
    """What started a checkpoint, from the words of its log line (``time``, ``wal`` — ``xlog``
    before PostgreSQL 10 —, ``immediate force wait`` for a CHECKPOINT command)."""
    words = set((reason or "").split())
    if "immediate" in words:
        return "requested"
    if words & {"wal", "xlog"}:
        return "by WAL volume"
    if "time" in words:
        return "timed"
    return reason or "of unknown cause"


def _one(span: Span) -> str:
    """``timed at 30.2 s (took 26.8 s, wrote 2,410 buffers)``."""
    if span.start is None:
        when = "one begun before pgbench started"
    else:
        when = f"{kind(span.reason)} at {fmt.seconds(round(span.start, 1))}"
    if span.end is None:
        end = "still running when pgbench ended"
    elif span.start is None:
        end = f"ended at {fmt.seconds(round(span.end, 1))}"
    else:
        end = f"took {fmt.seconds(round(span.end - span.start, 1))}"
    wrote = f", wrote {fmt.count(span.buffers, 'buffer')}" if span.buffers is not None else ""
    return f"{when} ({end}{wrote})"


def words(run: dict[str, Any]) -> str:
    """The sentence under the progress chart on checkpoints during the run."""
    spans = spans_of(run)
    if spans is not None:
        if not spans:
            return "No checkpoint ran during the run (the server's log)."
        listed = "; ".join(_one(span) for span in spans[:LISTED])
        more = len(spans) - LISTED
        tail = f"; and {fmt.figure(more)} more" if more > 0 else ""
        return (
            f"{fmt.count(len(spans), 'checkpoint')} ran during the run, shaded on the chart "
            f"(the server's log): {listed}{tail}."
        )
    stats = run.get("server_stats") or {}
    timed, requested = stats.get("checkpoints_timed"), stats.get("checkpoints_requested")
    if not isinstance(timed, int) and not isinstance(requested, int):
        return "The run file does not say whether a checkpoint ran during the run."
    total = (timed or 0) + (requested or 0)
    if total == 0:
        return "No checkpoint ran during the run (the server's counters)."
    return (
        f"{fmt.count(total, 'checkpoint')} ran during the run ({timed or 0} timed, "
        f"{requested or 0} requested, by the server's counters); their times were not "
        "recorded, so the chart does not mark them."
    )


def during(spans: list[Span], t: float, interval: float) -> str:
    """The data table's checkpoint cell for the progress interval ending at ``t``: the kinds of
    the checkpoints running during it, or "—"."""
    kinds = [
        "begun before the run" if span.start is None else kind(span.reason)
        for span in spans
        if span.covers(t - interval, t)
    ]
    return ", ".join(dict.fromkeys(kinds)) or "—"
