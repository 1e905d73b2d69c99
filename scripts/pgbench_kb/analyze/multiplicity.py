"""Family-wise adjustment: the tests of one question on one machine and one metric, adjusted
together by Holm's step-down method (``family`` on each decided comparison and pooled
estimate).

A question is the comparison page a comparison is filed on (``analyze/questions.py``: RAID
level, durability, commit_delay, versions, checkpoints, memory, clients…). Its tests on one
machine and metric are: each pooled estimate (``analyze/pooling.py``) for a pair measured in
several sessions, and each other decided comparison (``higher``, ``lower``, ``within_noise``)
on its own. A comparison that is evidence of a pooled estimate is not a test of its own: its
``family`` is its estimate's, with ``pooled`` naming it.

Holm (Scandinavian Journal of Statistics 6:65, 1979): order the m two-sided p-values
p₍₁₎ ≤ … ≤ p₍ₘ₎; reject while p₍ᵢ₎ ≤ α/(m − i + 1), stop at the first that is not. It holds
the family-wise error rate at α = 0.05 whatever the dependence between the tests. ``p_holm``
is the adjusted p-value, maxⱼ≤ᵢ min(1, (m − j + 1)·p₍ⱼ₎). The per-comparison ``verdict``
stays the unadjusted one; findings and answers rest only on ``significant`` tests.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from pgbench_kb.analyze.questions import family_of

ALPHA = 0.05
DECIDED = ("higher", "lower", "within_noise")


def holm(p_values: Sequence[float], alpha: float = ALPHA) -> list[tuple[bool, float]]:
    """Holm's step-down method: for each p-value (in the order given), whether it is rejected
    at family-wise level ``alpha`` and its adjusted p-value."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out: list[tuple[bool, float]] = [(False, 1.0)] * m
    running, rejecting = 0.0, True
    for rank, i in enumerate(order):
        factor = m - rank
        running = max(running, min(1.0, factor * p_values[i]))
        rejecting = rejecting and p_values[i] <= alpha / factor
        out[i] = (rejecting, float(f"{running:.6g}"))
    return out


def question_of(c: dict[str, Any]) -> str:
    """The question (comparison page) a comparison or pooled estimate answers."""
    return family_of(str(c.get("factor")), c.get("factor_family"))


def adjust(comparisons: list[dict[str, Any]], pooled: list[dict[str, Any]]) -> None:
    """Set ``family`` on every decided comparison and pooled estimate (in place): ``{"id",
    "size", "method": "holm", "significant", "p", "p_holm"}``, plus ``pooled`` (its estimate's
    id) on a comparison that is a pooled estimate's evidence. Undecided comparisons get
    ``family: null``."""
    evidence = {cid: p for p in pooled for cid in p["comparisons"]}
    tests: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in pooled:
        tests[_family_id(p)].append(p)
    for c in comparisons:
        c["family"] = None
        if c["id"] in evidence or c.get("verdict") not in DECIDED:
            continue
        if (c.get("test") or {}).get("p") is None:
            continue
        tests[_family_id(c)].append(c)
    for family_id, members in tests.items():
        for member, (significant, adjusted) in zip(
            members,
            holm([float(m["p"] if "p" in m else m["test"]["p"]) for m in members]),
            strict=True,
        ):
            decided = member.get("verdict") in ("higher", "lower")
            member["family"] = {
                "id": family_id,
                "size": len(members),
                "method": "holm",
                "significant": significant and decided,
                "p": float(member["p"] if "p" in member else member["test"]["p"]),
                "p_holm": adjusted,
            }
    by_id = {p["id"]: p for p in pooled}
    for c in comparisons:
        estimate = evidence.get(c["id"])
        if estimate is not None:
            c["family"] = {**by_id[estimate["id"]]["family"], "pooled": estimate["id"]}


def _family_id(c: dict[str, Any]) -> str:
    return f"{question_of(c)} {c['machine']} {c.get('metric', 'tps')}"


def significant(c: dict[str, Any]) -> bool:
    """Whether a comparison (or pooled estimate) is significant after the adjustment."""
    return bool((c.get("family") or {}).get("significant"))
