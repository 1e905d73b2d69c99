"""Controlled comparisons: pairs of groups that differ in one factor (or one named family of
factors) with everything else equal, on the same machines.

Never all pairs of groups: two groups are compared on a field (or family of fields) F only when
all outside F is equal, so groups are bucketed by a hash of it (and the machine) and paired
inside a bucket, each checked exactly: a hash collision cannot pair unlike groups.

* Single fields: all pairs with different values, except numeric fields (clients, scale, a
  numeric setting) and PostgreSQL releases, which pair neighbouring values only (4→8 clients,
  not 1→128; 9.6→10, not 8.0→18: a series of releases is read step by step, and its first
  and last are set side by side by ``analyze/releases.py``).
* Families (``factors.FAMILIES``): a pair differing in several fields is filed under the
  narrowest family holding them all, and kept only as a *step*: when a third group in the same
  bucket lies between the two (A→C and C→B together change exactly what A→B changes), A→B is a
  combination of smaller steps and is left out.
* Spans: when the steps inside one family's bucket form a single chain (the 2010 study's
  cumulative tuning steps), the two ends are compared too: every step at once.
* Machines: groups with every factor equal on different machines are compared with the factor
  ``machine`` (and say so in ``machine``).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from pgbench_kb.analyze import describe
from pgbench_kb.analyze.confounds import confounds_of, same_disks
from pgbench_kb.analyze.factors import FAMILIES, Family, family_of, label, release_order
from pgbench_kb.analyze.groups import Group, latency_center, slug
from pgbench_kb.analyze.latency import outcome
from pgbench_kb.analyze.load import key
from pgbench_kb.analyze.sessions import Between, compared_inside, judge, machine_between

MASK = (1 << 64) - 1

#: The fields ``held_equal`` shows when both sides share them (the rest are counted).
HEADLINE = (
    "postgres.version",
    "benchmark.workload.name",
    "benchmark.scale",
    "benchmark.clients",
    "benchmark.threads",
    "benchmark.query_mode",
    "server.os.name",
    "server.os.release",
    "server.os.kernel",
    "storage.data.array.level",
    "storage.data.array.disks",
    "storage.data.array.media",
    "storage.data.array.rpm",
    "storage.data.filesystem",
    "storage.wal.placement",
    "storage.controller.write_cache",
    "storage.controller.battery_backed",
    "storage.flush.emulated.target_ms",  # issue 30: a page with such a comparison says so
)
#: Settings shown when both sides set them alike (issue 31: the RAID arms' unsaid commit_delay
#: 20000); one left at its default on both is counted, not shown.
HEADLINE_SETTINGS = tuple(
    f"postgres.settings.{name}"
    for name in ("commit_delay", "commit_siblings", "synchronous_commit", "fsync",
                 "full_page_writes", "shared_buffers", "checkpoint_segments",
                 "checkpoint_timeout", "max_wal_size")
)  # fmt: skip

_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*(B|kB|KB|MB|GB|TB)$")
_SIZE_UNITS = {"B": 1, "kB": 1024, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}


@functools.cache
def _families_of(path: str) -> tuple[str, ...]:
    return tuple(f.name for f in FAMILIES if f.contains(path))


class Item:
    """A group with per-field hashes, so 'everything but F' is one subtraction."""

    __slots__ = ("group", "hashes", "outside", "total")

    def __init__(self, group: Group) -> None:
        self.group = group
        self.hashes = {p: hash((p, k)) & MASK for p, k in group.keys.items()}
        self.total = sum(self.hashes.values()) & MASK
        # hash of everything outside each family, in one pass over the fields
        inside = dict.fromkeys((f.name for f in FAMILIES), 0)
        for path, h in self.hashes.items():
            for name in _families_of(path):
                inside[name] += h
        self.outside = {name: (self.total - h) & MASK for name, h in inside.items()}

    def without(self, fields: Iterable[str]) -> int:
        return (self.total - sum(self.hashes.get(f, 0) for f in fields)) & MASK


def differing(a: Group, b: Group) -> frozenset[str]:
    ka, kb = a.keys, b.keys
    return frozenset(p for p in ka.keys() | kb.keys() if ka.get(p) != kb.get(p))


def _order_value(value: Any) -> tuple[int, Any] | None:
    """A sortable form for values with a natural order (unset first), else None."""
    if value is None or value in ((), [], ""):
        return (0, 0)
    if isinstance(value, bool):
        return (1, int(value))
    if isinstance(value, int | float):
        return (2, float(value))
    if isinstance(value, str):
        size = _SIZE.match(value)
        if size:
            return (2, float(size.group(1)) * _SIZE_UNITS[size.group(2)])
        release = release_order(value)
        if release is not None:
            return (3, release)
    return None


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def orient(a: Group, b: Group, fields: frozenset[str]) -> tuple[Group, Group]:
    """Which side is A (the baseline): the smaller value when every differing field has a
    natural order pointing the same way (unset before set, 8.2.14 before 8.4.2, 256MB before
    512MB); otherwise the side with the lower centre. B is reported against A."""
    if "postgres.version" in fields:
        # A version comparison reads old → new, whatever settings come and go with it.
        va = _order_value(a.factors.get("postgres.version"))
        vb = _order_value(b.factors.get("postgres.version"))
        if va is not None and vb is not None and va[0] == vb[0] and va != vb:
            return (a, b) if va < vb else (b, a)
    signs = set()
    for field in fields:
        va, vb = _order_value(a.factors.get(field)), _order_value(b.factors.get(field))
        if va is None or vb is None or (va[0] != vb[0] and 0 not in (va[0], vb[0])):
            signs.add("?")
            break
        signs.add((va > vb) - (va < vb))
    if signs == {-1}:
        return a, b
    if signs == {1}:
        return b, a
    return (a, b) if (a.center, a.id) <= (b.center, b.id) else (b, a)


def side(
    group: Group, fields: frozenset[str], composite: bool, on_machines: bool = False
) -> dict[str, Any]:
    if on_machines:
        value: Any = group.machine
        summary = group.machine
        if fields:
            summary += f" ({describe.difference(group.factors, fields)})"
    elif composite:
        value = {f: group.factors.get(f) for f in sorted(fields)}
        summary = describe.difference(group.factors, fields)
    else:
        value = group.factors.get(next(iter(fields)))
        summary = describe.difference(group.factors, fields)
    return {
        "value": value,
        "summary": summary,
        "group": group.id,
        "runs": [r.id for r in group.runs],
        "n": group.n,
        "statistic": group.statistic,
        "published": group.published,
        "center": group.center,
        "spread": group.spread,
        "latency_avg_ms": latency_center(group),
    }


def machine_text(a: Group, b: Group) -> str:
    def one(g: Group) -> str:
        client = g.client_machine
        return f"{g.machine} (client {client})" if client and client != g.machine else g.machine

    left, right = one(a), one(b)
    return left if left == right else f"{left} vs {right}"


def comparison_id(factor: str, family: str, a: Group, b: Group) -> str:
    """``commit-delay-061c78a858``: the field (or family) and a hash of factor and both groups,
    stable as long as the group ids are."""
    digest = hashlib.sha1(f"{factor}|{a.id}|{b.id}".encode()).hexdigest()[:10]
    short = factor.split(".")[-1] if family == "single" else family
    return f"{slug(short, 40)}-{digest}"


def compare(
    a: Group,
    b: Group,
    fields: frozenset[str],
    family: Family | None,
    kind: str = "pair",
    between: dict[Any, Between] | None = None,
    inside: set[frozenset[tuple[Any, Any]]] | None = None,
) -> dict[str, Any]:
    """One comparison of B against A. ``fields``: the factors that differ (for a machine
    comparison, the storage fields that differ with the machine); ``between``: the machines'
    between-session variances (``sessions.machine_between``), without which a comparison
    across bench sessions is ``not_comparable``; ``inside``: the pairs of configurations
    compared inside one session (``sessions.compared_inside``), which are not judged across."""
    on_machines = kind == "machine"
    composite = len(fields) > 1 and not on_machines
    factor = "+".join(["machine", *sorted(fields)] if on_machines else sorted(fields))
    ratio = b.center / a.center if a.center else None
    a_keys, b_keys = a.keys, b.keys
    held = {
        f: a.factors[f]
        for f in HEADLINE
        if f in a_keys and f not in fields and a_keys[f] == b_keys.get(f)
    }
    held.update(
        (f, a.factors[f])
        for f in HEADLINE_SETTINGS
        if a.factors.get(f) is not None and f not in fields and a_keys.get(f) == b_keys.get(f)
    )
    differs_also = [
        {"field": f, "a": a.incidental.get(f), "b": b.incidental.get(f)}
        for f in sorted(a.incidental.keys() | b.incidental.keys())
        if key(a.incidental.get(f)) != key(b.incidental.get(f))
    ]
    test, sessions = judge(a, b, _values, between or {}, differs_also, inside)
    if on_machines:
        family_name = "machine"
        text = "machine" if not fields else "machine and its storage"
    else:
        family_name = family.name if composite and family else "single"
        text = label(factor) if not composite else (family.label if family else factor)
    return {
        "id": comparison_id(factor, family_name, a, b),
        "factor": factor,
        "factor_family": family_name,
        "label": text,
        "kind": kind,
        "metric": "tps",
        "machine": machine_text(a, b),
        "held_equal": held,
        # every factor outside ``fields`` is equal by construction (the buckets are exact)
        "held_equal_count": len(a.keys.keys() - fields),
        "differs_also": differs_also,
        "a": side(a, fields, composite, on_machines),
        "b": side(b, fields, composite, on_machines),
        "ratio": None if ratio is None else round(ratio, 4),
        "change_pct": None if ratio is None else round((ratio - 1) * 100, 2),
        "verdict": test.verdict,
        "test": test.as_dict(),
        "sessions": sessions,
        "confounds": confounds_of(a, b, fields),
        "same_disks": same_disks(a, b, fields),
        "better_when": "higher",
        "outcome": outcome(test.verdict, "tps"),
    }


def _values(group: Group) -> list[float] | None:
    return group.values


def _same_outside(x: Group, y: Group, inside: Any) -> bool:
    kx, ky = x.keys, y.keys
    return all(inside(p) or ky.get(p) == k for p, k in kx.items()) and all(
        inside(p) or p in kx for p in ky
    )


def _exact(bucket: list[Item], fields: frozenset[str] | Family) -> list[list[Item]]:
    """Split a hash bucket into the sets of groups that really are equal outside ``fields``
    (nearly always one set: the hash only narrows the search)."""
    inside = fields.contains if isinstance(fields, Family) else fields.__contains__
    parts: list[list[Item]] = []
    for item in bucket:
        for part in parts:
            if _same_outside(part[0].group, item.group, inside):
                part.append(item)
                break
        else:
            parts.append([item])
    return [part for part in parts if len(part) > 1]


def single_field_pairs(items: list[Item]) -> list[tuple[Group, Group, frozenset[str]]]:
    by_machine: dict[Any, list[Item]] = defaultdict(list)
    for item in items:
        by_machine[item.group.hardware_key].append(item)
    pairs = []
    for members in by_machine.values():
        paths = sorted({p for item in members for p in item.group.factors})
        buckets: dict[tuple[str, int], list[Item]] = defaultdict(list)
        for item in members:
            for path in paths:
                buckets[(path, (item.total - item.hashes.get(path, 0)) & MASK)].append(item)
        # A lone group in its bucket pairs with nothing: left out before sorting.
        shared = sorted(((k, b) for k, b in buckets.items() if len(b) > 1), key=lambda kv: kv[0])
        for (path, _), bucket in shared:
            if len({i.group.keys.get(path) for i in bucket}) < 2:
                continue  # one value of the field: repeats of one configuration, no pair
            for same in _exact(bucket, frozenset((path,))):
                pairs.extend(_pairs_on(same, path))
    return pairs


def _pairs_on(members: list[Item], path: str) -> list[tuple[Group, Group, frozenset[str]]]:
    by_value: dict[Any, list[Group]] = defaultdict(list)
    for item in members:
        by_value[item.group.keys.get(path)].append(item.group)
    if len(by_value) < 2:
        return []
    fields = frozenset((path,))
    values = list(by_value)
    present = [v for v in values if v is not None]
    if present and all(_numeric(v) for v in present) and len(values) > 2:
        ordered = sorted(values, key=lambda v: (v is not None, v if v is not None else 0))
        steps = itertools.pairwise(ordered)
    elif path == "postgres.version" and len(values) > 2 and all(map(release_order, values)):
        steps = itertools.pairwise(sorted(values, key=release_order))
    else:
        ordered = sorted(values, key=lambda v: str(v))
        steps = ((x, y) for i, x in enumerate(ordered) for y in ordered[i + 1 :])
    return [(ga, gb, fields) for x, y in steps for ga in by_value[x] for gb in by_value[y]]


def _one_configuration(bucket: list[Item]) -> bool:
    """Whether every group of ``bucket`` has the same factors. Equal factors give equal
    ``total`` hashes, so two different totals answer at once, without comparing the long
    ``factor_key`` tuples."""
    if len({i.total for i in bucket}) > 1:
        return False
    return len({i.group.factor_key for i in bucket}) < 2


def family_pairs(
    items: list[Item], family: Family
) -> tuple[list[tuple[Group, Group, frozenset[str]]], list[list[Group]]]:
    """Step pairs filed under ``family``, and each bucket's groups (for spans)."""
    buckets: dict[tuple[Any, int], list[Item]] = defaultdict(list)
    for item in items:
        buckets[(item.group.hardware_key, item.outside[family.name])].append(item)
    pairs = []
    bucket_groups = []
    for bucket in buckets.values():
        if len(bucket) < 2 or _one_configuration(bucket):
            continue  # one configuration: nothing differs inside the family
        for same in _exact(bucket, family):
            groups = [i.group for i in same]
            bucket_groups.append(groups)
            diffs = {
                (x.id, y.id): differing(x, y) for i, x in enumerate(groups) for y in groups[i + 1 :]
            }

            def diff(x: Group, y: Group, diffs: dict = diffs) -> frozenset[str]:
                return diffs.get((x.id, y.id)) or diffs.get((y.id, x.id)) or frozenset()

            for (xid, yid), fields in diffs.items():
                if len(fields) < 2 or family_of(fields) is not family:
                    continue
                x = next(g for g in groups if g.id == xid)
                y = next(g for g in groups if g.id == yid)
                between = any(
                    c is not x and c is not y and lies_between(c, x, y, fields, diff)
                    for c in groups
                )
                if not between:
                    pairs.append((x, y, fields))
    return pairs, bucket_groups


