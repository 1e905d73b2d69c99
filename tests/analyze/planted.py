"""A planted data set: measured-looking run files with known effects, noise-sized differences,
a confound, an interaction and a machine comparison, written under a temporary root.

Every group's tps values are ``center × exp(cv × z)`` for fixed standard scores ``z`` (mean 0,
standard deviation 1), so each group's median and geometric mean are exactly its planted
centre and its spread is exactly the planted CV.
"""

from __future__ import annotations

import copy
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pgbench_kb.analyze.load import RunRecord
from pgbench_kb.runs.runfile import dump_run
from pgbench_kb.runs.synth import MACHINES, WORKLOADS, synth_run

Z = {
    1: [0.0],
    3: [-1.0, 0.0, 1.0],
    5: [x / math.sqrt(2.5) for x in (-2.0, -1.0, 0.0, 1.0, 2.0)],
}
XEON = MACHINES[1]
LAPTOP = MACHINES[3]


@dataclass(frozen=True)
class Planted:
    group: str
    center: float
    cv: float = 0.02
    n: int = 5
    settings: dict[str, Any] = field(default_factory=dict)
    clients: int = 8
    duration_s: int = 60
    machine: tuple = XEON
    #: Average latency planted apart from tps (ms), with its own CV; None: clients / tps, run
    #: by run, as a closed-loop pgbench gives it.
    latency_ms: float | None = None
    latency_cv: float = 0.02
    #: p99 from a per-transaction log (ms), same CV as the latency; None: no percentiles.
    p99_ms: float | None = None


GROUPS = (
    Planted("base", 1000),
    Planted("sb-64gb", 1300, settings={"shared_buffers": "64GB"}),
    Planted("sync-off", 1020, settings={"synchronous_commit": "off"}),
    Planted("cd", 1200, settings={"commit_delay": 1000}),
    Planted("fsync-off", 2000, settings={"fsync": "off"}),
    Planted("fsync-off-cd", 1800, settings={"fsync": "off", "commit_delay": 1000}),
    Planted("one-off", 1100, n=1, settings={"work_mem": "64MB"}),
    Planted("base16", 1500, cv=0.01, clients=16),
    Planted("fpw-off16", 1575, cv=0.01, clients=16, settings={"full_page_writes": "off"}),
    Planted(
        "walc16", 1650, cv=0.01, clients=16, duration_s=300, settings={"wal_compression": "on"}
    ),
    Planted("laptop-base", 800, machine=LAPTOP, settings={"shared_buffers": "48GB"}),
)

#: (group A, group B, factor, B/A, verdict, caveat fields)
EXPECTED = (
    ("base", "sb-64gb", "postgres.settings.shared_buffers", 1.3, "higher", []),
    ("base", "sync-off", "postgres.settings.synchronous_commit", 1.02, "within_noise", []),
    ("base", "cd", "postgres.settings.commit_delay", 1.2, "higher", []),
    ("base", "fsync-off", "postgres.settings.fsync", 2.0, "higher", []),
    ("cd", "fsync-off-cd", "postgres.settings.fsync", 1.5, "higher", []),
    ("fsync-off", "fsync-off-cd", "postgres.settings.commit_delay", 0.9, "lower", []),
    ("base", "one-off", "postgres.settings.work_mem", 1.1, "spread_unknown", []),
    ("base", "base16", "benchmark.clients", 1.5, "higher", []),
    ("base16", "fpw-off16", "postgres.settings.full_page_writes", 1.05, "higher", []),
    (
        "base16",
        "walc16",
        "postgres.settings.wal_compression",
        1.1,
        "higher",
        ["benchmark.duration_s"],
    ),
    # Two machines measured apart: no verdict (nothing measured how far their sessions move).
    ("laptop-base", "base", "machine", 1.25, "not_comparable", []),
)


#: The extended set (its own root): latency planted apart from tps, and a 2×3 grid.
#: synchronous_commit's effect is +2% at the default wal_level and at replica, and +60% at
#: logical; on "sync-off" average latency falls 20% while tps stays within the noise and the
#: p99 rises 50%; on "cd" tps rises 20% and latency moves by a noise-sized 1%.
EXTENDED = (
    Planted("base", 1000, latency_ms=8.0, p99_ms=20.0),
    Planted("sync-off", 1020, latency_ms=6.4, p99_ms=30.0, settings={"synchronous_commit": "off"}),
    Planted("cd", 1200, latency_ms=8.08, p99_ms=20.2, settings={"commit_delay": 1000}),
    Planted("wl-replica", 950, settings={"wal_level": "replica"}),
    Planted("wl-replica-off", 969, settings={"wal_level": "replica", "synchronous_commit": "off"}),
    Planted("wl-logical", 900, settings={"wal_level": "logical"}),
    Planted("wl-logical-off", 1440, settings={"wal_level": "logical", "synchronous_commit": "off"}),
)


