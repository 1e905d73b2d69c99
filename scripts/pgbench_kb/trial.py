"""A bench trial folder (written by ``scripts/bench.sh``) → the detected parts of a run file.

``kb import --harness-dir DIR`` calls ``build_from_trial``; ``importer`` then merges what a person
declared, validates and writes. The folder layout is described in ``facts.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pgbench_kb import __version__, facts
from pgbench_kb.errors import RunImportError
from pgbench_kb.parse import parse_paths, parse_text
from pgbench_kb.runbuild import benchmark_from, results_from, skeleton


def build_from_trial(trial: Path) -> tuple[dict[str, Any], str, list[tuple[str, bytes]]]:
    """The run (without id and raw), the pgbench output text, and the logs found in ``trial``."""
    info = facts.read_tsv_pairs(trial / "trial.tsv")
    out_path = trial / "pgbench.out"
    if not out_path.is_file():
        raise RunImportError("no pgbench.out in the trial folder", path=str(trial))
    text = out_path.read_text(encoding="utf-8", errors="replace")
    parsed = parse_text(text, source=str(out_path))
    logs = sorted(trial.glob("pgbench_log.*"))
    log_result = parse_paths([str(p) for p in logs]) if logs else None

    run = skeleton()
    _argv, shown = facts.command_line(trial)
    run["provenance"]["recorded_at"] = info.get("started_at")
    run["provenance"]["harness"] = {
        "name": "pgbench-kb",
        "version": __version__,
        "profile": info.get("profile"),
        "target": info.get("target"),
    }
    run["server"] = facts.host_facts(trial / "facts" / "server")
    storage_root = trial / "facts" / "server"
    data = facts.storage_facts(storage_root, 1)
    wal = facts.storage_facts(storage_root, 2)
    run["storage"] = {
        "data": data,
        "wal": {
            "placement": "with-data"
            if data and wal and data.get("device") == wal.get("device")
            else None,
            **(wal or {}),
        },
        "controller": {"model": None, "write_cache": None, "battery_backed": None},
    }
    run["postgres"] = facts.postgres_facts(trial / "facts" / "postgres")
    run["postgres"]["database_size_bytes"] = facts._int_or_none(
        facts._read(trial / "database_size.txt")
    )
    run["client"]["network"] = "local-socket"
    run["benchmark"] = benchmark_from(parsed, run["benchmark"])
    run["benchmark"]["command"] = shown
    run["benchmark"]["reset"] = info.get("reset")
    if info.get("workload"):
        run["benchmark"]["workload"]["name"] = info["workload"]
    run["repeat"] = {
        "group": info.get("group"),
        "index": facts._int_or_none(info.get("repeat")),
        "of": facts._int_or_none(info.get("repeats")),
    }
    run["results"] = results_from(parsed, log_result)
    log_blobs = [(p.name, p.read_bytes()) for p in logs]
    return run, text, log_blobs