def lies_between(c: Group, a: Group, b: Group, fields: frozenset[str], diff: Any) -> bool:
    """True when C is a stop on the way from A to B: it differs from both, only in fields where
    A and B differ, and on each of them it holds A's value, B's value or (for values with a
    natural order) one in between. Then A→B is two smaller steps and not a step of its own."""
    to_c, from_c = diff(a, c), diff(c, b)
    if not to_c or not from_c or not to_c <= fields or not from_c <= fields:
        return False
    for field in fields:
        vc = c.keys.get(field)
        va, vb = a.keys.get(field), b.keys.get(field)
        if vc in (va, vb):
            continue
        if None in (va, vb) and not field.startswith("postgres.settings."):
            # "no WAL array" is not below "a 10k rpm WAL array"; an unset setting is the
            # server's default, which tuning steps raise from.
            return False
        oa, ob, oc = (_order_value(g.factors.get(field)) for g in (a, b, c))
        if oa is None or ob is None or oc is None:
            return False
        try:
            if not (min(oa, ob) < oc < max(oa, ob)):
                return False
        except TypeError:
            return False
    return True


def machine_pairs(groups: list[Group]) -> list[tuple[Group, Group, frozenset[str]]]:
    """Groups on different machines with every factor but storage equal (the disks belong to
    the machine; the storage fields that differ are named with it)."""
    by_config: dict[tuple[Any, ...], list[Group]] = defaultdict(list)
    for group in groups:
        rest = tuple(sorted((p, k) for p, k in group.keys.items() if not p.startswith("storage.")))
        by_config[rest].append(group)
    pairs = []
    for members in by_config.values():
        for i, x in enumerate(members):
            for y in members[i + 1 :]:
                if x.hardware_key != y.hardware_key:
                    pairs.append((x, y, differing(x, y)))
    return pairs


