"""Read the run files under ROOT into small flat records, fast.

Each run becomes a ``RunRecord``: its id and path, the figures the analysis needs, and its
fields flattened to dotted paths, split by kind (factor, incidental, machine; ignored fields are
dropped). Lists and mappings at a leaf (``postgres.build.patches``) are kept as values; ``key``
turns them into something hashable. A field that is null, absent or an empty mapping is simply
not there, so "not stated" and "the default" compare equal.

With many files the reading is shared between processes (the YAML parse is the cost); the
records are small, so handing them back is cheap.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pgbench_kb.analyze.factors import kind_of, skipped
from pgbench_kb.analyze.latency_trust import log_counts, remember, trust_of_run
from pgbench_kb.analyze.runseries import SERVER_STATS_UNREAD, run_facts
from pgbench_kb.analyze.txcosts import COST_COUNTERS, run_costs
from pgbench_kb.errors import KbError, RunFileError, UsageError
from pgbench_kb.parallel import MAX_WORKERS, map_in_workers, worker_count
from pgbench_kb.runs.files import run_files
from pgbench_kb.runs.runfile import RUNS_DIR, read_run
from pgbench_kb.runs.tryout import is_smoke

PARALLEL_FROM = 400
#: Parts of a run file the analysis never reads (the fast reader skips them unparsed).
#: ``raw``, ``results.progress``, ``results.latency_percentiles_ms`` and the checkpoint
#: counters of ``server_stats`` are read: stability and curves use them; so are the counters
#: the per-transaction costs divide (``txcosts.COST_COUNTERS``).
SKIP = frozenset(
    (
        "provenance.declared",
        "provenance.masked",
        "provenance.notes",
        "results.statements",
        *(f"server_stats.{name}" for name in SERVER_STATS_UNREAD if name not in COST_COUNTERS),
    )
)


@dataclass
class RunRecord:
    id: str
    path: str
    origin: str | None
    machine: str
    client_machine: str | None
    repeat_group: str | None
    statistic: str
    of_runs: int
    tps: float | None
    samples: list[float] | None
    latency_avg_ms: float | None
    settings_profile: str | None
    source_title: str | None
    factors: dict[str, Any] = field(default_factory=dict)
    incidental: dict[str, Any] = field(default_factory=dict)
    hardware: dict[str, Any] = field(default_factory=dict)
    aborted: bool = False
    #: What stability and curves read (progress, logs, percentiles): ``runseries.run_facts``.
    series: dict[str, Any] | None = None
    #: Why the harness marked the run as measured on a busy machine (``machine_load.disturbed``
    #: with its reasons), or None: quiet, not judged, or not recorded.
    disturbed: str | None = None
    #: A smoke run of the harness (``runs.tryout``): not a result, in no group.
    smoke: bool = False
    #: Why the run's latencies get no verdict (``analyze/latency_trust.py``), or None.
    latency_trust: dict[str, Any] | None = None
    #: Each transaction log's (cache key, (zeros, logged)): ``latency_trust.log_counts``.
    log_counts: tuple[Any, ...] = ()
    #: Per-transaction costs (``txcosts.run_costs``): metric → value.
    costs: dict[str, float] = field(default_factory=dict)
    #: pgbench's latency standard deviation (``results.latency_stddev_ms``), or None.
    latency_stddev_ms: float | None = None


def key(value: Any) -> Any:
    """A hashable stand-in for a field value (flattened values already are; a list or mapping
    from elsewhere becomes canonical JSON)."""
    if isinstance(value, list | dict):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return value


def flatten(data: Any, prefix: str, out: dict[str, Any]) -> None:
    """Dotted paths → leaf values; skips ignored subtrees without walking them. A list of
    plain values becomes a tuple (hashable; JSON shows it as a list); a list holding mappings
    is flattened by index (``benchmark.workload.scripts.0.builtin``); empty ones vanish."""
    if isinstance(data, dict):
        for name, value in data.items():
            if value is None:
                continue  # a null leaf or subtree adds nothing: no path to write
            path = f"{prefix}.{name}" if prefix else str(name)
            if skipped(path):
                continue
            flatten(value, path, out)
    elif isinstance(data, list):
        if any(isinstance(v, dict | list) for v in data):
            for index, value in enumerate(data):
                flatten(value, f"{prefix}.{index}", out)
        elif data and kind_of(prefix) != "ignored":
            out[prefix] = tuple(data)
    elif data is not None and data != "" and kind_of(prefix) != "ignored":
        out[prefix] = data


def _number(value: Any, path: str, dotted: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RunFileError(
            f"expected a number, got {value!r}",
            path=path,
            field=dotted,
            hint="run kb check on this file",
        )
    return float(value)


#: ``repeat.group`` as the harness writes it: ``<machine>-<bench start>[-<session>]-<config hash>``.
_BENCH_SESSION = re.compile(r"-(\d{8}T\d{6}Z?)(?:-([0-9a-f]{1,16}))?-[0-9a-f]{6,}$", re.IGNORECASE)


def bench_session(repeat: Any) -> str | None:
    """The bench session a measured group came from (its start, and its token when recorded):
    two groups measured in different sessions met different states of the machine, so that
    difference is a caveat of their comparison, never hidden."""
    group = repeat.get("group") if isinstance(repeat, dict) else None
    found = _BENCH_SESSION.search(group) if isinstance(group, str) else None
    if found is None:
        return None
    return "-".join(part for part in found.groups() if part)


def disturbed_reason(load: Any) -> str | None:
    """``machine_load`` → why the run is disturbed (its reasons joined), or None."""
    if not isinstance(load, dict) or load.get("disturbed") is not True:
        return None
    reasons = [r for r in load.get("reasons") or [] if isinstance(r, str)]
    return "; ".join(reasons) or "marked disturbed by the harness"


def record_of(data: dict[str, Any], path: str, root: Path | None = None) -> RunRecord:
    """One run file's data → its record; a malformed figure is a one-line RunFileError. With
    ``root``, the run's transaction logs are read there for ``latency_trust``."""
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        raise RunFileError("not a run file (no id)", path=path, hint="run kb check on this file")
    results = data.get("results") or {}
    samples_data = (results.get("samples") or {}).get("tps")
    samples = None
    if samples_data is not None:
        if not isinstance(samples_data, list):
            raise RunFileError(
                "expected a list of numbers",
                path=path,
                field="results.samples.tps",
                hint="run kb check on this file",
            )
        samples = [_number(v, path, "results.samples.tps") for v in samples_data]
        samples = [v for v in samples if v is not None] or None
    flat: dict[str, Any] = {}
    flatten(data, "", flat)
    rec = RunRecord(
        id=data["id"],
        path=path,
        origin=data.get("origin"),
        machine=str(data.get("machine") or "unknown"),
        client_machine=(data.get("client") or {}).get("machine"),
        repeat_group=(data.get("repeat") or {}).get("group"),
        statistic=str(results.get("statistic") or "single"),
        of_runs=int(results.get("of_runs") or 1),
        tps=_number(results.get("tps"), path, "results.tps"),
        samples=samples,
        latency_avg_ms=_number(results.get("latency_avg_ms"), path, "results.latency_avg_ms"),
        latency_stddev_ms=_number(
            results.get("latency_stddev_ms"), path, "results.latency_stddev_ms"
        ),
        settings_profile=(data.get("postgres") or {}).get("settings_profile"),
        source_title=((data.get("provenance") or {}).get("source") or {}).get("title"),
        aborted=results.get("aborted") is True,
        series=run_facts(data),
        disturbed=disturbed_reason(data.get("machine_load")),
        smoke=is_smoke(data),
        costs=run_costs(data),
    )
    if root is not None:
        rec.log_counts = log_counts(data, root, path)
    rec.latency_trust = trust_of_run(data, rec.log_counts if root is not None else None)
    for dotted, value in flat.items():
        if dotted == "benchmark.other_flags":
            value = instrumentation_dropped(value)
            if not value:
                continue
        kind = kind_of(dotted)
        if kind == "factor":
            rec.factors[dotted] = value
        elif kind == "incidental":
            if dotted == "provenance.recorded_at" and isinstance(value, str):
                value = value[:10]  # the day: repeats of one session share it
            rec.incidental[dotted] = value
        else:
            rec.hardware[dotted] = value
    share = rate_share(data)
    if share is not None:
        # The rate is a share of the maximum its session measured: the share is the
        # configuration, not the tps it came to (it differs from session to session).
        rec.factors.pop("benchmark.rate_limit_tps", None)
        rec.factors[RATE_SHARE] = share
    session = bench_session(data.get("repeat"))
    if session is not None:
        rec.incidental["repeat.session"] = session
    return rec


