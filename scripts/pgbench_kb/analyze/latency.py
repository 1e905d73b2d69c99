"""Latency comparisons: the same controlled pairs as tps, compared on latency.

For every tps comparison whose two groups both have a latency figure, one more entry of
``comparisons`` per latency metric (``METRICS``): pgbench's average latency (the summary's
``latency average``) and, when per-transaction logs were parsed, the percentiles of
``results.latency_percentiles_ms``; for runs without a tail percentile to compare (no p95
or p99 that meets the sample rules), pgbench's latency standard deviation (the summary's
``latency stddev``), which then stands for the spread of the latencies. Each has the shape
of a tps comparison (same factor, machine, sides, caveats) with ``metric`` naming what is
compared and ``tps_comparison`` the id of the tps comparison it belongs to.

The numbers keep the contract: ``ratio`` is B's centre over A's, ``verdict`` speaks of B
against A (``higher``, ``lower``, ``within_noise``, ``spread_unknown``) with the same test as
tps (Welch's t on the logarithms of the runs' values, 95%). What differs is which way is good:
``better_when`` is ``lower`` for latency (``higher`` for tps), and ``outcome`` (``better``,
``worse``, ``within_noise``, ``spread_unknown``) reads the verdict that way, so nothing calls
higher latency a gain.

A group's latency centre is the median of its runs' values, its spread comes from those runs
(two or more); a published statistic without its runs (one transcribed run file standing for
several runs) has a centre and no spread, as for tps.
"""

from __future__ import annotations

import statistics
from typing import Any

from pgbench_kb.analyze.groups import Group, spread_values
from pgbench_kb.analyze.latency_trust import trusted
from pgbench_kb.analyze.sessions import (
    Between,
    compared_inside,
    design_of,
    estimate,
    judge,
    session_of,
)

#: metric name → (where the run holds it, the short name used in ids and the table).
METRICS: dict[str, tuple[str, str]] = {
    "latency_avg_ms": ("avg", "avg"),
    "latency_p50_ms": ("p50", "p50"),
    "latency_p95_ms": ("p95", "p95"),
    "latency_p99_ms": ("p99", "p99"),
    "latency_stddev_ms": ("stddev", "stddev"),
}

#: How each metric reads in sentences.
METRIC_WORDS = {
    "tps": "tps",
    "latency_avg_ms": "average latency",
    "latency_p50_ms": "median latency (p50)",
    "latency_p95_ms": "p95 latency",
    "latency_p99_ms": "p99 latency",
    "latency_stddev_ms": "latency standard deviation",
}

BETTER_WHEN = {"tps": "higher"}

#: The fewest logged latencies a run's percentile may rest on to be compared: a p95 from
#: fewer than 200 latencies rests on its slowest ten or fewer, a p99 from fewer than 1,000 on
#: its slowest ten or fewer (docs/comparisons.md, "Sample rules"). A percentile whose count is
#: not known (a source's figure) is not compared either.
MIN_LATENCIES = {"p95": 200, "p99": 1_000, "p999": 10_000}


def better_when(metric: str) -> str:
    """``higher`` when more is better (tps), ``lower`` otherwise (every latency)."""
    return BETTER_WHEN.get(metric, "lower")


def outcome(verdict: str, metric: str) -> str:
    """The verdict read as ``better`` or ``worse`` for B (``within_noise`` and
    ``spread_unknown`` stay as they are)."""
    if verdict not in ("higher", "lower"):
        return verdict
    return "better" if verdict == better_when(metric) else "worse"


def _run_value(run: Any, where: str) -> float | None:
    if not trusted(run):
        return None  # latencies of 0 µs or unverified (analyze/latency_trust.py)
    if where == "avg":
        value = run.latency_avg_ms
    elif where == "stddev":
        # Compared only where the tails are not: a run with a p95 or p99 that meets the
        # sample rules is judged on those (docs/comparisons.md, "Latency comparisons").
        if _run_value(run, "p95") is not None or _run_value(run, "p99") is not None:
            return None
        value = getattr(run, "latency_stddev_ms", None)
    else:
        results = (run.series or {}).get("results") or {}
        percentiles = results.get("latency_percentiles_ms") or {}
        value = percentiles.get(where)
        if where in MIN_LATENCIES and logged(results) < MIN_LATENCIES[where]:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        return None
    return float(value)


