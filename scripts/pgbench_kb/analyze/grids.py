"""Interactions beyond 2×2: one factor's effect at every value of another.

A *grid* is a set of groups on one machine that are equal in every factor except two, F and
M, where one of them takes three or more values (RAID level over three layouts; several
PostgreSQL versions; clients) — squares of two values each are ``interactions.py``'s. The grid
is read as F's effect at each value of M, F being the factor with fewer values (then the one
whose effect changes sign, then by name), so that each effect is one number per value of M:
"WAL on its own disk: +95% on RAID5, +40% on RAID1+0, +10% on RAID1".

* **Effects**: for each pair of F's values (neighbouring values for a number, every pair
  otherwise; A is the smaller value, or the side with the lower centre at the first value of M
  when the values have no order), the ratio B/A at every value of M where both cells exist,
  with its own verdict (Welch's t on the logarithms, 95%).
* **Contrasts**: for each such pair of F's values, every two values of M: the ratio of the two
  effects and Welch's interval of the interaction contrast (as for a square). With ``m``
  contrasts in one grid the intervals are Bonferroni-widened to ``1 − 0.05/m``, so that a grid
  of many cells does not find a difference in the noise just by having many chances.
* A grid is reported when some contrast lies outside the noise (``verdict: "differs"``), or when
  an effect changes sign and some contrast has no spread (``spread_unknown``: single runs or
  published figures). ``kind`` is ``sign`` when an effect changes sign, ``size`` otherwise.

Grids are found from the controlled single-field pairs: a group is placed, for every two fields
it has a comparison in, in a bucket keyed by everything outside those two fields (a hash, then
checked exactly), so the work grows with the groups and their few varied fields, never with
all pairs of groups.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections import defaultdict
from typing import Any

from pgbench_kb.analyze.describe import value_text
from pgbench_kb.analyze.factors import label
from pgbench_kb.analyze.groups import Group
from pgbench_kb.analyze.interactions import contrast
from pgbench_kb.analyze.pairs import MASK, _numeric, _order_value, machine_text, orient
from pgbench_kb.analyze.verdict import METHOD, welch_log
from pgbench_kb.numbers import figure

ALPHA = 0.05
#: A comparison between two cells: its id, its verdict and the group on its side A.
Known = tuple[str, str, str]


def _sorted_values(values: list[Any]) -> list[Any]:
    """Values in their natural order (unset first, numbers, sizes, versions), else unset first
    and the rest by text."""
    orders = [_order_value(v) for v in values]
    if all(o is not None for o in orders):
        try:
            return [v for _o, v in sorted(zip(orders, values, strict=True))]
        except TypeError:
            pass
    return sorted(values, key=lambda v: (v is not None, str(v)))


def _orderable(values: list[Any]) -> bool:
    orders = [_order_value(v) for v in values]
    if any(o is None for o in orders):
        return False
    kinds = {o[0] for o in orders if o[0] != 0}  # type: ignore[index]
    return len(kinds) <= 1


def _pairs_of(values: list[Any]) -> list[tuple[Any, Any]]:
    present = [v for v in values if v is not None]
    if present and all(_numeric(v) for v in present) and len(values) > 2:
        return list(itertools.pairwise(values))
    return [(x, y) for i, x in enumerate(values) for y in values[i + 1 :]]


def _buckets(
    groups: list[Group], comparisons: list[dict[str, Any]]
) -> tuple[dict[tuple[Any, ...], list[Group]], dict[frozenset[str], Known]]:
    by_id = {g.id: g for g in groups}
    active: dict[str, set[str]] = defaultdict(set)
    comparison_of: dict[frozenset[str], Known] = {}
    for c in comparisons:
        if c["kind"] != "pair":
            continue
        a, b = c["a"]["group"], c["b"]["group"]
        active[a].add(c["factor"])
        active[b].add(c["factor"])
        comparison_of[frozenset((a, b))] = (c["id"], c["verdict"], a)
    buckets: dict[tuple[Any, ...], list[Group]] = defaultdict(list)
    for gid, fields in active.items():
        if len(fields) < 2:
            continue
        group = by_id[gid]
        hashes = {p: hash((p, k)) & MASK for p, k in group.keys.items()}
        total = sum(hashes.values())
        for f1, f2 in itertools.combinations(sorted(fields), 2):
            inside = set(f1.split("+")) | set(f2.split("+"))
            if len(inside) < len(f1.split("+")) + len(f2.split("+")):
                continue  # overlapping factors (a version, and a version with its settings)
            rest = (total - sum(hashes.get(p, 0) for p in inside)) & MASK
            buckets[(group.hardware_key, f1, f2, rest)].append(group)
    return buckets, comparison_of


def key_of(g: Group, factor: str) -> Any:
    """A group's value key on a factor (several fields joined by ``+``: a tuple of keys)."""
    fields = factor.split("+")
    if len(fields) == 1:
        return g.keys.get(factor)
    return tuple(g.keys.get(p) for p in fields)


