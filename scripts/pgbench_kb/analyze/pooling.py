"""Pooled estimates: one change, with its 95% interval, for a pair of configurations compared
inside several bench sessions of one machine (``pooled`` of the Comparisons JSON).

Each session's comparison is a study: its estimate is the difference of the mean logarithms
(B − A, ``test.log_ratio``) and its variance the square of Welch's standard error
(``test.se_log``). The sessions are pooled by a random-effects meta-analysis suited to few
studies (IntHout, Ioannidis & Borm, "The Hartung-Knapp-Sidik-Jonkman method for random effects
meta-analysis is straightforward and considerably outperforms the standard DerSimonian-Laird
method", BMC Medical Research Methodology 14:25, 2014):

* τ², the variance of the true change from session to session, by DerSimonian and Laird
  (Controlled Clinical Trials 7:177, 1986): with weights wᵢ = 1/vᵢ, the fixed-effect mean
  ȳ = Σwᵢyᵢ/Σwᵢ, Q = Σwᵢ(yᵢ − ȳ)² and C = Σwᵢ − Σwᵢ²/Σwᵢ, τ² = max(0, (Q − (k − 1))/C);
* the estimate μ = Σw*ᵢyᵢ/Σw*ᵢ with w*ᵢ = 1/(vᵢ + τ²);
* its variance by Hartung and Knapp (Statistics in Medicine 20:3875, 2001; Sidik & Jonkman,
  2002): q = Σw*ᵢ(yᵢ − μ)²/(k − 1), Var(μ) = q/Σw*ᵢ, and the interval μ ± t₀.₉₇₅,ₖ₋₁·√Var(μ).

With two sessions a pair's own heterogeneity rests on one degree of freedom (DL's τ² is then
0 or a single squared difference, and HK's t with one degree of freedom is 12.7). So with
k = 2 the machine's between-session variance (``sessions.machine_between``: the one-way
random-effects estimate that ``analyze/sessions.py`` pools over every configuration of the
machine measured in several sessions with the same design) stands in for τ², and the interval
is μ ± t·√(1/Σw*ᵢ) with t at the Welch-Satterthwaite degrees of freedom of that variance (each
session's Welch df for its own part, the machine estimate's df for τ²'s), capped at the
machine estimate's df (a stand-in is known no better than it was measured). ``method`` says
which was used.
Everything is on the log scale; ``change_pct`` and ``ci95_pct`` are exponentiated back.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pgbench_kb.analyze.verdict import CONFIDENCE, p_value, t_quantile

#: ``method`` of a pooled estimate, by how τ² was found.
METHOD_DL_HK = "random-effects: DerSimonian-Laird tau2, Hartung-Knapp interval, t with k-1 df"
METHOD_MACHINE_TAU2 = (
    "random-effects: tau2 = the machine's between-session variance ({df} df, two sessions "
    "cannot estimate the pair's own), t with Welch-Satterthwaite df, at most {df}"
)
METHOD_FIXED = "fixed-effect: no heterogeneity known and no spread left to pool"


@dataclass(frozen=True)
class Pooled:
    """A random-effects estimate on the log scale."""

    estimate: float
    se: float
    df: float
    tau2: float
    low: float
    high: float
    method: str

    @property
    def p(self) -> float:
        return p_value(self.estimate, self.se, self.df)


def dl_hartung_knapp(y: Sequence[float], v: Sequence[float]) -> Pooled:
    """DerSimonian-Laird τ² and the Hartung-Knapp interval for k ≥ 2 estimates ``y`` with
    within-study variances ``v`` (all > 0); see the module's docstring."""
    k = len(y)
    if k < 2 or len(v) != k or min(v) <= 0:
        raise ValueError("need two or more estimates, each with a variance > 0")
    w = [1.0 / x for x in v]
    sw = math.fsum(w)
    fixed = math.fsum(wi * yi for wi, yi in zip(w, y, strict=True)) / sw
    q = math.fsum(wi * (yi - fixed) ** 2 for wi, yi in zip(w, y, strict=True))
    c = sw - math.fsum(wi * wi for wi in w) / sw
    tau2 = max(0.0, (q - (k - 1)) / c)
    ws = [1.0 / (x + tau2) for x in v]
    sws = math.fsum(ws)
    mu = math.fsum(wi * yi for wi, yi in zip(ws, y, strict=True)) / sws
    qhk = math.fsum(wi * (yi - mu) ** 2 for wi, yi in zip(ws, y, strict=True)) / (k - 1)
    se = math.sqrt(qhk / sws)
    half = t_quantile(0.5 + CONFIDENCE / 2.0, k - 1) * se
    return Pooled(mu, se, k - 1, tau2, mu - half, mu + half, METHOD_DL_HK)