def _percentiles(p99: float) -> dict[str, float]:
    return {
        "min": round(p99 / 20, 3),
        "p50": round(p99 / 3, 3),
        "p90": round(p99 / 1.6, 3),
        "p95": round(p99 / 1.3, 3),
        "p99": round(p99, 3),
        "p999": None,  # 5,000 latencies: too few for a p99.9
        "max": round(p99 * 2, 3),
    }


def planted_runs(groups: tuple[Planted, ...] = GROUPS) -> list[dict[str, Any]]:
    """Every run of the planted groups, as run-file data."""
    rng = random.Random(3)
    runs = []
    for index, planted in enumerate(groups):
        shape = {
            "group": f"plant-{planted.group}",
            "machine": planted.machine,
            "version": ("16.4", 160004),
            "workload": WORKLOADS[0],
            "scale": 10,
            "clients": planted.clients,
            "threads": 2,
            "duration_s": planted.duration_s,
            "tps": planted.center,
            "noise": 0.0,
            "day": "2025-06-01",
        }
        for repeat, z in enumerate(Z[planted.n], start=1):
            run, _text = synth_run(rng, index * 10 + repeat, repeat, shape)
            run = copy.deepcopy(run)
            tps = round(planted.center * math.exp(planted.cv * z), 6)
            run["results"]["tps"] = tps
            spread = math.exp(planted.latency_cv * z)
            if planted.latency_ms is None:
                run["results"]["latency_avg_ms"] = round(planted.clients * 1000 / tps, 6)
            else:
                run["results"]["latency_avg_ms"] = round(planted.latency_ms * spread, 6)
            if planted.p99_ms is not None:
                run["results"]["latency_percentiles_ms"] = _percentiles(planted.p99_ms * spread)
                # Enough logged latencies for p95 and p99 (the sample rules), not for p99.9.
                run["results"]["latency_percentiles_from"] = {
                    "latencies": 5_000,
                    "sampling_rate": 0.1,
                }
            run["postgres"]["settings"].update(planted.settings)
            run["provenance"]["recorded_at"] = "2025-06-01T10:00:00Z"
            run["id"] = f"plant-{planted.group}-r{repeat}"
            if planted.n == 1:
                run["repeat"] = None
            else:
                run["repeat"] = {
                    "group": f"plant-{planted.group}",
                    "index": repeat,
                    "of": planted.n,
                }
            runs.append(run)
    return runs


def write_planted(root: Path, groups: tuple[Planted, ...] = GROUPS) -> Path:
    """Write the planted runs as ROOT/data/runs/2025/06/ID.yaml; return ROOT."""
    folder = root / "data" / "runs" / "2025" / "06"
    folder.mkdir(parents=True, exist_ok=True)
    for run in planted_runs(groups):
        (folder / f"{run['id']}.yaml").write_text(dump_run(run), encoding="utf-8")
    return root


def records(
    name: str,
    tps: list[float],
    factors: dict[str, Any],
    *,
    latency: list[float | None] | None = None,
    incidental: dict[str, Any] | None = None,
) -> list[RunRecord]:
    """Measured single runs of one group ``name`` on machine ``box``, as the loader gives them
    (for tests of the analysis that need no run files): one per tps value."""
    latency = latency or [None] * len(tps)
    return [
        RunRecord(
            id=f"{name}-r{i}",
            path=f"data/runs/{name}-r{i}.yaml",
            origin="measured",
            machine="box",
            client_machine=None,
            repeat_group=name,
            statistic="single",
            of_runs=1,
            tps=value,
            samples=None,
            latency_avg_ms=ms,
            settings_profile=None,
            source_title=None,
            factors=dict(factors),
            incidental={k: v for k, v in (incidental or {}).items() if v is not None},
        )
        for i, (value, ms) in enumerate(zip(tps, latency, strict=True), start=1)
    ]