def value_of(g: Group, factor: str) -> Any:
    """A group's value on a factor (several fields: a mapping field → value)."""
    fields = factor.split("+")
    if len(fields) == 1:
        return g.factors.get(factor)
    return {p: g.factors.get(p) for p in fields}


#: The fields of an emulated commit flush (profile key flush_ms), said as one level.
EMULATED = "storage.flush.emulated."


def _flush_words(value: dict[str, Any]) -> str | None:
    """``an emulated 2 ms flush``, ``the device's own flush under the tracer`` or ``the
    device's own flush`` for a value made of the emulated flush's fields, else None (field by
    field, its method, target and tracer flag read as "flush emulation unset, emulated flush
    latency (ms) unset, flush traced without delay unset")."""
    if not value or not all(str(p).startswith(EMULATED) for p in value):
        return None
    target = value.get(EMULATED + "target_ms")
    if target is not None:
        return f"an emulated {value_text(target, EMULATED + 'target_ms')} ms flush"
    if value.get(EMULATED + "traced_only"):
        return "the device's own flush under the tracer"
    return "the device's own flush"


def words(value: Any, factor: str) -> str:
    if isinstance(value, dict):
        if (flush := _flush_words(value)) is not None:
            return flush
        return ", ".join(f"{label(p)} {value_text(v, p)}" for p, v in value.items())
    return value_text(value, factor)


def _exact(members: list[Group], f1: str, f2: str) -> list[list[Group]]:
    """Split a hash bucket into sets of groups really equal outside ``f1`` and ``f2``."""
    inside = set(f1.split("+")) | set(f2.split("+"))
    parts: list[list[Group]] = []
    for g in members:
        for part in parts:
            first = part[0].keys
            if all(p in inside or first.get(p) == k for p, k in g.keys.items()) and all(
                p in inside or p in g.keys for p in first
            ):
                part.append(g)
                break
        else:
            parts.append([g])
    return parts


def _cells(members: list[Group], f: str, m: str) -> dict[tuple[Any, Any], Group]:
    """(F value key, M value key) → the group there (the one with most runs, then first id)."""
    cells: dict[tuple[Any, Any], Group] = {}
    for g in sorted(members, key=lambda g: (-g.n, g.id)):
        cells.setdefault((key_of(g, f), key_of(g, m)), g)
    return cells


FLIP = {"higher": "lower", "lower": "higher"}


def _effect(a: Group, b: Group, at: dict[str, Any], known: Known | None) -> dict[str, Any]:
    """B against A at one value of the moderator; ``known``: (id, verdict, A's group) of the
    comparison of the two cells when there is one (its verdict is reused, turned round when
    its A is our B)."""
    ratio = b.center / a.center
    if known is None:
        cid, verdict = None, welch_log(a.values, b.values).verdict
    else:
        cid, verdict, a_id = known
        if a_id != a.id:
            verdict = FLIP.get(verdict, verdict)
    return {
        "at": at,
        "comparison": cid,
        "ratio": round(ratio, 4),
        "change_pct": round((ratio - 1) * 100, 2),
        "verdict": verdict,
        "a": a.id,
        "b": b.id,
    }


