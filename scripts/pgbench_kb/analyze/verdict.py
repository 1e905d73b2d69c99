"""Noise-aware verdicts: is B's throughput different from A's beyond the spread of repeats?

Method (docs/comparisons.md explains the choice): Welch's t-test on the logarithms of the
per-run values. The difference of the mean logs is the logarithm of the ratio of geometric
means; its 95% confidence interval uses Student's t with the Welch–Satterthwaite degrees of
freedom, and exponentiated it is an interval for the ratio B/A. The verdict is ``higher`` or
``lower`` only when that interval excludes 1, ``within_noise`` when it contains 1, and
``spread_unknown`` when either side has fewer than two values (a single run, or a published
median or mean without the runs behind it).

Logarithms make the test about ratios (a 5% change means the same at 100 tps and at 10,000),
and Welch's form does not assume both sides are equally noisy. It works for three runs a side,
where a rank test cannot: with 3 against 3 the smallest two-sided p-value Mann–Whitney can
reach is 0.1.

The t quantile is computed here (no scipy): the regularized incomplete beta function by its
continued fraction, inverted by Newton's method from the normal quantile (bisection as the
safe fallback), accurate to 1e-10.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

CONFIDENCE = 0.95
METHOD = "welch-log-t95"


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """Cumulative distribution of Student's t with ``df`` (real, > 0) degrees of freedom."""
    x = df / (df + t * t)
    tail = 0.5 * betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t > 0 else tail


def t_pdf(t: float, df: float) -> float:
    """Density of Student's t."""
    log = (
        math.lgamma((df + 1) / 2)
        - math.lgamma(df / 2)
        - 0.5 * math.log(df * math.pi)
        - (df + 1) / 2 * math.log1p(t * t / df)
    )
    return math.exp(log)


@functools.lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t (0 < p < 1): Newton's method on ``t_cdf`` from the
    normal quantile, with bisection as the safe fallback."""
    if not 0.0 < p < 1.0 or not df > 0:
        raise ValueError("need 0 < p < 1 and df > 0")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    t = statistics.NormalDist().inv_cdf(p)
    for _ in range(50):
        step = (t_cdf(t, df) - p) / t_pdf(t, df)
        t -= step
        if t <= 0 or not math.isfinite(t):
            break
        if abs(step) < 1e-12 * max(1.0, t):
            return t
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return (lo + hi) / 2.0


@dataclass(frozen=True)
class Test:
    """The outcome of comparing B against A."""

    verdict: str
    ci_low: float | None
    ci_high: float | None
    df: float | None
    method: str = METHOD
    #: The difference of the mean logarithms (B − A) and its standard error: what a pooled
    #: estimate over sessions (``analyze/pooling.py``) and the family-wise adjustment
    #: (``analyze/multiplicity.py``) read.
    log_ratio: float | None = None
    se_log: float | None = None

    def as_dict(self) -> dict[str, object]:
        ci = None
        if self.ci_low is not None and self.ci_high is not None:
            ci = [round(self.ci_low, 4), round(self.ci_high, 4)]
        out: dict[str, object] = {
            "method": self.method if ci is not None else None,
            "ci95_ratio": ci,
            "df": None if self.df is None else round(self.df, 2),
        }
        if ci is not None and self.log_ratio is not None and self.se_log is not None:
            out["log_ratio"] = round(self.log_ratio, 8)
            out["se_log"] = round(self.se_log, 8)
            out["p"] = p_value(self.log_ratio, self.se_log, self.df)
        return out


def p_value(estimate: float, se: float, df: float | None) -> float:
    """Two-sided p of ``estimate / se`` against Student's t with ``df`` degrees of freedom (the
    test whose 95% interval the verdict reads: p < 0.05 exactly when that interval excludes
    the null). With no spread at all (``se`` 0) a difference is certain (p 0) and no
    difference is p 1. Rounded to 6 significant digits."""
    if se <= 0.0 or df is None:
        return 0.0 if estimate != 0.0 else 1.0
    t = abs(estimate) / se
    p = 2.0 * (1.0 - t_cdf(t, df)) if t < 1.0 else 2.0 * t_cdf(-t, df)
    return float(f"{min(1.0, max(0.0, p)):.6g}")


def _mean_var(logs: Sequence[float]) -> tuple[float, float]:
    n = len(logs)
    mean = sum(logs) / n
    var = sum((v - mean) ** 2 for v in logs) / (n - 1)
    return mean, var


def welch_log(a: Sequence[float] | None, b: Sequence[float] | None) -> Test:
    """Compare the values of B against A; ``spread_unknown`` when a side has < 2 values."""
    if not a or not b or len(a) < 2 or len(b) < 2 or min(*a, *b) <= 0:
        return Test("spread_unknown", None, None, None)
    la = [math.log(v) for v in a]
    lb = [math.log(v) for v in b]
    ma, va = _mean_var(la)
    mb, vb = _mean_var(lb)
    sa, sb = va / len(la), vb / len(lb)
    se2 = sa + sb
    diff = mb - ma
    if se2 <= 0.0:
        # Both sides repeat one value exactly: no spread at all, the difference is the effect.
        verdict = "higher" if diff > 0 else "lower" if diff < 0 else "within_noise"
        return Test(verdict, math.exp(diff), math.exp(diff), None, METHOD, diff, 0.0)
    df = (
        se2
        * se2
        / (
            (sa * sa / (len(la) - 1) if sa > 0 else 0.0)
            + (sb * sb / (len(lb) - 1) if sb > 0 else 0.0)
        )
    )
    # df rounded to 0.01 (the quantile moves by far less than the figures show) so that the
    # quantile is computed once per distinct value.
    half = t_quantile(0.5 + CONFIDENCE / 2.0, max(round(df, 2), 0.01)) * math.sqrt(se2)
    low, high = math.exp(diff - half), math.exp(diff + half)
    verdict = "higher" if low > 1.0 else "lower" if high < 1.0 else "within_noise"
    return Test(verdict, low, high, df, METHOD, diff, math.sqrt(se2))
