"""Runs whose latencies get no verdict: read from their transaction logs at analysis time.

The rules are ``runs/latency_zeros.py``'s (more than 1% of logged latencies at 0 µs:
``unreliable``; short latencies measured per transaction with no log: ``unverified``). Here a
run's logs are read (the same parser and reading limits as stability's raw files) and the
result is kept with the run's record (``RunRecord.latency_trust``), so ``kb derive`` keeps it
in its cache of prepared runs with the rest of the record, and reads a run's logs again only
when the run file or one of its raw files changed.

Such a run's latency figures feed nothing the analysis judges: no latency comparison, group
latency centre, curve latency, claim figure or TPC-C latency test reads them
(``trusted``). The comparisons whose groups hold such runs carry the reason
(``note_comparisons``), and the Comparisons JSON lists the runs (``latency_trust``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pgbench_kb import numbers as fmt
from pgbench_kb.analyze.runseries import parse_raw
from pgbench_kb.runs import latency_zeros as rules


def trust_of_run(data: Mapping[str, Any], root: Path | None, path: str) -> dict[str, Any] | None:
    """``LatencyTrust.as_dict()`` of one run file's data, or None when its latencies stand.
    Its transaction logs are read under ``root`` (not at all without one: then only the rule
    for runs without a log applies)."""
    raws = [r for r in data.get("raw") or [] if isinstance(r, Mapping)]
    logs = [
        (i, r["path"])
        for i, r in enumerate(raws)
        if r.get("kind") == "transaction_log" and isinstance(r.get("path"), str)
    ]
    if not logs:
        found = rules.without_log(data)
        return found.as_dict() if found is not None else None
    if root is None:
        return None
    zero = logged = 0
    for index, rel in logs:
        parsed = parse_raw(root, rel, path, f"raw[{index}].path")
        if parsed.get("kind") != "transaction_log":
            return None  # kb check names a log of the wrong kind
        zero += int(parsed.get("zero_latencies") or 0)
        logged += int(parsed.get("transactions") or 0)
    found = rules.from_counts(zero, logged)
    return found.as_dict() if found is not None else None


def trusted(run: Any) -> bool:
    """Whether a run record's latency figures may be judged."""
    return getattr(run, "latency_trust", None) is None


def listed(runs: Iterable[Any], group_of: Mapping[str, str]) -> list[dict[str, Any]]:
    """The ``latency_trust`` list of the Comparisons JSON: one entry per run whose latencies
    get no verdict, by run id."""
    return [
        {"run": run.id, "group": group_of.get(run.id), **run.latency_trust}
        for run in sorted(runs, key=lambda r: r.id)
        if not trusted(run)
    ]


def note_comparisons(comparisons: list[dict[str, Any]], groups: Iterable[Any]) -> None:
    """Each tps comparison with a run of untrusted latency in either group gets
    ``latency_untrusted``: those runs and the reason (the first run's), for the page."""
    untrusted = {g.id: [r for r in g.runs if not trusted(r)] for g in groups}
    untrusted = {gid: runs for gid, runs in untrusted.items() if runs}
    if not untrusted:
        return
    for c in comparisons:
        if c.get("metric", "tps") != "tps":
            continue
        runs = [*untrusted.get(c["a"]["group"], []), *untrusted.get(c["b"]["group"], [])]
        if not runs:
            continue
        known = [
            r.latency_trust["share_pct"]
            for r in runs
            if isinstance(r.latency_trust.get("share_pct"), int | float)
        ]
        reason = runs[0].latency_trust["reason"]
        if len(runs) > 1 and known:
            reason = _range_reason(known)
        c["latency_untrusted"] = {"runs": sorted(r.id for r in runs), "reason": reason}


def _range_reason(shares: list[float]) -> str:
    low, high = min(shares), max(shares)
    span = fmt.percent(low) if low == high else f"{fmt.percent(low)}–{fmt.percent(high)}"
    return (
        f"latencies unreliable in {fmt.count(len(shares), 'run')}: {span} of logged "
        f"transactions read 0 µs: {rules.CAUSE}"
    )
