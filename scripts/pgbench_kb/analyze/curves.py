"""Curves: throughput and latency of one configuration swept over clients (or scale).

A curve joins the groups of repeats on one machine that are identical in every configuration
field except the swept one (``benchmark.clients`` or ``benchmark.scale``), when there are at
least ``MIN_POINTS`` distinct values of it. pgbench's threads may follow the clients
(``FOLLOWERS``): a clients sweep whose thread count changes with the clients is one curve, the
threads listed among what differs between points. Each point is one group: the swept value, the
group's centre tps and spread, its latency centre, its p95/p99 when the runs' logs gave
percentiles, and n.

* **peak**: the point with the highest centre tps (the lowest swept value among equals);
* **fall-off**: the first point after the peak (a larger swept value) that is below the peak by
  more than noise. When both groups have a spread (repeats), "more than noise" is the verdict
  of the controlled comparisons, point against peak (``lower``: Welch's 95% interval of the
  ratio, on the logarithms of the runs' tps, lies below 1); when either has none (one run, or
  a published statistic without its runs), it is a drop of more than
  ``FALL_OFF_THRESHOLD_PCT`` (10%). Points after the peak that do not fall off are its
  plateau; ``fall_off`` is None when the curve holds up to its last point;
* **level from**: the first point before the peak from which every point up to the peak is
  within the noise of it (the same verdict, ``within_noise``), so that a peak at the last point
  measured is not read as a curve still climbing when it has levelled off; None when the point
  just before the peak is below it beyond noise, or not judged.

A sweep measured whole in two or more bench sessions (a campaign profile's replicate
sessions) is one curve per session, each holding its session equal (``repeat.session`` in
``held_equal``): the sessions are drawn side by side, and neither is hidden behind the other.

Latency against throughput is in the points themselves (``latency_ms`` beside ``tps``), in
swept order.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pgbench_kb.analyze.groups import Group, latency_center, spread_of
from pgbench_kb.analyze.latency import MIN_LATENCIES, logged
from pgbench_kb.analyze.latency_trust import trusted
from pgbench_kb.analyze.load import key
from pgbench_kb.analyze.pairs import HEADLINE, machine_text
from pgbench_kb.analyze.sessions import session_of
from pgbench_kb.analyze.verdict import welch_log
from pgbench_kb.numbers import change as change_text
from pgbench_kb.numbers import figure

#: A curve needs this many distinct swept values (two are a comparison, not a curve).
MIN_POINTS = 3
#: Without spread on both sides, a point falls off when it is this many percent below the peak.
FALL_OFF_THRESHOLD_PCT = 10.0
#: The fields a curve may sweep, with the name used in curve ids.
SWEPT_FIELDS = {"benchmark.clients": "clients", "benchmark.scale": "scale"}
#: Fields that may move with the swept one along one curve: pgbench's ``-j`` follows ``-c``
#: (the harness's ``threads: auto`` runs 1 client with 1 thread and more clients with more).
#: When each swept value has one value of them, the curve holds them as they come and lists
#: them as differing between points; when some swept value has two, each is its own curve.
FOLLOWERS = {"benchmark.clients": ("benchmark.threads",)}


@dataclass(frozen=True)
class Point:
    """One group at one swept value."""

    x: float
    group: str
    tps: float | None
    spread: Mapping[str, Any] | None = None
    n: int = 1
    latency_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    samples: tuple[float, ...] | None = field(default=None, compare=False)
    #: The group's bench session (``sessions.session_of``): points of two sessions are not
    #: judged against each other.
    session: str | None = field(default=None, compare=False)

    def as_json(self) -> dict[str, Any]:
        return {
            "x": self.x,
            "group": self.group,
            "tps": self.tps,
            "spread": dict(self.spread) if self.spread is not None else None,
            "latency_ms": self.latency_ms,
            "p95_ms": self.p95_ms,
            "p99_ms": self.p99_ms,
            "n": self.n,
        }


#: Decides whether ``point`` is below ``peak`` beyond noise: returns a verdict of the
#: controlled comparisons (``higher``, ``lower``, ``within_noise``, ``spread_unknown``), with
#: the peak as side a and the point as side b.
Verdict = Callable[[Point, Point], str]


def no_spread_verdict(_peak: Point, _point: Point) -> str:
    """A verdict for when no noise test is at hand: every pair has unknown spread, so the
    threshold decides."""
    return "spread_unknown"


def peak_index(points: Sequence[Point]) -> int | None:
    """Index of the point with the highest tps (the first of equals); None without tps."""
    best: int | None = None
    for i, point in enumerate(points):
        if point.tps is None:
            continue
        if best is None or point.tps > (points[best].tps or 0.0):
            best = i
    return best


def fall_off(
    points: Sequence[Point], peak: int, verdict: Verdict = no_spread_verdict
) -> dict[str, Any] | None:
    """The first point after ``peak`` below it beyond noise (see the module's docstring), as
    ``{x, group, tps, change_pct, rule}``; None when the curve holds up to its last point."""
    top = points[peak]
    if not top.tps:
        return None
    for point in points[peak + 1 :]:
        if point.tps is None:
            continue
        change = 100 * (point.tps / top.tps - 1)
        said = verdict(top, point)
        if said == "spread_unknown":
            falls, rule = change < -FALL_OFF_THRESHOLD_PCT, "threshold"
        else:
            falls, rule = said == "lower", "beyond_noise"
        if falls:
            return {
                "x": point.x,
                "group": point.group,
                "tps": point.tps,
                "change_pct": round(change, 2),
                "rule": rule,
            }
    return None


def level_from(
    points: Sequence[Point], peak: int, verdict: Verdict = no_spread_verdict
) -> dict[str, Any] | None:
    """The first point before ``peak`` from which every point up to it is within the noise of
    the peak, as ``{x, group, tps}``; None when the point just before it is not."""
    top, found = points[peak], None
    for point in reversed(points[:peak]):
        if point.tps is None or verdict(top, point) != "within_noise":
            break
        found = point
    return None if found is None else {"x": found.x, "group": found.group, "tps": found.tps}


def curve(
    points: Iterable[Point],
    *,
    machine: str,
    swept: str,
    held_equal: Mapping[str, Any],
    verdict: Verdict = no_spread_verdict,
) -> dict[str, Any] | None:
    """One curve from its points (any order); None with fewer than ``MIN_POINTS`` distinct
    swept values with tps. Two groups at the same swept value are not one curve: the caller
    splits them by what sets them apart."""
    ordered = sorted((p for p in points if p.tps is not None), key=lambda p: p.x)
    xs = [p.x for p in ordered]
    if len(set(xs)) != len(xs):
        raise ValueError(f"two points at {swept} = {xs}")
    if len(ordered) < MIN_POINTS:
        return None
    top = peak_index(ordered)
    assert top is not None
    peak = ordered[top]
    return {
        "id": curve_id(machine, swept, held_equal),
        "machine": machine,
        "swept": swept,
        "held_equal": dict(held_equal),
        "points": [p.as_json() for p in ordered],
        "peak": {"x": peak.x, "group": peak.group, "tps": peak.tps},
        "fall_off": fall_off(ordered, top, verdict),
        "level_from": level_from(ordered, top, verdict),
        "fall_off_threshold_pct": FALL_OFF_THRESHOLD_PCT,
        # Points after the peak measured in another session: a fall there is not judged.
        "not_judged": [
            {"x": p.x, "group": p.group, "tps": p.tps}
            for p in ordered[top + 1 :]
            if verdict(peak, p) == "not_comparable"
        ],
        "groups": [p.group for p in ordered],
    }


def _at(x: float, swept: str) -> str:
    """``with 4 clients`` / ``with 1 client`` / ``at scale 100``."""
    if SWEPT_FIELDS.get(swept) == "clients":
        return f"with {x:g} client" + ("" if x == 1 else "s")
    return f"at {SWEPT_FIELDS.get(swept, swept)} {x:g}"


def _span(first: float, last: float, swept: str) -> str:
    """``from 1 to 128 clients`` / ``from scale 10 to 1000``."""
    if SWEPT_FIELDS.get(swept) == "clients":
        return f"from {first:g} to {last:g} clients"
    return f"from {SWEPT_FIELDS.get(swept, swept)} {first:g} to {last:g}"


def curve_text(made: Mapping[str, Any]) -> str:
    """One plain sentence: where the curve peaks and where (and why) it falls off."""
    swept, peak, points = made["swept"], made["peak"], made["points"]
    session = (made.get("held_equal") or {}).get("repeat.session")
    where = f"{made['machine']}, in bench session {session}" if session else made["machine"]
    text = (
        f"On {where}, {_span(points[0]['x'], points[-1]['x'], swept)}: tps peaks at "
        f"{figure(peak['tps'])} {_at(peak['x'], swept)}"
    )
    level = made.get("level_from")
    if level:
        text += f" ({figure(level['tps'])} {_at(level['x'], swept)} is already within its noise)"
    drop = made["fall_off"]
    if drop is not None:
        why = (
            "outside the noise of the repeats"
            if drop["rule"] == "beyond_noise"
            else f"more than {made['fall_off_threshold_pct']:g}% below; spread not known"
        )
        return (
            f"{text} and falls off: {figure(drop['tps'])} {_at(drop['x'], swept)} "
            f"({change_text(drop['change_pct'])}, {why})."
        )
    if peak["x"] == points[-1]["x"]:
        return f"{text}, the last point measured."
    apart = made.get("not_judged") or []
    if apart:
        shown = ", ".join(f"{figure(p['tps'])} {_at(p['x'], swept)}" for p in apart)
        return (
            f"{text}; after it, {shown} {'was' if len(apart) == 1 else 'were'} measured in "
            "another session than the peak, so whether tps falls off there is not judged."
        )
    return f"{text}; it does not fall off up to the last point ({figure(points[-1]['tps'])})."


def curve_id(machine: str, swept: str, held_equal: Mapping[str, Any]) -> str:
    """A stable slug: machine, what is swept, and a short hash of what is held equal."""
    digest = hashlib.sha256(
        json.dumps(dict(held_equal), sort_keys=True, default=str).encode("utf-8")
    ).hexdigest()[:8]
    name = SWEPT_FIELDS.get(swept, swept.rsplit(".", 1)[-1])
    return f"{machine}-{name}-{digest}"


# ---------------------------------------------------------------------------------------------
# Curves from groups of repeats.


def _percentile_center(group: Group, name: str) -> float | None:
    """Median over the group's runs of one latency percentile from their logs."""
    values = []
    for run in group.runs:
        if not trusted(run):
            continue  # latencies of 0 µs or unverified (analyze/latency_trust.py)
        facts = run.series or {}
        percentiles = (facts.get("results") or {}).get("latency_percentiles_ms") or {}
        value = percentiles.get(name)
        if name in MIN_LATENCIES and logged(facts.get("results") or {}) < MIN_LATENCIES[name]:
            continue  # the sample rules: too few logged latencies for this percentile
        if isinstance(value, int | float) and not isinstance(value, bool):
            values.append(float(value))
    return round(statistics.median(values), 3) if values else None


def point_of(group: Group, swept: str) -> Point:
    """A group as a point of a curve over ``swept``."""
    return Point(
        x=group.factors[swept],
        group=group.id,
        tps=group.center,
        spread=spread_of(group),
        n=group.n,
        latency_ms=latency_center(group),
        p95_ms=_percentile_center(group, "p95"),
        p99_ms=_percentile_center(group, "p99"),
        samples=tuple(group.values) if group.values else None,
        session=session_of(group),
    )


def welch_verdict(peak: Point, point: Point) -> str:
    """The controlled comparisons' verdict (Welch on logs, 95%) of the point against the peak;
    ``not_comparable`` for two points of different sessions (docs/comparisons.md, "Bench
    sessions"): a fall-off is never read from a difference between sessions."""
    if peak.session != point.session:
        return "not_comparable"
    return welch_log(peak.samples, point.samples).verdict


def _sortable_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _pick_one_per_x(groups: list[Group], swept: str) -> tuple[list[Group], list[str]]:
    """One group per swept value: the one with most runs (then the first id); the others are
    returned as left out (the same configuration measured again as a separate group)."""
    by_x: dict[Any, list[Group]] = {}
    for group in groups:
        by_x.setdefault(group.factors[swept], []).append(group)
    kept, left_out = [], []
    for members in by_x.values():
        members.sort(key=lambda g: (-g.n, g.id))
        kept.append(members[0])
        left_out.extend(g.id for g in members[1:])
    return kept, sorted(left_out)


def _differs_also(groups: list[Group]) -> list[dict[str, Any]]:
    """Incidental fields whose values differ along the curve: caveats, one value per point."""
    names = sorted({n for g in groups for n in g.incidental})
    out = []
    for name in names:
        values = [g.incidental.get(name) for g in groups]
        if len({key(v) for v in values}) > 1:
            out.append({"field": name, "values": values})
    return out


def _by_followers(members: list[Group], swept: str) -> list[list[Group]]:
    """The groups of one bucket as curves: one, when the fields that may follow the swept one
    have one value at each swept value (or do not vary); else one curve per value of them."""
    follows = FOLLOWERS.get(swept, ())
    if not follows:
        return [members]

    def value(group: Group) -> tuple[str, ...]:
        return tuple(key(group.factors.get(f)) for f in follows)

    at: dict[Any, set[tuple[str, ...]]] = {}
    for group in members:
        at.setdefault(group.factors[swept], set()).add(value(group))
    if all(len(values) == 1 for values in at.values()):
        return [members]
    parts: dict[tuple[str, ...], list[Group]] = {}
    for group in members:
        parts.setdefault(value(group), []).append(group)
    return list(parts.values())


def _by_session(members: list[Group], swept: str) -> list[tuple[str | None, list[Group]]]:
    """The groups of one curve as curves per bench session, when two or more bench sessions
    each measured at least ``MIN_POINTS`` swept values (and every group belongs to one of
    them); else one curve, ``(None, members)``, whose points may come from several sessions."""
    sessions: dict[str, list[Group]] = {}
    for group in members:
        sessions.setdefault(session_of(group), []).append(group)
    whole = all(
        name.startswith("bench ") and len({key(g.factors[swept]) for g in part}) >= MIN_POINTS
        for name, part in sessions.items()
    )
    if len(sessions) < 2 or not whole:
        return [(None, members)]
    return [(name.removeprefix("bench "), part) for name, part in sorted(sessions.items())]


def curves_of(groups: Sequence[Group], verdict: Verdict = welch_verdict) -> list[dict[str, Any]]:
    """Every curve among the groups: for each swept field, the groups on one machine (same
    hardware) that share every other factor (but those that may follow the swept one, see
    ``FOLLOWERS``), with at least ``MIN_POINTS`` swept values."""
    found: list[dict[str, Any]] = []
    for swept in SWEPT_FIELDS:
        follows = FOLLOWERS.get(swept, ())
        buckets: dict[tuple[Any, ...], list[Group]] = {}
        for group in groups:
            value = group.factors.get(swept)
            if not _sortable_number(value):
                continue
            # factor_key is the sorted (field, value) pairs: drop the swept one and those
            # that may follow it.
            rest_key = tuple(
                item for item in group.factor_key if item[0] != swept and item[0] not in follows
            )
            buckets.setdefault((group.hardware_key, rest_key), []).append(group)
        for bucket in buckets.values():
            for members in _by_followers(bucket, swept):
                for session, part in _by_session(members, swept):
                    made = _curve_of(part, swept, verdict, session)
                    if made is not None:
                        found.append(made)
    found.sort(key=lambda c: (c["machine"], c["swept"], c["id"]))
    return found


def _curve_of(
    members: list[Group], swept: str, verdict: Verdict, session: str | None = None
) -> dict[str, Any] | None:
    """One curve of ``members``; ``session`` when they are one bench session's (held equal)."""
    if len({g.factors[swept] for g in members}) < MIN_POINTS:
        return None
    kept, left_out = _pick_one_per_x(members, swept)
    kept.sort(key=lambda g: g.factors[swept])
    first = kept[0]
    rest = {k: v for k, v in first.factors.items() if k != swept}
    moved = [
        {"field": name, "values": [g.factors.get(name) for g in kept]}
        for name in FOLLOWERS.get(swept, ())
        if len({key(g.factors.get(name)) for g in kept}) > 1
    ]
    for follower in moved:
        rest.pop(follower["field"], None)  # not held equal: it moves with the swept field
    held = {**rest, "repeat.session": session} if session else rest
    made = curve(
        (point_of(g, swept) for g in kept),
        machine=machine_text(first, first),
        swept=swept,
        held_equal=held,
        verdict=verdict,
    )
    if made is None:
        return None
    made["held_equal"] = {f: held[f] for f in (*HEADLINE, "repeat.session") if f in held}
    # The rest, for telling apart curves whose headline fields are all alike (two cloud
    # volumes of one machine): a legend names what sets them apart.
    made["held_other"] = {f: v for f, v in sorted(rest.items()) if f not in made["held_equal"]}
    made["held_equal_count"] = len(rest)
    made["differs_also"] = sorted(moved + _differs_also(kept), key=lambda d: d["field"])
    made["left_out"] = left_out
    made["text"] = curve_text(made)
    return made
