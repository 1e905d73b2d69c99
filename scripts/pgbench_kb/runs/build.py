"""Building a run file's sections from parsed pgbench output: the one place that maps the
parser's JSON onto the run format, used by both ways of importing (``importer``, ``trial``).

``skeleton()`` is the single source of the empty shape: every section and key present, every
unknown value null. Whoever fills a section (the harness via ``trial``, a person via ``--set``)
starts from it, so a key missing from a run file is a bug, not an unknown.
"""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any

from pgbench_kb.runs.runfile import SCHEMA_VERSION

BUILTIN_BY_TYPE = {
    "tpc-b (sort of)": "tpcb-like",
    "<builtin: tpc-b (sort of)>": "tpcb-like",
    "select only": "select-only",
    "<builtin: select only>": "select-only",
    "<builtin: simple update>": "simple-update",
    "update only accounts": "simple-update",
    "update only pgbench_accounts": "simple-update",
}
BUILTINS = ("tpcb-like", "simple-update", "select-only")
PERCENTILES = ("min", "p50", "p90", "p95", "p99", "p999", "max")
#: The fewest logged latencies a p99.9 is stored from: below it the "p99.9" is one of the ten
#: slowest transactions logged (docs/comparisons.md, "Sample rules").
MIN_LATENCIES_P999 = 10_000
SERVER_STATS = (
    "checkpoints_timed",
    "checkpoints_requested",
    "buffers_written_checkpoint",
    "buffers_written_bgwriter",
    "buffers_written_backend",
    "wal_bytes",
    "wal_records",
    "wal_fpi",
    "blocks_read",
    "blocks_hit",
    "temp_bytes",
    "xact_commit",
    "xact_rollback",
    "deadlocks",
)


#: The results a summary output states, copied as they are into ``results`` (and compared
#: against a re-parse of the raw output by ``kb check``): run-file key → the parser's key.
RESULT_FIELDS_FROM_OUTPUT: dict[str, str] = {
    "tps": "tps",
    "tps_including_connections": "tps_including_connections",
    "latency_avg_ms": "latency_avg_ms",
    "latency_stddev_ms": "latency_stddev_ms",
    "transactions_processed": "transactions_processed",
    "transactions_expected": "transactions_expected",
    "failed_transactions": "failed_transactions",
    "retried_transactions": "transactions_retried",
    "skipped_transactions": "skipped_transactions",
    "initial_connection_time_ms": "initial_connection_time_ms",
}
#: The invocation facts a summary output states, copied into ``benchmark`` (and re-checked).
BENCHMARK_FIELDS_FROM_OUTPUT: dict[str, str] = {
    "pgbench_version": "pgbench_version",
    "scale": "scale",
    "clients": "clients",
    "threads": "threads",
    "duration_s": "duration_s",
    "transactions_per_client": "transactions_per_client",
    "query_mode": "query_mode",
    "latency_limit_ms": "latency_limit_ms",
    "max_tries": "max_tries",
}


def cpu_skeleton() -> dict[str, Any]:
    return {
        "model": None,
        "sockets": None,
        "cores": None,
        "threads": None,
        "mhz": None,
        "smt": None,
    }


def os_skeleton() -> dict[str, Any]:
    return {"name": None, "release": None, "kernel": None, "page_size_bytes": None}


def tuning_skeleton() -> dict[str, Any]:
    return {
        "cpu_governor": None,
        "transparent_hugepages": None,
        "huge_pages": None,
        "caches_dropped": None,
        "cpu_affinity": None,
        "notes": None,
    }


def host_skeleton() -> dict[str, Any]:
    """server, and the host part of client: facts of one machine at run time."""
    return {
        "hostname": None,
        "cpu": cpu_skeleton(),
        "ram_bytes": None,
        "os": os_skeleton(),
        "tuning": tuning_skeleton(),
    }


def array_skeleton() -> dict[str, Any]:
    return {
        "level": None,
        "disks": None,
        "media": None,
        "rpm": None,
        "disk_size_bytes": None,
        "disk_model": None,
        "interface": None,
        "implementation": None,
        "stripe_size_bytes": None,
    }


def volume_skeleton() -> dict[str, Any]:
    return {
        "path": None,
        "device": None,
        "filesystem": None,
        "mount_options": None,
        "journal_mode": None,
        "journal_bytes": None,
        "fs_properties": None,
        "scheduler": None,
        "read_ahead_kb": None,
        "array": None,
    }


def controller_skeleton() -> dict[str, Any]:
    return {
        "model": None,
        "write_cache": None,
        "battery_backed": None,
        "cache_bytes": None,
        "disk_write_cache": None,
    }


def storage_skeleton() -> dict[str, Any]:
    return {
        "data": volume_skeleton(),
        "wal": {"placement": None, **volume_skeleton()},
        "controller": controller_skeleton(),
        "flush": None,
    }


def postgres_skeleton() -> dict[str, Any]:
    return {
        "version": None,
        "version_num": None,
        "build": {
            "source": None,
            "configure": None,
            "compiler": None,
            "commit": None,
            "patches": [],
            "block_size_bytes": None,
        },
        "settings": None,
        "settings_profile": None,
        "database_size_bytes": None,
        "initdb_before_run": None,
    }


def benchmark_skeleton() -> dict[str, Any]:
    return {
        "pgbench_version": None,
        "command": None,
        "init_command": None,
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
        "connect_per_transaction": None,
        "vacuum": None,
        "progress_interval_s": None,
        "other_flags": [],
        "reset": None,
        "warmup": None,
    }


