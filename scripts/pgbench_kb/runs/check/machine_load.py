"""Rules on ``machine_load``, the harness's record of what else used the machine during a run:
the verdict must follow from the figures beside it, so that an edited verdict (a disturbed run
made to look quiet) is caught."""

from __future__ import annotations

from typing import Any

from pgbench_kb.runs.check.report import Issue
from pgbench_kb.runs.quietness import OTHER_CORE_SHARE_LIMIT, STEAL_PCT_LIMIT

#: How far core_share may be from cpu_s / interval_s (both are rounded when recorded).
SHARE_TOLERANCE = 0.002


def rules_machine_load(run: dict[str, Any]) -> list[Issue]:
    load = run.get("machine_load")
    if not isinstance(load, dict):
        return []
    issues = []
    if run.get("origin") == "transcribed":
        issues.append(
            Issue(
                "machine_load",
                "only the harness records machine_load (a measured run); a transcribed run "
                "cannot carry it",
            )
        )
    other = load.get("other_processes") or {}
    limits = load.get("limits") or {}
    share, cpu_s, interval = other.get("core_share"), other.get("cpu_s"), load.get("interval_s")
    if (
        isinstance(share, int | float)
        and isinstance(cpu_s, int | float)
        and isinstance(interval, int | float)
        and interval > 0
        and abs(cpu_s / interval - share) > SHARE_TOLERANCE + 0.001 * share
    ):
        issues.append(
            Issue(
                "machine_load.other_processes.core_share",
                f"{share} is not cpu_s / interval_s ({cpu_s} / {interval})",
            )
        )
    over = []
    share_limit, steal_limit = limits.get("other_core_share"), limits.get("steal_pct")
    if (
        isinstance(share, int | float)
        and isinstance(share_limit, int | float)
        and share > share_limit
    ):
        over.append("other processes")
    steal = load.get("steal_pct")
    if (
        isinstance(steal, int | float)
        and isinstance(steal_limit, int | float)
        and steal > steal_limit
    ):
        over.append("steal")
    disturbed, reasons = load.get("disturbed"), load.get("reasons") or []
    if over and disturbed is not True:
        issues.append(
            Issue(
                "machine_load.disturbed",
                f"{' and '.join(over)} above the limits in machine_load.limits, yet disturbed "
                f"is {disturbed}",
            )
        )
    if disturbed is True and not reasons:
        issues.append(Issue("machine_load.reasons", "a disturbed run must say why"))
    if disturbed is True and reasons:
        issues.append(
            Issue(
                "machine_load.disturbed",
                "measured on a busy machine ("
                + "; ".join(str(r) for r in reasons)
                + "): kb compare leaves this run out of every verdict; measure again with "
                "nothing else running",
                severity="warning",
            )
        )
    if disturbed is False and reasons:
        issues.append(Issue("machine_load.reasons", "a quiet run has no reasons"))
    if _lowered(limits):
        issues.append(
            Issue(
                "machine_load.limits",
                "limits looser than the harness's own (other_core_share "
                f"{OTHER_CORE_SHARE_LIMIT:g}, steal_pct {STEAL_PCT_LIMIT:g}): a run is judged by "
                "the documented thresholds",
            )
        )
    return issues


def _lowered(limits: dict[str, Any]) -> bool:
    """Limits looser than the harness's (an edit that turns a disturbed run quiet)."""
    share, steal = limits.get("other_core_share"), limits.get("steal_pct")
    return (isinstance(share, int | float) and share > OTHER_CORE_SHARE_LIMIT) or (
        isinstance(steal, int | float) and steal > STEAL_PCT_LIMIT
    )