def _reading(
    cells: dict[tuple[Any, Any], Group],
    f: str,
    m: str,
    comparison_of: dict[frozenset[str], Known],
) -> dict[str, Any] | None:
    """F's effects at each value of M, their contrasts and the verdict; None when there is
    nothing beyond a square or nothing outside the noise."""
    values: dict[str, dict[Any, Any]] = {f: {}, m: {}}
    for g in cells.values():
        values[f][key_of(g, f)] = value_of(g, f)
        values[m][key_of(g, m)] = value_of(g, m)
    f_keys = _sorted_values(list(values[f]))
    m_keys = _sorted_values(list(values[m]))
    lines = []
    for x, y in _pairs_of(f_keys):
        levels = [w for w in m_keys if (x, w) in cells and (y, w) in cells]
        if len(levels) < 2:
            continue
        if not _orderable([values[f][x], values[f][y]]):
            gx, gy = cells[(x, levels[0])], cells[(y, levels[0])]
            first_a, _b = orient(gx, gy, frozenset(f.split("+")))
            if first_a is cells[(y, levels[0])]:
                x, y = y, x
        lines.append((x, y, levels))
    used_f = {k for x, y, _l in lines for k in (x, y)}
    used_m = {w for _x, _y, levels in lines for w in levels}
    if not lines or (len(used_f) < 3 and len(used_m) < 3):
        return None
    tests = sum(len(levels) * (len(levels) - 1) // 2 for _x, _y, levels in lines)
    confidence = 1 - ALPHA / tests
    effects, contrasts, flips = [], [], False
    for x, y, levels in lines:
        row = [
            _effect(
                cells[(x, w)],
                cells[(y, w)],
                {m: values[m][w]},
                comparison_of.get(frozenset((cells[(x, w)].id, cells[(y, w)].id))),
            )
            for w in levels
        ]
        ratios = [e["ratio"] for e in row]
        flips = flips or (any(r > 1 for r in ratios) and any(r < 1 for r in ratios))
        effects.extend(row)
        for (j, wj), (k, wk) in itertools.combinations(enumerate(levels), 2):
            quad = [cells[(x, wj)], cells[(y, wj)], cells[(x, wk)], cells[(y, wk)]]
            test = contrast(quad, confidence)
            contrasts.append(
                {
                    "quad": quad,
                    "values": [values[f][x], values[f][y]],
                    "between": [values[m][wj], values[m][wk]],
                    "ratio_of_ratios": round(row[k]["ratio"] / row[j]["ratio"], 4),
                    "verdict": test["verdict"],
                    "ci": test["ci95_ratio"],
                    "df": test["df"],
                }
            )
    verdicts = {c["verdict"] for c in contrasts}
    if "differs" in verdicts:
        verdict = "differs"
    elif flips and "spread_unknown" in verdicts:
        verdict = "spread_unknown"
    else:
        return None
    return {
        "f": f,
        "m": m,
        "f_values": [values[f][k] for k in f_keys if k in used_f],
        "m_values": [values[m][k] for k in m_keys if k in used_m],
        "lines": lines,
        "effects": effects,
        "contrasts": contrasts,
        "confidence": confidence,
        "flips": flips,
        "verdict": verdict,
    }


def _change(e: dict[str, Any], by_id: dict[str, Group]) -> str:
    a, b = by_id[e["a"]].center, by_id[e["b"]].center
    word = "rose" if e["change_pct"] >= 0 else "fell"
    return f"tps {word} {abs(e['change_pct']):.1f}% ({figure(a)} → {figure(b)})"


def _label(factor: str) -> str:
    fields = factor.split("+")
    names = {p.rsplit(".", 1)[0] for p in fields}
    if len(fields) > 1 and len(names) == 1:
        return label(names.pop())
    return " and ".join(label(p) for p in fields)


def _text(reading: dict[str, Any], machine: str, by_id: dict[str, Group]) -> str:
    """One sentence: every effect with its two centres, then the largest contrast outside the
    noise (or the change of sign when the spread is not known)."""
    f, m = reading["f"], reading["m"]
    rows, i = [], 0
    for _x, _y, levels in reading["lines"]:
        row = reading["effects"][i : i + len(levels)]
        i += len(levels)
        va, vb = value_of(by_id[row[0]["a"]], f), value_of(by_id[row[0]["b"]], f)
        at = "; ".join(
            f"with {words(e['at'][m], m)}, {_change(e, by_id)}"
            + (
                ""
                if e["verdict"] in ("higher", "lower")
                else f" ({e['verdict'].replace('_', ' ')})"
            )
            for e in row
        )
        rows.append(f"{_label(f)} {words(va, f)} → {words(vb, f)}: {at}")
    outside = [c for c in reading["contrasts"] if c["verdict"] == "differs"]
    count = len(reading["contrasts"])
    if outside:
        worst = max(outside, key=lambda c: abs(math.log(c["ratio_of_ratios"])))
        low, high = worst["ci"]
        widened = f", widened for {count} contrasts" if count > 1 else ""
        note = (
            f"the effect differs beyond the noise between {words(worst['between'][0], m)} "
            f"and {words(worst['between'][1], m)} (ratio of the ratios "
            f"{worst['ratio_of_ratios']:.3g}, {100 * reading['confidence']:.4g}% interval "
            f"{low:.3g}–{high:.3g}{widened})"
        )
        if len(outside) > 1:
            note += f"; {len(outside)} of {count} contrasts are outside the noise"
    else:
        cells = [by_id[i] for i in {e[k] for e in reading["effects"] for k in ("a", "b")}]
        unknown = [g for g in cells if not g.values or len(g.values) < 2]
        why = "single runs" if all(g.n <= 1 for g in unknown) else "spread not published"
        note = f"the effect changes sign ({why}, so its size is not tested)"
    return (
        f"On {machine}, the effect of {_label(f)} depends on {_label(m)} "
        f"({len(reading['f_values'])}×{len(reading['m_values'])} groups): "
        f"{'. '.join(rows)}; {note}."
    )


def find_grids(groups: list[Group], comparisons: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every grid (a factor with three or more values crossed with another) where one
    factor's effect changes sign or size beyond the noise, as entries of ``interactions``."""
    by_id = {g.id: g for g in groups}
    buckets, comparison_of = _buckets(groups, comparisons)
    found: dict[str, dict[str, Any]] = {}
    for (_hw, f1, f2, _rest), members in buckets.items():
        if len(members) < 4:
            continue
        keys1 = {key_of(g, f1) for g in members}
        keys2 = {key_of(g, f2) for g in members}
        if len(keys1) < 2 or len(keys2) < 2 or max(len(keys1), len(keys2)) < 3:
            continue
        for same in _exact(members, f1, f2):
            entry = _grid(same, f1, f2, comparison_of, by_id)
            if entry is not None:
                found.setdefault(entry["id"], entry)
    return sorted(found.values(), key=lambda i: (i["machine"], i["factor"], i["id"]))


def _grid(
    members: list[Group],
    f1: str,
    f2: str,
    comparison_of: dict[frozenset[str], Known],
    by_id: dict[str, Group],
) -> dict[str, Any] | None:
    n1 = len({key_of(g, f1) for g in members})
    n2 = len({key_of(g, f2) for g in members})
    if n1 < 2 or n2 < 2 or max(n1, n2) < 3:
        return None
    orders = [(f1, f2), (f2, f1)] if n1 <= n2 else [(f2, f1), (f1, f2)]
    if n1 != n2:
        orders = orders[:1]
    readings = []
    for f, m in orders:
        reading = _reading(_cells(members, f, m), f, m, comparison_of)
        if reading is not None:
            readings.append(reading)
    if not readings:
        return None
    reading = min(readings, key=lambda r: (not r["flips"], r["f"]))
    return _entry(reading, members, comparison_of, by_id)


def _entry(
    reading: dict[str, Any],
    members: list[Group],
    comparison_of: dict[frozenset[str], Known],
    by_id: dict[str, Group],
) -> dict[str, Any]:
    f, m = reading["f"], reading["m"]
    cells = _cells(members, f, m)
    used = sorted({e[k] for e in reading["effects"] for k in ("a", "b")})
    ids = [
        comparison_of[frozenset(p)][0]
        for p in itertools.combinations(used, 2)
        if frozenset(p) in comparison_of
    ]
    digest = hashlib.sha1("|".join([f, m, *used]).encode()).hexdigest()[:10]
    first = by_id[used[0]]
    machine = machine_text(first, first)
    outside = [c for c in reading["contrasts"] if c["verdict"] == "differs"] or reading["contrasts"]
    worst = max(outside, key=lambda c: abs(math.log(c["ratio_of_ratios"])))
    # The plain 95% interval of the contrast shown, beside the widened one that decided.
    plain = contrast(worst["quad"])["ci95_ratio"]
    entry = {
        "id": f"interaction-{digest}",
        "factor": f,
        "with": m,
        "factors": [f, m],
        "machine": machine,
        "kind": "sign" if reading["flips"] else "size",
        "shape": f"{len(reading['f_values'])}x{len(reading['m_values'])}",
        "levels": {f: reading["f_values"], m: reading["m_values"]},
        "cells": [
            {
                "group": g.id,
                "center": g.center,
                "n": g.n,
                "statistic": g.statistic,
                "values": {f: value_of(g, f), m: value_of(g, m)},
            }
            for g in sorted((g for g in cells.values() if g.id in used), key=lambda g: g.id)
        ],
        "effects": [
            {
                **e,
                "a": {"group": e["a"], "value": value_of(by_id[e["a"]], f)},
                "b": {"group": e["b"], "value": value_of(by_id[e["b"]], f)},
            }
            for e in reading["effects"]
        ],
        "ratio_of_ratios": worst["ratio_of_ratios"],
        "verdict": reading["verdict"],
        "test": {
            "method": METHOD if worst["ci"] is not None else None,
            "ci95_ratio": plain,
            "df": worst["df"],
            "confidence": round(reading["confidence"], 6),
            "ci_ratio": worst["ci"],
        },
        "contrasts": [
            {
                "values": c["values"],
                "between": c["between"],
                "ratio_of_ratios": c["ratio_of_ratios"],
                "verdict": c["verdict"],
                "ci_ratio": c["ci"],
                "df": c["df"],
            }
            for c in reading["contrasts"]
        ],
        "comparisons": sorted(ids),
    }
    entry["text"] = _text(reading, machine, by_id)
    return entry
