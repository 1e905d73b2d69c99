"""Findings: plain sentences with numbers, written from the comparisons and interactions.

A finding is written for every comparison whose verdict is outside the noise (``higher`` or
``lower``) and for every comparison whose spread is unknown (clearly marked "spread not
published" or "single runs", with no verdict, and with what this knowledge base has measured of
noise on comparable groups for scale), never for one within the noise and never for one that is
``not_comparable`` (different bench sessions or sources). Each names its evidence: the
comparison (or interaction) ids and the two groups, and states its conditions (the source and
its year or our bench and its day, the PostgreSQL version). Confounds (``confounds``) and
caveats (``differs_also``) are part of the sentence, so a conclusion resting on a confound says
so where it is read. ``ranking`` orders them for tuners and marks the key ones.

A decided comparison is told only when it is significant after the family-wise adjustment
(``analyze/multiplicity.py``: Holm over the tests of one question, machine and metric). A pair
compared inside several bench sessions is told once, by its pooled estimate
(``analyze/pooling.py``), citing every session's comparison; its sessions' own figures follow.
A commit_delay or commit_siblings comparison with a side whose delay cannot fire
(``inert_commit_delay``) measures no effect of either and is not told.
"""

from __future__ import annotations

from typing import Any

from pgbench_kb.analyze import ranking
from pgbench_kb.analyze.confounds import labelled
from pgbench_kb.analyze.describe import caveat_text, value_text
from pgbench_kb.analyze.latency import METRIC_WORDS, METRICS, outcome
from pgbench_kb.analyze.multiplicity import significant
from pgbench_kb.numbers import figure

#: What a reader needs to place a finding, when it is held equal: (field, how it reads).
_CONTEXT = (
    ("benchmark.workload.name", "{}"),
    ("benchmark.scale", "scale {}"),
    ("benchmark.clients", "{} clients"),
)


def _context(c: dict[str, Any]) -> str:
    """`` (tpcb-like, scale 50, 8 clients)``: the workload and size the finding holds for."""
    held = c.get("held_equal") or {}
    parts = [
        form.format(held[field]).replace("1 clients", "1 client")
        for field, form in _CONTEXT
        if held.get(field) is not None and field not in c["factor"].split("+")
    ]
    return f" ({', '.join(parts)})" if parts else ""


def what_figure(side: dict[str, Any]) -> str:
    """What a figure is: ``one run``, ``median of 3`` (of our runs), ``published mean of 3``
    (a source's statistic, whether or not it listed the runs)."""
    stat, n = side["statistic"], side["n"]
    if stat == "single" or n == 1:
        return "one run"
    return f"published {stat} of {n}" if side.get("published") else f"{stat} of {n}"


def _change(c: dict[str, Any]) -> str:
    a, b = c["a"], c["b"]
    if c["kind"] == "machine":
        what = f"the same configuration on {a['summary']} and {b['summary']}"
    elif isinstance(a["value"], dict):
        what = f"{c['label']}: {a['summary']} → {b['summary']}"
    else:
        field = c["factor"]
        what = f"{c['label']} {value_text(a['value'], field)} → {value_text(b['value'], field)}"
    if c.get("kind") == "span":
        what += f", every step at once ({len(c['steps']) - 1} steps)"
    if c.get("same_disks"):
        what += f" (the same {total_disks(c)} disks, arranged two ways)"
    return what


def total_disks(c: dict[str, Any]) -> int | None:
    value = c["a"]["value"]
    if not isinstance(value, dict):
        return None
    data = value.get("storage.data.array.disks") or 0
    wal = value.get("storage.wal.array.disks") or 0
    return data + wal


def _noise(c: dict[str, Any]) -> str:
    if c["verdict"] == "spread_unknown":
        unknown = [s for s in (c["a"], c["b"]) if not s["spread"]]
        if all(s["n"] <= 1 for s in unknown):
            words = "single runs, so the noise is unknown and no verdict is given"
        else:
            words = "spread not published, so the noise is unknown and no verdict is given"
        return words + _scale_of_noise(c.get("noise_context"))
    low, high = c["test"]["ci95_ratio"]
    basis = (c.get("sessions") or {}).get("basis")
    if basis == "between-session variance":
        between = c["sessions"]["between"]
        where = (
            f"outside the noise of repeats and of bench sessions (the sessions' variance "
            f"estimated from {count(between['configurations'], 'configuration')} measured "
            f"in more than one session, {between['sessions']} session means)"
        )
    elif basis == "one session":
        where = "outside the noise of the repeats, all measured in one bench session"
    elif basis == "one day":
        where = "outside the noise of the repeats, all measured on one day"
    else:
        where = "outside the noise of the repeats"
    return f"{where}: 95% interval of the ratio {low:.3g}–{high:.3g}"