def known_tau2(
    y: Sequence[float],
    v: Sequence[float],
    tau2: float,
    df: float,
    df_within: Sequence[float | None] | None = None,
) -> Pooled:
    """The random-effects estimate with τ² given (estimated elsewhere with ``df`` degrees of
    freedom): weights w*ᵢ = 1/(vᵢ + τ²), Var(μ) = 1/Σw*ᵢ = Σaᵢ²(vᵢ + τ²) with aᵢ = w*ᵢ/Σw*ᵢ.
    The t quantile takes ``df``, or with ``df_within`` (each vᵢ's own degrees of freedom, the
    sessions' Welch df) the Welch-Satterthwaite degrees of freedom of that sum — the terms
    aᵢ²vᵢ with dfᵢ and (Σaᵢ²)τ² with ``df`` (a term without df is taken as known) — but never
    more than ``df``: τ² is a stand-in for the pair's heterogeneity, measured no better than
    that."""
    if len(y) < 2 or len(v) != len(y) or min(x + tau2 for x in v) <= 0 or df <= 0:
        raise ValueError("need two or more estimates and a positive variance for each")
    ws = [1.0 / (x + tau2) for x in v]
    sws = math.fsum(ws)
    mu = math.fsum(wi * yi for wi, yi in zip(ws, y, strict=True)) / sws
    se = math.sqrt(1.0 / sws)
    used = df
    if df_within is not None:
        shares = [wi / sws for wi in ws]
        terms = [(a * a * x, d) for a, x, d in zip(shares, v, df_within, strict=True)]
        terms.append((math.fsum(a * a for a in shares) * tau2, df))
        spread = math.fsum(t * t / d for t, d in terms if d and d > 0 and t > 0)
        if spread > 0:
            # Never more than τ²'s own: it stands in for the pair's heterogeneity, which no
            # more than those degrees of freedom have measured.
            used = min(df, (1.0 / sws) ** 2 / spread)
    half = t_quantile(0.5 + CONFIDENCE / 2.0, max(round(used, 2), 0.01)) * se
    method = METHOD_MACHINE_TAU2.format(df=f"{df:g}")
    return Pooled(mu, se, used, tau2, mu - half, mu + half, method)


def _sides(c: dict[str, Any], configuration: dict[str, str] | None) -> tuple[str, str]:
    """A comparison's two sides as text: each group's configuration, or each side's value."""
    if configuration is not None:
        return str(configuration.get(c["a"]["group"])), str(configuration.get(c["b"]["group"]))
    a, b = (json.dumps(c[s]["value"], sort_keys=True, default=str) for s in ("a", "b"))
    return a, b


def _pair_key(c: dict[str, Any], configuration: dict[str, str] | None) -> str:
    """The same pair of configurations on the same machine, whatever session and whichever
    way round: each side's configuration (``configuration``: group id → machine and every
    factor, as ``sessions.configuration`` gives it), the metric and the kind; without
    ``configuration``, the machine, factor, both sides' values and the fields held equal.

    Either way round, because a pair whose values have no natural order is oriented by its
    centres (``pairs.orient``): when the difference is small its sides swap from one session
    to the next, and keyed by order those sessions would never pool (the flush-tracer's
    native and traced arms did exactly that)."""
    rest = [] if configuration is not None else [c["machine"], c["factor"], c.get("held_equal")]
    sides = sorted(_sides(c, configuration))
    return json.dumps(
        [*rest, sides, c.get("metric", "tps"), c.get("kind")], sort_keys=True, default=str
    )


