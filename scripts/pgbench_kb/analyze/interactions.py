"""Interactions: when one factor's effect changes sign or size with another factor.

Two comparisons of the same factor F1 (same values A → B) whose groups differ from each other
in a second factor F2 — four groups in a 2×2 square — show F1's effect at two values of F2.
They are reported when:

* the two effects point in opposite directions (``kind: "sign"``), or
* they differ beyond the noise (``kind: "size"``): the 95% interval of the ratio of the two
  ratios, from Welch's t on the logarithms of all four groups (the interaction contrast),
  excludes 1.

When a cell has no spread (``verdict: "spread_unknown"``) only a change of sign is reported,
and marked so. All four numbers are always given.
"""

from __future__ import annotations

import functools
import hashlib
import math
import statistics
from collections import defaultdict
from typing import Any

from pgbench_kb.analyze.describe import value_text
from pgbench_kb.analyze.groups import Group
from pgbench_kb.analyze.verdict import CONFIDENCE, METHOD, t_quantile
from pgbench_kb.numbers import figure


def _value_of(c: dict[str, Any], group: str) -> Any:
    return c["a"]["value"] if c["a"]["group"] == group else c["b"]["value"]


def _ends(c: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """A comparison's two groups, each → (the other group, the compared value at this one),
    looked up once per comparison rather than in the search's innermost loops."""
    a, b = c["a"], c["b"]
    return {a["group"]: (b["group"], a["value"]), b["group"]: (a["group"], b["value"])}


@functools.cache
def _normal_quantile(confidence: float) -> float:
    return statistics.NormalDist().inv_cdf(0.5 + confidence / 2.0)


def contrast(
    cells: list[Group], confidence: float = CONFIDENCE, screen: bool = False
) -> dict[str, Any]:
    """Welch interval for (log B2 − log A2) − (log B1 − log A1); cells = [A1, B1, A2, B2]
    (``confidence``: two-sided level of the interval, 95% unless a grid of several contrasts
    asks for a wider one). ``screen``: when the estimate is within the normal quantile's
    reach (Student's quantile is never smaller), say ``within_noise`` without the interval —
    for callers that drop such contrasts."""
    if any(not g.values or len(g.values) < 2 or min(g.values) <= 0 for g in cells):
        return {"verdict": "spread_unknown", "method": None, "ci95_ratio": None, "df": None}
    means, parts, dfs = [], [], []
    for g in cells:
        mean, var, n = g.log_stats
        means.append(mean)
        parts.append(var / n)
        dfs.append(n - 1)
    estimate = (means[3] - means[2]) - (means[1] - means[0])
    se2 = sum(parts)
    if se2 <= 0:
        ratio = math.exp(estimate)
        verdict = "differs" if estimate != 0 else "within_noise"
        return {"verdict": verdict, "method": METHOD, "ci95_ratio": [ratio, ratio], "df": None}
    if screen and abs(estimate) <= _normal_quantile(confidence) * math.sqrt(se2):
        return {"verdict": "within_noise", "method": None, "ci95_ratio": None, "df": None}
    df = se2 * se2 / sum(p * p / d for p, d in zip(parts, dfs, strict=True) if p > 0)
    # A widened interval (a grid's) takes df rounded down to a half: a little wider, never
    # narrower, and the quantile is computed once per distinct value instead of per contrast.
    used = round(df, 2) if confidence == CONFIDENCE else math.floor(df * 2) / 2
    half = t_quantile(0.5 + confidence / 2.0, max(used, 0.01)) * math.sqrt(se2)
    low, high = math.exp(estimate - half), math.exp(estimate + half)
    return {
        "verdict": "differs" if low > 1 or high < 1 else "within_noise",
        "method": METHOD,
        "ci95_ratio": [round(low, 4), round(high, 4)],
        "df": round(df, 2),
    }


def _effect_text(c: dict[str, Any]) -> str:
    change = c["change_pct"]
    word = "rose" if change >= 0 else "fell"
    return (
        f"tps {word} {abs(change):.1f}% ({figure(c['a']['center'])} → {figure(c['b']['center'])})"
    )


def _factor_values(c: dict[str, Any]) -> str:
    a, b = c["a"], c["b"]
    if isinstance(a["value"], dict):
        return f"{a['summary']} → {b['summary']}"
    return f"{value_text(a['value'], c['factor'])} → {value_text(b['value'], c['factor'])}"


def _moderator(d: dict[str, Any], group: str) -> str:
    side = d["a"] if d["a"]["group"] == group else d["b"]
    if isinstance(side["value"], dict):
        return side["summary"]
    return value_text(side["value"], d["factor"])


def _tested(
    c1: dict[str, Any], c2: dict[str, Any], by_id: dict[str, Group]
) -> tuple[list[Group], dict[str, Any], bool] | None:
    """The square's four cells, its interaction contrast and whether the effect changes
    sign; ``None`` when the square is not reported (no ratio, or within the noise)."""
    r1, r2 = c1["ratio"], c2["ratio"]
    if not r1 or not r2:
        return None
    sign = (r1 > 1) != (r2 > 1) and r1 != 1 and r2 != 1
    cells = [by_id[c1["a"]["group"]], by_id[c1["b"]["group"]]]
    cells += [by_id[c2["a"]["group"]], by_id[c2["b"]["group"]]]
    test = contrast(cells, screen=True)
    if test["verdict"] == "within_noise" or (test["verdict"] == "spread_unknown" and not sign):
        return None
    return cells, test, sign


def _entry(
    c1: dict[str, Any],
    c2: dict[str, Any],
    d1: dict[str, Any],
    d2: dict[str, Any],
    cells: list[Group],
    test: dict[str, Any],
    sign: bool,
) -> dict[str, Any]:
    """The reported interaction of a square ``_tested`` kept."""
    r1, r2 = c1["ratio"], c2["ratio"]
    f1, f2 = c1["factor"], d1["factor"]
    at1, at2 = _value_of(d1, c1["a"]["group"]), _value_of(d1, c2["a"]["group"])
    machine = c1["machine"]
    ids = sorted(g.id for g in cells)
    digest = hashlib.sha1("|".join([f1, f2, *ids]).encode()).hexdigest()[:10]
    spread_note = " (spread not published)" if test["verdict"] == "spread_unknown" else ""
    text = (
        f"On {machine}, the effect of {c1['label']} ({_factor_values(c1)}) depends on "
        f"{d1['label']}: with {_moderator(d1, c1['a']['group'])}, {_effect_text(c1)}; "
        f"with {_moderator(d1, c2['a']['group'])}, "
        f"{_effect_text(c2)}{spread_note}."
    )
    return {
        "id": f"interaction-{digest}",
        "factor": f1,
        "with": f2,
        "factors": [f1, f2],
        "machine": machine,
        "kind": "sign" if sign else "size",
        "cells": [
            {
                "group": g.id,
                "center": g.center,
                "n": g.n,
                "statistic": g.statistic,
                "values": {f1: _value_of(c, g.id), f2: _value_of(d, g.id)},
            }
            for g, c, d in zip(cells, (c1, c1, c2, c2), (d1, d2, d1, d2), strict=True)
        ],
        "effects": [
            {
                "at": {f2: at},
                "comparison": c["id"],
                "ratio": c["ratio"],
                "change_pct": c["change_pct"],
                "verdict": c["verdict"],
            }
            for at, c in ((at1, c1), (at2, c2))
        ],
        "ratio_of_ratios": round(r2 / r1, 4),
        "verdict": test["verdict"],
        "test": {k: test[k] for k in ("method", "ci95_ratio", "df")},
        "comparisons": [c1["id"], c2["id"], d1["id"], d2["id"]],
        "text": text,
    }


def find_interactions(
    groups: list[Group], comparisons: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every 2×2 square of comparisons where the first factor's effect changes with the
    second, reported once (the factor whose effect changes sign is named first)."""
    by_id = {g.id: g for g in groups}
    index: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_factor: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for c in comparisons:
        if c["kind"] == "pair":
            for side in ("a", "b"):
                index[c[side]["group"]].append(c)
                by_factor[(c[side]["group"], c["factor"])].append(c)
    ends = {id(c): _ends(c) for cs in index.values() for c in cs}
    found: dict[frozenset[str], tuple[tuple[Any, ...], tuple[Any, ...]]] = {}
    seen: set[tuple[frozenset[str], str]] = set()
    for c1 in comparisons:
        if c1["kind"] != "pair":
            continue
        f1 = c1["factor"]
        a1, b1 = c1["a"]["group"], c1["b"]["group"]
        value_a1, value_b1 = c1["a"]["value"], c1["b"]["value"]
        for d1 in index[a1]:
            if d1["factor"] == f1:
                continue
            ends_d1 = ends[id(d1)]
            a2, d1_at_a1 = ends_d1[a1]
            d1_at_a2 = ends_d1[a2][1]
            for c2 in by_factor[(a2, f1)]:
                if c2 is c1:
                    continue
                ends_c2 = ends[id(c2)]
                b2, c2_at_a2 = ends_c2[a2]
                if c2_at_a2 != value_a1 or ends_c2[b2][1] != value_b1:
                    continue
                for d2 in by_factor[(b1, d1["factor"])]:
                    ends_d2 = ends[id(d2)]
                    d2_other, d2_at_b1 = ends_d2[b1]
                    if d2_other == b2 and d2_at_b1 == d1_at_a1 and ends_d2[b2][1] == d1_at_a2:
                        square = frozenset((a1, b1, a2, b2))
                        if (square, f1) in seen:
                            continue
                        seen.add((square, f1))
                        # The moderator's A value first (its baseline); each effect is
                        # oriented like c1 (A→B of the first factor).
                        if d1["a"]["group"] == a1:
                            first, second = c1, _aligned(c2, a2)
                        else:
                            first, second = _aligned(c2, a2), c1
                        tested = _tested(first, second, by_id)
                        if tested is None:
                            continue
                        rank = _rank(first, second, d1)
                        kept = found.get(square)
                        if kept is None or rank < kept[0]:
                            found[square] = (rank, (first, second, d1, d2, *tested))
    # Only each square's preferred reading is written out.
    entries = [_entry(*reading) for _, reading in found.values()]
    return sorted(entries, key=lambda i: (i["machine"], i["factor"], i["id"]))


def _aligned(c: dict[str, Any], a_group: str) -> dict[str, Any]:
    """``c`` with ``a_group`` on side A (ratio and change inverted when it was on side B)."""
    if c["a"]["group"] == a_group:
        return c
    ratio = 1 / c["ratio"] if c["ratio"] else None
    return {
        **c,
        "a": c["b"],
        "b": c["a"],
        "ratio": None if ratio is None else round(ratio, 4),
        "change_pct": None if ratio is None else round((ratio - 1) * 100, 2),
    }


def _rank(c1: dict[str, Any], c2: dict[str, Any], d1: dict[str, Any]) -> tuple[Any, ...]:
    """One report per square, the reading of lowest rank (the first found among equals): the
    one where the first factor's effect (c1, c2) changes sign, then the one whose ratios are
    both taken from A with the lower centre, then by the factors' names (``d1``: the
    moderator) and the first cell's group."""
    flips = (c1["ratio"] > 1) != (c2["ratio"] > 1)
    return (not flips, c1["factor"], d1["factor"], c1["a"]["group"])
