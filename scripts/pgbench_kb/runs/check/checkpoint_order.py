"""Rules on ``results.checkpoints``, the checkpoints the harness read from its server's log:
each must be in time order with itself and with the others, so that a hand-edited or
re-ordered list (a stall moved out of the run) is caught."""

from __future__ import annotations

from typing import Any

from pgbench_kb.runs.check.report import Issue


def _both_numbers(a: Any, b: Any) -> bool:
    return isinstance(a, int | float) and isinstance(b, int | float)


def rules_checkpoints(run: dict[str, Any]) -> list[Issue]:
    found = (run.get("results") or {}).get("checkpoints")
    if not isinstance(found, list):
        return []
    issues = []
    if found and run.get("origin") == "transcribed":
        issues.append(
            Issue(
                "results.checkpoints",
                "only the harness reads checkpoints from its server's log (a measured run); a "
                "transcribed run cannot carry them",
            )
        )
    previous = None
    for number, item in enumerate(found):
        where = f"results.checkpoints[{number}]"
        started, completed = item.get("started_s"), item.get("completed_s")
        if started is None and number > 0:
            issues.append(
                Issue(
                    f"{where}.started_s",
                    "only the first checkpoint can have begun before pgbench (started_s null)",
                )
            )
        if (started is None) != (item.get("reason") is None):
            issues.append(Issue(f"{where}.reason", "a reason goes with a start time, and only"))
        if _both_numbers(started, completed) and completed < started:
            issues.append(
                Issue(f"{where}.completed_s", "completes before it starts: correct the times")
            )
        if completed is None and number < len(found) - 1:
            issues.append(
                Issue(
                    f"{where}.completed_s",
                    "only the last checkpoint can be unfinished when pgbench ended",
                )
            )
        if _both_numbers(started, previous) and started < previous:
            issues.append(
                Issue(f"{where}.started_s", "checkpoints are listed in the order they started")
            )
        previous = completed if isinstance(completed, int | float) else started
    return issues
