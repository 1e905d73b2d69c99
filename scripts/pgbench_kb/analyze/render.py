"""What ``kb compare`` prints: the readable table (without ``--json``): one block per machine,
one line per comparison (its latency comparisons under it), then the curves, stability over
time, the interactions, the claims and the findings; with ``--json``, the JSON text
(``as_json``)."""

from __future__ import annotations

import uuid
from functools import partial
from typing import Any

from pgbench_kb import jsontext
from pgbench_kb.analyze.describe import caveat_text, value_text
from pgbench_kb.analyze.findings import what_figure
from pgbench_kb.analyze.latency import METRICS
from pgbench_kb.analyze.txcosts import COSTS
from pgbench_kb.numbers import figure
from pgbench_kb.parallel import Forked, cores

VERDICT_TEXT = {
    "higher": "higher",
    "lower": "lower",
    "within_noise": "within noise",
    "spread_unknown": "spread unknown",
    "not_comparable": "not comparable (sessions)",
}


def _figure(side: dict[str, Any]) -> str:
    """A centre as the findings write it (``1,208``, ``80.24``, ``3.303``) and its CV."""
    text = figure(side["center"])
    spread = side.get("spread")
    if spread and spread.get("cv_pct") is not None:
        text += f" ±{spread['cv_pct']:.1f}%"
    return text


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def latency_line(c: dict[str, Any]) -> str:
    """``latency avg (ms)   3.303 ±2.0% → 6.701 ±3.1%   +102.9%  higher: worse``; a cost
    reads ``wal_bytes_per_txn``, its change ``—`` when a side is zero."""
    metric = c["metric"]
    name = f"latency {METRICS[metric][1]} (ms)" if metric in METRICS else metric
    verdict = VERDICT_TEXT[c["verdict"]]
    if c["outcome"] in ("better", "worse"):
        verdict += f": {c['outcome']}"
    change = "—" if c["change_pct"] is None else f"{c['change_pct']:+.1f}%"
    return f"      {name:<30} {_figure(c['a']):>16} → {_figure(c['b']):<16} {change:>8}  {verdict}"


def comparison_lines(c: dict[str, Any], latency: list[dict[str, Any]] | None = None) -> list[str]:
    change = "" if c["change_pct"] is None else f"{c['change_pct']:+.1f}%"
    head = (
        f"  {_short(c['label'], 34):<34} {_figure(c['a']):>16} → {_figure(c['b']):<16} "
        f"{change:>8}  {VERDICT_TEXT[c['verdict']]}"
    )
    lines = [head]
    a, b = c["a"], c["b"]
    if isinstance(a["value"], dict) or c["kind"] == "machine":
        lines.append(f"      A: {a['summary']}")
        lines.append(f"      B: {b['summary']}")
    else:
        lines.append(
            f"      {value_text(a['value'], c['factor'])} → {value_text(b['value'], c['factor'])}"
        )
    if c.get("kind") == "span":
        lines.append(f"      every step at once ({len(c['steps']) - 1} steps)")
    lines.append(f"      figures: {what_figure(a)} → {what_figure(b)}")
    why = (c.get("sessions") or {}).get("why")
    if why:
        lines.append(f"      not comparable: {why}")
    lines.extend(latency_line(x) for x in latency or ())
    untrusted = c.get("latency_untrusted")
    if untrusted:
        lines.append(f"      latency not judged: {untrusted['reason']}")
    for confound in c.get("confounds") or ():
        lines.append(f"      confound: {confound['text']}")
    for caveat in c["differs_also"]:
        lines.append(f"      caveat: {caveat_text(caveat)}")
    lines.append(f"      [{c['id']}]")
    return lines


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def curve_lines(curve: dict[str, Any]) -> list[str]:
    """A curve: its sentence, then one row per point (tps and latency against the swept
    value)."""
    swept = curve["swept"].rsplit(".", 1)[-1]
    lines = [
        f"  {curve['text']}",
        f"      {swept:>8} {'tps ±CV':>18} {'latency ms':>11} {'p95 ms':>8} {'p99 ms':>8} {'n':>3}",
    ]
    for p in curve["points"]:
        tps = _figure({"center": p["tps"], "spread": p["spread"]})
        lines.append(
            f"      {p['x']:>8g} {tps:>18} {_ms(p['latency_ms']):>11} {_ms(p['p95_ms']):>8} "
            f"{_ms(p['p99_ms']):>8} {p['n']:>3}"
        )
    for caveat in curve.get("differs_also") or ():
        values = ", ".join(str(v) for v in caveat["values"])
        lines.append(f"      caveat: {caveat['field']} differs along the curve ({values})")
    lines.append(f"      [{curve['id']}]")
    return lines


def _counts(verdicts: dict[str, int]) -> str:
    return ", ".join(f"{n} {v.replace('_', ' ')}" for v, n in sorted(verdicts.items())) or "-"


