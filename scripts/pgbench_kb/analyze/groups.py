"""Groups of repeats: the unit of every comparison is a configuration, not a run.

* Measured repeats share ``repeat.group``: one group per (machine, repeat.group). Its centre is
  the median of the runs' tps; its spread comes from those runs.
* A transcribed figure is a group of its own: its centre is the statistic the source published
  (``results.statistic``: median, mean or single) over ``results.of_runs`` runs; it has a spread
  only when the source listed the runs (``results.samples.tps``).
* Any other run is a group of one.

The runs of one group must agree on every factor and on the machine; a group whose runs do not
is an error naming the run and the field (a wrong ``repeat.group`` would otherwise average two
configurations). Incidental fields (dates, run length) may differ inside a group.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import statistics
from dataclasses import dataclass, field
from typing import Any

from pgbench_kb.analyze.load import RunRecord, key
from pgbench_kb.errors import RunFileError


@dataclass
class Group:
    id: str
    runs: list[RunRecord]
    factors: dict[str, Any]
    hardware: dict[str, Any]
    factor_key: tuple[Any, ...]
    hardware_key: tuple[Any, ...]
    incidental: dict[str, Any]
    statistic: str
    n: int
    center: float
    values: list[float] | None
    keys: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    spread: dict[str, Any] | None = None
    #: The centre is a statistic a source published (a median or mean of several runs), not
    #: one computed here from the runs.
    published: bool = False

    @functools.cached_property
    def log_stats(self) -> tuple[float, float, int]:
        """Mean and variance of the logarithms of the values, and their number (n >= 2)."""
        logs = [math.log(v) for v in self.values or ()]
        mean = math.fsum(logs) / len(logs)
        return mean, math.fsum((x - mean) ** 2 for x in logs) / (len(logs) - 1), len(logs)

    @functools.cached_property
    def latency_median(self) -> float | None:
        """Median of the runs' average latency (``latency_center``)."""
        return _latency_median(self)

    @property
    def machine(self) -> str:
        return self.runs[0].machine

    @property
    def client_machine(self) -> str | None:
        return self.runs[0].client_machine


def slug(text: str, limit: int = 80) -> str:
    """Lower-case letters, digits and single hyphens; long ones end in a short hash."""
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "group"
    if len(s) > limit:
        digest = hashlib.sha1(s.encode()).hexdigest()[:8]
        s = s[: limit - 9].rstrip("-") + "-" + digest
    return s


def mapping_key(values: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(sorted((k, key(v)) for k, v in values.items()))


def stdev(values: list[float]) -> float:
    """Sample standard deviation (n - 1), in plain floats (statistics.stdev is exact but slow)."""
    mean = math.fsum(values) / len(values)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))


def _spread(values: list[float]) -> dict[str, float] | None:
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    stddev = stdev(values)
    return {
        "min": min(values),
        "max": max(values),
        "stddev": round(stddev, 6),
        "cv_pct": round(100.0 * stddev / mean, 3) if mean else None,
    }


def spread_values(values: list[float]) -> dict[str, float] | None:
    """``{min, max, stddev, cv_pct}`` of two or more values, else None."""
    return _spread(values)


def _incidental_of(runs: list[RunRecord]) -> dict[str, Any]:
    """Each incidental field's value when every run agrees, else the sorted distinct values."""
    names = sorted({n for r in runs for n in r.incidental})
    out: dict[str, Any] = {}
    for name in names:
        distinct = {key(r.incidental.get(name)): r.incidental.get(name) for r in runs}
        if len(distinct) == 1:
            out[name] = next(iter(distinct.values()))
        elif name == "provenance.recorded_at":
            dates = sorted(str(v) for v in distinct.values() if v is not None)
            out[name] = f"{dates[0]}..{dates[-1]}" if dates else None
        else:
            out[name] = sorted(distinct.values(), key=lambda v: str(v))
    return out


def _check_same(runs: list[RunRecord], group_name: str) -> None:
    first = runs[0]
    for run in runs[1:]:
        for attr in ("factors", "hardware"):
            mine, theirs = getattr(first, attr), getattr(run, attr)
            if mine != theirs:
                names = sorted(n for n in set(mine) | set(theirs) if mine.get(n) != theirs.get(n))
                raise RunFileError(
                    f"repeat.group {group_name!r} mixes configurations: {names[0]} is "
                    f"{theirs.get(names[0])!r} here but {mine.get(names[0])!r} in {first.path}",
                    path=run.path,
                    field=names[0],
                    hint="repeats of one configuration share repeat.group; give this run its own",
                )


