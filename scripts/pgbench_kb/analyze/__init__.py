"""The converter's knowledge: groups of repeats, controlled comparisons with noise-aware
verdicts, interactions and findings — the stage between ``runs/`` and ``derive/``.

``build_knowledge(root)`` returns the whole Comparisons JSON object (docs/comparisons.md
describes every key). Each analysis is its own module; to add one, compute it from the runs
and groups in ``knowledge_from_runs`` and add its key (keys are added, never renamed).
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

from pgbench_kb.analyze.claims import check_claims, load_claims
from pgbench_kb.analyze.costs import cost_comparisons
from pgbench_kb.analyze.curves import curves_of
from pgbench_kb.analyze.figures import group_figures
from pgbench_kb.analyze.findings import findings_of
from pgbench_kb.analyze.groups import Group, build_groups, excluded_runs, group_entry
from pgbench_kb.analyze.latency import latency_comparisons
from pgbench_kb.analyze.latency_trust import listed, note_comparisons
from pgbench_kb.analyze.load import RunRecord, load_runs
from pgbench_kb.analyze.multiplicity import adjust
from pgbench_kb.analyze.noise import add_noise_context
from pgbench_kb.analyze.pairs import find_comparisons
from pgbench_kb.analyze.pooling import pooled_of
from pgbench_kb.analyze.releases import release_series
from pgbench_kb.analyze.sessions import configuration, session_of, sessions_summary
from pgbench_kb.analyze.stability import group_summaries, stability_of
from pgbench_kb.analyze.within_sessions import interactions_within_sessions

FORMAT = "pgbench-kb/comparisons/1"


def knowledge_from_runs(
    runs: list[RunRecord],
    claims: list[dict[str, Any]] | None = None,
    root: Path | None = None,
    *,
    latency: bool = False,
) -> dict[str, Any]:
    """The Comparisons JSON object for already-loaded runs (and claims to check); ``root``
    holds the raw files stability reads (without it, series kept only there are not read).

    ``latency``: add the latency comparisons (and their findings) and the per-transaction
    cost comparisons (``analyze/costs.py``) to ``comparisons``; ``kb compare``
    (``build_knowledge``) and ``kb derive`` turn it on. Off by default for callers that read
    every comparison as tps."""
    groups: list[Group] = build_groups(runs)
    tps = find_comparisons(groups)
    add_noise_context(tps, groups)
    interactions = interactions_within_sessions(groups, tps)
    comparisons = tps
    if latency:
        comparisons = sorted(
            tps + latency_comparisons(tps, groups) + cost_comparisons(tps, groups),
            key=lambda c: (c["machine"], c["factor"], c["id"]),
        )
    pooled = pooled_of(comparisons, {g.id: repr(configuration(g)) for g in groups})
    adjust(comparisons, pooled)
    entries = [group_entry(g) for g in groups]
    for entry, group in zip(entries, groups, strict=True):
        entry["session"] = session_of(group)
        entry["figures"] = group_figures(group)
    steady = stability_of(runs, groups, root)
    note_comparisons(comparisons, groups)
    group_of = {run.id: group.id for group in groups for run in group.runs}
    return {
        "format": FORMAT,
        "comparisons": comparisons,
        "interactions": interactions,
        "curves": curves_of(groups),
        "stability": steady,
        "stability_groups": group_summaries(steady),
        "findings": findings_of(comparisons, interactions, entries, pooled),
        "pooled": pooled,
        "sessions": sessions_summary(groups),
        "groups": entries,
        "claims": check_claims(claims or [], entries, tps),
        "excluded_runs": excluded_runs(runs),
        "latency_trust": listed(runs, group_of),
        "series": release_series(groups, tps),
    }


def build_knowledge(root: Path) -> dict[str, Any]:
    """Read every run file under ``ROOT/data/runs`` (and the claims of ``data/claims.yaml``)
    and return the Comparisons JSON object."""
    # Hundreds of thousands of small acyclic dicts, read (the records) and made (the
    # analysis): the cycle collector would only walk them again and again (a quarter of the
    # analysis's time on 10,000 runs, a tenth of the reading's); it is back on when done.
    enabled = gc.isenabled()
    gc.disable()
    try:
        runs = load_runs(root)
        claims = load_claims(root)
        return knowledge_from_runs(runs, claims, root, latency=True)
    finally:
        if enabled:
            gc.enable()


__all__ = ["FORMAT", "build_knowledge", "knowledge_from_runs"]