def stability_lines(knowledge: dict[str, Any]) -> list[str]:
    """One row per group of repeats with a series, then every run with a stall, a low first or
    last interval, or a failing TPC-E window, in words."""
    summaries = knowledge.get("stability_groups") or []
    entries = knowledge.get("stability") or []
    if not summaries and not entries:
        return []
    out = ["", "stability over time (per group: series, stalls, median interval CV, TPC-E windows)"]
    for s in summaries:
        cv = s["interval_cv_pct_median"]
        sustained = s.get("sustained") or {}
        out.append(
            f"  {s['group']}: {s['series']} series, {s['stalls']} stall(s) in "
            f"{s['runs_with_stalls']} run(s), interval CV {'-' if cv is None else f'{cv:.1f}%'}"
            f"; 10 min: {_counts(sustained.get('10min') or {})}"
            f"; 1 h: {_counts(sustained.get('1h') or {})}"
        )
    notable = [
        (e, x)
        for e in entries
        for x in e["series"]
        if x["stall_count"]
        or x["edge_dips"]
        or "fails" in (r["verdict"] for r in x["sustained"].values())
    ]
    if notable:
        out.append("  runs with a stall, a low first or last interval, or a failing window:")
        out.extend(f"  - {e['run']}: {x['text']}" for e, x in notable)
    return out


def _values(value: Any, factor: str) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k.rsplit('.', 1)[-1]}={value_text(v, k)}" for k, v in value.items())
    return value_text(value, factor)


def pooled_lines(pooled: list[dict[str, Any]]) -> list[str]:
    """The pooled estimates (analyze/pooling.py), one line each, with their family's verdict
    after the Holm adjustment."""
    if not pooled:
        return []
    out = ["", "pooled over bench sessions (B against A; 95% interval; after Holm)"]
    for p in pooled:
        low, high = p["ci95_pct"]
        family = p.get("family") or {}
        adjusted = "significant" if family.get("significant") else "not significant"
        a, b = (_values(p[side], p["factor"]) for side in ("a", "b"))
        out.append(
            f"  {p['machine']}  {p.get('label') or p['factor']} {a} → {b}  "
            f"{p['metric']}  {p['change_pct']:+.1f}% [{low:+.1f}%, {high:+.1f}%]  "
            f"{p['verdict']}, {adjusted} (Holm, family of {family.get('size', 1)})  "
            f"({p['sessions']} sessions) [{p['id']}]"
        )
    return out


def render_table(knowledge: dict[str, Any]) -> str:
    """The whole readable report as text (golden-tested)."""
    out: list[str] = []
    comparisons = [c for c in knowledge["comparisons"] if c.get("metric", "tps") == "tps"]
    latency: dict[str, list[dict[str, Any]]] = {}
    for c in knowledge["comparisons"]:
        if c.get("metric", "tps") != "tps":
            latency.setdefault(c["tps_comparison"], []).append(c)
    groups = knowledge.get("groups", [])
    head = (
        f"{len(comparisons)} comparison(s) among {len(groups)} group(s) of repeats; "
        "figures are tps (centre ±CV when the runs are known), B against A"
    )
    if latency:
        found = [x for listed in latency.values() for x in listed]
        count = sum(1 for x in found if x["metric"] in METRICS)
        costs = sum(1 for x in found if x["metric"] in COSTS)
        head += f"; {count} latency comparison(s)"
        if costs:
            head += f" and {costs} per-transaction cost comparison(s)"
        head += " under their tps line (lower is better)"
    untrusted = knowledge.get("latency_trust") or []
    if untrusted:
        head += f"; latencies of {len(untrusted)} run(s) not judged (latency_trust in --json)"
    out.append(head)
    machine = None
    for c in comparisons:
        if c["machine"] != machine:
            machine = c["machine"]
            out.append("")
            out.append(f"{machine}")
        out.extend(comparison_lines(c, latency.get(c["id"])))
    curves = knowledge.get("curves") or []
    if curves:
        out += ["", "curves (tps and latency against clients or scale)"]
        for curve in curves:
            out.extend(curve_lines(curve))
    out.extend(stability_lines(knowledge))
    out.extend(pooled_lines(knowledge.get("pooled") or []))
    sections = (
        ("interactions", "interactions", "  "),
        ("claims", "the sources' claims, checked", "  - "),
        ("findings", "findings", "  - "),
    )
    for key, heading, bullet in sections:
        items = knowledge.get(key, [])
        if items:
            out += ["", heading, *(f"{bullet}{item['text']}" for item in items)]
    return "\n".join(out) + "\n"


#: From this many comparisons, ``as_json`` has a forked process encode them.
SPLIT_JSON_FROM = 2000


def as_json(knowledge: dict[str, Any]) -> str:
    """The text ``json.dumps(knowledge)`` writes (``kb compare --json``). The comparisons are
    half of it (some 20,000 on 10,000 runs, 35 of 70 MB of JSON): when they are many, a forked
    process encodes them while this one encodes the rest, and they are put back in place."""
    items = knowledge.get("comparisons")
    if not isinstance(items, list) or len(items) < SPLIT_JSON_FROM or cores() < 2:
        return jsontext.plain(knowledge)
    # Where the comparisons go: a string no comparison holds, in their place meanwhile.
    token = f"kb-comparisons-{uuid.uuid4().hex}"
    mark = jsontext.plain(token)
    with Forked(partial(jsontext.plain, items)) as comparisons:
        rest = jsontext.plain({**knowledge, "comparisons": token})
        encoded = comparisons.result()
    head, found, tail = rest.partition(mark)
    if not found or mark in tail:  # cannot be (the mark is new): never a wrong text
        return jsontext.plain(knowledge)
    return f"{head}{encoded}{tail}"