#: The factor of a rate given as a share of the maximum (profile rates: ["70%"]), in place of
#: benchmark.rate_limit_tps.
RATE_SHARE = "benchmark.rate_limit_pct_of_max"


def rate_share(data: dict[str, Any]) -> float | None:
    """``repeat.design.rate.percent_of_max`` of a run whose rate was a share of the maximum."""
    design = (data.get("repeat") or {}).get("design") or {}
    share = (design.get("rate") or {}).get("percent_of_max") if isinstance(design, dict) else None
    return float(share) if isinstance(share, int | float) and not isinstance(share, bool) else None


def instrumentation_dropped(flags: Any) -> Any:
    """pgbench's other options without ``--sampling-rate``: the harness picks a rate per trial
    for a number of logged latencies, so it varies with each run's throughput and says nothing
    about the configuration (two groups must not look different for it)."""
    if not isinstance(flags, tuple):
        return flags
    return tuple(f for f in flags if not str(f).startswith("--sampling-rate"))


def _load_one(job: tuple[str, str, str]) -> RunRecord | str:
    """Worker: a record, or the one-line error text (exceptions with keyword fields do not
    survive pickling whole)."""
    path, shown, root = job
    try:
        return record_of(read_run(Path(path), shown=shown, skip=SKIP).data, shown, Path(root))
    except KbError as exc:
        return str(exc)


def run_paths(root: Path) -> list[Path]:
    return run_files(root)


def load_runs(root: Path, *, jobs: int | None = None) -> list[RunRecord]:
    """Every run file under ``ROOT/data/runs`` as a record, in path order."""
    if not (root / RUNS_DIR).is_dir():
        raise UsageError(
            f"{(root / RUNS_DIR).as_posix()} is not a folder",
            field="--root",
            hint="give the project root, the folder that holds data/runs/",
        )
    paths = run_paths(root)
    work = [(str(p), p.relative_to(root).as_posix(), str(root)) for p in paths]
    workers = min(jobs, MAX_WORKERS) if jobs else worker_count()
    if len(work) >= PARALLEL_FROM and workers > 1:
        # Fresh interpreters, not forks: a forked pool deadlocked (every process waiting on a
        # lock, no CPU) when the caller had run other work before in the same process, as a
        # test session does, once the shipped runs passed PARALLEL_FROM (the 720 imported
        # archaeology runs); the items are paths, so spawning costs only the start-up.
        results = map_in_workers(_load_one, work, workers=workers, start="spawn")
    else:
        results = [_load_one(item) for item in work]
    records = []
    for result in results:
        if isinstance(result, str):
            raise RunFileError(result)
        records.append(result)
    remember(root, records)
    return records
