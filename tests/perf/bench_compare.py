"""Benchmark: `kb compare` and `kb derive` on 1,000 and 10,000 synthetic runs.

Standalone (not pytest); `make perf` runs every tests/perf/bench_*.py. It writes 1,000 and
10,000 run files with `kb synth` into a temporary folder (as ROOT/data/runs), then times the
real `.venv/bin/kb compare --root ROOT` (the table), `kb compare --root ROOT --json` and
`kb derive --root ROOT`, each three times, and prints the median wall time, the CPU time, the
peak memory of the largest process (the command's own or one of its worker processes, from
`getrusage` of a child that runs it), and the 10k/1k time ratio.

`kb derive` is timed cold (ROOT/build moved out of the tree before each run: no cache of
prepared runs, nothing written before) — the target's case — and, for information, warm (run
again on an unchanged tree: every run comes from build/cache, every unchanged file is kept).
`kb derive` writes the charts' Vega-Lite specs; `kb charts`, the next stage of the site
build, draws them: it is timed cold too (no chart cache), for information.

The build of the last run is moved aside into the scratch folder (removed at the end), not
deleted just before the next run: on a file system without a journal (this machine's ext4),
the kernel's inode allocator skips, one at a time, every inode freed in the last ~30 s
(``recently_deleted`` in ``fs/ext4/ialloc.c``, seen with ``perf record``), so creating the
13,500 files of a derivation right after deleting as many cost 2–5 s more of system time — a
cost of the benchmark's own ``rm``, which a build in a fresh clone never pays.

Targets (issue 9): 10,000 runs in under 10 s and under 1 GB; the 10,000-run time at most 12×
the 1,000-run time. Exit status 0 when every target is met, 1 otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

KB = str(Path(sys.executable).parent / "kb")
COUNTS = (1_000, 10_000)
REPEATS = 3
BUDGET_S = 10.0
BUDGET_BYTES = 1 << 30
RATIO_LIMIT = 12.0

# Runs one command and reports its wall time, CPU time and peak RSS (ru_maxrss is in KiB on
# Linux) as JSON: a fresh process, so nothing but the measured command is in its children.
MEASURE = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.perf_counter() - t
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": r.ru_utime + r.ru_stime, "rss": r.ru_maxrss * 1024,
                  "status": done.returncode, "stderr": done.stderr.decode()[-300:]}))
"""


def make_root(scratch: Path, count: int) -> Path:
    out = scratch / f"synth-{count}"
    subprocess.run(
        [KB, "synth", "--out", str(out), "--count", str(count), "--seed", "7"],
        check=True,
        capture_output=True,
    )
    root = scratch / f"root-{count}"
    (root / "data").mkdir(parents=True)
    shutil.move(str(out / "runs"), str(root / "data" / "runs"))
    return root


def measure(args: list[str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, *args], capture_output=True, text=True, check=True
    )
    result = json.loads(done.stdout)
    if result["status"] != 0:
        raise SystemExit(f"{' '.join(args[1:3])} failed: {result['stderr']}")
    return result


MODES = {
    "table": ["compare"],
    "--json": ["compare", "--json"],
    "derive": ["derive"],
    "derive warm": ["derive"],
    "charts": ["charts"],
}
#: Modes that must meet the targets ("derive warm" is printed for information).
TARGETED = ("table", "--json", "derive")


def set_aside(folder: Path, scratch: Path) -> None:
    """``folder`` moved into ``scratch/discarded/`` (see the module's docstring: deleting it
    now would slow the creation of the files that the measured command writes next)."""
    if folder.exists():
        (scratch / "discarded").mkdir(exist_ok=True)
        folder.rename(tempfile.mkdtemp(dir=scratch / "discarded") + "/" + folder.name)


def measure_mode(mode: str, root: Path, scratch: Path) -> dict:
    samples = []
    for _ in range(REPEATS):
        if mode == "derive":
            set_aside(root / "build", scratch)
        if mode == "charts":  # cold: every spec kb derive wrote drawn anew
            set_aside(root / "build" / "cache" / "charts", scratch)
            set_aside(root / "build" / "charts", scratch)
        samples.append(measure([KB, *MODES[mode], "--root", str(root)]))
    return {
        "wall": statistics.median(r["wall"] for r in samples),
        "cpu": statistics.median(r["cpu"] for r in samples),
        "rss": max(r["rss"] for r in samples),
    }


def main() -> int:
    figures: dict[tuple[str, int], dict] = {}
    loads = []
    with tempfile.TemporaryDirectory(prefix="kb-perf-compare-") as scratch:
        roots = {count: make_root(Path(scratch), count) for count in COUNTS}
        for mode in MODES:
            loads.append(os.getloadavg()[0])
            for count in COUNTS:
                figures[(mode, count)] = measure_mode(mode, roots[count], Path(scratch))
        loads.append(os.getloadavg()[0])
    ok = True
    print(
        f"kb compare and kb derive on synthetic runs (median of {REPEATS}; 1-minute load "
        f"average {min(loads):.2f} to {max(loads):.2f} during the runs, {os.cpu_count()} CPU(s); "
        "other work on the machine slows the wall-clock figures, much less the CPU ones)"
    )
    for mode in MODES:
        small, large = figures[(mode, COUNTS[0])], figures[(mode, COUNTS[1])]
        ratio = large["wall"] / small["wall"]
        passed = large["wall"] < BUDGET_S and large["rss"] < BUDGET_BYTES and ratio <= RATIO_LIMIT
        if mode in TARGETED:
            ok = ok and passed
        label = {
            "derive": "derive (cold)",
            "derive warm": "derive (warm)",
            "charts": "charts (cold)",
        }.get(mode, mode)
        for count, f in ((COUNTS[0], small), (COUNTS[1], large)):
            print(
                f"  {label:<13} {count:>6} runs: {f['wall']:6.2f} s wall, {f['cpu']:6.2f} s CPU, "
                f"peak {f['rss'] / 2**20:6.0f} MiB (largest process)"
            )
        verdict = ("PASS" if passed else "MISSED") if mode in TARGETED else "not a target"
        print(
            f"  {label:<13} 10k/1k time ratio {ratio:.2f} (limit {RATIO_LIMIT:.0f}; CPU-time "
            f"ratio {large['cpu'] / small['cpu']:.2f}); 10k budget {BUDGET_S:.0f} s and 1 GiB: "
            f"{verdict}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
