"""Stability over time: how steady a run's throughput was, interval by interval.

Each run that has a throughput series gets one entry in the knowledge's ``stability`` list. A
series comes from pgbench's progress reports (``-P``, kept in ``results.progress`` or in the raw
output that ``results.progress.raw_path`` names) or from aggregate logs
(``--aggregate-interval``) kept under ``data/raw/`` with the run. For each series:

* **per-interval spread**: how many intervals, their median, mean, minimum, maximum, standard
  deviation and coefficient of variation of tps (and the median and maximum of the interval
  latency when the series has it);
* **stalls**: an interval is *low* when its tps is below ``STALL_SHARE`` (50%) of the
  series' median; consecutive low intervals are one stall. The first and the last interval are
  never part of a stall: the first holds the connections' start and the last may be cut short,
  so a low one there is listed as an ``edge_dips`` position instead;
* **checkpoints**: when the run records their times (``results.checkpoints``, from the
  harness's server log), each stall of the progress series says whether a checkpoint was
  running during it (``during_checkpoint``): at the same time, never "caused by". Otherwise
  the run's counters (``server_stats.checkpoints_timed`` and ``checkpoints_requested``,
  deltas over the run) say only how many happened, and the entry says whether the stall count
  is consistent with that count, never which stall a checkpoint caused;
* **the TPC-E sustained-throughput rules**: the throughput over every 10-minute window,
  sliding by 1 minute, within ±20% of the reported throughput, and over every 1-hour window,
  sliding by 10 minutes, within ±2%. A series shorter than a window is ``too_short_to_judge``
  for that rule.

Runs with per-transaction latency percentiles also get the weak TPC-C test: the 90th
percentile is above the average latency (it is not for a distribution with a heavy low tail,
which points at a broken measurement).

Everything here is a pure function of the run dicts, except ``read_series`` which reads raw
files under the root.
"""

from __future__ import annotations

import bisect
import gzip
import io
import itertools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pgbench_kb.errors import ParseError, RunFileError
from pgbench_kb.parse import parse_text
from pgbench_kb.runs.build import SERVER_STATS
from pgbench_kb.runs.runfile import (
    contributed_path,
    load_yaml_text,
    read_bytes_bounded,
    read_stream_bounded,
)

#: An interval below this share of the series' median tps is low; consecutive low intervals
#: form one stall.
STALL_SHARE = 0.5
#: The TPC-E sustained-throughput rules: window length, slide and tolerance around the
#: reported throughput.
SUSTAINED_RULES: tuple[tuple[str, int, int, float], ...] = (
    ("10min", 600, 60, 20.0),
    ("1h", 3600, 600, 2.0),
)
#: Server counters stability does not read (only ``checkpoints_timed`` and
#: ``checkpoints_requested``): the loader's fast reader skips them.
SERVER_STATS_UNREAD = tuple(
    name for name in SERVER_STATS if name not in ("checkpoints_timed", "checkpoints_requested")
)
#: Raw files larger than this are not read for a series (an aggregate log has one line per
#: interval: a day at one second is about 8 MiB).
MAX_RAW_BYTES = 256 * 2**20
#: Seconds within which a window boundary counts as reaching the end of the series (progress
#: times are printed with one decimal).
_EPS_S = 1e-6


@dataclass(frozen=True)
class Series:
    """Throughput interval by interval: ``ends_s[i]`` is the elapsed time in seconds at the end
    of interval ``i``, which began at ``ends_s[i - 1]`` (at ``start_s`` for the first one).
    ``tps[i]`` is None when the source did not say."""

    source: str
    start_s: float
    ends_s: tuple[float, ...]
    tps: tuple[float | None, ...]
    latency_ms: tuple[float | None, ...] | None = None

    @property
    def span_s(self) -> float:
        return self.ends_s[-1] - self.start_s if self.ends_s else 0.0


# ---------------------------------------------------------------------------------------------
# Series from what a run keeps.