def _chain(groups: list[Group], edges: dict[str, set[str]]) -> list[Group] | None:
    """The groups in order when the step edges among them form one simple path."""
    ids = {g.id for g in groups}
    adjacent = {g: sorted(edges.get(g, set()) & ids) for g in ids}
    ends = [g for g, near in adjacent.items() if len(near) == 1]
    if len(ids) < 3 or len(ends) != 2 or any(len(n) > 2 for n in adjacent.values()):
        return None
    by_id = {g.id: g for g in groups}
    order, previous = [min(ends)], None
    while len(order) < len(ids):
        nxt = [g for g in adjacent[order[-1]] if g != previous]
        if not nxt:
            return None
        previous = order[-1]
        order.append(nxt[0])
    return [by_id[g] for g in order]


def _cumulative(chain: list[Group]) -> list[Group] | None:
    """The chain in the direction where no step unsets a field an earlier step set (the way
    tuning steps pile up), or None when neither direction is cumulative (a star of changes
    from one baseline is not a chain of steps)."""

    def piles_up(order: list[Group]) -> bool:
        return all(
            not any(k is not None and y.keys.get(p) is None for p, k in x.keys.items())
            for x, y in itertools.pairwise(order)
        )

    if piles_up(chain):
        return chain
    if piles_up(chain[::-1]):
        return chain[::-1]
    return None


