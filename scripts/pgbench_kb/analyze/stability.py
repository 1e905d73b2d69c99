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

Everything here is a pure function of the run dicts. The series come from
``analyze/runseries.py`` (which reads raw files under the root), the TPC-E windows are
``analyze/sustained.py``'s and the sentence a reader sees is ``analyze/stability_text.py``'s.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pgbench_kb.analyze.runseries import Series, finite_number, read_series, rounded
from pgbench_kb.analyze.stability_text import series_text
from pgbench_kb.analyze.sustained import series_mean_tps, sustained_rules
from pgbench_kb.errors import RunFileError

#: An interval below this share of the series' median tps is low; consecutive low intervals
#: form one stall.
STALL_SHARE = 0.5


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
        "median": rounded(_median(known)),
        "mean": rounded(mean),
        "min": rounded(min(known)),
        "max": rounded(max(known)),
        "stddev": rounded(stddev),
        "cv_pct": rounded(100 * stddev / mean) if stddev is not None and mean > 0 else None,
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
                    "start_s": rounded(series.ends_s[i - 1]),
                    "end_s": rounded(series.ends_s[j]),
                    "intervals": j - i + 1,
                    "min_tps": rounded(lowest),
                    "min_pct_of_median": rounded(100 * lowest / median) if median else None,
                }
            )
            i = j + 1
    return {"threshold_tps": rounded(threshold), "stalls": stalls, "edge_dips": edge_dips}


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


def tpcc_p90_test(results: Mapping[str, Any]) -> dict[str, Any] | None:
    """The weak TPC-C latency test: the 90th percentile above the average. None without both."""
    percentiles = results.get("latency_percentiles_ms") or {}
    p90, avg = finite_number(percentiles.get("p90")), finite_number(results.get("latency_avg_ms"))
    if p90 is None or avg is None:
        return None
    return {"p90_ms": p90, "avg_ms": avg, "p90_above_avg": p90 > avg}


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
            latency = {"median": rounded(_median(known)), "max": rounded(max(known))}
    result: dict[str, Any] = {
        "source": series.source,
        "span_s": rounded(series.span_s),
        "tps": interval_spread(series.tps),
        "latency_ms": latency,
        "stall_threshold_tps": stalls["threshold_tps"],
        "stall_count": len(stalls["stalls"]),
        "stalls": stalls["stalls"],
        "edge_dips": stalls["edge_dips"],
        "checkpoints": alignment,
        "reference_tps": rounded(reference),
        "reference_from": reference_from if reference is not None else None,
        "sustained": sustained_rules(series, reference),
    }
    result["text"] = series_text(result)
    return result


def run_stability(
    run: Mapping[str, Any], series: Sequence[Series], group: str | None = None
) -> dict[str, Any] | None:
    """The stability entry of one run from its series (None when it has none and no
    percentiles to test)."""
    results = run.get("results") or {}
    tpcc = tpcc_p90_test(results)
    if not series and tpcc is None:
        return None
    reference = finite_number(results.get("tps"))
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
            if value is not None and finite_number(value) is None:
                raise RunFileError(
                    f"expected a number of seconds or null, got {value!r}",
                    field=f"results.checkpoints[{index}].{key}",
                    path=f"run {run_id}",
                    hint="run kb check on this file",
                )
    return found


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
        if getattr(record, "latency_trust", None) is not None:
            # No TPC-C latency test on latencies of 0 µs (analyze/latency_trust.py).
            results = {**facts["results"], "latency_percentiles_ms": None, "latency_avg_ms": None}
            facts = {**facts, "results": results}
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
                "interval_cv_pct_median": rounded(_median(cvs)) if cvs else None,
                "sustained": rules,
            }
        )
    return summaries