def series_from_progress(progress: Mapping[str, Any] | None) -> Series | None:
    """A ``results.progress`` mapping (inline lists) as a series; None without usable points.
    Text where a number belongs is a ``RunFileError`` naming the field.

    Times are made relative: ``--progress-timestamp`` prints Unix times, and the first report
    closes the first interval of ``interval_s`` seconds either way."""
    if not progress:
        return None
    if not isinstance(progress, Mapping):
        raise _not_numbers("results.progress", "expected a mapping")
    times = _numbers(progress.get("t_s"), "t_s")
    tps = _numbers(progress.get("tps"), "tps")
    latency = _numbers(progress.get("latency_ms"), "latency_ms")
    interval = progress.get("interval_s")
    if interval is not None and (type(interval) not in (int, float)):
        raise _not_numbers("results.progress.interval_s", f"expected a number, got {interval!r}")
    if not times or len(tps) != len(times) or None in times:
        return None
    first = interval or (times[1] - times[0] if len(times) > 1 else None)
    if not first or first <= 0 or any(b <= a for a, b in itertools.pairwise(times)):
        return None
    origin = times[0] - first
    return Series(
        source="progress",
        start_s=0.0,
        ends_s=tuple(t - origin for t in times),  # type: ignore[operator]
        tps=tps,
        latency_ms=latency if len(latency) == len(times) else None,
    )


def _not_numbers(field: str, message: str) -> RunFileError:
    return RunFileError(message, field=field, hint="run kb check on this file")


_PLAIN_NUMBERS = frozenset((int, float))


def _finite_sum(values: Sequence[float]) -> bool:
    """The sum is finite: no NaN or infinity among the values (and no overflow)."""
    try:
        return math.isfinite(math.fsum(values))
    except (OverflowError, ValueError):
        return False


def _numbers(values: Any, name: str) -> tuple[float | None, ...]:
    """A list from a progress series as floats, None for null or not finite; anything but a
    list of numbers and nulls is a ``RunFileError`` for ``results.progress.NAME``."""
    if values is None:
        return ()
    field = f"results.progress.{name}"
    if not isinstance(values, list | tuple):
        raise _not_numbers(field, f"expected a list of numbers, got {values!r:.40}")
    if set(map(type, values)) <= _PLAIN_NUMBERS and _finite_sum(values):
        return tuple(map(float, values))  # the usual case: every value a finite number
    out: list[float | None] = []
    for value in values:
        kind = type(value)
        if kind is float or kind is int:
            out.append(float(value) if math.isfinite(value) else None)
        elif value is None:
            out.append(None)
        else:
            raise _not_numbers(field, f"expected a list of numbers, got {value!r:.40}")
    return tuple(out)


def series_from_parsed_progress(points: Sequence[Mapping[str, Any]]) -> Series | None:
    """The ``progress`` list of a parsed summary (``parse_text``) as a series."""
    if not points:
        return None
    times = [p.get("t_s") for p in points]
    steps = [b - a for a, b in itertools.pairwise(times) if a is not None and b]
    return series_from_progress(
        {
            "interval_s": steps[0] if steps else times[0],
            "t_s": times,
            "tps": [p.get("tps") for p in points],
            "latency_ms": [p.get("latency_ms") for p in points],
        }
    )


def series_from_aggregate_logs(parsed_logs: Sequence[Mapping[str, Any]]) -> Series | None:
    """Aggregate logs of one run (one parsed log per pgbench thread) as one series: the
    transactions of the threads summed interval by interval, aligned on each interval's start.
    """
    counts: dict[int, int] = {}
    length: int | None = None
    for log in parsed_logs:
        interval = log.get("interval_s")
        per_interval = log.get("transactions_per_interval")
        start = log.get("start_epoch_s")
        if not interval or per_interval is None or start is None:
            continue
        if length is not None and interval != length:
            return None
        length = interval
        for i, count in enumerate(per_interval):
            key = start + i * interval
            counts[key] = counts.get(key, 0) + count
    if not counts or length is None:
        return None
    first, last = min(counts), max(counts)
    starts = range(first, last + 1, length)
    return Series(
        source="aggregate_log",
        start_s=0.0,
        ends_s=tuple(float(s - first + length) for s in starts),
        tps=tuple(counts.get(s, 0) / length for s in starts),
    )


def _number(value: Any) -> float | None:
    """A finite int or float as a float; anything else (None, NaN, a bool, text) as None."""
    kind = type(value)
    if (kind is float or kind is int) and math.isfinite(value):
        return float(value)
    if kind is not bool and isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


