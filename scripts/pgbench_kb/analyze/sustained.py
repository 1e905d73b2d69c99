"""The TPC-E sustained-throughput rules on a throughput series: the throughput over every
10-minute window, sliding by 1 minute, within ±20% of the reported throughput, and over every
1-hour window, sliding by 10 minutes, within ±2%. A series shorter than a window is
``too_short_to_judge`` for that rule. A window that cuts an interval counts that interval's
transactions pro rata.
"""

from __future__ import annotations

import bisect
from typing import Any

from pgbench_kb.analyze.runseries import Series, rounded

#: The TPC-E sustained-throughput rules: window length, slide and tolerance around the
#: reported throughput.
SUSTAINED_RULES: tuple[tuple[str, int, int, float], ...] = (
    ("10min", 600, 60, 20.0),
    ("1h", 3600, 600, 2.0),
)
#: Seconds within which a window boundary counts as reaching the end of the series (progress
#: times are printed with one decimal).
_EPS_S = 1e-6


def _cumulative(series: Series) -> tuple[list[float], list[float], list[int]]:
    """Boundaries, transactions done by each boundary, and unknown intervals before it."""
    bounds = [series.start_s, *series.ends_s]
    done = [0.0]
    unknown = [0]
    for i, value in enumerate(series.tps):
        length = bounds[i + 1] - bounds[i]
        done.append(done[-1] + (value or 0.0) * length)
        unknown.append(unknown[-1] + (value is None))
    return bounds, done, unknown


def _done_at(t: float, bounds: list[float], done: list[float]) -> float:
    """Transactions done by time ``t``, the rate inside an interval taken as even."""
    k = bisect.bisect_right(bounds, t + _EPS_S) - 1
    k = min(max(k, 0), len(bounds) - 1)
    if k == len(bounds) - 1 or abs(t - bounds[k]) <= _EPS_S:
        return done[k]
    share = (t - bounds[k]) / (bounds[k + 1] - bounds[k])
    return done[k] + share * (done[k + 1] - done[k])


def _touches_unknown(a: float, b: float, bounds: list[float], unknown: list[int]) -> bool:
    first = max(bisect.bisect_right(bounds, a + _EPS_S) - 1, 0)
    last = min(bisect.bisect_left(bounds, b - _EPS_S), len(bounds) - 1)
    return unknown[last] - unknown[first] > 0


def window_throughputs(series: Series, window_s: float, slide_s: float) -> list[dict[str, Any]]:
    """Throughput of every window of ``window_s`` seconds, starting at the series' start and
    every ``slide_s`` seconds after, that fits inside the series. A window that cuts an
    interval counts that interval's transactions pro rata; a window over an interval of
    unknown tps has ``tps`` None."""
    if series.span_s + _EPS_S < window_s:
        return []
    bounds, done, unknown = _cumulative(series)
    windows = []
    k = 0
    while True:
        a = series.start_s + k * slide_s
        b = a + window_s
        if b > bounds[-1] + _EPS_S:
            break
        tps = (
            None
            if _touches_unknown(a, b, bounds, unknown)
            else (_done_at(b, bounds, done) - _done_at(a, bounds, done)) / window_s
        )
        windows.append({"start_s": rounded(a), "end_s": rounded(b), "tps": tps})
        k += 1
    return windows


def sustained_rule(
    series: Series,
    reference_tps: float | None,
    *,
    window_s: float,
    slide_s: float,
    tolerance_pct: float,
) -> dict[str, Any]:
    """One TPC-E sustained-throughput rule: every window within ±``tolerance_pct`` of the
    reference. ``verdict`` is ``holds``, ``fails``, ``too_short_to_judge`` (the series is
    shorter than one window) or ``cannot_judge`` (no reference, or no window with known tps).
    """
    result: dict[str, Any] = {
        "window_s": window_s,
        "slide_s": slide_s,
        "tolerance_pct": tolerance_pct,
        "windows": 0,
        "windows_unknown": 0,
        "failing": 0,
        "min_tps": None,
        "max_tps": None,
        "worst": None,
    }
    windows = window_throughputs(series, window_s, slide_s)
    if not windows:
        return {**result, "verdict": "too_short_to_judge"}
    known = [w for w in windows if w["tps"] is not None]
    result["windows"] = len(windows)
    result["windows_unknown"] = len(windows) - len(known)
    if not known or not reference_tps or reference_tps <= 0:
        return {**result, "verdict": "cannot_judge"}
    for w in known:
        w["deviation_pct"] = 100 * (w["tps"] / reference_tps - 1)
    worst = max(known, key=lambda w: abs(w["deviation_pct"]))
    failing = [w for w in known if abs(w["deviation_pct"]) > tolerance_pct]
    result.update(
        {
            "failing": len(failing),
            "min_tps": rounded(min(w["tps"] for w in known)),
            "max_tps": rounded(max(w["tps"] for w in known)),
            "worst": {
                "start_s": worst["start_s"],
                "end_s": worst["end_s"],
                "tps": rounded(worst["tps"]),
                "deviation_pct": rounded(worst["deviation_pct"]),
            },
            "verdict": "fails" if failing else "holds",
        }
    )
    return result


def sustained_rules(series: Series, reference_tps: float | None) -> dict[str, Any]:
    """Both TPC-E sustained-throughput rules, by name (``10min``, ``1h``)."""
    return {
        name: sustained_rule(
            series, reference_tps, window_s=window, slide_s=slide, tolerance_pct=tolerance
        )
        for name, window, slide, tolerance in SUSTAINED_RULES
    }


def series_mean_tps(series: Series) -> float | None:
    """Transactions over the whole series divided by its span (None with unknown intervals)."""
    if not series.span_s or any(v is None for v in series.tps):
        return None
    _bounds, done, _unknown = _cumulative(series)
    return done[-1] / series.span_s
