"""Per-transaction costs as pages show them beside tps (``analyze/costs.py`` compares them):
a table under a comparison (``layouts/_partials/comparison/costs.html``) and one line of
words for comparison, configuration and answer pages ("2.0× the WAL bytes, 4.0×
the full-page images, tps within the noise"). Only what ``costs.reported`` keeps is put in
words: a change of at least ``SMALLEST_CHANGE_PCT`` significant after the family-wise
adjustment, or a side zero in every run against one above zero in every run."""

from __future__ import annotations

from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.analyze.costs import (
    COST_WORDS,
    SMALLEST_CHANGE_PCT,
    cost_clauses,
    cost_sentence,
    reported,
)
from pgbench_kb.analyze.multiplicity import significant
from pgbench_kb.analyze.txcosts import COSTS

#: How a cost's verdict reads in its table (lower is better).
_WORDS = {
    "better": "lower: better",
    "worse": "higher: worse",
    "within_noise": "within the noise",
    "spread_unknown": "spread unknown",
    "not_comparable": "not comparable (measured apart)",
}


def is_cost(comparison: dict[str, Any]) -> bool:
    return comparison.get("metric") in COSTS


def _words(c: dict[str, Any]) -> str:
    outcome = str(c.get("outcome") or c.get("verdict"))
    if c.get("verdict") == "spread_unknown" and c.get("zero_runs"):
        return "not tested (zero in some runs)"
    if c.get("verdict") in ("higher", "lower") and not reported(c):
        if not significant(c):
            return "not significant once adjusted"
        return f"{c['verdict']}, by less than {fmt.figure(SMALLEST_CHANGE_PCT)}%"
    return _WORDS.get(outcome, outcome)


def _value(value: Any) -> str:
    return "0" if value == 0 else str(fmt.figure(value) or "—")


def costs_shown(tps: dict[str, Any], costs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The cost comparisons of tps comparison ``tps`` as its page shows them: ``rows`` (each
    cost: name, A, B, change, verdict), ``words`` (the costs worth reporting and what tps did,
    or None) and ``clauses`` (those costs alone, for a line that already gives tps's
    verdict); None without any cost."""
    if not costs:
        return None
    order = list(COSTS)
    rows = [
        {
            "metric": COST_WORDS[c["metric"]][0],
            "a": _value((c.get("a") or {}).get("center")),
            "b": _value((c.get("b") or {}).get("center")),
            "change": fmt.change(c.get("change_pct")) or "—",
            "verdict": str(c.get("outcome") or c.get("verdict")),
            "words": _words(c),
        }
        for c in sorted(costs, key=lambda c: order.index(c["metric"]))
    ]
    return {
        "rows": rows,
        "words": cost_sentence(tps, costs),
        "clauses": ", ".join(cost_clauses(costs)) or None,
    }
