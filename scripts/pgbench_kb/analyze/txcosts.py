"""A run's per-transaction costs, derived when its file is read (``load.record_of``): a
counter of the trial divided by the transactions pgbench processed
(``results.transactions_processed``, never the server's ``xact_commit``, which also counts the
harness's own queries). ``COSTS`` names each metric and what it sums; ``analyze/costs.py``
compares them. Nothing here is stored in run files, and the derivation reads a handful of
numbers per run (the 10,000-run targets of docs/performance.md).
"""

from __future__ import annotations

import math
from typing import Any

#: metric → (section, counters summed, factor to the unit). Every counter must be known for
#: the run to have the metric (buffers written: from PostgreSQL 17 the backends' writes come
#: from pg_stat_io, which runs recorded before the harness read it do not have).
COSTS: dict[str, tuple[str, tuple[str, ...], float]] = {
    "wal_bytes_per_txn": ("server_stats", ("wal_bytes",), 1.0),
    "wal_records_per_txn": ("server_stats", ("wal_records",), 1.0),
    "wal_fpi_per_txn": ("server_stats", ("wal_fpi",), 1.0),
    "buffers_written_per_txn": (
        "server_stats",
        ("buffers_written_checkpoint", "buffers_written_bgwriter", "buffers_written_backend"),
        1.0,
    ),
    "blocks_read_per_txn": ("server_stats", ("blocks_read",), 1.0),
    "temp_bytes_per_txn": ("server_stats", ("temp_bytes",), 1.0),
    "server_cpu_us_per_txn": ("machine_load", ("server_cpu_s",), 1e6),
    "client_cpu_us_per_txn": ("machine_load", ("client_cpu_s",), 1e6),
    "bench_cpu_us_per_txn": ("machine_load", ("bench_cpu_s",), 1e6),
}

#: The counters the costs read (the loader must not skip them).
COST_COUNTERS = frozenset(n for _section, names, _f in COSTS.values() for n in names)


def _count(value: Any) -> float | None:
    kind = type(value)
    if kind is bool or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value) if value >= 0 else None


def run_costs(data: dict[str, Any]) -> dict[str, float]:
    """A run file's per-transaction costs (metric → value; a metric whose counters are not
    all recorded is absent). A run file standing for several runs (``of_runs`` > 1) or with no
    transaction processed has none."""
    results = data.get("results") or {}
    if (results.get("of_runs") or 1) != 1:
        return {}
    done = _count(results.get("transactions_processed"))
    if not done:
        return {}
    out: dict[str, float] = {}
    for metric, (section, names, factor) in COSTS.items():
        found = data.get(section) or {}
        parts = [_count(found.get(n)) if isinstance(found, dict) else None for n in names]
        if any(p is None for p in parts):
            continue
        out[metric] = float(f"{math.fsum(parts) * factor / done:.6g}")  # type: ignore[arg-type]
    return out
