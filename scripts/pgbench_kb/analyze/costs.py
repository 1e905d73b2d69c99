"""Per-transaction costs: what each transaction cost the server, derived from the counters a
run file holds, and compared like tps.

A run's cost (``run_costs``) is a counter of the trial (``server_stats``: WAL bytes, records
and full-page images, buffers written, blocks read, temp bytes; ``machine_load``: CPU seconds)
divided by the transactions pgbench processed (``results.transactions_processed``, never the
server's ``xact_commit``, which also counts the harness's own queries). ``COSTS`` names each
metric (``docs/comparisons.md``, "Per-transaction costs"). Nothing is stored in run files: the
loader derives the figures once per run (``load.record_of``), from a handful of numbers.

For every tps comparison whose two groups both have a cost, one more entry of ``comparisons``
per cost metric (``cost_comparisons``; none where the sides are ``not_comparable``), shaped
like a latency comparison (same sides, sessions rules and test, ``tps_comparison`` naming its
tps comparison, ``better_when: lower``). The rule for zero values (a full-page image is
written only after a checkpoint, so a run with no checkpoint has none):

* a metric that is zero in every run of both sides is not compared;
* a side with a zero run cannot enter the test of the logarithms: the comparison has no
  interval; when one side is zero in every run and the other above zero in every run (two
  runs or more each, in one session), the verdict says which is higher, tested by the exact
  Mann–Whitney test (complete separation: two-sided p = 2 / C(nₐ + n_b, nₐ), in the
  question's Holm family like any test), with ``ratio`` and ``change_pct`` null (``0 → x``
  is not −100% or "infinitely more"); otherwise ``spread_unknown``. ``zero_runs`` counts
  each side's zero runs.

``SMALLEST_CHANGE_PCT`` is the smallest change a page reports (``reported``).
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.analyze.groups import Group, spread_values
from pgbench_kb.analyze.multiplicity import significant
from pgbench_kb.analyze.sessions import (
    Between,
    compared_inside,
    design_of,
    estimate,
    judge,
    session_of,
)
from pgbench_kb.analyze.txcosts import COSTS

#: How each cost reads: (its name in a table, with its unit; what a "2.0× …" clause says).
COST_WORDS: dict[str, tuple[str, str]] = {
    "wal_bytes_per_txn": ("WAL bytes", "the WAL bytes"),
    "wal_records_per_txn": ("WAL records", "the WAL records"),
    "wal_fpi_per_txn": ("full-page images", "the full-page images"),
    "buffers_written_per_txn": ("buffers written", "the buffers written"),
    "blocks_read_per_txn": ("blocks read", "the blocks read"),
    "temp_bytes_per_txn": ("temp bytes", "the temp bytes"),
    "server_cpu_us_per_txn": ("server CPU µs", "the server's CPU time"),
    "client_cpu_us_per_txn": ("pgbench CPU µs", "pgbench's CPU time"),
    "bench_cpu_us_per_txn": ("server + pgbench CPU µs", "the CPU time (server and pgbench)"),
}

#: The smallest change of a cost a page reports, in percent: a counter divided by a count
#: has little noise of its own, so a test can call a 1% change significant; what a tuner
#: sizes by (WAL volume, archive and replica bandwidth, CPU) does not move for that. 5% is
#: about the run-to-run spread of tps on our bench, the size a reader already discounts.
SMALLEST_CHANGE_PCT = 5.0


def group_costs(group: Group) -> dict[str, dict[str, Any]]:
    """Each cost the group's runs have: ``{center, n, statistic, values, spread, runs,
    zeros}`` (the median of its runs' values; ``zeros``: how many are zero)."""
    out: dict[str, dict[str, Any]] = {}
    for metric in COSTS:
        pairs = [(r.id, r.costs[metric]) for r in group.runs if metric in r.costs]
        if not pairs:
            continue
        values = [v for _id, v in pairs]
        n = len(values)
        positive = min(values) > 0
        out[metric] = {
            "center": round(statistics.median(values), 6),
            "n": n,
            "statistic": "median" if n > 1 else "single",
            "values": values if n > 1 else None,
            "spread": spread_values(values) if n > 1 and positive else None,
            "runs": [rid for rid, _v in pairs],
            "zeros": sum(1 for v in values if v == 0),
        }
    return out


def _side(side: dict[str, Any], figures: dict[str, Any]) -> dict[str, Any]:
    return {
        **side,
        "runs": figures["runs"],
        "n": figures["n"],
        "statistic": figures["statistic"],
        "center": figures["center"],
        "spread": figures["spread"],
    }


#: The test of a side zero in every run against one above zero in every run.
ZERO_METHOD = "mann-whitney-exact"


def _zero_verdict(
    fa: dict[str, Any], fb: dict[str, Any], *, one_session: bool
) -> tuple[str, dict[str, Any]]:
    """The verdict and test when a side has zero runs: which is higher when one side is zero
    in every run and the other in none (two runs or more each), by the exact Mann–Whitney
    test (every run of one side below every run of the other: two-sided p = 2 / C(nₐ + n_b,
    nₐ)), for two sides measured in one session; else ``spread_unknown`` with no test."""
    none: dict[str, Any] = {"method": None, "ci95_ratio": None, "df": None}
    na, nb = fa["n"], fb["n"]
    if na < 2 or nb < 2 or not one_session:
        return "spread_unknown", none
    p = float(f"{min(1.0, 2.0 / math.comb(na + nb, na)):.6g}")
    test = {"method": ZERO_METHOD, "ci95_ratio": None, "df": None, "p": p}
    if fa["zeros"] == na and fb["zeros"] == 0:
        return ("higher" if p < 0.05 else "within_noise"), test
    if fb["zeros"] == nb and fa["zeros"] == 0:
        return ("lower" if p < 0.05 else "within_noise"), test
    return "spread_unknown", none


def cost_comparisons(
    comparisons: list[dict[str, Any]], groups: list[Group]
) -> list[dict[str, Any]]:
    """One cost comparison per tps comparison and cost both groups have (not zero in both),
    unless the two sides cannot be compared (``not_comparable``: none is written)."""
    by_id = {g.id: g for g in groups}
    found: dict[str, dict[str, dict[str, Any]]] = {}

    def of(gid: str) -> dict[str, dict[str, Any]]:
        if gid not in found:
            found[gid] = group_costs(by_id[gid]) if gid in by_id else {}
        return found[gid]

    where = {g.id: (session_of(g), g.hardware_key, design_of(g)) for g in groups}
    # Keyed by machine and design, as tps's (``sessions.machine_between``): how far sessions
    # of runs made this way move this cost.
    between = _between(groups, of, where)
    inside = compared_inside(groups)
    out = []
    for c in comparisons:
        ca, cb = of(c["a"]["group"]), of(c["b"]["group"])
        if not ca or not cb or c.get("kind") == "span" or _apart(c.get("sessions") or {}):
            continue
        (sa, machine_a, design_a), (sb, machine_b, _d) = (
            where[c["a"]["group"]],
            where[c["b"]["group"]],
        )
        for metric in COSTS:
            if sa != sb and (
                machine_a != machine_b or (machine_a, design_a) not in between[metric]
            ):
                # Two sessions and nothing that says how far they move this cost: not
                # comparable whatever the values (``judge``'s first test), and not written.
                continue
            fa, fb = ca.get(metric), cb.get(metric)
            if fa is None or fb is None or (fa["zeros"] == fa["n"] and fb["zeros"] == fb["n"]):
                continue
            zero = bool(fa["zeros"] or fb["zeros"])
            test, sessions = judge(
                by_id[c["a"]["group"]],
                by_id[c["b"]["group"]],
                (lambda g: None) if zero else (lambda g, m=metric: of(g.id)[m]["values"]),
                between[metric],
                c["differs_also"],
                inside,
                between[metric],
            )
            verdict, test_dict = test.verdict, test.as_dict()
            if verdict == "not_comparable":
                # Nothing to judge it by (two sessions, no estimate of how far they move this
                # cost): its tps comparison already says why, and an entry per cost would be
                # most of the JSON (four in five of the shipped pairs) for no verdict.
                continue
            if zero:
                # The rank test knows nothing of a session's own level: inside one only.
                verdict, test_dict = _zero_verdict(fa, fb, one_session=sessions["shared"])
            ratio = fb["center"] / fa["center"] if fa["center"] > 0 and fb["center"] > 0 else None
            entry = {
                **c,
                "id": f"{c['id']}-{metric.removesuffix('_per_txn').replace('_', '-')}",
                "metric": metric,
                "tps_comparison": c["id"],
                "a": _side(c["a"], fa),
                "b": _side(c["b"], fb),
                # Significant digits: a cost can fall a thousandfold (blocks read once the
                # table fits in shared_buffers), which four decimals would write as 0.
                "ratio": None if ratio is None else float(f"{ratio:.4g}"),
                "change_pct": None if ratio is None else round((ratio - 1) * 100, 2),
                "verdict": verdict,
                "test": test_dict,
                "sessions": sessions,
                "better_when": "lower",
                "outcome": _outcome(verdict),
                "smallest_change_pct": SMALLEST_CHANGE_PCT,
            }
            if zero:
                entry["zero_runs"] = {"a": fa["zeros"], "b": fb["zeros"]}
            out.append(entry)
    return out


def _apart(info: dict[str, Any]) -> bool:
    """The tps comparison's sides are not comparable for a reason no cost changes (``judge``):
    sessions that also ran each trial differently, a source's figures, or the same two
    configurations compared inside one session elsewhere."""
    if info.get("shared") is not False:
        return False
    sources = any(str(info.get(side, "")).startswith("source ") for side in ("a", "b"))
    return bool(info.get("how_run_differs") or info.get("compared_inside") or sources)


def _outcome(verdict: str) -> str:
    """A cost is better lower."""
    return {"higher": "worse", "lower": "better"}.get(verdict, verdict)


def _between(
    groups: list[Group], of: Any, where: dict[str, tuple[str, Any, Any]]
) -> dict[str, dict[Any, Between]]:
    """Each cost's between-session variance per machine and design (``sessions.design_of``),
    as tps's, from the groups with no zero run (a logarithm needs a positive value) that are
    not a source's figures."""
    out = {}
    for metric in COSTS:
        cells = []
        for g in groups:
            session, machine, design = where[g.id]
            figures = of(g.id).get(metric)
            if figures is None or figures["zeros"] or session.startswith("source "):
                continue
            values = figures["values"] or [figures["center"]]
            cells.append(((machine, design), g.factor_key, session, values))
        out[metric] = estimate(cells)
    return out


def reported(c: dict[str, Any]) -> bool:
    """A cost comparison worth a reader's sentence: significant after the family-wise
    adjustment (its pooled estimate's, when it is a session of one) and either a change of at
    least ``SMALLEST_CHANGE_PCT`` or one side zero in every run and the other in none."""
    if c.get("verdict") not in ("higher", "lower") or not significant(c):
        return False
    return c.get("change_pct") is None or abs(float(c["change_pct"])) >= SMALLEST_CHANGE_PCT


def cost_clause(c: dict[str, Any]) -> str:
    """``2.0× the WAL bytes``, ``0.52× the blocks read``, ``1/230,000 of the blocks
    read``; a zero side reads ``the full-page images: none → 0.41``."""
    words = COST_WORDS[c["metric"]][1]
    if c.get("ratio") is None:
        a, b = c["a"]["center"], c["b"]["center"]
        # the sentence around it says "per transaction" once (issue 31)
        return f"{words}: {_amount(a)} → {_amount(b)}"
    return span_clause(c["metric"], [float(c["ratio"])])


def _fraction(ratio: float) -> str:
    """``1/230,000``: a ratio under 0.1 as the fraction it is (``0.0000044×`` reads as
    nothing)."""
    return f"1/{fmt.figure(float(f'{1 / ratio:.2g}'), 2)}"


def span_clause(metric: str, ratios: list[float]) -> str:
    """``2.0× the WAL bytes``, ``3.9–4.0× the full-page images``, ``1/270,000 to
    1/230,000 of the blocks read``: the ratios of one cost (all above zero), lowest to
    highest."""
    words = COST_WORDS[metric][1]
    low, high = min(ratios), max(ratios)
    if high < 0.1:
        span = {_fraction(low), _fraction(high)}
        return f"{' to '.join(sorted(span, key=len, reverse=True))} of {words}"
    if low < 0.1:
        return f"{_fraction(low)} to {fmt.times(high)} {words}"
    a, b = str(fmt.times(low)), str(fmt.times(high))
    return f"{a} {words}" if a == b else f"{a.removesuffix('×')}–{b} {words}"


def _amount(value: float) -> str:
    return "none" if value == 0 else str(fmt.figure(value, 2))


def cost_clauses(costs: list[dict[str, Any]]) -> list[str]:
    """The costs worth reporting (``reported``), in ``COSTS`` order, each as ``cost_clause``
    writes it."""
    order = list(COSTS)
    shown = sorted((c for c in costs if reported(c)), key=lambda c: order.index(c["metric"]))
    return [cost_clause(c) for c in shown]


def tps_words(tps: dict[str, Any]) -> str:
    """What tps did, as a cost sentence ends: ``tps within the noise``, ``tps +158.0%``."""
    verdict = str(tps.get("verdict"))
    if verdict in ("higher", "lower"):
        if not significant(tps):
            return "tps not significantly different once adjusted"
        return f"tps {fmt.change(tps.get('change_pct'))}"
    return {
        "within_noise": "tps within the noise",
        "spread_unknown": "the noise of tps unknown",
        "not_comparable": "tps not comparable across sessions",
    }.get(verdict, f"tps {verdict}")


def cost_sentence(tps: dict[str, Any], costs: list[dict[str, Any]]) -> str | None:
    """``2.0× the WAL bytes, 4.1× the full-page images, tps within the noise``: the
    costs worth reporting beside what tps did; None when none is."""
    clauses = cost_clauses(costs)
    return ", ".join([*clauses, tps_words(tps)]) if clauses else None
