"""Benchmark: hostile raw output cannot slow `kb check` (issue #33, attack 6).

Standalone (not pytest); `make perf` runs every tests/perf/bench_*.py.

A `progress:` line of repeated `1e,` ending in `x` made the parser's number tokenizer backtrack
from every start to the line's end: 60 KiB took 13 s in `kb check`, 1 MiB about an hour. Now
the tokenizer is linear (parse/textlines.py, ``number_tokens``) and a line longer than
``MAX_LINE_CHARS`` (64 KiB) is refused before any pattern reads it.

For each hostile shape it prints:

* the wall and CPU time of the real `.venv/bin/kb check --root ROOT` on a project root (the kb
  check test fixture: one hardware note, one run) whose raw output holds a 1 MiB line of that
  shape — target: under 1 s of CPU (the process's start and imports included), the line
  refused; the same root without the line is timed first, for comparison (on a busy machine
  the wall time is mostly waiting for a core, so the target is on CPU time);
* the CPU time of ``parse_text`` in this process on the same output with a line of that shape
  just within the bound (64 KiB) — what a line that is read costs; target: under 0.5 s (the
  longest, labels run together, is some 10,000 output lines).

    .venv/bin/python tests/perf/bench_hostile.py [--repeat 3]

Prints one line per figure with PASS or MISSED; exit status 0 when every target is met, 1
otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_ROOT = ROOT / "tests" / "check" / "root"
GOOD_RUN = ROOT / "tests" / "check" / "good" / "measured-tpcb.yaml"
KB = str(Path(sys.executable).parent / "kb")
CHECK_BUDGET_S = 1.0
PARSE_BUDGET_S = 0.5
MIB = 2**20


def shapes(size: int) -> dict[str, str]:
    """Hostile lines of about ``size`` characters."""
    return {
        "1e, repeated, ending in x": "progress: " + "1e," * (size // 3) + "x",
        "1. repeated": "progress: " + "1." * (size // 2) + "x",
        "a run of spaces": "progress: 1.0 s," + " " * size + "x",
        "labels run together": "tps = " * (size // 6),
        "digits": "tps = " + "1" * size + "x",
    }


def make_root(folder: Path, line: str) -> Path:
    """A project root whose one run's raw output holds ``line`` after its first line."""
    from pgbench_kb.runs.runfile import dump_run, load_yaml_file, sha256_bytes

    root = folder / "project"
    root.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(FIXTURE_ROOT, root)
    run = load_yaml_file(GOOD_RUN).data
    raw = root / run["raw"][0]["path"]
    data = raw.read_bytes()
    if line:
        data = data.replace(b"\n", b"\n" + line.encode() + b"\n", 1)
    raw.write_bytes(data)
    run["raw"][0]["sha256"] = sha256_bytes(data)
    path = root / "data" / "runs" / f"{run['id']}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_run(run), encoding="utf-8")
    return root


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_check(root: Path, repeat: int) -> tuple[float, float, str]:
    """Best wall and CPU time of the real `kb check` on ``root``, and its first line."""
    wall, cpu, first = float("inf"), float("inf"), ""
    for _ in range(repeat):
        cpu_before = children_cpu()
        started = time.perf_counter()
        done = subprocess.run(
            [KB, "check", "--root", str(root)], capture_output=True, text=True, timeout=600
        )
        wall = min(wall, time.perf_counter() - started)
        cpu = min(cpu, children_cpu() - cpu_before)
        first = (done.stdout.splitlines() or [done.stderr])[0].replace(str(root) + "/", "")
    return wall, cpu, first


def time_parse(line: str, repeat: int) -> float:
    """Best time of ``parse_text`` on the fixture's raw output with ``line`` in it."""
    from pgbench_kb.errors import ParseError
    from pgbench_kb.parse import parse_text

    run_raw = next((FIXTURE_ROOT / "data" / "raw").rglob("*.txt"))
    text = run_raw.read_text().replace("\n", "\n" + line + "\n", 1)
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        with contextlib.suppress(ParseError):
            parse_text(text)
        best = min(best, time.process_time() - started)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="best of N (default 3)")
    args = parser.parse_args()
    from pgbench_kb.parse.textlines import MAX_LINE_CHARS

    met = True
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as scratch:
        wall, cpu, _ = time_check(make_root(Path(scratch) / "clean", ""), args.repeat)
    print(f"kb check, the same root without the line: {wall:.2f} s wall, {cpu:.2f} s CPU")
    print(f"  (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    for name, line in shapes(MIB).items():
        with tempfile.TemporaryDirectory(prefix="bench-hostile-") as scratch:
            wall, cpu, first = time_check(make_root(Path(scratch), line), args.repeat)
        ok = cpu < CHECK_BUDGET_S and "longer than any line pgbench prints" in first
        met &= ok
        print(
            f"kb check, 1 MiB line ({name}): {wall:.2f} s wall, {cpu:.2f} s CPU "
            f"(target < {CHECK_BUDGET_S:.0f} s CPU, refused) {'PASS' if ok else 'MISSED'}"
        )
        if not ok:
            print(f"  first line: {first[:200]}")
    for name, line in shapes(MAX_LINE_CHARS - 32).items():
        assert len(line) <= MAX_LINE_CHARS
        seconds = time_parse(line, args.repeat)
        ok = seconds < PARSE_BUDGET_S
        met &= ok
        print(
            f"parse_text, {len(line) // 1024} KiB line ({name}): {seconds:.3f} s CPU "
            f"(target < {PARSE_BUDGET_S} s) {'PASS' if ok else 'MISSED'}"
        )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