# ---------------------------------------------------------------------------------------------
# Spread, stalls, checkpoints.


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def interval_spread(values: Sequence[float | None]) -> dict[str, Any] | None:
    """Median, mean, min, max, sample standard deviation and CV (%) of the known values."""
    known = [v for v in values if v is not None]
    if not known:
        return None
    mean = math.fsum(known) / len(known)
    stddev = (
        math.sqrt(math.fsum((v - mean) ** 2 for v in known) / (len(known) - 1))
        if len(known) > 1
        else None
    )
    return {
        "intervals": len(known),
        "median": _round(_median(known)),
        "mean": _round(mean),
        "min": _round(min(known)),
        "max": _round(max(known)),
        "stddev": _round(stddev),
        "cv_pct": _round(100 * stddev / mean) if stddev is not None and mean > 0 else None,
    }


def find_stalls(
    series: Series, share: float = STALL_SHARE, median: float | None = None
) -> dict[str, Any]:
    """Stalls of a series: runs of consecutive inner intervals below ``share`` × median tps
    (``median`` of the known intervals, computed when not given).

    Returns ``{"threshold_tps", "stalls": [...], "edge_dips": [...]}``; each stall gives its
    start and end (seconds from the series' start), its intervals, its lowest tps and that as a
    percentage of the median. ``edge_dips`` lists ``"first"``/``"last"`` when that interval is
    low."""
    tps = series.tps
    if median is None:
        known = [v for v in tps if v is not None]
        if not known:
            return {"threshold_tps": None, "stalls": [], "edge_dips": []}
        median = _median(known)
    threshold = share * median
    low = [v is not None and v < threshold for v in tps]
    last = len(tps) - 1
    edge_dips = ["first"] if low[0] else []
    if last > 0 and low[last]:
        edge_dips.append("last")
    stalls: list[dict[str, Any]] = []
    if any(low[1:last]):
        i = 1
        while i < last:
            if not low[i]:
                i += 1
                continue
            j = i
            while j + 1 < last and low[j + 1]:
                j += 1
            lowest = min(v for v in tps[i : j + 1] if v is not None)
            stalls.append(
                {
                    "start_s": _round(series.ends_s[i - 1]),
                    "end_s": _round(series.ends_s[j]),
                    "intervals": j - i + 1,
                    "min_tps": _round(lowest),
                    "min_pct_of_median": _round(100 * lowest / median) if median else None,
                }
            )
            i = j + 1
    return {"threshold_tps": _round(threshold), "stalls": stalls, "edge_dips": edge_dips}


