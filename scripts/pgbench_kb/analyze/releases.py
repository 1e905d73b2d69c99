"""Release series: one machine's same workload measured on many PostgreSQL releases, read as a
line of releases rather than as a heap of pairwise comparisons (``series`` in the Comparisons
JSON; docs/comparisons.md, "Release series").

A series is every group of one machine that shares everything but the release and the
settings that come and go with it (the ``version+settings`` family of ``analyze/factors.py``):
workload, scale, clients, query mode, storage, the same client. It counts as a series from
three releases on, one group each (a release measured twice, in two sessions or with two sets
of settings, leaves no single line to read, so that key forms no series). Each release is a
row: the median of its repeats, the repeats' range and the 95% interval of their geometric
mean (on the logarithms, as the comparisons test them), and its bench session. Each row after
the first carries the *step* from the release before it: the comparison ``analyze/pairs.py``
made of the two (releases are paired with their neighbours only), its change and its verdict,
and what else changed with the release:

* the settings that differ between the two sides (a setting the older release knew and the
  newer one dropped reads as unset; ``RENAMED`` names the known renames, such as 9.5's
  ``checkpoint_segments`` becoming ``max_wal_size`` and ``min_wal_size``);
* whether the step crosses bench sessions. A published tree's session is one directory of its
  author's runs (docs/comparisons.md, "Sessions of an imported tree"), so a step between
  releases the author measured in two invocations crosses sessions: it is named as such and
  judged only as the comparison is (``not_comparable`` when nothing measured how far that
  machine's sessions move a result), never as if measured inside one.

The overall change, first release against last, is compared the same way
(``pairs.compare``), so a first and last measured apart are shown, not judged.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from typing import Any

from pgbench_kb.analyze.factors import FAMILIES, family_of, release_order
from pgbench_kb.analyze.groups import Group, slug
from pgbench_kb.analyze.pairs import compare, differing
from pgbench_kb.analyze.sessions import compared_inside, machine_between, session_of
from pgbench_kb.analyze.verdict import CONFIDENCE, t_quantile

#: The fewest releases that make a series.
MIN_RELEASES = 3
#: Settings a release replaced by others: (old, new) → what happened, in a reader's words.
RENAMED = {
    ("checkpoint_segments", "max_wal_size"): (
        "PostgreSQL 9.5 replaced checkpoint_segments with max_wal_size and min_wal_size, so the "
        "WAL kept between checkpoints is set another way on each side"
    ),
}
_VERSION_FAMILY = next(f for f in FAMILIES if f.name == "version+settings")
_SETTING = "postgres.settings."


def _outside(group: Group) -> tuple[Any, ...]:
    """Everything a series holds equal: the machine and every factor outside the release and
    its settings."""
    rest = tuple(sorted((p, k) for p, k in group.keys.items() if not _VERSION_FAMILY.contains(p)))
    return (group.hardware_key, rest)


def interval_of(values: list[float] | None) -> list[float] | None:
    """The 95% interval of the repeats' geometric mean (Student's t on the logarithms), or
    None with fewer than two positive values."""
    if not values or len(values) < 2 or min(values) <= 0:
        return None
    logs = [math.log(v) for v in values]
    n = len(logs)
    mean = math.fsum(logs) / n
    var = math.fsum((x - mean) ** 2 for x in logs) / (n - 1)
    half = t_quantile(0.5 + CONFIDENCE / 2.0, n - 1) * math.sqrt(var / n)
    return [round(math.exp(mean - half), 4), round(math.exp(mean + half), 4)]


def _settings_change(a: Group, b: Group) -> list[dict[str, Any]]:
    fields = sorted(f for f in differing(a, b) if f.startswith(_SETTING))
    return [
        {"setting": f.removeprefix(_SETTING), "a": a.factors.get(f), "b": b.factors.get(f)}
        for f in fields
    ]


def _renamed(changes: list[dict[str, Any]]) -> list[str]:
    dropped = {c["setting"] for c in changes if c["a"] is not None and c["b"] is None}
    added = {c["setting"] for c in changes if c["a"] is None and c["b"] is not None}
    return [words for (old, new), words in RENAMED.items() if old in dropped and new in added]


def _step(a: Group, b: Group, comparison: dict[str, Any] | None) -> dict[str, Any]:
    sa, sb = session_of(a), session_of(b)
    changes = _settings_change(a, b)
    step: dict[str, Any] = {
        "comparison": None,
        "change_pct": None,
        "ratio": None,
        "verdict": None,
        "significant": None,
        "crosses_sessions": sa != sb,
        "sessions": [sa, sb],
        "settings_change": changes,
        "renamed": _renamed(changes),
        "why": None,
    }
    if comparison is not None:
        family = comparison.get("family") or {}
        step.update(
            comparison=comparison["id"],
            change_pct=comparison.get("change_pct"),
            ratio=comparison.get("ratio"),
            verdict=comparison.get("verdict"),
            significant=bool(family.get("significant")) if family else None,
            why=(comparison.get("sessions") or {}).get("why"),
        )
    return step


def _row(group: Group) -> dict[str, Any]:
    values = group.values
    return {
        "version": group.factors.get("postgres.version"),
        "group": group.id,
        "n": group.n,
        "center": group.center,
        "min": min(values) if values else None,
        "max": max(values) if values else None,
        "ci95": interval_of(values),
        "session": session_of(group),
        "settings": {
            k.removeprefix(_SETTING): v for k, v in group.factors.items() if k.startswith(_SETTING)
        },
    }


def _held(group: Group) -> dict[str, Any]:
    return {
        p: group.factors[p]
        for p in (
            "benchmark.workload.name",
            "benchmark.query_mode",
            "benchmark.clients",
            "benchmark.threads",
            "benchmark.scale",
        )
        if p in group.factors
    }


def release_series(groups: list[Group], comparisons: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every release series among ``groups``, each with its rows, steps and overall change;
    ``comparisons``: the tps comparisons (adjusted: ``family`` set), where the steps are
    found."""
    by_key: dict[tuple[Any, ...], list[Group]] = defaultdict(list)
    for group in groups:
        if release_order(group.factors.get("postgres.version")) is not None:
            by_key[_outside(group)].append(group)
    by_pair = {
        frozenset((c["a"]["group"], c["b"]["group"])): c
        for c in comparisons
        if c.get("metric", "tps") == "tps" and c.get("kind") == "pair"
    }
    candidates = []
    for members in by_key.values():
        versions = [g.factors["postgres.version"] for g in members]
        if len(set(versions)) < MIN_RELEASES or len(set(versions)) < len(versions):
            continue
        candidates.append(
            sorted(members, key=lambda g: release_order(g.factors["postgres.version"]))
        )
    if not candidates:
        return []
    between = machine_between(groups)
    inside = compared_inside(groups)
    found = []
    for line in candidates:
        first, last = line[0], line[-1]
        held = _held(first)
        rows = [_row(g) for g in line]
        for row, (a, b) in zip(rows[1:], itertools.pairwise(line), strict=True):
            row["step"] = _step(a, b, by_pair.get(frozenset((a.id, b.id))))
        fields = differing(first, last)
        overall = compare(first, last, fields, family_of(fields), "series", between, inside)
        pgbench = sorted(
            {str(v) for g in line for v in _as_list(g.incidental.get("benchmark.pgbench_version"))}
        )
        name = " ".join([first.machine, *(str(v) for v in held.values()), "releases"])
        found.append(
            {
                "id": f"release-series-{slug(name, 70)}",
                "machine": first.machine,
                "held_equal": held,
                "pgbench_versions": pgbench,
                "sources": sorted(
                    {str(r.source_title) for g in line for r in g.runs if r.source_title}
                ),
                "sessions": sorted({row["session"] for row in rows}),
                "rows": rows,
                "steps": [r["step"]["comparison"] for r in rows[1:] if r["step"]["comparison"]],
                "overall": {
                    "a": first.factors.get("postgres.version"),
                    "b": last.factors.get("postgres.version"),
                    "change_pct": overall["change_pct"],
                    "ratio": overall["ratio"],
                    "verdict": overall["verdict"],
                    "ci95_ratio": (overall.get("test") or {}).get("ci95_ratio"),
                    "crosses_sessions": not overall["sessions"]["shared"],
                    "why": overall["sessions"].get("why"),
                },
            }
        )
    return sorted(found, key=lambda s: (s["machine"], _sort_key(s["held_equal"])))


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def _sort_key(held: dict[str, Any]) -> tuple[Any, ...]:
    """Workload, scale, query mode, then clients in their numeric order."""
    order = ("benchmark.workload.name", "benchmark.scale", "benchmark.query_mode")
    clients = held.get("benchmark.clients")
    return (
        *(str(held.get(p)) for p in order),
        clients if isinstance(clients, int | float) else -1,
    )
