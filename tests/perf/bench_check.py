"""Benchmark: `kb check` on 10,000 synthetic run files must take under 10 s.

Standalone (not pytest); `make perf` runs every tests/perf/bench_*.py. It writes 10,000 run files
(with their raw outputs and hardware notes) into a temporary folder with `kb synth`, then times
the real `.venv/bin/kb check` on them — the raw outputs re-parsed, every rule applied — and
prints the figure with PASS or MISSED. Exit status 0 on PASS, 1 on MISSED.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COUNT = 10_000
BUDGET_S = 10.0
KB = str(Path(sys.executable).parent / "kb")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="kb-perf-") as scratch:
        out = Path(scratch)
        subprocess.run(
            [KB, "synth", "--out", str(out), "--count", str(COUNT), "--seed", "7"],
            check=True,
            capture_output=True,
        )
        load = os.getloadavg()[0]
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            [KB, "check", "--root", str(out), str(out / "runs"), str(out / "content/hardware")],
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - started
        cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = sum(getattr(cpu_after, f) - getattr(cpu_before, f) for f in ("ru_utime", "ru_stime"))
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    verdict = "PASS" if elapsed < BUDGET_S and done.returncode == 0 else "MISSED"
    print(
        f"kb check: {COUNT} synthetic run files in {elapsed:.2f} s (budget {BUDGET_S:.0f} s): "
        f"{verdict}"
    )
    print(
        f"  CPU time {cpu_s:.2f} s on {os.cpu_count()} CPU(s); load average {load:.2f} before "
        "the run (other work on the machine slows the wall-clock figure)"
    )
    print(f"  {summary}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    raise SystemExit(main())
