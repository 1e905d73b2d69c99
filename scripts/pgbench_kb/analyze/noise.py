"""What this knowledge base has measured of run-to-run noise, for scale.

A comparison whose spread is unknown (single runs, or a source's median without its runs) is
never called ``higher`` or ``lower``, however large. Its page and sentence still state the
size, and beside it what the groups *with* repeats have shown of noise on the same workload:
how many groups, and the range and median of their coefficients of variation. That is context,
not a test: it says how large run-to-run differences have been elsewhere, never that this one
is certain.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any


def noise_by_workload(groups: list[Any]) -> dict[str, dict[str, Any]]:
    """Workload name → ``{workload, groups, cv_pct_min, cv_pct_max, cv_pct_median}`` over the
    groups with two or more runs' values."""
    cvs: dict[str, list[float]] = defaultdict(list)
    for g in groups:
        workload = g.factors.get("benchmark.workload.name")
        cv = (g.spread or {}).get("cv_pct")
        if isinstance(workload, str) and isinstance(cv, int | float):
            cvs[workload].append(float(cv))
    return {
        w: {
            "workload": w,
            "groups": len(v),
            "cv_pct_min": round(min(v), 2),
            "cv_pct_max": round(max(v), 2),
            "cv_pct_median": round(statistics.median(v), 2),
        }
        for w, v in cvs.items()
    }


def add_noise_context(comparisons: list[dict[str, Any]], groups: list[Any]) -> None:
    """``noise_context`` on every comparison whose spread is unknown: the noise measured on
    groups of its workload (None when none has repeats)."""
    by_workload = noise_by_workload(groups)
    by_id = {g.id: g for g in groups}
    for c in comparisons:
        if c["verdict"] != "spread_unknown":
            continue
        workload = by_id[c["a"]["group"]].factors.get("benchmark.workload.name")
        c["noise_context"] = by_workload.get(workload) if isinstance(workload, str) else None
