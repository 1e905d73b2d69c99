"""The sources' claims, checked by the data (``data/claims.yaml``).

A claim is one of five kinds (``kind``, default ``comparison``):

* ``comparison`` — the controlled pair comparisons of one factor (machine, a factor field and
  its two values, optionally fields both groups share), as ``analyze/pairs.py`` found them;
* ``groups`` — two sets of groups chosen by their own field values (``a`` and ``b``), paired
  where they share the ``same`` fields: for a point that is not one factor's step, such as the
  same four disks arranged as one array or as two;
* ``ranking`` — an order of several groups (each item chosen by its fields; a list of items
  is one tier whose inner order is not claimed), highest throughput first;
* ``figures`` — published values of a metric before and after (``a`` and ``b``), each a
  number or a ``[low, high]`` range, checked against the groups' own values;
* ``path`` — steps taken one after another, each step's change and the change since the
  first shown, the whole judged as a ``comparison`` (``analyze/claim_path.py``).

``comparison`` and ``groups`` claims expect a direction (``higher``, ``lower``,
``unchanged``) with optionally a minimum change, a size such as "doubled", a bound for "up to"
(``up_to_pct``: the largest change of all is about that), or no change. The verdict is

* ``holds`` — every check agrees;
* ``holds on one version only`` — it agrees on some PostgreSQL versions and not on others;
* ``holds in part`` — it agrees on some checks and not others, not split by version;
* ``not supported by its own figures`` — no check agrees;
* ``cannot be checked`` — the claim names no figures (``concerns: null``, e.g. a chart-only
  result), nothing in the runs matches, or every check was set aside.

``set_aside`` names groups a source itself distrusts (field values, and ``why``): a check
touching one is reported with the reason but does not count towards the verdict. A check
agrees on the change of the centres; the comparison's own verdict (``within_noise``,
``spread_unknown``) and caveats are reported beside it, and so is a change in the number of
disks the two sides use (data array plus a WAL array of its own).

The file is read and validated by ``analyze/claims_file.py`` (its schema:
``runs/schemas/claims.schema.json``).
"""

from __future__ import annotations

from itertools import product
from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.analyze.claims_file import CLAIMS_FILE, load_claims
from pgbench_kb.analyze.factors import label
from pgbench_kb.analyze.load import key

__all__ = ["CLAIMS_FILE", "check_claim", "check_claims", "load_claims"]
#: Metrics a ``figures`` claim may name, and the group entry's key holding each.
METRICS = {
    "tps": "center",
    "latency_avg_ms": "latency_avg_ms",
    "latency_stddev_ms": "latency_stddev_ms",
    "latency_max_ms": "latency_max_ms",
}
#: How a figure's metric reads in the text (not its field name; issue 31).
FIGURE_WORDS = {
    "tps": "tps",
    "latency_avg_ms": "average latency (ms)",
    "latency_stddev_ms": "latency standard deviation (ms)",
    "latency_max_ms": "worst latency (ms)",
}


def _side_value(side: dict[str, Any], field: str) -> Any:
    value = side["value"]
    return value.get(field) if isinstance(value, dict) else value


def _field(group: dict[str, Any], field: str) -> Any:
    """A group's value of a run-file field: its factors, else its incidental fields."""
    if field in group["factors"]:
        return group["factors"][field]
    return (group.get("incidental") or {}).get(field)


def _key(value: Any) -> Any:
    """``key`` with a flattened list (a tuple in the groups) the same as the list a claim
    writes."""
    return key(list(value) if isinstance(value, tuple) else value)


def _fits(group: dict[str, Any], fields: dict[str, Any]) -> bool:
    return all(_key(_field(group, f)) == _key(v) for f, v in fields.items() if f != "label")


def _select(
    groups: dict[str, dict[str, Any]], concerns: dict[str, Any], fields: dict[str, Any]
) -> list[dict[str, Any]]:
    machine, where = concerns.get("machine"), concerns.get("where") or {}
    return [
        g
        for g in groups.values()
        if (machine is None or g["machine"] == machine) and _fits(g, where) and _fits(g, fields)
    ]


def _disks(group: dict[str, Any]) -> int | None:
    """Disks the run used: the data array's, plus the WAL array's when it has its own."""
    data = group["factors"].get("storage.data.array.disks")
    if data is None:
        return None
    if group["factors"].get("storage.wal.placement") in ("own-array", "own-disk"):
        wal = group["factors"].get("storage.wal.array.disks")
        return None if wal is None else data + wal
    return data