def _scale_of_noise(context: dict[str, Any] | None) -> str:
    """What this knowledge base has measured of noise on comparable groups, for scale."""
    if not context:
        return ""
    low, high = context["cv_pct_min"], context["cv_pct_max"]
    return (
        f"; for scale, the {count(context['groups'], context['workload'] + ' group')} "
        f"with repeats in this knowledge base have run-to-run CVs of {low:.2g}–{high:.2g}% "
        f"(median {context['cv_pct_median']:.2g}%)"
    )


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _caveats(c: dict[str, Any]) -> str:
    out = "".join(" " + sentence for sentence in labelled(c.get("confounds") or []))
    if c["differs_also"]:
        out += " Caveat: " + "; ".join(caveat_text(d) for d in c["differs_also"]) + "."
    return out


def _conditions(c: dict[str, Any], groups: dict[str, dict[str, Any]]) -> str:
    """`` (PgBench, 2006; PostgreSQL 8.0)``: where the numbers come from, when, and the
    version they hold for (when both sides share it)."""
    side = groups.get(c["a"]["group"]) or {}
    other = groups.get(c["b"]["group"]) or {}
    parts = []
    incidental = side.get("incidental") or {}
    when = str(incidental.get("provenance.recorded_at") or "")[:4]
    if side.get("origin") == "transcribed" and side.get("source"):
        parts.append(f"{side['source']}, {when}" if when else str(side["source"]))
    elif side.get("origin") == "measured":
        day = str(incidental.get("provenance.recorded_at") or "")[:10]
        parts.append(f"our bench, {day}" if day else "our bench")
    version = (side.get("factors") or {}).get("postgres.version")
    if version and version == (other.get("factors") or {}).get("postgres.version"):
        parts.append(f"PostgreSQL {version}")
    return f" [{'; '.join(parts)}]" if parts else ""


def _pct(x: float) -> str:
    return f"{'+' if x >= 0 else '−'}{abs(x):.1f}%"


def _pooled_text(p: dict[str, Any]) -> str:
    """``tps +134.0% higher, pooled over 2 bench sessions (95% interval +120.3% to +149.1%)``"""
    low, high = p["ci95_pct"]
    two = "machine's between-session variance" in p["method"]
    basis = (
        "the sessions' heterogeneity taken as the machine's between-session variance, since "
        "two sessions cannot estimate it"
        if two
        else "random effects, DerSimonian-Laird and Hartung-Knapp"
    )
    return (
        f"pooled over {p['sessions']} bench sessions, each comparing the two inside one "
        f"session: {_pct(p['change_pct'])} (95% interval {_pct(low)} to {_pct(high)}; {basis})"
    )


