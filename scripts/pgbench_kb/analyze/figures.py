"""Each group's figures beside its tps, for the per-machine matrix (``derive/matrix.py``).

``group_figures`` gives, for every latency metric (``latency.group_latency``: runs whose
latencies cannot be trusted left out, percentiles only from enough logged latencies) and
every per-transaction cost (``costs.group_costs``) the group has, its centre (the median of
its runs' values, as the comparisons use) and how many runs it rests on. A metric the group
has no trustworthy value of is absent: the page says why (``latency_trust``) or that it was
not measured. Nothing here compares groups.
"""

from __future__ import annotations

from typing import Any

from pgbench_kb.analyze.costs import group_costs
from pgbench_kb.analyze.groups import Group
from pgbench_kb.analyze.latency import group_latency


def group_figures(group: Group) -> dict[str, dict[str, Any]]:
    """Metric → ``{center, n}`` for every latency metric and cost ``group`` has a value of."""
    found = {**group_latency(group), **group_costs(group)}
    return {
        metric: {"center": figures["center"], "n": figures["n"]}
        for metric, figures in found.items()
    }