def _matches(
    claim: dict[str, Any], groups: dict[str, dict[str, Any]], comparisons: list[dict[str, Any]]
) -> list[tuple[dict[str, Any], dict[str, Any], float, dict[str, Any] | None]]:
    """Matching pair comparisons as (group A, group B, B over A, the comparison)."""
    concerns = claim["concerns"]
    field, want_a, want_b = concerns["factor"], key(concerns["a"]), key(concerns["b"])
    where = concerns.get("where") or {}
    out = []
    for c in comparisons:
        if c["kind"] != "pair" or field not in c["factor"].split("+"):
            continue
        if concerns["machine"] not in (groups[c["a"]["group"]]["machine"], c["machine"]):
            continue
        va, vb = key(_side_value(c["a"], field)), key(_side_value(c["b"], field))
        ga, gb = groups[c["a"]["group"]], groups[c["b"]["group"]]
        if (va, vb) == (want_a, want_b):
            pair = (ga, gb, c["b"]["center"] / c["a"]["center"])
        elif (va, vb) == (want_b, want_a):
            pair = (gb, ga, c["a"]["center"] / c["b"]["center"])
        else:
            continue
        factors = ga["factors"]
        if all(key(factors.get(f)) == key(v) for f, v in where.items()):
            out.append((*pair, c))
    return out