def _as_first(
    c: dict[str, Any], first: dict[str, Any], configuration: dict[str, str] | None
) -> dict[str, Any]:
    """``c`` read the way ``first`` reads: when its sides are the other way round, A and B
    swapped, its log ratio negated and its change turned (B over A becomes A over B)."""
    if _sides(c, configuration) == _sides(first, configuration):
        return c
    test = {**c["test"], "log_ratio": -float(c["test"]["log_ratio"])}
    change = round((100 / (100 + float(c["change_pct"])) - 1) * 100, 2)
    return {**c, "a": c["b"], "b": c["a"], "test": test, "change_pct": change}


def _inside_bench_session(c: dict[str, Any]) -> bool:
    sessions = c.get("sessions") or {}
    return (
        sessions.get("shared") is True
        and str(sessions.get("a", "")).startswith("bench ")
        and c.get("verdict") in ("higher", "lower", "within_noise")
        and (c.get("test") or {}).get("se_log") is not None
    )


def _pool(members: list[dict[str, Any]]) -> Pooled | None:
    y = [float(c["test"]["log_ratio"]) for c in members]
    v = [float(c["test"]["se_log"]) ** 2 for c in members]
    if len(members) >= 3 and min(v) > 0:
        return dl_hartung_knapp(y, v)
    between = [(c.get("sessions") or {}).get("machine_between") for c in members]
    known = [b for b in between if b]
    if known:
        best = max(known, key=lambda b: b["df"])
        if best["df"] > 0 and min(x + best["variance_log"] for x in v) > 0:
            return known_tau2(
                y,
                v,
                float(best["variance_log"]),
                float(best["df"]),
                [c["test"].get("df") for c in members],
            )
    return None


def pooled_of(
    comparisons: list[dict[str, Any]], configuration: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """One pooled entry per machine and pair of configurations compared inside two or more
    bench sessions (the comparisons with a spread; ``comparisons`` lists them, one per
    session), sorted by machine, factor, metric and id. ``configuration``: each group's
    configuration as a string (machine and every factor), so that only the same two
    configurations pool."""
    by_pair: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in comparisons:
        if _inside_bench_session(c):
            by_pair[_pair_key(c, configuration)].append(c)
    out = []
    for members in by_pair.values():
        sessions = {c["sessions"]["a"] for c in members}
        if len(sessions) < 2:
            continue
        members.sort(key=lambda c: c["sessions"]["a"])
        members = [_as_first(c, members[0], configuration) for c in members]
        found = _pool(members)
        if found is None:
            continue
        first = members[0]
        ids = [c["id"] for c in members]
        low, high = math.exp(found.low), math.exp(found.high)
        verdict = "higher" if low > 1.0 else "lower" if high < 1.0 else "within_noise"
        out.append(
            {
                "id": "pooled-" + hashlib.sha256(" ".join(ids).encode()).hexdigest()[:10],
                "machine": first["machine"],
                "factor": first["factor"],
                "factor_family": first.get("factor_family"),
                "metric": first.get("metric", "tps"),
                "a": first["a"]["value"],
                "b": first["b"]["value"],
                "label": first.get("label"),
                "held_equal": first.get("held_equal"),
                "sessions": len(sessions),
                "comparisons": ids,
                "change_pct": round((math.exp(found.estimate) - 1) * 100, 2),
                "ci95_pct": [round((low - 1) * 100, 2), round((high - 1) * 100, 2)],
                "method": found.method,
                "verdict": verdict,
                "log_ratio": round(found.estimate, 8),
                "se_log": round(found.se, 8),
                "df": round(found.df, 2),
                "tau2_log": round(found.tau2, 8),
                "p": found.p,
                "changes_pct": [c["change_pct"] for c in members],
                "better_when": first.get("better_when"),
            }
        )
    return sorted(out, key=lambda e: (e["machine"], e["factor"], e["metric"], e["id"]))