def find_comparisons(groups: list[Group]) -> list[dict[str, Any]]:
    """Every controlled comparison among ``groups``, sorted by machine, factor and id."""
    items = [Item(g) for g in groups]
    between = machine_between(groups)
    inside = compared_inside(groups)
    found: dict[tuple[str, str], dict[str, Any]] = {}
    edges: dict[str, set[str]] = defaultdict(set)

    def add(x: Group, y: Group, fields: frozenset[str], family: Family | None, kind: str) -> None:
        pair = tuple(sorted((x.id, y.id)))
        if pair in found:
            return
        a, b = orient(x, y, fields)
        found[pair] = compare(a, b, fields, family, kind, between, inside)  # type: ignore[index]
        if kind == "pair" and fields:
            edges[x.id].add(y.id)
            edges[y.id].add(x.id)

    for x, y, fields in single_field_pairs(items):
        add(x, y, fields, None, "pair")
    bucket_sets: list[tuple[Family, list[Group]]] = []
    for family in FAMILIES:
        pairs, buckets = family_pairs(items, family)
        for x, y, fields in pairs:
            add(x, y, fields, family, "pair")
        bucket_sets.extend((family, b) for b in buckets)
    for family, members in bucket_sets:
        chain = _chain(members, edges)
        if chain is None:
            continue
        chain = _cumulative(chain)
        if chain is None:
            continue
        first, last = chain[0], chain[-1]
        fields = differing(first, last)
        if len(fields) > 1 and family_of(fields) is family:
            pair = tuple(sorted((first.id, last.id)))
            if pair not in found:
                a, b = first, last
                ordered = chain
                result = compare(a, b, fields, family, "span", between, inside)
                result["steps"] = [g.id for g in ordered]
                found[pair] = result  # type: ignore[index]
    for x, y, fields in machine_pairs(groups):
        add(x, y, fields, None, "machine")
    return sorted(found.values(), key=lambda c: (c["machine"], c["factor"], c["id"]))