def results_skeleton() -> dict[str, Any]:
    return {
        "statistic": "single",
        "of_runs": 1,
        "samples": None,
        "tps": None,
        "tps_including_connections": None,
        "tps_min": None,
        "tps_max": None,
        "latency_avg_ms": None,
        "latency_stddev_ms": None,
        "latency_percentiles_ms": None,
        "latency_percentiles_from": None,
        "latency_total_ms": None,
        "transactions_processed": None,
        "transactions_expected": None,
        "failed_transactions": None,
        "retried_transactions": None,
        "skipped_transactions": None,
        "initial_connection_time_ms": None,
        "aborted": False,
        "statements": [],
        "progress": None,
        "checkpoints": None,
        "os_series": None,
        "wait_events": None,
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
            "contributed_at": None,
            "source": None,
            "harness": None,
            "declared": [],
            "masked": [],
            "uncertain": [],
            "notes": None,
        },
        "machine": None,
        "server": host_skeleton(),
        "client": {
            "same_as_server": True,
            "machine": None,
            **host_skeleton(),
            "network": None,
            "ssl": None,
        },
        "storage": storage_skeleton(),
        "postgres": postgres_skeleton(),
        "benchmark": benchmark_skeleton(),
        "repeat": None,
        "results": results_skeleton(),
        "server_stats": dict.fromkeys(SERVER_STATS),
        "raw": [],
    }


def _script_name(kind: str | None) -> str | None:
    kind = (kind or "").strip()
    if not kind:
        return None
    return BUILTIN_BY_TYPE.get(kind.lower(), Path(kind).stem if "/" in kind else kind)


def workload_name(parsed: dict[str, Any]) -> str | None:
    """tpcb-like, select-only, simple-update, a custom script's name (as its ``transaction
    type:`` line gives it, e.g. ``star-1.sql``), or 'multiple'."""
    named = parsed.get("workload")
    if named and named != "custom":
        return str(named)
    return _script_name(parsed.get("transaction_type")) or named


def _script(name: str | None, weight: Any) -> dict[str, Any]:
    builtin = name if name in BUILTINS else None
    return {
        "builtin": builtin,
        "file": None if builtin else name,
        "text": None,
        "sha256": None,
        "weight": weight if isinstance(weight, int) else 1,
    }


def scripts_from(parsed: dict[str, Any]) -> list[dict[str, Any]]:
    """The scripts pgbench reports (several with weights, or the one transaction type)."""
    listed = parsed.get("scripts") or []
    if listed:
        return [_script(_script_name(s.get("name")), s.get("weight")) for s in listed]
    name = workload_name(parsed)
    return [_script(name, 1)] if name else []


def _progress(parsed: dict[str, Any]) -> dict[str, Any] | None:
    points = parsed.get("progress") or []
    if not points:
        return None
    times = [p.get("t_s") for p in points]
    steps = [b - a for a, b in itertools.pairwise(times) if a is not None and b]
    series: dict[str, Any] = {"interval_s": steps[0] if steps else times[0], "t_s": times}
    for key in ("tps", "latency_ms", "stddev_ms", "lag_ms", "failed"):
        values = [p.get(key) for p in points]
        series[key] = values if any(v is not None for v in values) else None
    series["raw_path"] = None
    return series


def _statements(parsed: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "script": s.get("script"),
            "latency_ms": s.get("latency_ms"),
            "failures": s.get("failures"),
            "retries": s.get("retries"),
            "command": s.get("command"),
        }
        for s in parsed.get("statements") or []
    ]


def output_values(parsed: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What a parsed summary output says, by section and run-file key: the values ``kb import``
    copies into a run and ``kb check`` compares against a re-parse of the raw output."""
    return {
        "results": {
            **{key: parsed.get(name) for key, name in RESULT_FIELDS_FROM_OUTPUT.items()},
            "statements": _statements(parsed),
        },
        "benchmark": {key: parsed.get(name) for key, name in BENCHMARK_FIELDS_FROM_OUTPUT.items()},
    }


def percentiles_from_log(log: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``latency_percentiles_ms`` and ``latency_percentiles_from`` from a per-transaction log."""
    latency = log.get("latency_ms") or {}
    rate = log.get("estimated_sampling_rate")
    if rate is None and log.get("sampled") is False:
        rate = 1
    basis = {"latencies": log.get("transactions"), "sampling_rate": rate}
    values = {key: latency.get(key) for key in PERCENTILES}
    if not isinstance(basis["latencies"], int) or basis["latencies"] < MIN_LATENCIES_P999:
        values["p999"] = None  # from fewer latencies it is the slowest few, not a percentile
    return values, basis


def results_from(parsed: dict[str, Any], log: dict[str, Any] | None) -> dict[str, Any]:
    """The ``results`` section of one run from parsed output (and its per-transaction log)."""
    results = results_skeleton()
    results.update(output_values(parsed)["results"])
    results["aborted"] = bool(parsed.get("aborted"))
    results["progress"] = _progress(parsed)
    if log is not None and log.get("kind") == "transaction_log":
        percentiles, basis = percentiles_from_log(log)
        results["latency_percentiles_ms"] = percentiles
        results["latency_percentiles_from"] = basis
    return results


def benchmark_from(parsed: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """``base`` (a benchmark section) with what the parsed output says about the invocation."""
    bench = copy.deepcopy(base)
    bench.update(output_values(parsed)["benchmark"])
    bench["workload"] = {"name": workload_name(parsed), "scripts": scripts_from(parsed)}
    return bench