def logged(results: dict[str, Any]) -> int:
    """How many logged latencies a run's percentiles rest on (0 when not known)."""
    count = (results.get("latency_percentiles_from") or {}).get("latencies")
    return count if isinstance(count, int) and not isinstance(count, bool) else 0


def group_latency(group: Group) -> dict[str, dict[str, Any]]:
    """Each latency metric the group has: ``{center, n, statistic, values, spread, runs}``."""
    out: dict[str, dict[str, Any]] = {}
    published = len(group.runs) == 1 and group.statistic in ("median", "mean") and group.n > 1
    for metric, (where, _short) in METRICS.items():
        pairs = [(r.id, v) for r in group.runs if (v := _run_value(r, where)) is not None]
        if not pairs:
            continue
        values = [v for _id, v in pairs]
        if published:
            # One transcribed row standing for several runs: its figure is the published
            # statistic, with no runs behind it to give a spread.
            stat, n, center, samples = group.statistic, group.n, values[0], None
        else:
            n = len(values)
            stat = "median" if n > 1 else "single"
            center = statistics.median(values)
            samples = values if n > 1 else None
        out[metric] = {
            "center": round(center, 6),
            "n": n,
            "statistic": stat,
            "values": samples,
            "spread": spread_values(samples) if samples else None,
            "runs": [rid for rid, _v in pairs],
        }
    return out


def _side(side: dict[str, Any], figures: dict[str, Any]) -> dict[str, Any]:
    return {
        **side,
        "runs": figures["runs"],
        "n": figures["n"],
        "statistic": figures["statistic"],
        "center": figures["center"],
        "spread": figures["spread"],
    }


def latency_comparisons(
    comparisons: list[dict[str, Any]], groups: list[Group]
) -> list[dict[str, Any]]:
    """One latency comparison per tps comparison and latency metric both groups have."""
    by_id = {g.id: g for g in groups}
    latency: dict[str, dict[str, dict[str, Any]]] = {}

    def of(gid: str) -> dict[str, dict[str, Any]]:
        if gid not in latency:
            latency[gid] = group_latency(by_id[gid]) if gid in by_id else {}
        return latency[gid]

    between = _between(groups, of)
    by_design = _between(groups, of, by_design=True)
    inside = compared_inside(groups)
    out = []
    for c in comparisons:
        la, lb = of(c["a"]["group"]), of(c["b"]["group"])
        if not la or not lb:
            continue
        for metric in METRICS:
            fa, fb = la.get(metric), lb.get(metric)
            if fa is None or fb is None:
                continue
            ratio = fb["center"] / fa["center"]
            test, sessions = judge(
                by_id[c["a"]["group"]],
                by_id[c["b"]["group"]],
                lambda g, m=metric: of(g.id)[m]["values"],
                between[metric],
                c["differs_also"],
                inside,
                by_design[metric],
            )
            out.append(
                {
                    **c,
                    "id": f"{c['id']}-latency-{METRICS[metric][1]}",
                    "metric": metric,
                    "tps_comparison": c["id"],
                    "a": _side(c["a"], fa),
                    "b": _side(c["b"], fb),
                    "ratio": round(ratio, 4),
                    "change_pct": round((ratio - 1) * 100, 2),
                    "verdict": test.verdict,
                    "test": test.as_dict(),
                    "sessions": sessions,
                    "better_when": better_when(metric),
                    "outcome": outcome(test.verdict, metric),
                }
            )
    return out


def _between(
    groups: list[Group], of: Any, *, by_design: bool = False
) -> dict[str, dict[Any, Between]]:
    """Each latency metric's between-session variance per machine (as tps's, from the groups
    measured in bench sessions); ``by_design``: per machine and design (``design_of``), as
    tps's, for the pooled estimates over sessions (``pooling.py``)."""
    out = {}
    for metric in METRICS:
        cells = []
        for g in groups:
            session = session_of(g)
            figures = of(g.id).get(metric)
            if figures is None or session.startswith("source "):
                continue
            values = figures["values"] or ([figures["center"]] if figures["n"] == 1 else None)
            key = (g.hardware_key, design_of(g)) if by_design else g.hardware_key
            cells.append((key, g.factor_key, session, values))
        out[metric] = estimate(cells)
    return out