def checkpoint_alignment(
    server_stats: Mapping[str, Any] | None, stall_count: int
) -> dict[str, Any]:
    """What the run's checkpoint counters say about its stalls, and no more.

    ``assessment`` is one of ``no_counters``, ``no_stalls``, ``stalls_without_checkpoints``,
    ``stalls_not_more_than_checkpoints``, ``more_stalls_than_checkpoints``."""
    stats = server_stats or {}
    timed, requested = stats.get("checkpoints_timed"), stats.get("checkpoints_requested")
    if timed is None and requested is None:
        return {
            "timed": None,
            "requested": None,
            "count": None,
            "assessment": "no_counters",
            "note": "the run did not record checkpoint counters",
        }
    for name, value in (("checkpoints_timed", timed), ("checkpoints_requested", requested)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise RunFileError(
                f"expected a whole number, got {value!r}",
                field=f"server_stats.{name}",
                hint="run kb check on this file",
            )
    count = (timed or 0) + (requested or 0)
    stalls = f"{stall_count} stall{'s' if stall_count != 1 else ''}"
    said = f"checkpoints during the run: {count}"
    if stall_count == 0:
        assessment = "no_stalls"
        note = f"{said}; no stall"
    elif count == 0:
        assessment = "stalls_without_checkpoints"
        note = f"{said}; {stalls}, so no stall can be a checkpoint's"
    elif stall_count <= count:
        assessment = "stalls_not_more_than_checkpoints"
        note = (
            f"{said}; {stalls}, consistent with one per checkpoint at most "
            "(the data has no checkpoint times to confirm it)"
        )
    else:
        assessment = "more_stalls_than_checkpoints"
        note = (
            f"{said}; {stalls}: more stalls than checkpoints, so checkpoints alone "
            "do not explain them"
        )
    return {
        "timed": timed,
        "requested": requested,
        "count": count,
        "assessment": assessment,
        "note": note,
    }


def ran_during(begun: float | None, done: float | None, low: float, high: float) -> bool:
    """Whether a checkpoint that began at ``begun`` and completed at ``done`` (seconds into the
    run; None when it began before pgbench or was still running at its end) ran during any of
    the interval (low, high]."""
    return (begun is None or begun < high) and (done is None or done > low)


def checkpoint_overlap(
    checkpoints: list[Mapping[str, Any]],
    server_stats: Mapping[str, Any] | None,
    stalls: list[dict[str, Any]],
) -> dict[str, Any]:
    """What the checkpoints' recorded times (``results.checkpoints``, from the server's log)
    say of a progress series' stalls: each stall gets ``during_checkpoint`` (whether a
    checkpoint was running at any time in it). A stall during a checkpoint is not thereby
    caused by it; one outside every checkpoint was not caused by a checkpoint's writes.

    ``assessment``: ``no_stalls``, ``stalls_without_checkpoints``,
    ``all_stalls_during_checkpoints``, ``some_stalls_outside_checkpoints``."""
    stats = server_stats or {}
    count = len(checkpoints)
    during = 0
    for stall in stalls:
        stall["during_checkpoint"] = any(
            ran_during(c.get("started_s"), c.get("completed_s"), stall["start_s"], stall["end_s"])
            for c in checkpoints
        )
        during += stall["during_checkpoint"]
    said = f"checkpoints during the run: {count} (their times from the server's log)"
    stall_words = f"{len(stalls)} stall{'s' if len(stalls) != 1 else ''}"
    if not stalls:
        assessment, note = "no_stalls", f"{said}; no stall"
    elif count == 0:
        assessment = "stalls_without_checkpoints"
        note = f"{said}; {stall_words}, none of them a checkpoint's"
    elif during == len(stalls):
        assessment = "all_stalls_during_checkpoints"
        note = (
            f"{said}; {stall_words}, {'each' if len(stalls) > 1 else 'it'} while a checkpoint "
            "ran (at the same time, which does not by itself make the checkpoint the cause)"
        )
    else:
        assessment = "some_stalls_outside_checkpoints"
        note = (
            f"{said}; {stall_words}, {len(stalls) - during} of them while no checkpoint ran, "
            "so checkpoints alone do not explain them"
        )
    return {
        "timed": stats.get("checkpoints_timed"),
        "requested": stats.get("checkpoints_requested"),
        "count": count,
        "times_from": "results.checkpoints",
        "assessment": assessment,
        "note": note,
    }


# ---------------------------------------------------------------------------------------------
# Sliding windows (TPC-E sustained throughput).


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
        windows.append({"start_s": _round(a), "end_s": _round(b), "tps": tps})
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
            "min_tps": _round(min(w["tps"] for w in known)),
            "max_tps": _round(max(w["tps"] for w in known)),
            "worst": {
                "start_s": worst["start_s"],
                "end_s": worst["end_s"],
                "tps": _round(worst["tps"]),
                "deviation_pct": _round(worst["deviation_pct"]),
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


# ---------------------------------------------------------------------------------------------
# Latency test (TPC-C).


def tpcc_p90_test(results: Mapping[str, Any]) -> dict[str, Any] | None:
    """The weak TPC-C latency test: the 90th percentile above the average. None without both."""
    percentiles = results.get("latency_percentiles_ms") or {}
    p90, avg = _number(percentiles.get("p90")), _number(results.get("latency_avg_ms"))
    if p90 is None or avg is None:
        return None
    return {"p90_ms": p90, "avg_ms": avg, "p90_above_avg": p90 > avg}


# ---------------------------------------------------------------------------------------------
# Per run and per group.


def analyse_series(
    series: Series,
    reference_tps: float | None,
    server_stats: Mapping[str, Any] | None,
    checkpoints: list[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Spread, stalls, checkpoints and TPC-E rules of one series. ``checkpoints`` (their times,
    when the run records them) are read against a progress series only: its times are
    seconds since pgbench started, as theirs are."""
    stalls = find_stalls(series)
    if checkpoints is not None and series.source == "progress":
        alignment = checkpoint_overlap(checkpoints, server_stats, stalls["stalls"])
    else:
        alignment = checkpoint_alignment(server_stats, len(stalls["stalls"]))
    reference, reference_from = reference_tps, "results.tps"
    if reference is None:
        reference, reference_from = series_mean_tps(series), "series mean"
    latency = None
    if series.latency_ms is not None:
        known = [v for v in series.latency_ms if v is not None]
        if known:
            latency = {"median": _round(_median(known)), "max": _round(max(known))}
    result: dict[str, Any] = {
        "source": series.source,
        "span_s": _round(series.span_s),
        "tps": interval_spread(series.tps),
        "latency_ms": latency,
        "stall_threshold_tps": stalls["threshold_tps"],
        "stall_count": len(stalls["stalls"]),
        "stalls": stalls["stalls"],
        "edge_dips": stalls["edge_dips"],
        "checkpoints": alignment,
        "reference_tps": _round(reference),
        "reference_from": reference_from if reference is not None else None,
        "sustained": sustained_rules(series, reference),
    }
    result["text"] = series_text(result)
    return result


def figure(x: float) -> str:
    """A throughput for a sentence: whole with thousands separators from 1,000 up (12,345),
    four significant digits below (867.9)."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


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


def run_stability(
    run: Mapping[str, Any], series: Sequence[Series], group: str | None = None
) -> dict[str, Any] | None:
    """The stability entry of one run from its series (None when it has none and no
    percentiles to test)."""
    results = run.get("results") or {}
    tpcc = tpcc_p90_test(results)
    if not series and tpcc is None:
        return None
    reference = _number(results.get("tps"))
    stats = run.get("server_stats")
    checkpoints = recorded_checkpoints(results, run.get("id"))
    return {
        "run": run.get("id"),
        "group": group,
        "machine": run.get("machine"),
        "duration_s": (run.get("benchmark") or {}).get("duration_s"),
        "series": [analyse_series(s, reference, stats, checkpoints) for s in series],
        "tpcc_p90_test": tpcc,
    }


def recorded_checkpoints(results: Mapping[str, Any], run_id: Any) -> list[Mapping[str, Any]] | None:
    """``results.checkpoints`` when the run records checkpoint times; a time that is not a
    number is a ``RunFileError`` (kb check refuses it first)."""
    found = results.get("checkpoints")
    if not isinstance(found, list):
        return None
    for index, item in enumerate(found):
        for key in ("started_s", "completed_s"):
            value = item.get(key) if isinstance(item, Mapping) else "?"
            if value is not None and _number(value) is None:
                raise RunFileError(
                    f"expected a number of seconds or null, got {value!r}",
                    field=f"results.checkpoints[{index}].{key}",
                    path=f"run {run_id}",
                    hint="run kb check on this file",
                )
    return found


_PROGRESS_KEYS = frozenset(
    ("interval_s", "t_s", "tps", "latency_ms", "stddev_ms", "lag_ms", "failed", "raw_path")
)
_LISTS = frozenset(("t_s", "tps", "latency_ms"))


_TOP_LEVEL = re.compile(r"^[^ \n#-][^\n]*", re.M)


class _NotCanonical(Exception):
    """The progress block is not written the way ``kb import`` writes it."""


def _scalar(token: str) -> float | None:
    if token in ("null", "~", ".nan", ".NaN", ".inf", "-.inf", ".Inf", "-.Inf"):
        return None
    if not token or token[0] not in "-0123456789" or "_" in token:
        raise _NotCanonical
    try:
        value = float(token)
    except ValueError:
        raise _NotCanonical from None
    return value if math.isfinite(value) else None


def progress_from_text(text: str) -> dict[str, Any] | None:
    """``results.progress`` read straight from a run file's text, for the lists the loader's
    fast reader skips: a few hundred thousand numbers parse far faster this way than through a
    YAML reader. Understands exactly the block style ``kb import`` writes (keys at four spaces,
    list items ``    - 1.5``, ``null``); returns None when the run has no progress series,
    and raises ``ValueError`` for anything else, so the caller reads the file with a YAML
    loader instead."""
    start = text.find("\n  progress:")
    if start < 0:
        return None
    results = text.rfind("\nresults:", 0, start)
    if (results < 0 and not text.startswith("results:")) or _TOP_LEVEL.search(
        text, results + 2, start
    ):
        raise ValueError("progress outside results")
    end = _TOP_LEVEL.search(text, start + 1)
    lines = iter(text[start + 1 : end.start() if end else len(text)].split("\n"))
    head = next(lines)
    if head.rstrip() == "  progress: null":
        return None
    if head.rstrip() != "  progress:":
        raise ValueError("progress is not a block mapping")
    found: dict[str, Any] = {}
    current: list[float | None] | None = None
    try:
        for line in lines:
            if line.startswith("    - "):
                if current is None:
                    raise _NotCanonical
                current.append(_scalar(line[6:].rstrip()))
                continue
            if not line.startswith("    ") or line.startswith("     "):
                break
            name, sep, rest = line[4:].partition(":")
            rest = rest.strip()
            if not sep or name not in _PROGRESS_KEYS or name in found:
                raise _NotCanonical
            current = None
            if name in _LISTS and not rest:
                current = found[name] = []
            elif name == "raw_path":
                if rest not in ("null", ""):
                    raise _NotCanonical  # a path: let the YAML loader read it
                found[name] = None
            elif rest == "[]":
                found[name] = []
            elif rest:
                found[name] = _scalar(rest)
            else:
                found[name] = []  # a list this analysis does not read
                current = []
    except _NotCanonical:
        raise ValueError("progress is not written the way kb import writes it") from None
    return found


def run_facts(data: Mapping[str, Any], text: str | None = None) -> dict[str, Any] | None:
    """The part of a run file that stability and curves read, as a small run-shaped dict
    (``id``, ``machine``, ``benchmark.duration_s``, ``results`` figures, progress and
    percentiles, the checkpoint counters, the raw files holding series); None when the run has
    no series and no percentiles. The loader keeps it with each run, so run files are read
    once."""
    results = data.get("results") or {}
    raws = [dict(r) for r in data.get("raw") or [] if isinstance(r, Mapping)]
    progress = results.get("progress")
    if progress is None and text is not None and "progress" not in results:
        # The loader's fast reader skipped the series: read it from the text.
        try:
            progress = progress_from_text(text)
        except ValueError:
            full = load_yaml_text(text, path=str(data.get("id"))).data
            progress = ((full.get("results") or {}) if isinstance(full, dict) else {}).get(
                "progress"
            )
    percentiles = results.get("latency_percentiles_ms")
    has_logs = any(r.get("kind") == "aggregate_log" for r in raws)
    if not progress and not percentiles and not has_logs:
        return None
    stats = data.get("server_stats") or {}
    return {
        "id": data.get("id"),
        "machine": data.get("machine"),
        "benchmark": {"duration_s": (data.get("benchmark") or {}).get("duration_s")},
        "results": {
            "tps": results.get("tps"),
            "latency_avg_ms": results.get("latency_avg_ms"),
            "latency_percentiles_ms": percentiles,
            "latency_percentiles_from": results.get("latency_percentiles_from"),
            "progress": progress,
            "checkpoints": results.get("checkpoints"),
        },
        "server_stats": {
            "checkpoints_timed": stats.get("checkpoints_timed"),
            "checkpoints_requested": stats.get("checkpoints_requested"),
        },
        # All entries, so that an error names the same raw[i] as the run file.
        "raw": raws if (has_logs or (progress or {}).get("raw_path")) else [],
    }


def read_series(
    run: Mapping[str, Any], root: Path | None, run_path: str | None = None
) -> list[Series]:
    """Every series a run has: its progress reports (inline, or from the raw output that
    ``raw_path`` names) and its aggregate logs. Raw files are read under ``root`` (not at all
    when it is None); one that is missing or unreadable is a ``RunFileError`` naming the run
    file (``run_path``), the field and the raw file."""
    found: list[Series] = []
    progress = (run.get("results") or {}).get("progress")
    raws = list(run.get("raw") or [])
    where = run_path or f"run {run.get('id')}"
    if progress:
        raw_path = progress.get("raw_path")
        one = None
        if not raw_path:
            one = series_from_progress(progress)
        elif root is not None:
            field = "results.progress.raw_path"
            parsed = _parse_raw(root, raw_path, where, field)
            one = series_from_parsed_progress(parsed.get("progress") or [])
        if one is not None:
            found.append(one)
    if root is not None:
        logs = [
            _parse_raw(root, r["path"], where, f"raw[{i}].path")
            for i, r in enumerate(raws)
            if r.get("kind") == "aggregate_log" and r.get("path")
        ]
        one = series_from_aggregate_logs(logs) if logs else None
        if one is not None:
            found.append(one)
    return found


def _parse_raw(root: Path, rel: str, where: str, field: str) -> dict[str, Any]:
    """A raw file of a run, parsed (gunzipped first when its name ends in .gz)."""
    hint = "run kb check, which names what is missing or changed"

    def refuse(message: str) -> RunFileError:
        return RunFileError(f"{rel}: {message}", path=where, field=field, hint=hint)

    if PurePosixPath(rel).is_absolute() or ".." in PurePosixPath(rel).parts:
        raise refuse("the raw file's path leaves the project")
    try:
        # A regular file inside data/raw, never a link (what kb check accepts: issue #22).
        path = contributed_path(root, rel)
        data = read_bytes_bounded(path, max_bytes=MAX_RAW_BYTES, hint=hint)
        if rel.endswith(".gz"):
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
                data = read_stream_bounded(stream, max_bytes=MAX_RAW_BYTES, name=rel, hint=hint)
    except RunFileError as exc:
        raise refuse(exc.message) from None
    except FileNotFoundError:
        raise refuse("cannot read: No such file or directory") from None
    except (OSError, EOFError) as exc:
        raise refuse(f"not a readable gzip file ({exc})") from None
    try:
        return parse_text(data.decode("utf-8", "replace"), source=rel)
    except ParseError as exc:
        line = f"line {exc.line}: " if exc.line is not None else ""
        raise refuse(f"{line}{exc.message}") from None


def stability(
    runs: Iterable[Mapping[str, Any]],
    root: Path | None,
    group_of: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The ``stability`` list from run dicts (or ``run_facts``): one entry per run with a
    series (or latency percentiles), in the order of ``runs``."""
    groups = group_of or {}
    entries = []
    for run in runs:
        entry = run_stability(run, read_series(run, root), groups.get(str(run.get("id"))))
        if entry is not None:
            entries.append(entry)
    return entries


def stability_of(
    records: Iterable[Any], groups: Iterable[Any], root: Path | None
) -> list[dict[str, Any]]:
    """The ``stability`` list from the loader's records (``series`` holds ``run_facts``) and
    the groups of repeats, in run id order."""
    group_of = {run.id: group.id for group in groups for run in group.runs}
    entries = []
    for record in sorted(records, key=lambda r: r.id):
        facts = record.series
        if not facts:
            continue
        try:
            found = read_series(facts, root, record.path)
            entry = run_stability(facts, found, group_of.get(record.id))
        except RunFileError as exc:
            exc.path = exc.path or record.path
            raise
        if entry is not None:
            entries.append(entry)
    return entries


def group_summaries(entries: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per group: runs with a series, stalls in all, runs with a stall, the median of the
    runs' interval CVs, and how each TPC-E rule came out (counts by verdict)."""
    by_group: dict[str, list[Mapping[str, Any]]] = {}
    for entry in entries:
        if entry.get("group") is not None and entry.get("series"):
            by_group.setdefault(entry["group"], []).append(entry)
    summaries = []
    for group, members in sorted(by_group.items()):
        analyses = [a for e in members for a in e["series"]]
        cvs = [a["tps"]["cv_pct"] for a in analyses if a["tps"] and a["tps"]["cv_pct"] is not None]
        rules: dict[str, dict[str, int]] = {}
        for a in analyses:
            for name, rule in a["sustained"].items():
                counts = rules.setdefault(name, {})
                counts[rule["verdict"]] = counts.get(rule["verdict"], 0) + 1
        summaries.append(
            {
                "group": group,
                "runs": sorted(str(e["run"]) for e in members),
                "series": len(analyses),
                "stalls": sum(a["stall_count"] for a in analyses),
                "runs_with_stalls": sum(
                    1 for e in members if any(a["stall_count"] for a in e["series"])
                ),
                "interval_cv_pct_median": _round(_median(cvs)) if cvs else None,
                "sustained": rules,
            }
        )
    return summaries


def _round(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(value, digits)