def _group_pairs(
    claim: dict[str, Any], groups: dict[str, dict[str, Any]]
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Every (A, B) of a groups or figures claim: A and B chosen by their fields, paired where
    they share the ``same`` fields."""
    concerns = claim["concerns"]
    same = concerns.get("same") or []
    side_a = _select(groups, concerns, concerns["a"])
    side_b = _select(groups, concerns, concerns["b"])
    return [
        (ga, gb)
        for ga, gb in product(side_a, side_b)
        if ga["id"] != gb["id"] and all(_key(_field(ga, f)) == _key(_field(gb, f)) for f in same)
    ]


def _agrees(expects: dict[str, Any], ratio: float) -> bool:
    change = (ratio - 1) * 100
    direction = expects["direction"]
    if direction == "unchanged":
        return abs(change) <= float(expects.get("within_pct", 5))
    if "up_to_pct" in expects:
        return change <= float(expects["up_to_pct"]) + float(expects.get("tolerance_pts", 1))
    if (direction == "higher") != (ratio > 1) or ratio == 1:
        return False
    if "at_least_pct" in expects and abs(change) < float(expects["at_least_pct"]):
        return False
    if "about_ratio" in expects:
        tolerance = float(expects.get("tolerance_pct", 10)) / 100
        target = float(expects["about_ratio"])
        if abs(ratio / target - 1) > tolerance:
            return False
    return True


def _aside(claim: dict[str, Any], *sides: dict[str, Any]) -> str | None:
    for aside in claim.get("set_aside") or []:
        if any(_fits(g, aside["where"]) for g in sides):
            return str(aside["why"])
    return None


def _version(ga: dict[str, Any], gb: dict[str, Any]) -> Any:
    """The PostgreSQL version both sides ran (None when they differ or it is unknown)."""
    va, vb = ga["factors"].get("postgres.version"), gb["factors"].get("postgres.version")
    return va if va == vb else None


def _base(claim: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": claim["id"],
        "kind": claim.get("kind", "comparison"),
        "source": claim.get("source"),
        "claim": claim.get("claim"),
        "concerns": claim.get("concerns"),
        "expects": claim.get("expects"),
        "notes": claim.get("notes"),
    }


def _unchecked(claim: dict[str, Any], reason: str) -> dict[str, Any]:
    return {
        **_base(claim),
        "verdict": "cannot be checked",
        "reason": reason,
        "checks": [],
        "set_aside": [],
        "holds_on": None,
        "checked": None,
        "text": _with_notes(claim, f"{claim.get('claim')} — cannot be checked: {reason}."),
    }


def _with_notes(claim: dict[str, Any], text: str) -> str:
    notes = claim.get("notes")
    return f"{text} {notes.strip()}" if notes else text


def _verdict(checks: list[dict[str, Any]]) -> tuple[str, set[Any]]:
    agree = [x for x in checks if x["agrees"]]
    if len(agree) == len(checks):
        return "holds", set()
    if not agree:
        return "not supported by its own figures", set()
    yes = {x["version"] for x in agree}
    no = {x["version"] for x in checks if not x["agrees"]}
    only = not yes & no and len(yes) == 1
    return ("holds on one version only" if only else "holds in part"), yes


def _pair_checks(claim: dict[str, Any], groups: dict[str, dict[str, Any]], comparisons):
    if claim.get("kind", "comparison") == "comparison":
        found = _matches(claim, groups, comparisons)
    else:
        found = [
            (ga, gb, gb["center"] / ga["center"], None) for ga, gb in _group_pairs(claim, groups)
        ]
    checks = []
    for ga, gb, ratio, c in found:
        disks = [_disks(ga), _disks(gb)]
        checks.append(
            {
                "comparison": c["id"] if c else None,
                "groups": [ga["id"], gb["id"]],
                "version": _version(ga, gb),
                "ratio": round(ratio, 4),
                "change_pct": round((ratio - 1) * 100, 2),
                "agrees": _agrees(claim["expects"], ratio),
                "verdict": c["verdict"] if c else None,
                "caveats": [d["field"] for d in c["differs_also"]] if c else [],
                "disks": disks if None not in disks else None,
                "set_aside": _aside(claim, ga, gb),
            }
        )
    return sorted(checks, key=lambda x: (str(x["version"]), x["change_pct"]))


def _figures_text(checks: list[dict[str, Any]]) -> str:
    parts = []
    for x in checks:
        text = f"{x['change_pct']:+.1f}%" + (f" on {x['version']}" if x["version"] else "")
        if x["disks"] and x["disks"][0] != x["disks"][1]:
            text += f" ({x['disks'][0]} → {x['disks'][1]} disks)"
        parts.append(text)
    return ", ".join(parts)


def check_pairs(
    claim: dict[str, Any], groups: dict[str, dict[str, Any]], comparisons: list[dict[str, Any]]
) -> dict[str, Any]:
    all_checks = _pair_checks(claim, groups, comparisons)
    if not all_checks:
        nothing = "no computed comparison matches it"
        if claim.get("kind", "comparison") == "groups":
            nothing = "no pair of groups in the runs matches it"
        return _unchecked(claim, claim.get("reason") or nothing)
    checks = [x for x in all_checks if not x["set_aside"]]
    aside = [x for x in all_checks if x["set_aside"]]
    aside_text = "; ".join(
        f"set aside: {_figures_text([x])}, because {x['set_aside']}" for x in aside
    )
    if not checks:
        return {
            **_unchecked(claim, f"every matching figure is set aside ({aside_text})"),
            "set_aside": aside,
        }
    expects = claim["expects"]
    verdict, yes = _verdict(checks)
    if "up_to_pct" in expects and verdict == "holds":
        top = max(x["change_pct"] for x in checks)
        if top < float(expects["up_to_pct"]) - float(expects.get("tolerance_pts", 1)):
            verdict = "not supported by its own figures"
    figures = _figures_text(checks)
    notes = sorted(
        {x["verdict"] for x in checks if x["verdict"]} & {"spread_unknown", "within_noise"}
    )
    if notes:
        figures += "; " + " and ".join(n.replace("_", " ") for n in notes)
    caveats = sorted({f for x in checks for f in x["caveats"]})
    if caveats:
        figures += "; caveat: " + ", ".join(label(f) for f in caveats) + " also differs"
    if aside_text:
        figures += "; " + aside_text
    shown = verdict
    if verdict == "holds on one version only":
        shown = f"holds on {next(iter(yes))} only"
    elif aside and verdict != "cannot be checked":
        versions = sorted({str(x["version"]) for x in checks if x["version"]})
        if versions:
            shown = f"{verdict} on {', '.join(versions)}"
    return {
        **_base(claim),
        "verdict": verdict,
        "reason": None,
        "checks": checks,
        "set_aside": aside,
        "holds_on": sorted(yes) if verdict == "holds on one version only" else None,
        "checked": figures,
        "text": _with_notes(claim, f"{claim.get('claim')} — {shown}: {figures}."),
    }


def _item_label(item: dict[str, Any]) -> str:
    return str(item.get("label") or ", ".join(f"{label(f)} {v}" for f, v in item.items()))


def check_ranking(claim: dict[str, Any], groups: dict[str, dict[str, Any]]) -> dict[str, Any]:
    tiers = [t if isinstance(t, list) else [t] for t in claim["expects"]["order"]]
    places: list[tuple[int, dict[str, Any], dict[str, Any]]] = []
    missing, ambiguous = [], []
    for rank, tier in enumerate(tiers):
        for item in tier:
            found = _select(groups, claim["concerns"], item)
            if not found:
                missing.append(_item_label(item))
            elif len(found) > 1:
                ambiguous.append(f"{_item_label(item)} ({len(found)} groups)")
            else:
                places.append((rank, item, found[0]))
    if missing or ambiguous:
        why = []
        if missing:
            why.append("no figures in the runs for " + ", ".join(missing))
        if ambiguous:
            why.append("more than one group for " + ", ".join(ambiguous))
        reason = "; ".join(why)
        if claim.get("reason"):
            reason = f"{claim['reason'].strip().rstrip('.')} ({reason})"
        return _unchecked(claim, reason)
    checks = []
    for (ra, ia, ga), (rb, ib, gb) in product(places, places):
        if ra < rb:
            ratio = ga["center"] / gb["center"]
            checks.append(
                {
                    "comparison": None,
                    "groups": [gb["id"], ga["id"]],
                    "above": _item_label(ia),
                    "below": _item_label(ib),
                    "version": _version(ga, gb),
                    "ratio": round(ratio, 4),
                    "change_pct": round((ratio - 1) * 100, 2),
                    "agrees": ratio > 1,
                    "verdict": None,
                    "caveats": [],
                    "disks": None,
                    "set_aside": None,
                }
            )
    verdict, _ = _verdict(checks)
    if verdict == "holds on one version only":
        verdict = "holds in part"
    ranked = sorted(places, key=lambda p: -p[2]["center"])
    order = " > ".join(f"{_item_label(i)} {g['center']:,.0f}" for _, i, g in ranked)
    wrong = [f"{x['below']} above {x['above']}" for x in checks if not x["agrees"]]
    figures = f"tps {order}" + (f"; out of order: {', '.join(wrong)}" if wrong else "")
    return _checked(claim, verdict, checks, figures)


def _checked(
    claim: dict[str, Any], verdict: str, checks: list[dict[str, Any]], figures: str
) -> dict[str, Any]:
    """A ranking or figures claim checked: its verdict, checks and figures in words."""
    return {
        **_base(claim),
        "verdict": verdict,
        "reason": None,
        "checks": checks,
        "set_aside": [],
        "holds_on": None,
        "checked": figures,
        "text": _with_notes(claim, f"{claim.get('claim')} — {verdict}: {figures}."),
    }


def _within(value: float, want: Any, tolerance_pct: float) -> bool:
    if isinstance(want, list):
        return want[0] <= value <= want[1]
    return abs(value / float(want) - 1) * 100 <= tolerance_pct


def _shown(want: Any) -> str:
    if isinstance(want, list):
        return f"{fmt.figure(float(want[0]))}–{fmt.figure(float(want[1]))}"
    return fmt.figure(float(want))


def check_figures(claim: dict[str, Any], groups: dict[str, dict[str, Any]]) -> dict[str, Any]:
    pairs = _group_pairs(claim, groups)
    if not pairs:
        return _unchecked(claim, claim.get("reason") or "no group of the runs matches it")
    tolerance = float(claim["expects"].get("tolerance_pct", 10))
    checks, unrecorded = [], set()
    for ga, gb in pairs:
        for fig in claim["expects"]["figures"]:
            metric = fig["metric"]
            va, vb = ga.get(METRICS[metric]), gb.get(METRICS[metric])
            if va is None or vb is None:
                unrecorded.add(metric)
                continue
            checks.append(
                {
                    "comparison": None,
                    "groups": [ga["id"], gb["id"]],
                    "metric": metric,
                    "version": _version(ga, gb),
                    "values": [va, vb],
                    "expected": [fig["a"], fig["b"]],
                    "ratio": round(vb / va, 4) if va else None,
                    "change_pct": round((vb / va - 1) * 100, 2) if va else None,
                    "agrees": _within(va, fig["a"], tolerance) and _within(vb, fig["b"], tolerance),
                    "verdict": None,
                    "caveats": [],
                    "disks": None,
                    "set_aside": _aside(claim, ga, gb),
                }
            )
    checks = [x for x in checks if not x["set_aside"]]
    if not checks:
        what = ", ".join(FIGURE_WORDS[m] for m in sorted(unrecorded))
        return _unchecked(claim, f"the runs record no {what}")
    verdict, _ = _verdict(checks)
    # Each figure once: several pairs of groups (two sessions of one configuration…) that read
    # the same would say it twice over.
    figures = ", ".join(
        dict.fromkeys(
            f"{FIGURE_WORDS[x['metric']]} {fmt.figure(float(x['values'][0]))} → "
            f"{fmt.figure(float(x['values'][1]))} "
            f"(published {_shown(x['expected'][0])} → {_shown(x['expected'][1])})"
            for x in checks
        )
    )
    if unrecorded:
        figures += "; not recorded in the runs: " + ", ".join(
            FIGURE_WORDS[m] for m in sorted(unrecorded)
        )
    return _checked(claim, verdict, checks, figures)


def check_claim(
    claim: dict[str, Any], groups: dict[str, dict[str, Any]], comparisons: list[dict[str, Any]]
) -> dict[str, Any]:
    if claim.get("concerns") is None:
        return _unchecked(claim, claim.get("reason") or "it names no figures")
    kind = claim.get("kind", "comparison")
    if kind == "ranking":
        return check_ranking(claim, groups)
    if kind == "figures":
        return check_figures(claim, groups)
    if kind == "path":
        from pgbench_kb.analyze.claim_path import check_path  # it builds on this module

        return check_path(claim, groups)
    return check_pairs(claim, groups, comparisons)


def check_claims(
    claims: list[dict[str, Any]], groups: list[dict[str, Any]], comparisons: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every claim checked against the groups and computed comparisons, in the file's order."""
    by_id = {g["id"]: g for g in groups}
    return [check_claim(claim, by_id, comparisons) for claim in claims]
