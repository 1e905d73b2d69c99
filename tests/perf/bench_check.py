"""Benchmark: `kb check` on 10,000 synthetic run files must take under 10 s, and checking one
run file must cost at most half the CPU it cost with the full YAML loader alone.

Standalone (not pytest); `make perf` runs every tests/perf/bench_*.py. It writes 10,000 run files
(with their raw outputs and hardware notes) into a temporary folder with `kb synth`, then times
the real `.venv/bin/kb check` on them cold (no `build/cache`) — the raw outputs re-parsed, every
rule applied — and prints the figure with PASS or MISSED.

Then, in this one process, it checks the first ``--per-file`` of those files (1,000 by default)
both ways, alternating which goes first from file to file: as `kb check` does (canonical files
read by the fast reader, ``runs/fastyaml.py``) and with every file read by the full loader
(``runfile.load_yaml_text``, what `kb check` did before). It prints the CPU time per file of
each and their ratio, which other work on the machine hardly changes; the target is a ratio of
at least 2. Exit status 0 when both targets are met, 1 otherwise.

    .venv/bin/python tests/perf/bench_check.py [--count N] [--per-file N] [--tree DIR]

``--tree DIR`` checks an existing `kb synth --out DIR` tree instead of writing one (it is not
modified; a tree with a `build/cache` folder is checked warm, not cold); without it the tree
is written to a temporary folder and removed afterwards.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COUNT = 10_000
BUDGET_S = 10.0
PER_FILE = 1_000
RATIO_TARGET = 2.0
TODAY = "20261123"
KB = str(Path(sys.executable).parent / "kb")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_kb_check(tree: Path, count: int) -> bool:
    """The real `kb check` on the tree, as scripts/site.sh runs it; True when under budget."""
    load = os.getloadavg()
    cpu_before = children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        [KB, "check", "--root", str(tree), str(tree / "runs"), str(tree / "content/hardware")],
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    cpu_s = children_cpu() - cpu_before
    load_after = os.getloadavg()[0]
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    verdict = "PASS" if elapsed < BUDGET_S and done.returncode == 0 else "MISSED"
    print(
        f"kb check: {count} synthetic run files in {elapsed:.2f} s (budget {BUDGET_S:.0f} s): "
        f"{verdict}"
    )
    print(
        f"  CPU time {cpu_s:.2f} s on {os.cpu_count()} CPU(s); load average {load[0]:.2f} before "
        f"the run, {load_after:.2f} after (other work on the machine slows the wall-clock figure)"
    )
    print(f"  {summary}")
    return verdict == "PASS"


def time_per_file(tree: Path, limit: int) -> bool:
    """CPU per run file in this process, fast path against the full loader; True when the
    ratio meets the target."""
    from pgbench_kb.runs.check import check_run

    files = sorted((tree / "runs").rglob("*.yaml"))[:limit]
    for path in files[:20]:  # imports and first-call caches, for both ways
        check_run(path, tree, today=TODAY, fast=True)
        check_run(path, tree, today=TODAY, fast=False)
    spent = {True: 0.0, False: 0.0}
    load = os.getloadavg()[0]
    for index, path in enumerate(files):
        for fast in (True, False) if index % 2 else (False, True):
            started = time.process_time()
            check_run(path, tree, today=TODAY, fast=fast)
            spent[fast] += time.process_time() - started
    fast_ms = spent[True] / len(files) * 1000
    full_ms = spent[False] / len(files) * 1000
    ratio = full_ms / fast_ms
    verdict = "PASS" if ratio >= RATIO_TARGET else "MISSED"
    print(
        f"kb check per run file, one process, {len(files)} files: {fast_ms:.2f} ms of CPU "
        f"(full loader for every file: {full_ms:.2f} ms), {ratio:.2f}x cheaper "
        f"(target at least {RATIO_TARGET:.0f}x): {verdict}"
    )
    print(f"  load average {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    return verdict == "PASS"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=COUNT, help="run files to write")
    parser.add_argument("--per-file", type=int, default=PER_FILE, help="files timed one by one")
    parser.add_argument("--tree", type=Path, help="an existing `kb synth --out` tree to check")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kb-perf-") as scratch:
        tree = args.tree
        if tree is None:
            tree = Path(scratch)
            subprocess.run(
                [KB, "synth", "--out", str(tree), "--count", str(args.count), "--seed", "7"],
                check=True,
                capture_output=True,
            )
        count = sum(1 for _ in (tree / "runs").rglob("*.yaml"))
        whole = time_kb_check(tree, count)
        per_file = time_per_file(tree, args.per_file)
    return 0 if whole and per_file else 1


if __name__ == "__main__":
    raise SystemExit(main())
