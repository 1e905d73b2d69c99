"""The sentence a reader sees about one series' stability (``series_text``): its spread,
stalls, checkpoints and the TPC-E rules, from what ``stability.analyse_series`` computed.
Figures are written by ``pgbench_kb.numbers``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pgbench_kb.numbers import figure

RULE_TEXT = {
    "holds": "holds",
    "fails": "fails",
    "too_short_to_judge": "too short to judge",
    "cannot_judge": "cannot be judged",
}


SOURCE_TEXT = {"progress": "progress reports", "aggregate_log": "aggregate log"}


def _stalls_beside_checkpoints(stalls: Sequence[Mapping[str, Any]]) -> str:
    during = sum(1 for stall in stalls if stall.get("during_checkpoint"))
    if len(stalls) == 1:
        return f"the stall {'while a' if during else 'while no'} checkpoint ran"
    return f"{during} of the {len(stalls)} stalls while a checkpoint ran"


def series_text(analysis: Mapping[str, Any]) -> str:
    """One plain sentence about a series: spread, stalls, checkpoints and the TPC-E rules."""
    tps = analysis["tps"]
    if tps is None:
        return f"{SOURCE_TEXT[analysis['source']]}: no interval with a known tps."
    parts = [
        f"{SOURCE_TEXT[analysis['source']]}, {tps['intervals']} intervals over "
        f"{analysis['span_s']:g} s: median {figure(tps['median'])} tps"
        + (f", CV {tps['cv_pct']:.1f}%" if tps["cv_pct"] is not None else "")
        + f", {figure(tps['min'])} to {figure(tps['max'])}"
    ]
    count = analysis["stall_count"]
    if count:
        longest = max(st["end_s"] - st["start_s"] for st in analysis["stalls"])
        parts.append(
            f"{count} stall{'s' if count != 1 else ''} below half the median "
            f"(longest {longest:g} s)"
        )
    else:
        parts.append("no stall")
    checkpoints = analysis["checkpoints"]
    if checkpoints["count"] is not None:
        parts.append(checkpoints["note"].split(";")[0])
        if checkpoints.get("times_from") and count:
            parts.append(_stalls_beside_checkpoints(analysis["stalls"]))
    rules = analysis["sustained"]
    # A series shorter than a window says nothing of the TPC-E rules. Regression (issue 35): a
    # 3 s run's page discussed 10-minute windows.
    if rules["10min"]["verdict"] != "too_short_to_judge":
        parts.append(
            "TPC-E sustained throughput: 10-minute windows ±20% "
            f"{RULE_TEXT[rules['10min']['verdict']]}, 1-hour windows ±2% "
            f"{RULE_TEXT[rules['1h']['verdict']]}"
        )
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."
