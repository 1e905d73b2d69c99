"""Building a run file's sections from parsed pgbench output: the one place that maps the
parser's JSON onto the run format, used by both ways of importing (``importer``, ``trial``).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from pgbench_kb.runfile import SCHEMA_VERSION

BUILTIN_BY_TYPE = {
    "tpc-b (sort of)": "tpcb-like",
    "<builtin: tpc-b (sort of)>": "tpcb-like",
    "select only": "select-only",
    "<builtin: select only>": "select-only",
    "<builtin: simple update>": "simple-update",
    "update only accounts": "simple-update",
    "update only pgbench_accounts": "simple-update",
}


def skeleton() -> dict[str, Any]:
    """An empty run file: every section present, every unknown value null."""
    return {
        "schema_version": SCHEMA_VERSION,
        "id": None,
        "origin": "measured",
        "provenance": {
            "contributor": None,
            "recorded_at": None,
            "source": {"title": None, "kind": "measurement", "year": None, "url": None},
            "harness": None,
            "declared": [],
            "notes": None,
        },
        "machine": None,
        "server": None,
        "client": {"same_as_server": True, "machine": None, "network": None},
        "storage": None,
        "postgres": None,
        "benchmark": {
            "pgbench_version": None,
            "command": None,
            "workload": {"name": None, "scripts": []},
            "scale": None,
            "clients": None,
            "threads": None,
            "duration_s": None,
            "transactions_per_client": None,
            "query_mode": None,
            "rate_limit_tps": None,
            "latency_limit_ms": None,
            "max_tries": None,
            "other_flags": [],
            "reset": None,
            "warmup_s": None,
        },
        "repeat": None,
        "results": None,
        "server_stats": None,
        "raw": [],
    }


def workload_name(parsed: dict[str, Any]) -> str | None:
    kind = (parsed.get("transaction_type") or "").strip()
    if not kind:
        return None
    return BUILTIN_BY_TYPE.get(kind.lower(), Path(kind).stem if "/" in kind else kind)


def results_from(parsed: dict[str, Any], log: dict[str, Any] | None) -> dict[str, Any]:
    progress = parsed.get("progress") or []
    results: dict[str, Any] = {
        "statistic": "single",
        "of_runs": 1,
        "samples": None,
        "tps": parsed.get("tps"),
        "tps_including_connections": parsed.get("tps_including_connections"),
        "latency_avg_ms": parsed.get("latency_avg_ms"),
        "latency_stddev_ms": parsed.get("latency_stddev_ms"),
        "latency_percentiles_ms": None,
        "transactions_processed": parsed.get("transactions_processed"),
        "failed_transactions": parsed.get("failed_transactions"),
        "initial_connection_time_ms": parsed.get("initial_connection_time_ms"),
        "aborted": bool(parsed.get("aborted")),
        "statements": parsed.get("statements") or [],
        "progress": None,
    }
    if progress:
        results["progress"] = {
            "t_s": [p.get("t_s") for p in progress],
            "tps": [p.get("tps") for p in progress],
            "latency_ms": [p.get("latency_ms") for p in progress],
        }
    if log is not None:
        latency = log.get("latency_ms") or {}
        results["latency_percentiles_ms"] = {
            key: latency.get(key) for key in ("p50", "p90", "p95", "p99", "p999", "max")
        }
    return results


def benchmark_from(parsed: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    bench = copy.deepcopy(base)
    bench.update(
        {
            "pgbench_version": parsed.get("pgbench_version"),
            "scale": parsed.get("scale"),
            "clients": parsed.get("clients"),
            "threads": parsed.get("threads"),
            "duration_s": parsed.get("duration_s"),
            "transactions_per_client": parsed.get("transactions_per_client"),
            "query_mode": parsed.get("query_mode"),
            "max_tries": parsed.get("max_tries"),
        }
    )
    name = workload_name(parsed)
    bench["workload"] = {
        "name": name,
        "scripts": [
            {
                "builtin": name if name in BUILTIN_BY_TYPE.values() else None,
                "file": None,
                "sha256": None,
                "text": None,
                "weight": 1,
            }
        ]
        if name
        else [],
    }
    return bench