def _make(group_id: str, runs: list[RunRecord]) -> Group | None:
    first = runs[0]
    measured = [r.tps for r in runs if r.tps is not None]
    if not measured:
        return None
    published = len(runs) == 1 and first.statistic in ("median", "mean") and first.of_runs > 1
    if published:
        statistic, n, center = first.statistic, first.of_runs, first.tps
        values = first.samples
    else:
        statistic = "single" if len(measured) == 1 else "median"
        n, center = len(measured), statistics.median(measured)
        values = measured if len(measured) > 1 else None
    assert center is not None
    return Group(
        id=group_id,
        runs=runs,
        factors=first.factors,
        hardware=first.hardware,
        factor_key=mapping_key(first.factors),
        hardware_key=(first.machine, first.client_machine, *mapping_key(first.hardware)),
        incidental=_incidental_of(runs),
        statistic=statistic,
        n=n,
        center=center,
        values=values,
        keys={p: key(v) for p, v in first.factors.items()},
        published=published,
    )


def build_groups(runs: list[RunRecord]) -> list[Group]:
    """Runs → groups of repeats, in a stable order (by group id). Runs without tps, and runs
    that aborted, are left out (``excluded_runs`` lists them)."""
    by_name: dict[tuple[str, str], list[RunRecord]] = {}
    singles: list[RunRecord] = []
    for run in runs:
        if exclusion(run):
            continue
        if run.repeat_group:
            by_name.setdefault((run.machine, run.repeat_group), []).append(run)
        else:
            singles.append(run)
    pending: list[tuple[str, list[RunRecord]]] = []
    for (machine, name), members in by_name.items():
        members.sort(key=lambda r: r.id)
        _check_same(members, name)
        base = name if name.startswith(machine) else f"{machine}-{name}"
        pending.append((slug(base), members))
    pending.extend((slug(run.id), [run]) for run in singles)
    groups: list[Group] = []
    taken: set[str] = set()
    for base, members in sorted(pending, key=lambda p: (p[0], p[1][0].id)):
        gid, i = base, 2
        while gid in taken:
            gid, i = f"{base}-{i}", i + 1
        taken.add(gid)
        group = _make(gid, members)
        if group is not None:
            group.stats = describe_stats(group)
            group.spread = _spread(group.values) if group.values else None
            groups.append(group)
    return groups


def exclusion(run: RunRecord) -> str | None:
    """Why a run stays out of every group, or None."""
    if run.tps is None:
        return "no tps figure (results.tps is null)"
    if run.aborted:
        return "the run aborted (results.aborted), so its figures cover part of it"
    if run.disturbed:
        return f"measured on a busy machine (machine_load.disturbed): {run.disturbed}"
    if run.smoke:
        return "a smoke run (bench profile smoke): it shows the harness works, it is not a result"
    return None


def excluded_runs(runs: list[RunRecord]) -> list[dict[str, str]]:
    return [{"run": r.id, "reason": why} for r in runs if (why := exclusion(r))]


def describe_stats(group: Group) -> dict[str, Any]:
    """n, median, mean, min, max, stddev, CV (null when not known) of a group."""
    values = group.values
    if values:
        return {
            "median": statistics.median(values),
            "mean": round(statistics.fmean(values), 6),
            "min": min(values),
            "max": max(values),
            "stddev": round(stdev(values), 6) if len(values) > 1 else None,
            "cv_pct": (
                round(100 * stdev(values) / statistics.fmean(values), 3)
                if len(values) > 1
                else None
            ),
        }
    published = {"median": None, "mean": None, "min": None, "max": None}
    if group.statistic in ("median", "mean"):
        published[group.statistic] = group.center
    elif group.statistic == "single":
        published = dict.fromkeys(published, group.center)
    return {**published, "stddev": None, "cv_pct": None}


def spread_of(group: Group) -> dict[str, Any] | None:
    return group.spread


def latency_center(group: Group) -> float | None:
    """Median of the runs' average latency (ms, 3 decimals), or None; computed once a group."""
    return group.latency_median


def _latency_median(group: Group, name: str = "latency_avg_ms") -> float | None:
    values = [
        getattr(r, name)
        for r in group.runs
        if getattr(r, name) is not None and r.latency_trust is None  # analyze/latency_trust.py
    ]
    if not values:
        return None
    value = statistics.median(values)
    return None if math.isnan(value) else round(value, 3)


def group_entry(group: Group) -> dict[str, Any]:
    """A group as the JSON shows it: everything the site needs to show it on its own page."""
    from pgbench_kb.analyze import describe

    first = group.runs[0]
    origins = sorted({r.origin or "unknown" for r in group.runs})
    labels = sorted({r.settings_profile for r in group.runs if r.settings_profile})
    return {
        "id": group.id,
        "machine": group.machine,
        "client_machine": group.client_machine,
        "origin": origins[0] if len(origins) == 1 else "mixed",
        "source": first.source_title,
        "config": describe.config(group.factors, labels[0] if labels else None),
        "factors": dict(sorted(group.factors.items())),
        "incidental": group.incidental,
        "metric": "tps",
        "n": group.n,
        "statistic": group.statistic,
        "published": group.published,
        "center": group.center,
        **group.stats,
        "spread": spread_of(group),
        "samples": group.values,
        "latency_avg_ms": latency_center(group),
        "latency_stddev_ms": _latency_median(group, "latency_stddev_ms"),
        "runs": [r.id for r in group.runs],
    }