def comparison_finding(
    c: dict[str, Any],
    groups: dict[str, dict[str, Any]] | None = None,
    pooled: dict[str, Any] | None = None,
    evidence: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The sentence of a comparison; with ``pooled``, the sentence of that pooled estimate,
    ``c`` being its first session's comparison and ``evidence`` every session's."""
    a, b = c["a"], c["b"]
    if pooled is not None:
        cited = evidence or [c]
        direction = "higher" if pooled["change_pct"] >= 0 else "lower"
        each = "; ".join(
            f"{_pct(x['change_pct'])} ({figure(x['a']['center'])} → "
            f"{figure(x['b']['center'])}, {what_figure(x['a'])} vs "
            f"{what_figure(x['b'])})"
            for x in cited
        )
        text = (
            f"On {c['machine']}{_context(c)}{_conditions(c, groups or {})}, {_change(c)}: "
            f"tps {abs(pooled['change_pct']):.1f}% {direction}, {_pooled_text(pooled)}. "
            f"Each session: {each}.{_caveats(c)}"
        )
        return {
            "text": text,
            "comparisons": [x["id"] for x in cited],
            "pooled": pooled["id"],
            "groups": [g for x in cited for g in (x["a"]["group"], x["b"]["group"])],
            "machine": c["machine"],
            "verdict": pooled["verdict"],
            "kind": "comparison",
            **ranking.place(_as_pooled(c, pooled)),
        }
    direction = "higher" if c["change_pct"] >= 0 else "lower"
    text = (
        f"On {c['machine']}{_context(c)}{_conditions(c, groups or {})}, {_change(c)}: "
        f"tps {abs(c['change_pct']):.1f}% {direction} "
        f"({figure(a['center'])} → {figure(b['center'])}, "
        f"{what_figure(a)} vs {what_figure(b)}; "
        f"{_noise(c)}).{_caveats(c)}"
    )
    return {
        "text": text,
        "comparisons": [c["id"]],
        "groups": [a["group"], b["group"]],
        "machine": c["machine"],
        "verdict": c["verdict"],
        "kind": "comparison",
        **ranking.place(c),
    }


def _adds(latency: dict[str, Any], reference: str) -> bool:
    """A latency comparison says something of its own: outside the noise, and not the same
    story as ``reference`` (the outcome it would otherwise repeat)."""
    return (
        latency["outcome"] in ("better", "worse")
        and latency["outcome"] != reference
        and significant(latency)
    )


def _latency_clause(c: dict[str, Any]) -> str:
    a, b = c["a"], c["b"]
    estimate = c.get("pooled_estimate")
    if estimate is not None:
        low, high = estimate["ci95_pct"]
        return (
            f"{METRIC_WORDS[c['metric']]} {abs(c['change_pct']):.1f}% {c['verdict']}, "
            f"so {c['outcome']} (pooled over {estimate['sessions']} bench sessions: 95% "
            f"interval {_pct(low)} to {_pct(high)})"
        )
    return (
        f"{METRIC_WORDS[c['metric']]} {abs(c['change_pct']):.1f}% {c['verdict']}, "
        f"so {c['outcome']} ({figure(a['center'])} → {figure(b['center'])} ms, "
        f"{what_figure(a)} vs {what_figure(b)}; {_noise(c)})"
    )


def _tps_words(c: dict[str, Any]) -> str:
    if c["outcome"] in ("better", "worse"):
        pooled = " pooled" if c.get("pooled_estimate") else ""
        return f"tps is{pooled} {abs(c['change_pct']):.1f}% {c['verdict']} ({c['outcome']})"
    if c["outcome"] == "within_noise":
        return "tps is within the noise"
    return "the noise of tps is unknown"


def latency_finding(
    c: dict[str, Any],
    latency: list[dict[str, Any]],
    groups: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any] | None:
    """One sentence for the latency comparisons of tps comparison ``c`` that add something tps
    does not say: average latency when its outcome is not tps's own (closed-loop pgbench's
    average latency moves with tps when the clients stay the same), a percentile when its
    outcome is not the average's (or tps's, without an average). None when none adds."""
    by_metric = {x["metric"]: x for x in latency}
    avg = by_metric.get("latency_avg_ms")
    kept = []
    if avg is not None and _adds(avg, c["outcome"]):
        kept.append(avg)
    reference = avg["outcome"] if avg is not None else c["outcome"]
    kept += [x for m, x in by_metric.items() if m != "latency_avg_ms" and _adds(x, reference)]
    if not kept:
        return None
    text = (
        f"On {c['machine']}{_context(c)}{_conditions(c, groups or {})}, {_change(c)}: "
        + "; ".join(_latency_clause(x) for x in kept)
        + f"; {_tps_words(c)}.{_caveats(c)}"
    )
    cited = [
        y for x in kept for y in (x.get("pooled_estimate") or {}).get("comparisons") or [x["id"]]
    ]
    tps = (c.get("pooled_estimate") or {}).get("comparisons") or [c["id"]]
    return {
        "text": text,
        "comparisons": cited + tps,
        "groups": [c["a"]["group"], c["b"]["group"]],
        "machine": c["machine"],
        "verdict": kept[0]["verdict"],
        "kind": "latency",
        "metrics": [x["metric"] for x in kept],
    }


def _pooled_id(c: dict[str, Any]) -> str | None:
    return (c.get("family") or {}).get("pooled")


def _as_pooled(c: dict[str, Any], estimate: dict[str, Any] | None) -> dict[str, Any]:
    """Comparison ``c`` read as its pooled estimate (its verdict, change, outcome and family),
    for a sentence told once for every session; ``c`` itself when it has none."""
    if estimate is None:
        return c
    return {
        **c,
        "verdict": estimate["verdict"],
        "change_pct": estimate["change_pct"],
        "outcome": outcome(estimate["verdict"], c.get("metric", "tps")),
        "family": estimate["family"],
        "pooled_estimate": estimate,
    }


def inert_delay_effect(c: dict[str, Any]) -> bool:
    """A commit_delay or commit_siblings comparison with a side whose delay cannot fire: what
    it measures is not an effect of either setting (``confounds.inert_commit_delay``)."""
    fields = str(c.get("factor", "")).split("+")
    touches = any(
        f in ("postgres.settings.commit_delay", "postgres.settings.commit_siblings") for f in fields
    )
    return touches and any(x.get("kind") == "inert_commit_delay" for x in c.get("confounds") or [])


def findings_of(
    comparisons: list[dict[str, Any]],
    interactions: list[dict[str, Any]],
    groups: list[dict[str, Any]] | None = None,
    pooled: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The findings, ranked for tuners (``ranking``: storage, durability, memory,
    checkpoints, versions and OS before pgbench's own parameters; a latency finding right after
    its tps comparison's), then the interactions. ``groups``: the group entries, for the
    conditions each sentence states (source and year, PostgreSQL version). A comparison that
    is ``not_comparable`` gets no finding, nor one that is not significant after the family-wise
    adjustment; ``pooled``: the pooled estimates, each told once for all its sessions."""
    by_group = {g["id"]: g for g in groups or []}
    by_id = {c["id"]: c for c in comparisons}
    estimate_of = {cid: p for p in pooled or [] for cid in p["comparisons"]}
    pooled_by_id = {p["id"]: p for p in pooled or []}
    latency: dict[str, list[dict[str, Any]]] = {}
    for c in comparisons:
        if c.get("metric") in METRICS and c["verdict"] != "not_comparable":
            latency.setdefault(c["tps_comparison"], []).append(c)
    ranked: list[tuple[list[Any], list[dict[str, Any]]]] = []
    for c in comparisons:
        if c.get("metric", "tps") != "tps" or c["change_pct"] is None:
            continue
        if c["verdict"] == "not_comparable" or inert_delay_effect(c):
            continue
        estimate = estimate_of.get(c["id"])
        place = ranking.place(_as_pooled(c, estimate))
        told = []
        if estimate is not None:
            if estimate["comparisons"][0] == c["id"] and significant(estimate):
                evidence = [by_id[x] for x in estimate["comparisons"] if x in by_id]
                told.append(comparison_finding(c, by_group, estimate, evidence))
        elif c["verdict"] == "spread_unknown" or (
            c["verdict"] != "within_noise" and significant(c)
        ):
            told.append(comparison_finding(c, by_group))
        if c["id"] in latency and (estimate is None or estimate["comparisons"][0] == c["id"]):
            if estimate is None:
                extra = latency_finding(c, latency[c["id"]], by_group)
            else:
                extra = latency_finding(
                    _as_pooled(c, estimate),
                    [_as_pooled(x, pooled_by_id.get(_pooled_id(x))) for x in latency[c["id"]]],
                    by_group,
                )
            if extra is not None:
                told.append({**extra, **place, "leads": False})
        if told:
            ranked.append((place["rank"], told))
    out = [f for _rank, told in sorted(ranked, key=lambda r: r[0]) for f in told]
    for i in interactions:
        out.append(
            {
                "text": i["text"],
                "comparisons": i["comparisons"],
                "groups": [cell["group"] for cell in i["cells"]],
                "machine": i["machine"],
                "verdict": i["verdict"],
                "kind": "interaction",
                "interaction": i["id"],
                "topic": ranking.topic_of(i["factor"]),
                "question": ranking.question_of(i["factor"]),
                "unsafe": False,
                "leads": False,
            }
        )
    ranking.mark_key(out)
    return out
